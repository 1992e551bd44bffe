"""The error-signature table and the classifier shared by the live probes and the log scanner.

Contract: `SIGNATURES` is loaded once from `signatures.toml` (data, not code). `classify(text, status=,
headers=, origin=)` returns every row that matches, best first, scored on *shapes*: the machine code/type
(strongest), then a phrase family, then a status-only family (weakest); a known HTTP status that fits the
row adds a little. `extract_error` pulls `{status, code, type, message}` out of JSON bodies, SSE `data:`
events and client wrapper text. Everything here is pure: no I/O after the table is read, no clock, no
network, and nothing heavy is imported, so probes, the log scanner and tests can call it freely.

It must not: decide a verdict (that is `verdict.py`), classify on the HTTP status alone above the weakest
tier (429 is also provider-side capacity), or print anything.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from capdoctor.model import Cause, Strength

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ORIGINS = ("body", "stream", "log", "exception")
"""Where a classified text came from: an HTTP body, an SSE event, a log line, or a client exception."""

SCORE_CODE = 3.0
SCORE_HEADER = 3.0
SCORE_PHRASE = 2.0
SCORE_STATUS_ONLY = 1.0
SCORE_STATUS_FIT = 0.5
FAMILY_PENALTY = 1.0
"""Specificity tiers: a machine code beats a phrase family, which beats a bare status family."""

STRENGTH_RANK = {Strength.STRONG: 3, Strength.MODERATE: 2, Strength.WEAK: 1, Strength.CONTEXT: 0,
                 Strength.AGAINST: 0}

EXCERPT_CHARS = 160

MEMORY_KINDS = ("ram", "vram", "kv-cache")
"""What ran out, for hardware rows that say: system RAM, GPU memory, or the GPU memory left for the KV cache."""


@dataclass(frozen=True)
class Signature:
    """One row of the table: what a failure looks like, what it means, and the one next step for it."""

    id: str
    cause: Cause
    strength: Strength
    title: str
    remedy: str
    source: str
    retryable: bool | None
    # Hardware rows only: which memory ran out (one of MEMORY_KINDS), read by the hardware check; None when
    # the text does not say (a generic "out of memory") or the row is not about memory.
    memory: str | None = None
    # The match spec (see the header of signatures.toml). `family` marks generic phrase families: they rank
    # below specific rows and the log scanner drops them when a specific row of the same cause matched.
    codes: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    statuses: tuple[int, ...] = ()
    status_only: bool = False
    status_strict: bool = False
    family: bool = False
    explains: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    origins: tuple[str, ...] = ORIGINS
    literals: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    _code_re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _phrase_re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _also_re: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)
    _unless_re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _header_re: tuple[tuple[str, re.Pattern[str]], ...] = field(default=(), repr=False, compare=False)
    _anchors: tuple[str, ...] = field(default=(), repr=False, compare=False)


@dataclass(frozen=True)
class Match:
    """One signature that matched a text: `score` is its specificity, `excerpt` the matched text (short)."""

    signature: Signature
    score: float
    excerpt: str


def _compile(row: Mapping[str, Any]) -> Signature:
    """Build one `Signature` from a TOML row, compiling its patterns once."""
    codes = tuple(str(c) for c in row.get("codes", ()))
    phrases = tuple(str(p) for p in row.get("phrases", ()))
    also = tuple(str(p) for p in row.get("also", ()))
    unless = tuple(str(p) for p in row.get("unless", ()))
    headers: list[tuple[str, str]] = []
    for cond in row.get("headers", ()):
        name, _, rx = str(cond).partition("=")
        headers.append((name.strip().lower(), rx))
    flags = re.IGNORECASE | re.DOTALL
    # Upper-case codes (Google's RESOURCE_EXHAUSTED, UNAVAILABLE) match case-sensitively: "unavailable" in
    # prose is not the status name. Other codes (snake_case types) match in any case.
    code_alts = [re.escape(c) if c.isupper() else f"(?i:{re.escape(c)})" for c in codes]
    memory = row.get("memory")
    if memory is not None and memory not in MEMORY_KINDS:
        raise ValueError(f"memory must be one of {', '.join(MEMORY_KINDS)}, not {memory!r}")
    code_re = (
        re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(code_alts) + r")(?![A-Za-z0-9_])")
        if codes else None
    )
    return Signature(
        id=str(row["id"]),
        cause=Cause(row["cause"]),
        strength=Strength(row["strength"]),
        title=str(row["title"]),
        remedy=str(row["remedy"]),
        source=str(row["source"]),
        retryable=row.get("retryable"),
        memory=None if memory is None else str(memory),
        codes=codes,
        phrases=phrases,
        also=also,
        unless=unless,
        statuses=tuple(int(s) for s in row.get("statuses", ())),
        status_only=bool(row.get("status_only", False)),
        status_strict=bool(row.get("status_strict", False)),
        family=bool(row.get("family", False)),
        explains=tuple(str(e) for e in row.get("explains", ())),
        headers=tuple(headers),
        origins=tuple(row.get("origins", ORIGINS)),
        literals=tuple(str(lit).lower() for lit in row.get("literals", ())),
        examples=tuple(str(e) for e in row.get("examples", ())),
        _code_re=code_re,
        _phrase_re=re.compile("|".join(f"(?:{p})" for p in phrases), flags) if phrases else None,
        _also_re=tuple(re.compile(p, flags) for p in also),
        _unless_re=re.compile("|".join(f"(?:{p})" for p in unless), flags) if unless else None,
        _header_re=tuple((n, re.compile(rx, re.IGNORECASE)) for n, rx in headers),
        # Text rows only match when one of their anchors (literals, codes) is in the text: a cheap gate
        # before the regexes, and the same invariant the log scanner's prefilter relies on.
        _anchors=(tuple(str(x).lower() for x in row.get("literals", ())) + tuple(c.lower() for c in codes))
        if (codes or phrases) else (),
    )


def load(text: str | None = None) -> tuple[Signature, ...]:
    """Parse the signature table (packaged `signatures.toml`, or `text`); ValueError names a bad row."""
    if text is None:
        text = resources.files("capdoctor").joinpath("signatures.toml").read_text("utf-8")
    raw = text
    data = tomllib.loads(raw)
    rows = data.get("signature", [])
    out = []
    seen: set[str] = set()
    for row in rows:
        try:
            sig = _compile(row)
        except (KeyError, ValueError, re.error) as exc:
            raise ValueError(f"signatures.toml: bad row {row.get('id', '?')}: {exc}") from exc
        if sig.id in seen:
            raise ValueError(f"signatures.toml: duplicate id {sig.id}")
        seen.add(sig.id)
        out.append(sig)
    return tuple(out)


SIGNATURES: tuple[Signature, ...] = load()
BY_ID: dict[str, Signature] = {s.id: s for s in SIGNATURES}
_unknown = sorted({e for s in SIGNATURES for e in s.explains} - set(BY_ID))
if _unknown:  # a typo in the data file must fail loudly at import, in tests, not silently in the field
    raise ValueError(f"signatures.toml: explains names unknown ids: {', '.join(_unknown)}")


# ----------------------------------------------------------------------------------------- extract_error
_STATUS_PATTERNS = (
    r"api error:?\s*\(?\s*(?P<s>[1-5]\d\d)\b",
    r"error code:?\s*(?P<s>[1-5]\d\d)\b",
    r"unexpected status:?\s*(?P<s>[1-5]\d\d)\b",
    r"last status:?\s*(?P<s>[1-5]\d\d)\b",
    r"\bhttp(?:/[\d.]+)?[\s:]+(?P<s>[1-5]\d\d)\b",
    r"status(?:[ _]?code)?[\"']?\s*[:=]\s*[\"']?(?P<s>[1-5]\d\d)\b",
    r"\bstatus\s+(?P<s>[1-5]\d\d)\b",
    r"request rejected \((?P<s>[1-5]\d\d)\)",
    r"(?:^|[\s:\[(])(?P<s>[1-5]\d\d)\s+(?:too many requests|service unavailable|internal server error|"
    r"bad gateway|gateway time-?out|unauthorized|forbidden|not found|bad request|payment required|"
    r"proxy authentication required|overloaded|resource_exhausted|failed_precondition|unavailable)\b",
    r"^\W{0,3}(?P<s>[1-5]\d\d)\s+[\[{A-Za-z]",
    r"(?:error|failed)[^\n]{0,20}?\b(?P<s>[1-5]\d\d)\s*[-:{]",
    r"\"code\"\s*:\s*(?P<s>[1-5]\d\d)\b",
    r"'code'\s*:\s*'?(?P<s>[1-5]\d\d)\b",
)
_STATUS_RES = tuple(re.compile(p, re.IGNORECASE | re.MULTILINE) for p in _STATUS_PATTERNS)
"""Where wrappers put the HTTP status, most explicit first: the first pattern that matches wins."""
_FIELD_RES = {
    key: re.compile(rf"[\"']{key}[\"']\s*:\s*(?:[\"'](?P<v>[^\"'\n]{{0,300}})[\"']|(?P<n>-?\d+|null|None))",
                    re.IGNORECASE)
    for key in ("code", "type", "message", "status")
}
_MAX_JSON_TRIES = 12


def _first_json(text: str) -> Any:
    """The first JSON object that decodes in `text` (or in its SSE `data:` lines), else None."""
    decoder = json.JSONDecoder()
    candidates = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
    candidates.append(text)
    for chunk in candidates:
        start = 0
        for _ in range(_MAX_JSON_TRIES):
            idx = chunk.find("{", start)
            if idx < 0:
                break
            try:
                obj, _end = decoder.raw_decode(chunk, idx)
            except ValueError:
                start = idx + 1
                continue
            if isinstance(obj, dict):
                return obj
            start = idx + 1
    return None


def _error_node(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The innermost mapping that carries the error fields (`error`, `response.error`, `error.error`)."""
    node: Mapping[str, Any] = obj
    for _ in range(4):
        resp = node.get("response")
        if isinstance(resp, Mapping) and isinstance(resp.get("error"), Mapping):
            node = resp["error"]
            continue
        inner = node.get("error")
        if isinstance(inner, Mapping):
            node = inner
            continue
        break
    return node


