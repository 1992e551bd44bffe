"""Where a record starts and ends: a candidate line plus the stack-trace, JSON or HTML continuation lines under
the line that reported it, and how a record is shown.

Contract: byte-level tests on lines already in a buffer (`is_continuation`, `record_head`); no decoding beyond a
record's example, no classification.
"""

from __future__ import annotations

import re

MAX_LINE = 64 * 1024
"""A line longer than this is not decoded whole: a window of WINDOW bytes around each match is used."""
WINDOW = 2048
RECORD_CHARS = 8192
"""A record longer than this is judged from its head and first lines, every time (no memo key)."""
CONT_LINES = 40
"""How many continuation lines (stack frames, a pretty-printed JSON or HTML error body) may sit under a
record's first line: a status on the first line and the provider's words deep in the body are one error."""
EXAMPLE_CHARS = 300

_CONT_PREFIXES = (
    b" ",
    b"\t",
    b"}",
    b"]",
    b")",
    b'"',
    b"at ",
    b"Caused by",
    b"File ",
    b"...",
    b"\xe2\x8e\xbf",
    b"Traceback",
    b"\xe2\x80\xa6",
)
_HTML_LINE = re.compile(rb"<[!/a-zA-Z]")
_TS_HEAD = re.compile(
    rb"^\s*[\[(]?(?:(?:19|20)\d\d-\d\d-\d\d|1\d{9}|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|"
    rb"Oct|Nov|Dec) +\d{1,2} \d\d:)|^\{\"(?:timestamp|ts|time)\""
)
_BODY_LINE = re.compile(
    "(?i:response|body|响应|返回|응답|レスポンス)(?: body)? *(?::|：|=) *[{[]"
    r"""|\{ ?(?:"error"|'error'|"object":"error"|"type":"error")""".encode()
)
"""An error body printed on its own line under the status that reported it, as is (`{"error": …}`) or labelled
(`Response: {…}`, `响应：{…}`): it continues that record, so the status is judged with the body's words. A JSON
log line starts with its level or time, never with an error object."""
_NOT_CONT_FIRST = frozenset(b"0123456789ADEGHIJKLMNOPQSUVWXYZcdefghijklmnopqstuvwxyz")
"""First bytes of a line that `is_continuation` never accepts (no prefix, bracket or tag starts with them):
the common case, a timestamped or plain line, is decided without copying the line out."""


def is_continuation(line: bytes) -> bool:
    """A stack frame, an indented or closing line, a bare opening bracket, an HTML tag or an error body
    (`_BODY_LINE`): the body under the line that reported it (`Error code: 429` then `{`)."""
    return (
        line.startswith(_CONT_PREFIXES)
        or line.rstrip() in (b"{", b"[")
        or bool(_HTML_LINE.match(line))
        or bool(_BODY_LINE.match(line))
    ) and not _TS_HEAD.match(line)


def _line_at(buf: bytearray, start: int, stop: int) -> bytes:
    end = buf.find(b"\n", start, min(stop, start + 512))
    return bytes(buf[start : end if end >= 0 else min(stop, start + 512)])


def record_head(buf: bytearray, line_start: int, cut: int) -> int:
    """Where the record holding the line at `line_start` begins: that line, or up to CONT_LINES lines above it
    while each is a continuation (the first line that is not is the record's head)."""
    head = line_start
    if not head or buf[head] in _NOT_CONT_FIRST:  # the common line is no continuation
        return head
    for _ in range(CONT_LINES):
        if head == 0 or buf[head] in _NOT_CONT_FIRST or not is_continuation(_line_at(buf, head, cut)):
            break
        head = buf.rfind(b"\n", 0, head - 1) + 1
    return head


def example_of(text: str) -> str:
    """A record as shown in findings: whitespace collapsed, at most EXAMPLE_CHARS."""
    return " ".join(text.split())[:EXAMPLE_CHARS]
