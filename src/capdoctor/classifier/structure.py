"""The structure layer's readers: where a text puts its HTTP status, and the fields of its error body.

Contract: `StatusReader` is compiled once from the spellings of `statuses.toml`; `read(text, ids)` returns
the HTTP status (4xx/5xx) a text states in an error position, with the words that state it, trying only the
spellings in `ids` (the ones whose prefilter literal is in the text). A spelling that ordinary traffic also
uses counts only in context: `"status": 404` in a record without an error word, or `404 Not Found` right
after an access log's request line, is traffic, not an error. `extract_error(text, reader)` pulls
`{status, code, type, message}` out of JSON bodies, SSE `data:` events, Python-dict reprs and JSON nested in
strings, at any depth. Pure functions over strings: no I/O, no classification (that is `engine.py`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capdoctor.classifier import compiled
from capdoctor.classifier.gates import folded
from capdoctor.classifier.tables import STATUS_GROUP, Spelling

MAX_READ = 65536
"""Only this much of a text is read for fields and statuses (a huge body says what it says early)."""

_WORD = "A-Za-z0-9_"
ASCII_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
"""A word boundary between ASCII word characters and anything else. Python's `\\b` treats CJK characters as
word characters, so `报错OOM` or `返回HTTP 429` (Chinese text glues English terms on without a space) would
have no boundary before `OOM` or `HTTP`; the tables' `\\b` means this boundary instead."""
_BACKSLASH_B = re.compile(r"(?<!\\)((?:\\\\)*)\\b")


def ascii_words(pattern: str) -> str:
    """`pattern` with every `\\b` meaning an ASCII word boundary (see ASCII_BOUNDARY); `\\\\b` stays a
    backslash and a `b`."""
    return _BACKSLASH_B.sub(lambda m: m.group(1) + ASCII_BOUNDARY, pattern)


@dataclass(frozen=True)
class StatusHit:
    """An HTTP status found in a text: the status, the spelling that stated it and the span of those words."""

    status: int
    spelling: str
    start: int
    end: int


class StatusReader:
    """The compiled status spellings, with the context tests that keep ordinary traffic out."""

    def __init__(self, spellings: Sequence[Spelling], error_words: str, access_line: str) -> None:
        flags = re.IGNORECASE | re.MULTILINE
        self.spellings = tuple(spellings)
        self._flags = flags
        self._res: list[re.Pattern[str] | None] = [None] * len(self.spellings)
        """Compiled on first use (`pattern`): a process reads the few spellings its texts hold."""
        self._error_words_text = error_words
        self._access_line_text = access_line
        self._error_words: re.Pattern[str] | bool | None = False
        self._access_line: re.Pattern[str] | bool | None = False
        """The two context patterns, compiled on first use (`has_error_word`, `after_request`)."""

    def read(self, text: str, ids: Collection[int] | None = None) -> StatusHit | None:
        """The first error status stated in `text` by the spellings `ids` (all when None), else None.

        Spellings are tried in table order (most explicit first); the first that states a status in an
        error position wins.
        """
        text = text[:MAX_READ]
        error_word: bool | None = None
        for i in range(len(self.spellings)) if ids is None else sorted(ids):  # (a text triggers a few of ~70)
            sp = self.spellings[i]
            rx = self.pattern(i)
            for m in rx.finditer(text):
                if sp.not_after_request and self.after_request(text, m.start()):
                    continue
                if sp.needs_error_word:
                    if error_word is None:
                        error_word = self.has_error_word(text)
                    if not error_word:
                        break
                return StatusHit(int(m.group("s")), sp.id, m.start(), m.end())
        return None

    def pattern(self, i: int) -> re.Pattern[str]:
        """Spelling `i` compiled (once)."""
        rx = self._res[i]
        if rx is None:
            pattern = ascii_words(self.spellings[i].pattern.replace("{s}", STATUS_GROUP))
            rx = self._res[i] = compiled.pattern(pattern, self._flags)
        return rx

    def compile_all(self) -> None:
        """Compile every spelling and both context patterns now (`Engine.compile_all`)."""
        for i in range(len(self.spellings)):
            self.pattern(i)
        self.has_error_word("")
        self.after_request("", 0)

    def has_error_word(self, text: str) -> bool:
        """Whether `text` (its first MAX_READ characters) carries one of the tables' error words ("error",
        "failed", "invalid", "错误"…)."""
        if self._error_words is False:
            words = self._error_words_text
            self._error_words = compiled.pattern(ascii_words(words), self._flags) if words else None
        return isinstance(self._error_words, re.Pattern) and self._error_words.search(text, 0, MAX_READ) is not None

    def after_request(self, text: str, pos: int) -> bool:
        """True when the status at `pos` follows an access log's request line (`"GET /x HTTP/1.1" 404 …`)."""
        if self._access_line is False:
            line = self._access_line_text
            self._access_line = compiled.pattern(ascii_words(line), re.IGNORECASE) if line else None
        if not isinstance(self._access_line, re.Pattern):
            return False
        line_start = text.rfind("\n", 0, pos) + 1
        return self._access_line.search(text, line_start, pos) is not None


