"""An incremental Server-Sent Events decoder: bytes in, events out. Pure, no I/O, no provider knowledge.

Contract: `SSEDecoder.feed(chunk)` accepts arbitrary byte chunks (split anywhere, even inside a UTF-8
sequence or a CRLF) and returns the events completed so far; `close()` flushes a final event that lacks
its blank line. It follows the WHATWG parsing rules that matter for LLM APIs (`event:`, `data:` joined by
newlines, `:` comments ignored, CR/LF/CRLF line ends). It must not decide what an event means: the
provider adapters read event payloads.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    """One dispatched SSE event: its `event:` name (None when absent) and its joined `data:` text."""

    event: str | None
    data: str

    def json(self) -> Any:
        """The data parsed as JSON, or None when it is not JSON (e.g. `[DONE]`)."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


class SSEDecoder:
    """Turns a byte stream into `Event`s, however the bytes are chunked."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._event: str | None = None
        self._data: list[str] = []
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[Event]:
        """Decode `chunk` and return every event completed by it."""
        return self._lines(self._utf8.decode(chunk))

    def close(self) -> list[Event]:
        """Flush: a trailing event without its terminating blank line is still delivered."""
        out = self._lines(self._utf8.decode(b"", final=True))
        if self._buf:
            self._line(self._buf, out)
            self._buf = ""
        self._dispatch(out)
        return out

    def _lines(self, text: str) -> list[Event]:
        out: list[Event] = []
        if self._pending_cr and text.startswith("\n"):
            text = text[1:]
        self._pending_cr = False
        buf = self._buf + text
        start = 0
        i = 0
        n = len(buf)
        while i < n:
            ch = buf[i]
            if ch in "\r\n":
                self._line(buf[start:i], out)
                if ch == "\r":
                    if i + 1 < n and buf[i + 1] == "\n":
                        i += 1
                    elif i + 1 == n:
                        self._pending_cr = True
                start = i + 1
            i += 1
        self._buf = buf[start:]
        return out

    def _line(self, line: str, out: list[Event]) -> None:
        if line == "":
            self._dispatch(out)
            return
        if line.startswith(":"):
            return
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)

    def _dispatch(self, out: list[Event]) -> None:
        if self._data:
            out.append(Event(self._event or None, "\n".join(self._data)))
        self._event = None
        self._data = []


def decode_all(payload: bytes) -> list[Event]:
    """Every event in a complete payload (a convenience for tests and non-incremental callers)."""
    dec = SSEDecoder()
    return dec.feed(payload) + dec.close()