def _as_status(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 100 <= value <= 599:
        return value
    if isinstance(value, str) and value.isdigit() and 100 <= int(value) <= 599:
        return int(value)
    return None


def extract_error(text: str) -> dict[str, Any]:
    """Pull `{status, code, type, message}` out of an error text, whatever wraps it.

    Understands JSON bodies (`{"error":{...}}`, Anthropic's `{"type":"error","error":{...}}`, Responses API
    `response.failed` events), SSE `data:` lines, Python-repr dicts and client wrappers such as
    `API Error: 529 {...}` or `unexpected status 403 Forbidden: ...`. Missing values are None: callers read
    what is there, since the classifier must work on fragments too.
    """
    out: dict[str, Any] = {"status": None, "code": None, "type": None, "message": None}
    text = text[:65536]
    obj = _first_json(text)
    if isinstance(obj, Mapping):
        node = _error_node(obj)
        for key in ("code", "type", "message"):
            value = node.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                out[key] = value
        out["status"] = (_as_status(obj.get("status")) or _as_status(node.get("code"))
                         or _as_status(node.get("status")))
        google_status = node.get("status")
        if out["type"] is None and isinstance(google_status, str) and not _as_status(google_status):
            out["type"] = google_status  # Google: "status": "RESOURCE_EXHAUSTED"
    for key, rx in _FIELD_RES.items():
        if obj is not None or key == "status" or out.get(key) is not None:
            continue
        m = rx.search(text)
        if m:
            value = m.group("v") if m.group("v") is not None else m.group("n")
            if value not in (None, "null", "None", ""):
                out[key] = value
    if isinstance(out["code"], str) and _as_status(out["code"]) and out["status"] is None:
        out["status"] = int(out["code"])
    if out["status"] is None:
        for rx in _STATUS_RES:
            m = rx.search(text)
            if m:
                out["status"] = int(m.group("s"))
                break
    return out


# ----------------------------------------------------------------------------------------------- classify
def _excerpt(text: str, start: int, end: int) -> str:
    """The matched span with a little context, on one line, at most EXCERPT_CHARS long."""
    pad = max(0, (EXCERPT_CHARS - (end - start)) // 2)
    lo, hi = max(0, start - pad), min(len(text), end + pad)
    piece = " ".join(text[lo:hi].split())
    return piece[:EXCERPT_CHARS]


def _headers_ok(sig: Signature, headers: Mapping[str, str] | None) -> bool:
    if not sig._header_re:
        return True
    if not headers:
        return False
    lower = {k.lower(): v for k, v in headers.items()}
    for name, rx in sig._header_re:
        if not any(re.fullmatch(name, k) and rx.search(str(v)) for k, v in lower.items()):
            return False
    return True


def _match_one(sig: Signature, text: str, status: int | None, headers: Mapping[str, str] | None,
               origin: str, lowered: str | None = None) -> Match | None:
    """Score one signature against one text, or None when it does not match."""
    if origin not in sig.origins:
        return None
    # None of the row's anchors in the text: its patterns cannot match (the table's invariant), so only
    # header conditions are left to test.
    text_possible = lowered is None or not sig._anchors or any(a in lowered for a in sig._anchors)
    if not text_possible and not sig._header_re:
        return None
    if sig.status_strict and sig.statuses and status not in sig.statuses:
        return None
    header_hit = bool(sig._header_re) and _headers_ok(sig, headers)
    score = 0.0
    span: tuple[int, int] | None = None
    if sig._code_re is not None and text_possible:
        m = sig._code_re.search(text)
        if m:
            score = SCORE_CODE
            span = m.span()
    if sig._phrase_re is not None and text_possible:
        m = sig._phrase_re.search(text)
        if m:
            score = max(score, SCORE_PHRASE) + (0.5 if score else 0.0)
            span = span or m.span()
    if header_hit:
        score = max(score, SCORE_HEADER)
    if score == 0.0 and sig.status_only and status is not None and status in sig.statuses:
        score = SCORE_STATUS_ONLY
    if score == 0.0:
        return None
    if sig._unless_re is not None and sig._unless_re.search(text):
        return None
    if any(not rx.search(text) for rx in sig._also_re):
        return None
    if status is not None and status in sig.statuses and not sig.status_only:
        score += SCORE_STATUS_FIT
    if sig.family:
        score -= FAMILY_PENALTY
    if span is None:
        excerpt = f"HTTP {status}" if status is not None else " ".join(text.split())[:EXCERPT_CHARS]
        if header_hit and headers:
            names = ", ".join(f"{n}" for n, _ in sig._header_re)
            excerpt = f"headers: {names}"
    else:
        excerpt = _excerpt(text, *span)
    return Match(sig, score, excerpt)


def _header_error_text(headers: Mapping[str, str] | None) -> str:
    """The JSON error some backends put in a header (Codex: base64 `x-error-json`), as extra text to read."""
    if not headers:
        return ""
    for name, value in headers.items():
        if name.lower() == "x-error-json" and value:
            import base64
            import binascii

            try:
                decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=False)
                return "\n" + decoded.decode("utf-8", "replace")[:4096]
            except (binascii.Error, ValueError):
                return ""
    return ""


def classify(
    text: str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    origin: str = "body",
    signatures: Sequence[Signature] | None = None,
) -> list[Match]:
    """Every signature that matches `text`, best first (most specific, then strongest); [] when none does.

    `status` is the HTTP status when the caller knows it (a probe); otherwise it is read from the text
    (`API Error: 529 …`); a base64 `x-error-json` header is decoded and read too. Status alone only ever
    reaches the status-only families, the weakest tier, since the same status means different causes at
    different providers. `origin` says where the text came from
    (`body`, `stream`, `log`, `exception`) so rows that only make sense in one place can say so.
    """
    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r} (one of {', '.join(ORIGINS)})")
    text = text + _header_error_text(headers)
    if status is None and text:
        status = extract_error(text)["status"]
    rows = SIGNATURES if signatures is None else signatures
    lowered = text.lower()
    found = [m for m in (_match_one(s, text, status, headers, origin, lowered) for s in rows) if m is not None]
    order = {s.id: i for i, s in enumerate(rows)}
    found.sort(key=lambda m: (-m.score, -STRENGTH_RANK[m.signature.strength], order[m.signature.id]))
    return found


def best_match(
    text: str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    origin: str = "body",
) -> Match | None:
    """The single most specific match for `text` (see `classify`), or None."""
    found = classify(text, status=status, headers=headers, origin=origin)
    return found[0] if found else None


@lru_cache(maxsize=1)
def all_literals() -> tuple[str, ...]:
    """Every prefilter literal of the table, lower-case and deduplicated: the log scanner's anchors."""
    seen: dict[str, None] = {}
    for sig in SIGNATURES:
        for lit in sig.literals:
            seen.setdefault(lit, None)
        for code in sig.codes:
            seen.setdefault(code.lower(), None)
    return tuple(seen)
