"""Timestamps in the shapes logs use: ISO 8601 (with or without zone), epoch seconds/milliseconds, syslog.

Contract: `parse_timestamp(line, now)` is pure: it reads the start of one log line (or a JSON-lines record's
`timestamp`/`ts`/`time` field) and returns an aware UTC datetime, or None. Naive times are taken as UTC, so
the hour of day reported is the hour as written in the log. It must not do I/O or consult the clock: `now`
is passed in (syslog lines carry no year).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

HEAD_BYTES = 400
"""Only this much of a line is searched for a timestamp: enough for a JSON record's leading fields."""

_ISO = re.compile(
    r"(?P<y>(?:19|20)\d\d)-(?P<mo>[01]\d)-(?P<d>[0-3]\d)[T ](?P<h>[0-2]\d):(?P<mi>[0-5]\d)"
    r"(?::(?P<s>[0-6]\d)(?P<f>[.,]\d{1,9})?)?\s?(?P<z>Z|[+-][01]\d:?[0-5]\d|UTC)?"
)
_EPOCH_FIELD = re.compile(r"[\"'](?:ts|time|timestamp|created|created_at)[\"']\s*:\s*(?P<n>\d{10}(?:\d{3})?(?:\.\d+)?)")
_EPOCH_HEAD = re.compile(r"^\s*\[?(?P<n>1\d{9}(?:\d{3})?(?:\.\d+)?)\b")
_SYSLOG = re.compile(
    r"^(?:<\d+>)?(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+(?P<d>\d{1,2})\s+"
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
)
_MONTHS = {
    m: i
    for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)
}
_ISO_POSITION_LIMIT = 120
"""An ISO time further into a line than this is content (a quoted date), not the line's timestamp,
unless it is a JSON `timestamp` field."""
_JSON_TS_FIELD = re.compile(r"[\"'](?:ts|time|timestamp|created_at|@timestamp)[\"']\s*:\s*[\"']")


def _from_epoch(text: str) -> datetime | None:
    value = float(text)
    if value > 1e12:
        value /= 1000.0
    if not 946684800 <= value <= 4102444800:  # 2000..2100: anything else is a number, not a time
        return None
    return datetime.fromtimestamp(value, tz=timezone.utc)


def _from_iso(m: re.Match[str]) -> datetime | None:
    text = m.group(0)
    if text[-1] == "Z" or text[-1].isdigit():  # the common shapes, read in C (a dense log has one per record)
        try:
            fast = datetime.fromisoformat(text)
        except ValueError:
            pass  # a shape fromisoformat does not take (`UTC`, a space before the zone, second 60): below
        else:
            if fast.tzinfo is None:
                return fast.replace(tzinfo=timezone.utc)
            if fast.tzinfo is timezone.utc:  # `Z`: already what is returned
                return fast
            return fast.astimezone(timezone.utc)
    y, mo, d, h, mi, s, frac, zone = m.group("y", "mo", "d", "h", "mi", "s", "f", "z")  # one call: hot path
    utc = not zone or zone in ("Z", "UTC")
    try:
        micro = int((frac[1:] + "000000")[:6]) if frac else 0
        dt = datetime(
            int(y), int(mo), int(d), int(h), int(mi), min(int(s or 0), 59), micro, tzinfo=timezone.utc if utc else None
        )
    except ValueError:
        return None
    if not utc:
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return dt.replace(tzinfo=timezone(sign * offset)).astimezone(timezone.utc)
    return dt


def _utc_head(head: str) -> datetime | None:
    """What `_from_iso(_ISO.search(head, 0, _ISO_POSITION_LIMIT))` gives for the commonest shape, a line that
    starts with a UTC time (`2025-11-30T00:00:00.008Z`, 0 to 9 fraction digits), read without the regex (it runs
    once per error record); None when `head` does not start with that shape, and the caller searches."""
    if len(head) < 20 or head[4] != "-" or head[13] != ":" or not head.startswith(("19", "20")):
        return None
    z = head.find("Z", 19, 30)
    if z < 0 or (z > 19 and (head[19] != "." or z == 20 or not head[20:z].isascii() or not head[20:z].isdigit())):
        return None
    if head[7] != "-" or head[10] not in "T " or head[16] != ":":
        return None
    try:  # every other position must be a digit in range: exactly what fromisoformat checks
        fast = datetime.fromisoformat(head[: z + 1])
    except ValueError:  # (Python 3.10 reads no `Z`): the regex path
        return None
    return fast if fast.tzinfo is timezone.utc else fast.astimezone(timezone.utc)


def parse_timestamp(line: str, now: datetime) -> datetime | None:
    """The time a log line was written, in UTC, or None when the line carries none we recognise."""
    head = line[:HEAD_BYTES]
    field = _JSON_TS_FIELD.search(head) if '"' in head or "'" in head else None  # every field is quoted
    if field:
        m = _ISO.match(head, field.end())
        if m:
            return _from_iso(m)
    fast = _utc_head(head)
    if fast is not None:
        return fast
    m = _ISO.search(head, 0, _ISO_POSITION_LIMIT)
    if m:
        return _from_iso(m)
    m = _EPOCH_FIELD.search(head) or _EPOCH_HEAD.match(head)
    if m:
        return _from_epoch(m.group("n"))
    m = _SYSLOG.match(head)
    if m:
        try:
            dt = datetime(
                now.year,
                _MONTHS[m.group("mon")],
                int(m.group("d")),
                int(m.group("h")),
                int(m.group("mi")),
                int(m.group("s")),
                tzinfo=timezone.utc,
            )
        except ValueError:
            return None
        if dt > now + timedelta(days=1):
            dt = dt.replace(year=now.year - 1)
        return dt
    return None


class SinceRangeError(ValueError):
    """A `--since` duration so long that the cut-off falls before the first representable date."""


_SINCE = re.compile(r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<u>s|m|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str, now: datetime) -> datetime | None:
    """`--since` as a cut-off instant: a duration (`7d`, `12h`, `30m`), an ISO date/time, or `all` (None).

    Raises ValueError with a one-line message for anything else, so the CLI can print it as is.
    """
    text = value.strip()
    if text.lower() in ("all", "any", "0"):
        return None
    m = _SINCE.match(text)
    if m:
        try:
            return now - timedelta(seconds=float(m.group("n")) * _UNITS[m.group("u").lower()])
        except OverflowError:  # 99999999999d: before year 1
            raise SinceRangeError(f"--since: {value!r} reaches back further than dates go; use 'all'") from None
    iso = _ISO.fullmatch(text) or (_ISO.fullmatch(text + " 00:00") if len(text) == 10 else None)
    if iso:
        parsed = _from_iso(iso)
        if parsed:
            return parsed
    raise ValueError(
        f"--since: cannot read {value!r}; use a duration such as 7d, 12h, 30m, a date such as 2026-11-01, or 'all'"
    )
