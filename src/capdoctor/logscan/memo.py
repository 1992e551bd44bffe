"""The record memo: what a record's words say, remembered by the record with its volatile parts blanked.

Contract: `record_key(raw)` is a record's bytes with its leading timestamp, its request, trace and message ids
and its client addresses each replaced by one NUL byte; `RecordMemo` is a bounded LRU of `Facts` by that key.
Dense incident logs repeat the same few errors thousands of times with only those parts changing, so each text
is judged once. The tables never read the blanked parts (no row, spelling or hint has words inside them; tests
pin that corpus texts classify the same whatever they are). Pure; it must not classify anything itself.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from capdoctor.logscan.facts import Facts

MEMO_ENTRIES = 4096
MEMO_KEY_BYTES = 2048
"""The memo holds at most MEMO_ENTRIES records of at most MEMO_KEY_BYTES each (longer ones are judged every
time): ~8 MB at the very worst (every record 2 KB and different), whatever the log."""

_KEY_TS = re.compile(
    rb"(?:19|20)\d\d-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?|"
    rb"1\d{9}(?:\d{3})?(?:\.\d+)?(?!\d)|"
    rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d\d:\d\d:\d\d"
)
_KEY_TS_WITHIN = 48
"""The leading timestamp starts this close to the record's start (after a `[`, a level, a JSON key)."""
_KEY_ID = re.compile(rb"(?<![\w-])(?:[0-9a-fA-F][0-9a-fA-F-]{15,}|(?:req_|chatcmpl-)[A-Za-z0-9]{8,})(?![\w-])")
_KEY_IP = re.compile(rb"(?<![\d.])(?!127\.|0\.0\.0\.0)\d{1,3}(?:\.\d{1,3}){3}(?::(?!11434\b)\d{1,5})?(?![\d.])")
_KEY_LOCAL_PORT = re.compile(
    rb"(?:(?<=127\.0\.0\.1:)|(?<=0\.0\.0\.0:)|(?i:(?<=localhost:)))(?!11434(?!\d))\d{1,5}(?!\d)"
)
_LOCAL_HOSTS = (b"127.0.0.1:", b"0.0.0.0:", b"localhost:", b"LOCALHOST:", b"Localhost:")
"""What differs between repeats of one error: the leading timestamp, request, trace and message ids (hex runs of
16+ characters, UUIDs, `req_…`), client addresses (an IPv4 address and port, but not a loopback or any-address,
nor Ollama's port: the local-server hints read those) and the port of a local server's address (its host and
Ollama's port stay: no row, spelling or hint reads another port's value)."""
_HEX_MAP = bytes(0x68 if chr(b) in "0123456789abcdefABCDEF-" else b for b in range(256))
_HEX_RUN = b"h" * 16
_DIGIT_MAP = bytes(0x30 if chr(b) in "0123456789" else b for b in range(256))
_ADDRESS_MARK = b"0.0"
"""Seen through `_HEX_MAP` (one C pass), a hex id starts a run of 16 `h`; through `_DIGIT_MAP`, an address
contains `0.0`: the regexes run only from there (Python's regex engine has no fast scan for their shapes)."""


def record_key(raw: bytes) -> bytes:
    """The memo key of a record: its bytes with the leading timestamp, the ids and client addresses cut out."""
    head = raw[:_KEY_TS_WITHIN].translate(_DIGIT_MAP)
    if b"00:00" in head or b"0000000000" in head:  # every _KEY_TS shape has a time of day or ten digits
        m = _KEY_TS.search(raw, 0, _KEY_TS_WITHIN)
        if m:
            raw = raw[: m.start()] + b"\x00" + raw[m.end() :]
    at = _id_start(raw)
    if at >= 0:
        raw = _blank(raw, _KEY_ID, at)
    local = [at for host in _LOCAL_HOSTS if (at := raw.find(host)) >= 0]
    if local:
        raw = _blank(raw, _KEY_LOCAL_PORT, min(local))
    return _blank_addresses(raw)


def _id_start(raw: bytes) -> int:
    """Where the first id `_KEY_ID` may cut out of `raw` starts at the earliest (-1: none can)."""
    at = raw.translate(_HEX_MAP).find(_HEX_RUN)
    for prefix in (b"req_", b"chatcmpl-"):
        p = raw.find(prefix)
        if p >= 0 and (at < 0 or p < at):
            at = p
    return at


def _blank(raw: bytes, rx: re.Pattern[bytes], pos: int) -> bytes:
    """`raw` with every match of `rx` at or after `pos` replaced by one NUL byte."""
    parts: list[bytes] = []
    last = 0
    for m in rx.finditer(raw, pos):
        parts += (raw[last : m.start()], b"\x00")
        last = m.end()
    if not parts:
        return raw
    parts.append(raw[last:])
    return b"".join(parts)


def _blank_addresses(raw: bytes) -> bytes:
    """`raw` with its client addresses (`_KEY_IP`) replaced by one NUL byte each, trying the regex only where a
    digit, a dot and a digit meet."""
    digits = raw.translate(_DIGIT_MAP)
    parts: list[bytes] = []
    last = 0
    at = digits.find(_ADDRESS_MARK)
    while at >= 0:
        if digits.count(b".", at, at + 13) < 3:  # a dotted quad has all three dots within 13 bytes of its first
            at = digits.find(_ADDRESS_MARK, at + 1)  # `d.d` (`HTTP/1.1` has one): no regex there
            continue
        m = _KEY_IP.search(raw, max(last, at - 3))  # an address starts at most 3 bytes before its first `d.d`
        if m is None:
            break  # none from here to the end
        parts += (raw[last : m.start()], b"\x00")
        last = m.end()
        at = digits.find(_ADDRESS_MARK, last)
    if not parts:
        return raw
    parts.append(raw[last:])
    return b"".join(parts)


class RecordMemo:
    """A bounded LRU of `Facts` by record key (`record_key`)."""

    def __init__(self, entries: int | None = None, key_bytes: int | None = None) -> None:
        self.entries = MEMO_ENTRIES if entries is None else entries
        self.key_bytes = MEMO_KEY_BYTES if key_bytes is None else key_bytes
        self._data: OrderedDict[bytes, Facts] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def lookup(self, raw: bytes) -> tuple[bytes, Facts | None]:
        """The key of the record `raw` and the facts remembered for it, or None (a miss)."""
        key = record_key(raw)
        facts = self._data.get(key)
        if facts is not None:
            self._data.move_to_end(key)
        return key, facts

    def put(self, key: bytes, facts: Facts) -> None:
        """Remember `facts` for `key` (not when the key is too long), evicting the least recently used."""
        if len(key) > self.key_bytes or not self.entries:
            return
        self._data[key] = facts
        if len(self._data) > self.entries:
            self._data.popitem(last=False)
