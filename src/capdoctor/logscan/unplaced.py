"""What an error text holds when no row of the classifier placed it: the line between `none` and `inconclusive`.

Contract: `describe(text)` names the first mark of an error that capdoctor recognises without knowing its cause
(an exception class, a stack trace, an HTTP error status, a failed request, an error code or word), or None.
The scanner asks it only when it placed no error at all, over a bounded head of each input, so `none` is said
only of a text with no error in it and an error capdoctor cannot place is `inconclusive`. A line logged at INFO
or DEBUG holds no mark (as the words layer's `quiet_levels`), nor does a client's metadata record (a `[[quiet]]`
row of `outcomes.toml`); a stack frame marks a stack trace wherever it stands. Pure: no I/O, no classifier.
"""

from __future__ import annotations

import re

from capdoctor.logscan.outcomes import quiet

HEAD_BYTES = 1 << 20
"""How much of each input is read for the marks (the head of a quiet log; a paste is read whole)."""

FRAME = re.compile(
    r"Traceback \(most recent call last\)|^\s+File \"[^\"]+\", line \d+|^\s+at [\w.$<>]+\(|stack traceback:|"
    r"panicked at|^\s*#\d+\s+\S+ \(",
    re.M,
)
"""A stack trace: Python's header and frames, Java/JS/.NET frames, Lua's and Rust's."""

QUIET = re.compile(
    r"(?<![A-Za-z])(?:INFO|DEBUG|TRACE|NOTICE|VERBOSE)(?![A-Za-z])|\"level\" ?: ?\"(?:info|debug|trace)\"|"
    r"\blevel=(?:info|debug|trace)\b"
)
"""A line a program logged as chatter (the log levels of `words.toml`'s quiet_levels)."""

MARKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Fault|Failure))\b(?!\.\w)"),
        "an exception ({0})",
    ),
    (
        re.compile(
            r"(?i)(?:(?<![A-Za-z])(?:status(?:[ _]?code)?|http(?:/[\d.]+)?|error(?: code)?|api|code)\s*[:=]?\s*[\"']?"
            r"|\b(?:get|post|put|patch|delete)\s+\S+\s+|^\W{0,3})([45]\d\d)\b(?![\d.])"
        ),
        "HTTP status {0}",
    ),
    (re.compile(r"(?i)\b([45]\d\d) (?:errors?|status|\(no body\))"), "HTTP status {0}"),
    (
        re.compile(r"(?i)\b(?:request|fetch|call|connection|job|operation)s? (?:has |have )?(?:failed|errored)\b"),
        "a failed request",
    ),
    (re.compile(r"\b(ERR_[A-Z_]{3,}|E\d{3,5}(?=:)|GGML_ASSERT|E[A-Z]{3,}(?=[:\s]))"), "an error code ({0})"),
    (
        re.compile(
            r"(?i)\b(?:core dumped|segmentation fault|illegal instruction|instrucci[oó]n ilegal|core' generado)|"
            r"`core' generado"
        ),
        "a crash",
    ),
    (
        re.compile(
            r"(?i)\b(?:no response from|trouble connecting|unable to connect|could ?n[o']?t connect|cannot connect)"
        ),
        "a failed request",
    ),
    (
        re.compile(
            r"(?i)\b(?:errors?|exception|fail(?:ed|s|ure)?|fatal|panic(?:ked|s)?|crash(?:ed|es)?|abort(?:ed)?|killed|"
            r"time[sd]? ?out|refused|denied|invalid|undefined|unauthori[sz]ed|forbidden|not found|unknown error)\b"
        ),
        "an error",
    ),
    (
        re.compile(r"(?:错误|报错|出错|失败|异常|異常|故障|无法|超时|不足|エラー|오류|ошибк|fehler|erro[rs]?\b)", re.I),
        "an error",
    ),
)
"""Marks of an error, most specific first, each with how it is named (`{0}`: what the mark captured)."""


def describe(text: str) -> str | None:
    """The first recognised mark of an error in `text`, named (`an exception (KeyError)`), or None."""
    lines = [line for line in text.splitlines() if not quiet(line)]  # a client's metadata holds no mark
    spoken = [line for line in lines if not QUIET.search(line)]
    for pattern, name in MARKS:
        for line in spoken if name == "an error" else lines:  # a bare word in chatter is no error
            found = pattern.search(line)
            if found:
                return name.format(*(g for g in found.groups() if g))
    if FRAME.search("\n".join(lines)):
        return "a stack trace"
    return None
