"""Rate-limit, quota and retry hints read from response headers and error bodies: pure parsing, no I/O.

Contract: every function takes strings and an explicit `now` and returns plain numbers or frozen dataclasses;
nothing sleeps, fetches or reads the clock. Header spellings are the providers' data (`HeaderFamily` rows in
each provider's module). It must not decide a cause: it reports numbers, the checks weigh them.

Formats (platform-facts B.1-B.7): OpenAI `x-ratelimit-*` with Go-style durations (`6m0s`), Anthropic
`anthropic-ratelimit-*` with RFC 3339 resets, Codex `x-codex-*-used-percent`, OpenRouter `X-RateLimit-*` with
epoch-millisecond resets, `retry-after` (seconds or HTTP-date), `retry-after-ms`, and Gemini's
`RetryInfo.retryDelay` / "Please retry in Xs". Azure's `-1`/`0` values mean "unknown", never "exhausted".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_GO_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_RETRY_IN = re.compile(r"(?:retry|try again) in ([0-9.]+(?:ms|h|m|s)(?:[0-9.]+(?:ms|s))?)", re.IGNORECASE)


def parse_duration(value: str) -> float | None:
    """Seconds in a Go-style duration (`6m0s`, `1h2m`, `12ms`, `1.5s`) or a bare number of seconds.

    OpenAI's `x-ratelimit-reset-*` and Gemini's `retryDelay` use this spelling; None when unreadable.
    """
    text = value.strip().lower()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    pos, total = 0, 0.0
    for m in _GO_PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _GO_UNITS[m.group(2)]
        pos = m.end()
    return total if pos == len(text) and pos > 0 else None


def parse_instant(value: str, now: datetime) -> float | None:
    """Seconds from `now` until an instant given as RFC 3339, HTTP-date, unix seconds or unix milliseconds.

    Anthropic resets are RFC 3339, Codex `*-reset-at` unix seconds, OpenRouter's reset epoch milliseconds.
    Negative results (the instant has passed) are clamped to 0.
    """
    text = value.strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        epoch = number / 1000.0 if number > 1e11 else number
        return max(0.0, epoch - now.timestamp())
    when: datetime | None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - now).total_seconds())


def parse_retry_after(headers: Mapping[str, str], now: datetime) -> float | None:
    """The server's retry hint in seconds: `retry-after-ms`, then `retry-after` (seconds or HTTP-date).

    Same precedence as the official OpenAI SDK, so capdoctor waits exactly as long as a client would.
    """
    low = {k.lower(): v for k, v in headers.items()}
    ms = low.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = low.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return parse_instant(value, now)


def retry_hint_in_body(text: str) -> float | None:
    """Seconds from a body's retry hint: Gemini `"retryDelay": "26s"` or prose "Please retry in 20.04s"."""
    m = re.search(r'"retryDelay"\s*:\s*"([^"]+)"', text)
    if m:
        return parse_duration(m.group(1))
    m = _RETRY_IN.search(text)
    return parse_duration(m.group(1)) if m else None


@dataclass(frozen=True)
class Window:
    """One rate-limit window as the provider reported it.

    `reset_s` is seconds from the response until the window resets. `unknown` marks values a provider sends
    as placeholders (Azure's `-1`/`0` on the Responses API) that must not be read as exhausted.
    """

    family: str
    name: str
    limit: float | None = None
    remaining: float | None = None
    reset_s: float | None = None
    used_percent: float | None = None
    unknown: bool = False

    @property
    def exhausted(self) -> bool:
        """True when the provider says nothing is left in this window (and the values are trustworthy)."""
        if self.unknown:
            return False
        if self.used_percent is not None:
            return self.used_percent >= 100.0
        return self.remaining is not None and self.remaining <= 0 and (self.limit is None or self.limit > 0)

    @property
    def has_headroom(self) -> bool:
        """True when the window reports something left (remaining > 0 or usage below 100 %)."""
        if self.unknown:
            return False
        if self.used_percent is not None:
            return self.used_percent < 100.0
        return self.remaining is not None and self.remaining > 0

    def to_dict(self) -> dict[str, object]:
        """JSON shape for check data."""
        return vars(self) | {"reset_s": None if self.reset_s is None else round(self.reset_s, 3)}


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip())
    except ValueError:
        return None