# ------------------------------------------------------------------------------------------ error fields
_FIELD_RES = {
    key: re.compile(
        rf"\\*[\"']{key}\\*[\"']\s*:\s*(?:\\*[\"'](?P<v>[^\"'\\\n]{{0,300}})\\*[\"']|"
        rf"(?P<n>-?\d+|null|None))",
        re.IGNORECASE,
    )
    for key in ("code", "type", "message", "status")
}
_MAX_JSON_TRIES = 12
_DECODER = json.JSONDecoder()
"""One decoder for every read (it holds no state between `raw_decode` calls)."""
_MAX_DEPTH = 6


def _decoded(text: str) -> list[Any]:
    """The JSON values that decode in `text` (and in its SSE `data:` lines), first ones first."""
    decoder = _DECODER
    chunks = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")] if "data:" in text else []
    chunks.append(text)
    out: list[Any] = []
    for chunk in chunks:
        start = 0
        for _ in range(_MAX_JSON_TRIES):
            idx = chunk.find("{", start)
            if idx < 0:
                break
            try:
                obj, end = decoder.raw_decode(chunk, idx)
            except ValueError:
                start = idx + 1
                continue
            out.append(obj)
            start = end
        if out:
            break
    return out


def _repr_dict(text: str) -> Any:
    """A Python dict repr (`{'error': {'code': 429, …}}`) as a value, when the text holds one."""
    import ast

    idx = text.find("{'")
    if idx < 0:
        return None
    depth = 0
    for end in range(idx, min(len(text), idx + MAX_READ)):
        ch = text[end]
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            try:
                return ast.literal_eval(text[idx : end + 1])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return None
    return None


def _as_status(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 100 <= value <= 599:
        return value
    if isinstance(value, str) and value.isdigit() and 100 <= int(value) <= 599:
        return int(value)
    return None


def _error_nodes(obj: Any, depth: int = 0) -> list[Mapping[str, Any]]:
    """Every mapping that carries error fields, outermost first; JSON inside strings is opened too."""
    if depth > _MAX_DEPTH:
        return []
    out: list[Mapping[str, Any]] = []
    if isinstance(obj, Mapping):
        if any(k in obj for k in ("message", "type", "code", "status")):
            out.append(obj)
        for value in obj.values():
            out += _error_nodes(value, depth + 1)
    elif isinstance(obj, list):
        for value in obj[:8]:
            out += _error_nodes(value, depth + 1)
    elif isinstance(obj, str) and "{" in obj and len(obj) < MAX_READ:
        for inner in _decoded(obj):
            out += _error_nodes(inner, depth + 1)
    return out


def _nodes(text: str) -> list[Mapping[str, Any]]:
    """The error objects of `text` (`_error_nodes`) in the JSON values it holds, else in a Python dict repr."""
    values = _decoded(text) or [v for v in (_repr_dict(text),) if v is not None]
    return [n for v in values for n in _error_nodes(v)]


def error_status(text: str) -> int | None:
    """`extract_error(text)["status"]`, reading only what the status needs: the first status of the error
    objects, else the `status` field, else a `code` field that is a status. The log scanner asks this of every
    new error text; the message, type and code fields it skips cost more than the status."""
    text = text[:MAX_READ]
    nodes = _nodes(text)
    if nodes:  # a node whose code is a status gives it here, so extract_error's code fallback adds nothing
        for node in nodes:
            status = _as_status(node.get("status")) or _as_status(node.get("code"))
            if status is not None:
                return status
        return None
    lower = folded(text)  # `ſtatus` folds to `status`, as the regexes read it
    for key in ("status", "code"):
        if lower is not None and key not in lower:
            continue
        m = _FIELD_RES[key].search(text)
        value = (m.group("v") if m.group("v") is not None else m.group("n")) if m else None
        if value not in (None, "null", "None", "") and (status := _as_status(value)) is not None:
            return status
    return None


def extract_error(text: str, reader: StatusReader | None = None) -> dict[str, Any]:
    """Pull `{status, code, type, message}` out of an error text, whatever wraps it.

    The innermost error object wins for `code`/`type`/`message` (a relay's "Provider returned error" wraps the
    provider's own words); `status` is the first HTTP status of any object, else what `reader` finds in the
    text. Missing values are None: the classifier must work on fragments too.
    """
    out: dict[str, Any] = {"status": None, "code": None, "type": None, "message": None}
    text = text[:MAX_READ]
    nodes = _nodes(text)
    for node in nodes:
        if out["status"] is None:
            out["status"] = _as_status(node.get("status")) or _as_status(node.get("code"))
        for key in ("code", "type", "message"):
            value = node.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                out[key] = value  # later (inner) nodes overwrite: the innermost error speaks
        google_status = node.get("status")
        if isinstance(google_status, str) and not _as_status(google_status) and google_status.isupper():
            out["type"] = google_status  # Google: "status": "RESOURCE_EXHAUSTED"
    if not nodes:
        for key, rx in _FIELD_RES.items():
            m = rx.search(text)
            if m:
                value = m.group("v") if m.group("v") is not None else m.group("n")
                if value not in (None, "null", "None", ""):
                    out[key] = value
        if out["status"] is not None:
            out["status"] = _as_status(out["status"])
    if isinstance(out["code"], str) and _as_status(out["code"]) and out["status"] is None:
        out["status"] = int(out["code"])
    if out["status"] is None and reader is not None:
        hit = reader.read(text)
        out["status"] = hit.status if hit else None
    return out
