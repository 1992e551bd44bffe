"""What one record's words say: its matches, providers, status, retry, model and whether it names request ids.

Contract: `judge(text, ids)` classifies one record (origin "log") with the literal ids the prefilter found in it
and returns its `Facts`; everything here depends on the record's text alone, so the scanner remembers the facts
by the record's key (`memo.RecordMemo`) and never judges the same text twice. The field readers (`find_model`,
`find_provider`, `find_request_ids`, `retried`) are public: `explain` and the `logs` glue read the same fields.
Pure: no I/O, no clock; it must not aggregate, decide verdicts or print.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from capdoctor.classifier.compiled import Gate
from capdoctor.classifier.gates import admits, folded, required
from capdoctor.classifier.signatures import SPECIFICITY, STRENGTH_RANK, Match, extract_error
from capdoctor.classifier.signatures import engine as classifier
from capdoctor.classifier.structure import StatusHit, error_status
from capdoctor.logscan import outcomes

RETRY = outcomes.retry_pattern()
MODEL_RE = re.compile(
    r"(?<![\w.-])((?:gpt|o[134]|chatgpt|codex)-[\w.:-]*\w|o[134](?:-mini|-pro)?(?=[\s,;\"')])|"
    r"claude-[\w.:-]*\w|gemini-[\w.:-]*\w|(?:llama|qwen|deepseek|mistral|mixtral|kimi|moonshot|grok|glm|"
    r"phi|gemma)[\w.:/-]*\w)(?![\w.:-]*[/\\])",  # a folder of a path (`~/gpt-5-tests/`) names no model
    re.IGNORECASE,
)
MODEL_FIELD = re.compile(r"[\"']?model[\"']?\s*[:=]\s*[\"'`]?([A-Za-z0-9][\w.:/-]{1,80})", re.IGNORECASE)
REQUEST_ID = re.compile(
    r"(req_[A-Za-z0-9]{12,})|request[ _-]?id[\"']?\s*[:=]?\s*[\"']?([A-Za-z0-9][A-Za-z0-9-]{7,})|"
    r"cf-ray[\"']?\s*[:=]\s*[\"']?([0-9a-f]{16}-[A-Z]{3})",
    re.IGNORECASE,
)
LOG_ONLY_HINTS = (
    ("ollama", r"ollama|:11434"),
    ("moonshot", r"moonshot|kimi"),
    ("deepseek", r"deepseek"),
    ("copilot", r"copilot"),
    ("cursor", r"cursor"),
)
"""Products named in logs that are not providers of their own in the catalogue (checked after them)."""


@dataclass(frozen=True)
class Facts:
    """What a record's words alone say, judged once per distinct text (see `memo.RecordMemo`): the matches that
    count (`relevant`), the provider each names, the status the record reports, whether it was retried and the
    model it names. `text` is the text they were judged on (its timestamp and ids may differ from a later
    record's)."""

    text: str
    matches: tuple[Match, ...]
    providers: tuple[str | None, ...]
    status: int
    retry: bool
    model: str | None = None
    request_ids: bool = True
    """Whether the text names request ids (`find_request_ids` runs per record only then: ids differ)."""
    sids: tuple[str, ...] = ()
    causes: tuple[str, ...] = ()
    """Each match's row id and cause value, read once here rather than per record."""


def relevant(matches: Sequence[Match]) -> list[Match]:
    """The matches that count for one record: the best of each cause (the engine ranks matches by strength,
    then by layer specificity), so a line that several rows of one cause describe counts once; and one error
    event names one cause unless its evidence really conflicts: a cause whose best match is weaker than the
    record's best, or as strong but from a less specific layer, does not count."""
    best: list[Match] = []
    seen: set[str] = set()
    for m in matches:
        if m.signature.cause.value not in seen:
            seen.add(m.signature.cause.value)
            best.append(m)
    if not best:
        return best
    top = best[0].signature
    rank = (STRENGTH_RANK[top.strength], SPECIFICITY[top.layer])
    return [m for m in best if (STRENGTH_RANK[m.signature.strength], SPECIFICITY[m.signature.layer]) >= rank]


def judge(text: str, ids: Collection[int]) -> Facts:
    """Classify one record (origin "log") with the literal ids the prefilter found in it, and read what follows
    from its words; every row the ids cannot trigger is skipped (`Engine.evaluate`)."""
    found, hit = classifier().evaluate(text, ids, origin="log")
    matches = relevant(found)
    if not matches or outcomes.quiet(text):  # a client's metadata record is never an error (`[[quiet]]`)
        return Facts(text, (), (), 0, False)
    lower = folded(text)
    hint = provider_hint(text, lower)
    return Facts(
        text,
        tuple(matches),
        tuple(hint or _prefix_provider(m.signature.id) for m in matches),
        record_status(text, hit),
        retried(text, lower),
        find_model(text, lower),
        bool(find_request_ids(text, lower)),
        tuple(m.signature.id for m in matches),
        tuple(m.signature.cause.value for m in matches),
    )


def record_status(text: str, hit: StatusHit | None) -> int:
    """The HTTP status a record reports, as `extract_error(text)["status"]` (0: none), reusing the status the
    engine already spelled out of the same text instead of reading every spelling again."""
    if "\\u" in text:  # the engine read the unescaped text: only the full read gives the same answer
        return extract_error(text)["status"] or 0
    status = error_status(text)
    if status is None and hit is not None and not hit.spelling.startswith("name:"):
        status = hit.status  # the first spelled status: what extract_error's own reader would find
    return status or 0


class _FieldGates(NamedTuple):
    model_field: Gate
    model: Gate
    request_id: Gate
    retry: Gate


@cache
def _gates() -> _FieldGates:
    """The gates (`gates.required`) of the field patterns: a text without any of a pattern's gate literals is not
    searched (Python's regex engine has no fast scan for these patterns' shapes)."""
    return _FieldGates(*(required(rx.pattern, rx.flags) for rx in (MODEL_FIELD, MODEL_RE, REQUEST_ID, RETRY)))


def retried(text: str, lower: str | None = None) -> bool:
    """Whether a record says the client retried (`RETRY`); `lower`: `gates.folded(text)` when the caller has it."""
    return admits(_gates().retry, folded(text) if lower is None else lower) and bool(RETRY.search(text))


def find_model(text: str, lower: str | None = None) -> str | None:
    """The model named in an error record (a `model` field first, else a known model-name shape); `lower` as in
    `retried`."""
    gates = _gates()
    lower = folded(text) if lower is None else lower
    if not admits(gates.model, lower):
        return None  # both ways end in a model-name shape
    m = MODEL_FIELD.search(text) if admits(gates.model_field, lower) else None
    if m and MODEL_RE.fullmatch(m.group(1)):
        return m.group(1).lower()
    m2 = MODEL_RE.search(text)
    if m2:
        return m2.group(1).lower().rstrip(".:")
    return None


def find_request_ids(text: str, lower: str | None = None) -> list[str]:
    """Request ids and cf-rays in an error record (what support asks for); `lower` as in `retried`."""
    out: list[str] = []
    if not admits(_gates().request_id, folded(text) if lower is None else lower):
        return out
    for m in REQUEST_ID.finditer(text):
        value = next(g for g in m.groups() if g)
        if value not in out and not value.lower().startswith("redacted"):
            out.append(value)
    return out[:3]


@cache
def provider_hints() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Provider named near an error: first each provider's own hosts (a host is the most specific word — a
    relay's URL can contain another provider's name, as in `api.groq.com/openai/v1`), then each provider's
    `log_hints` (catalogue order), then `LOG_ONLY_HINTS`; the first hit wins."""
    from capdoctor.providers.catalog import adapters

    hosts = [
        (a.name, "|".join(re.escape(h.lstrip(".")) for h in (*a.official_hosts, *a.url_hosts)))
        for a in adapters()
        if a.official_hosts or a.url_hosts
    ]
    words = [(a.name, a.log_hints) for a in adapters() if a.log_hints]
    return tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in (*hosts, *words, *LOG_ONLY_HINTS))


@cache
def _hint_words() -> tuple[tuple[str, tuple[str, ...] | None, re.Pattern[str]], ...]:
    """`provider_hints` with each pattern that is only an alternation of plain words (hosts, names) also as
    those words, lower-case: found by substring search, a fraction of the regex's cost."""
    out = []
    for name, rx in provider_hints():
        words = tuple(w.replace("\\.", ".").lower() for w in rx.pattern.split("|"))
        plain = all(re.fullmatch(r"[a-z0-9.:-]+", w) for w in words)
        out.append((name, words if plain else None, rx))
    return tuple(out)


def provider_hint(text: str, lower: str | None = None) -> str | None:
    """The provider an error record names by host or product word (see `provider_hints`), or None; `lower` as in
    `retried` (None where the text has no folded form: the patterns decide)."""
    lower = folded(text) if lower is None else lower
    for name, words, rx in _hint_words():
        if lower is not None and words is not None:
            if any(w in lower for w in words):
                return name
        elif rx.search(text):
            return name
    return None


def find_provider(text: str, signature_id: str) -> str | None:
    """The provider an error record names (host or product word), else the signature row's prefix."""
    return provider_hint(text) or _prefix_provider(signature_id)


@cache
def _hint_names() -> frozenset[str]:
    return frozenset(n for n, _ in provider_hints())


def _prefix_provider(signature_id: str) -> str | None:
    prefix = signature_id.split(".", 1)[0]
    return prefix if prefix in _hint_names() else None