def _reset(value: str | None, fmt: str, now: datetime) -> float | None:
    if value is None:
        return None
    if fmt == "duration":
        seconds = parse_duration(value)
        return seconds if seconds is not None else parse_instant(value, now)
    return parse_instant(value, now)


@dataclass(frozen=True)
class RateLimits:
    """Everything the headers of one response said about limits and retrying."""

    windows: tuple[Window, ...] = ()
    retry_after_s: float | None = None
    unified_status: str | None = None

    @property
    def exhausted(self) -> tuple[Window, ...]:
        """Windows with nothing left."""
        return tuple(w for w in self.windows if w.exhausted)

    @property
    def headroom(self) -> bool:
        """True when at least one trustworthy window has room and none is exhausted."""
        return any(w.has_headroom for w in self.windows) and not self.exhausted and self.unified_status != "rejected"

    @property
    def unknown_only(self) -> bool:
        """True when limit headers were present but every value was a placeholder (Azure -1/0)."""
        return bool(self.windows) and all(w.unknown for w in self.windows)


def parse_headers(headers: Mapping[str, str], now: datetime) -> RateLimits:
    """Read every rate-limit family present in `headers` (any case) into windows, plus the retry hint.

    The spellings are the providers' own data (`Adapter.ratelimit_headers`, gathered by the catalogue): a
    provider with a new spelling declares it in its module, and this function reads it unchanged.
    """
    from capdoctor.providers.catalog import header_families

    low = {k.lower(): v for k, v in headers.items()}
    windows: list[Window] = []
    for fam in header_families():
        for win in fam.windows:
            raw = {
                role: low.get(name)
                for role in ("limit", "remaining", "reset", "used_percent", "reset_after")
                if (name := fam.header(role, win)) is not None
            }
            if all(v is None for v in raw.values()):
                continue
            limit, remaining = _num(raw.get("limit")), _num(raw.get("remaining"))
            reset = _reset(raw.get("reset"), fam.reset_format, now)
            if reset is None:
                reset = _num(raw.get("reset_after"))
            unknown = (limit is not None and limit < 0) or (remaining is not None and remaining < 0)
            windows.append(
                Window(
                    fam.name, win, limit, remaining, None if unknown else reset, _num(raw.get("used_percent")), unknown
                )
            )
    unified = low.get("anthropic-ratelimit-unified-status")
    status = unified.strip().lower() if unified else None
    return RateLimits(tuple(windows), parse_retry_after(low, now), status)


@dataclass(frozen=True)
class QuotaViolation:
    """One `google.rpc.QuotaFailure` violation from a Gemini/Vertex error body."""

    quota_id: str
    metric: str
    value: float | None
    model: str | None


def parse_google_quota(text: str) -> tuple[list[QuotaViolation], float | None]:
    """Quota violations and the `RetryInfo` delay (seconds) from a Google API error body; ([], None) if none.

    Gemini sends no rate-limit headers: the quota facts live in `error.details[]`. A `quotaValue` of 0 (or
    "limit: 0" in the message) means the tier has no allowance for that model at all, so waiting won't help.
    """
    import json

    try:
        obj = json.loads(text)
    except ValueError:
        return [], None
    err = obj.get("error") if isinstance(obj, dict) else None
    details = err.get("details") if isinstance(err, dict) else None
    if not isinstance(details, list):
        return [], None
    out: list[QuotaViolation] = []
    delay: float | None = None
    for d in details:
        if not isinstance(d, dict):
            continue
        kind = str(d.get("@type", ""))
        if kind.endswith("QuotaFailure"):
            for v in d.get("violations") or []:
                if not isinstance(v, dict):
                    continue
                raw = v.get("quotaDimensions")
                dims: dict[str, Any] = raw if isinstance(raw, dict) else {}
                value = _num(str(v["quotaValue"])) if v.get("quotaValue") is not None else None
                out.append(
                    QuotaViolation(
                        str(v.get("quotaId", "")),
                        str(v.get("quotaMetric", "")),
                        value,
                        str(dims.get("model")) if dims.get("model") else None,
                    )
                )
        elif kind.endswith("RetryInfo") and isinstance(d.get("retryDelay"), str):
            delay = parse_duration(d["retryDelay"])
    return out, delay
