"""Plain-text helpers shared by checks and renderers: shorten at a word boundary, make foreign text inert.

Contract: pure functions over `str`, no I/O, nothing heavy imported (checks call them from worker threads).
`neutralise` shows control characters, escape sequences and bidirectional overrides in text from outside as
visible escapes (`\\x1b`): raw, they could set the window title, clear the screen, write the clipboard (OSC 52)
or reorder what the reader sees. `to_ascii` respells capdoctor's own typography for streams that cannot encode
it (a cp1252 redirect, `PYTHONIOENCODING=ascii`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

ELLIPSIS = "…"

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls except tab and newline (ESC starts every escape sequence), DEL, C1 controls (0x9b is a
one-byte CSI), and the bidirectional marks and overrides (Trojan Source)."""

_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")

ASCII_FALLBACK: dict[str, str] = {
    "—": "-",
    "–": "-",
    "‒": "-",
    "−": "-",
    "→": "->",
    "←": "<-",
    "↔": "<->",
    "⇒": "=>",
    "…": "...",
    "•": "*",
    "·": "-",
    "×": "x",
    "≥": ">=",
    "≤": "<=",
    "≈": "~",
    "✓": "ok",
    "✔": "ok",
    "✗": "x",
    "✘": "x",
    "☠": "!!",
    "⚠": "!",
    "█": "#",
    "▓": "=",
    "▒": "+",
    "░": ".",
    "▏": "|",
    "“": "'",
    "”": "'",
    "„": "'",
    "‘": "'",
    "’": "'",
    "«": "<<",
    "»": ">>",
    "\u00a0": " ",
    "µ": "u",
    "°": " deg",
}
"""ASCII spellings of the typography capdoctor itself prints. Never `"` or `\\`: the fallback also runs over
JSON text, where those would end a string early."""


def neutralise(text: str) -> str:
    """`text` with every control character and bidi override replaced by a visible escape (`\\x1b`, `\\u202e`).

    Tabs and newlines are kept; use `one_line` where a value must stay on one line.
    """
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """`text` neutralised, with line breaks (and the space around them) folded into single spaces."""
    return neutralise(_LINE_BREAKS.sub(" ", text.strip()))


def shorten(text: str, width: int, placeholder: str = ELLIPSIS) -> str:
    """`text` cut to at most `width` characters at a word boundary, ending with `placeholder`.

    A text without a space in its second half (one long URL or token) is cut at `width` all the same.
    """
    if len(text) <= width:
        return text
    room = max(0, width - len(placeholder))
    cut = text[: room + 1]
    space = cut.rfind(" ")
    head = cut[:space] if space >= room // 2 else text[:room]
    return head.rstrip(" ,;:-—") + placeholder


def to_ascii(text: str) -> str:
    """`text` with capdoctor's own typography spelled in ASCII; other non-ASCII characters become `?`."""
    return "".join(ch if ch.isascii() else ASCII_FALLBACK.get(ch, "?") for ch in text)


def neutralise_all(value: Any) -> Any:
    """`value` (a report or any JSON-like structure) with every string in it `neutralise`d."""
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, Mapping):
        return {k: neutralise_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [neutralise_all(v) for v in value]
    return value


def stamp(at: datetime) -> str:
    """A moment as a person reads it, in UTC: `7 Dec 09:10 UTC` (ISO strings stay in JSON and -v)."""
    if at.tzinfo is not None:
        at = at.astimezone(timezone.utc)
    return f"{at.day} {at:%b %H:%M} UTC"
