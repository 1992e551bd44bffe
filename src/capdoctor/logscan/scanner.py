"""The streaming scanner: raw bytes in, classified error records and per-signature statistics out.

Contract: `scan(sources, options)` reads every source in large binary chunks (a carried-over tail joins
lines split at chunk boundaries), runs ONE multi-pattern prefilter over each chunk, and decodes only the
candidate lines, which it groups into records (a timestamped line plus the stack-trace/JSON continuation
lines under it), classifies them with the one classification engine (`capdoctor.classifier.signatures`, origin
"log") and aggregates; the prefilter's literals are the engine's own (`Engine.literals()`). It never holds a
whole line when a line is huge (a window around each match is used instead), and it spreads big plain
files over the CPU cores in byte ranges. Every unreadable input becomes a `FileInfo` with `skipped` set;
nothing here raises for bad input. It must not print, decide verdicts, or touch the network.
"""

from __future__ import annotations

import gc
import io
import os
import re
import sys
from bisect import bisect_right
from collections import Counter, OrderedDict
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any, NamedTuple

from capdoctor.classifier.compiled import Gate
from capdoctor.classifier.digits import ZEROS, cannot_match, reads_digits
from capdoctor.classifier.engine import Reading
from capdoctor.classifier.gates import admits, folded, required
from capdoctor.classifier.signatures import SPECIFICITY, STRENGTH_RANK, Match, extract_error
from capdoctor.classifier.signatures import engine as classifier
from capdoctor.classifier.structure import StatusHit, error_status, status_unread
from capdoctor.logscan import outcomes, unplaced
from capdoctor.logscan import sources as src
from capdoctor.logscan.timestamps import parse_timestamp

MAX_LINE = 64 * 1024
"""A line longer than this is not decoded whole: a window of WINDOW bytes around each match is used."""
WINDOW = 2048
CARRY_CAP = 1024 * 1024
"""A tail without a newline longer than this is scanned as is (a huge line), not carried further."""
RECORD_CHARS = 8192
CONT_LINES = 40
"""How many continuation lines (stack frames, a pretty-printed JSON or HTML error body) may sit under a
record's first line: a status on the first line and the provider's words deep in the body are one error."""
SUCCESS_MARKERS = outcomes.success_markers()
"""Bytes that mean a request completed (`outcomes.toml`): an error they follow recovered; used for 'retries that
eventually succeeded' and 'went quiet'."""
SUCCESS_WINDOW = 256 * 1024
_UNSEARCHED = sys.maxsize
"""A marker's search start before any search in a chunk (`_FileScanner._succeeded`)."""
MAX_EVENTS = 200_000
"""Events kept for the time patterns; counts stay exact beyond this, only the time series is capped."""
PARALLEL_MIN_BYTES = 64 * 1024 * 1024
"""Plain data above this is split over the CPU cores (process start-up costs more than it saves below)."""
PIECE_MIN_BYTES = 16 * 1024 * 1024
PIECE_MAX_BYTES = 256 * 1024 * 1024
TAIL_SHARE = 5
"""A big file is cut into byte ranges handed out in order as workers come free (`_pieces`): one per worker for
most of it, then smaller ones for its last 1/TAIL_SHARE (none under PIECE_MIN_BYTES, none over PIECE_MAX_BYTES).
Errors cluster in time: an incident's dense stretch makes one worker's range slower, and the other workers take
the small ones meanwhile instead of waiting for it. A worker keeps one memo for all its ranges (`_Worker`), so
cutting the file judges no text more often."""
EXAMPLE_CHARS = 300
KEPT_IDS = 5
"""Request ids kept per signature: enough for a support ticket."""

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
_RETRY = outcomes.retry_pattern()
MODEL_RE = re.compile(
    r"(?<![\w.-])((?:gpt|o[134]|chatgpt|codex)-[\w.:-]*\w|o[134](?:-mini|-pro)?(?=[\s,;\"')])|"
    r"claude-[\w.:-]*\w|gemini-[\w.:-]*\w|(?:llama|qwen|deepseek|mistral|mixtral|kimi|moonshot|grok|glm|"
    r"phi|gemma)[\w.:/-]*\w)(?![\w.:-]*[/\\])",  # a folder of a path (`~/gpt-5-tests/`) names no model
    re.IGNORECASE,
)
_MODEL_FIELD = re.compile(r"[\"']?model[\"']?\s*[:=]\s*[\"'`]?([A-Za-z0-9][\w.:/-]{1,80})", re.IGNORECASE)
_REQUEST_ID = re.compile(
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


@dataclass
class FileInfo:
    """One input as reported in `files[]`: bytes and lines read, and why it was skipped (if it was)."""

    path: str
    bytes: int = 0
    lines: int = 0
    skipped: str | None = None
    note: str | None = None


class Event(NamedTuple):
    """One classified error record: when, what, which model, whether it was retried and whether a request
    completed soon after it (`succeeded`: it recovered).

    A named tuple rather than a frozen dataclass: a dense log makes one per error record in a worker and
    sends them all to the parent; a tuple is built and pickled at a fraction of the cost, and is as immutable.
    """

    ts: datetime | None
    cause: str
    signature: str
    model: str | None
    retry: bool
    succeeded: bool
    path: str
    line: int
    offset: int


@dataclass
class SigStat:
    """Everything aggregated for one signature over all inputs."""

    signature: str
    cause: str
    count: int = 0
    first: datetime | None = None
    last: datetime | None = None
    example: str = ""
    excerpt: str = ""
    """The words that decided the first match (the engine's excerpt), for `explain`'s evidence."""
    example_path: str = ""
    example_line: int = 0
    models: Counter[str] = field(default_factory=Counter)
    providers: Counter[str] = field(default_factory=Counter)
    request_ids: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)

    def merge(self, other: SigStat) -> None:
        """Fold `other` (the same signature from another file or byte range) into this one."""
        self.count += other.count
        self.first = _min_dt(self.first, other.first)
        self.last = _max_dt(self.last, other.last)
        if not self.example:
            self.example, self.example_path, self.example_line = other.example, other.example_path, other.example_line
            self.excerpt = other.excerpt
        self.models.update(other.models)
        self.providers.update(other.providers)
        self.statuses.update(other.statuses)
        self.keep_ids(other.request_ids)

    def keep_ids(self, rids: Sequence[str]) -> None:
        """Keep the first KEPT_IDS distinct request ids (what a support ticket needs; the rest add nothing)."""
        kept = self.request_ids
        for rid in rids:
            if len(kept) >= KEPT_IDS:
                return
            if rid not in kept:
                kept.append(rid)

    @property
    def ids_open(self) -> bool:
        """Whether another request id would still be kept."""
        return len(self.request_ids) < KEPT_IDS


@dataclass
class ScanResult:
    """The scanner's output: per-file facts, per-signature statistics, and the error events in order."""

    files: list[FileInfo] = field(default_factory=list)
    stats: dict[str, SigStat] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    events_dropped: int = 0
    too_old: int = 0
    """Error records left out because they are older than --since."""
    engine: str = ""
    last_success: dict[str, int] = field(default_factory=dict)
    """Per path: absolute offset of the first completed request after the newest error seen while scanning
    (-1: none). Enough to tell whether the log 'went quiet' on its last error."""
    unplaced: str = ""
    """When no error was placed at all: the first mark of an error the inputs hold all the same, named
    (`unplaced.describe`: "an exception (KeyError)"); empty when they hold none. `none` is said only then."""

    def __getstate__(self) -> dict[str, Any]:
        """The pickled form (a worker's result on its way to the parent): the events as columns, one per field
        (a column of repeated names and paths pickles as references, and unpickling builds no tuple per event but
        the event itself), each event's UTC time as whole microseconds since the epoch, exactly (pickling a
        datetime costs twenty times more). A dense log sends tens of thousands of events: 62,000 took ~140 ms to
        pickle and unpickle row by row, ~80 ms as columns."""
        state = self.__dict__.copy()
        columns: list[Any] = [list(c) for c in zip(*self.events, strict=True)] or [[] for _ in Event._fields]
        columns[0] = [_micros(t) for t in columns[0]]
        state["events"] = columns
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        columns = state["events"]
        epoch, delta, new = _EPOCH, timedelta, tuple.__new__  # `_micros` undone, inline: once per event
        columns[0] = [epoch + delta(0, 0, t) if t.__class__ is int else t for t in columns[0]]
        state["events"] = [new(Event, e) for e in zip(*columns, strict=True)]
        self.__dict__.update(state)

    def merge(self, other: ScanResult) -> None:
        """Fold a partial result (another process's byte range) into this one."""
        by_path = {f.path: f for f in self.files}
        for info in other.files:
            mine = by_path.get(info.path)
            if mine is None:
                self.files.append(info)
                by_path[info.path] = info
            else:
                mine.bytes += info.bytes
                mine.lines += info.lines
                mine.skipped = mine.skipped or info.skipped
                mine.note = mine.note or info.note
        for sid, stat in other.stats.items():
            if sid in self.stats:
                self.stats[sid].merge(stat)
            else:
                self.stats[sid] = stat
        room = MAX_EVENTS - len(self.events)
        self.events.extend(other.events[: max(room, 0)])
        self.events_dropped += other.events_dropped + max(0, len(other.events) - max(room, 0))
        self.too_old += other.too_old
        for path, off in other.last_success.items():
            self.last_success[path] = max(self.last_success.get(path, -1), off)
        self.engine = self.engine or other.engine


@dataclass(frozen=True)
class ScanOptions:
    """How to scan: the cut-off instant, the clock value for syslog years, and the engine preference."""

    since: datetime | None = None
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    engine: str | None = None
    workers: int | None = None
    chunk_bytes: int = src.CHUNK_BYTES


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def _micros(ts: datetime | None) -> int | datetime | None:
    """A UTC time as whole microseconds since the epoch (exact); any other value as it is."""
    return (ts - _EPOCH) // _MICROSECOND if ts is not None and ts.tzinfo is timezone.utc else ts


def _min_dt(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def _max_dt(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def relevant(matches: Sequence[Match]) -> list[Match]:
    """The matches that count for one record: the best of each cause (the engine ranks matches by strength,
    then by layer specificity), so a line that several rows of one cause describe ("network error: error
    decoding body", a 429 backed by "rate limit exceeded") counts once; and one error event names one cause
    unless its evidence really conflicts: a cause whose best match is weaker than the record's best, or as
    strong but from a less specific layer (a generic phrase beside a provider's own code), does not count."""
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


class _FieldGates(NamedTuple):
    model_field: Gate
    model: Gate
    request_id: Gate
    retry: Gate


@cache
def _gates() -> _FieldGates:
    """The gates (`gates.required`) of `_MODEL_FIELD`, `MODEL_RE`, `_REQUEST_ID` and `_RETRY`: a text without any
    of a pattern's gate literals is not searched (judged once per new error text; Python's regex engine has no
    fast scan for these patterns' shapes)."""
    return _FieldGates(*(required(rx.pattern, rx.flags) for rx in (_MODEL_FIELD, MODEL_RE, _REQUEST_ID, _RETRY)))


def find_model(text: str, lower: str | None = None) -> str | None:
    """The model named in an error record (a `model` field first, else a known model-name shape); `lower`:
    `gates.folded(text)` when the caller has it."""
    gates = _gates()
    field_gate, model_gate = gates.model_field, gates.model
    lower = folded(text) if lower is None else lower
    if not admits(model_gate, lower):
        return None  # both ways end in a model-name shape
    m = _MODEL_FIELD.search(text) if admits(field_gate, lower) else None
    if m and MODEL_RE.fullmatch(m.group(1)):
        return m.group(1).lower()
    m2 = MODEL_RE.search(text)
    if m2:
        return m2.group(1).lower().rstrip(".:")
    return None


def find_provider(text: str, signature_id: str) -> str | None:
    """The provider an error record names (host or product word), else the signature row's prefix."""
    return provider_hint(text) or _prefix_provider(signature_id)


def find_request_ids(text: str, lower: str | None = None) -> list[str]:
    """Request ids and cf-rays in an error record (what support asks for); `lower` as in `find_model`."""
    out: list[str] = []
    if not admits(_gates().request_id, folded(text) if lower is None else lower):
        return out
    for m in _REQUEST_ID.finditer(text):
        value = next(g for g in m.groups() if g)
        if value not in out and not value.lower().startswith("redacted"):
            out.append(value)
    return out[:3]


@cache
def _hint_words() -> tuple[tuple[str, tuple[str, ...] | None, re.Pattern[str]], ...]:
    """`provider_hints` with each pattern that is only an alternation of plain words (hosts, names) also as
    those words, lower-case: found by substring search, which costs a fraction of the regex's."""
    out = []
    for name, rx in provider_hints():
        words = tuple(w.replace("\\.", ".").lower() for w in rx.pattern.split("|"))
        plain = all(re.fullmatch(r"[a-z0-9.:-]+", w) for w in words)
        out.append((name, words if plain else None, rx))
    return tuple(out)


@cache
def _hint_flat() -> tuple[tuple[str, str], ...] | None:
    """Every hint word with its provider, in `provider_hints` order, when every hint is plain words (else None):
    the first word found names the provider the ordered hints name, since each provider's words come before
    the next provider's."""
    hints = _hint_words()
    if any(words is None for _, words, _ in hints):
        return None
    first: dict[str, str] = {}
    for name, words, _ in hints:
        for word in words or ():
            first.setdefault(word, name)  # a word seen before is found there first
    return tuple(first.items())


def provider_hint(text: str, lower: str | None = None) -> str | None:
    """The provider an error record names by host or product word (see `provider_hints`), or None; `lower` as
    in `find_model`."""
    return _hint_and_free(text, folded(text) if lower is None else lower)[0]


def _hint_and_free(text: str, lower: str | None) -> tuple[str | None, int | None]:
    """`provider_hint`, and where the text's first hint word without a digit stands (`hint_positions`; None when
    the words cannot tell and the patterns decide)."""
    positions = hint_positions(lower)
    if positions is None:
        return _hint_by_patterns(text, lower), None
    return _hint_at(positions[0]), positions[1]


def _hint_at(position: int) -> str | None:
    """The provider the hint word at `position` in `_hint_flat` names (None: past the end, no word found)."""
    flat = _hint_flat() or ()
    return flat[position][1] if position < len(flat) else None


def _hint_by_patterns(text: str, lower: str | None) -> str | None:
    """`provider_hint` where the hints are not all plain words, or the text has no folded form."""
    for name, words, rx in _hint_words():
        if lower is not None and words is not None:
            if any(w in lower for w in words):
                return name
        elif rx.search(text):
            return name
    return None


@cache
def _hint_digit_words() -> tuple[int, ...]:
    """The positions in `_hint_flat` of the hint words with a digit in them (`:11434`): the only ones whose
    presence can differ between two texts that differ only in their digits' values."""
    return tuple(k for k, (word, _) in enumerate(_hint_flat() or ()) if any(ch.isdigit() for ch in word))


def hint_positions(lower: str | None) -> tuple[int, int] | None:
    """Where in `_hint_flat` the first hint word the folded text `lower` holds stands, and the first one without
    a digit (each the list's length when none), in one pass; None when the hints are not plain words or there is
    no folded text (`gates.folded`). The first names the provider (`provider_hint`); the second is what
    `hint_like` reads the provider of a text differing only in its digits' values from."""
    flat = _hint_flat()
    if lower is None or flat is None:
        return None
    digits = _hint_digit_words()
    first = -1
    for k, (word, _) in enumerate(flat):
        if word in lower:
            if first < 0:
                first = k
            if k not in digits:
                return first, k
    return (len(flat) if first < 0 else first), len(flat)


def hint_like(text: str, lower: str | None, free: int | None) -> str | None:
    """`provider_hint(text, lower)` for a text whose digit-free hint words are those of a text whose first one
    stood at `free` (`hint_positions`; None: unknown, read in full): a hint word with a digit found before it
    comes first."""
    flat = _hint_flat()
    if free is None or lower is None or flat is None:
        return provider_hint(text, lower)
    for k in _hint_digit_words():
        if k < free and flat[k][0] in lower:
            return flat[k][1]
    return _hint_at(free)


@cache
def _hint_names() -> frozenset[str]:
    return frozenset(n for n, _ in provider_hints())


def _prefix_provider(signature_id: str) -> str | None:
    prefix = signature_id.split(".", 1)[0]
    return prefix if prefix in _hint_names() else None


@dataclass(frozen=True)
class Facts:
    """What a record's words alone say, judged once per distinct text (see `RecordMemo`): the matches that
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
    """Each match's row id and cause value, read once here rather than per record (`_record`)."""
    reading: Reading | None = None
    """What the engine read of the text's digits (`Engine.read`): records differing only there are judged
    alike (`judge_like`). None: it read more."""
    free_hint: int | None = None
    """Where the text's first hint word without a digit stands in the hint list (`hint_positions`)."""


def record_status(text: str, hit: StatusHit | None) -> int:
    """The HTTP status a record reports, as `extract_error(text)["status"]` (0: none), reusing the status the
    engine already spelled out of the same text instead of reading every spelling again."""
    if "\\u" in text:  # the engine read the unescaped text: only the full read gives the same answer
        return extract_error(text)["status"] or 0
    status = error_status(text)
    if status is None and hit is not None and not hit.spelling.startswith("name:"):
        status = hit.status  # the first spelled status: what extract_error's own reader would find
    return status or 0


def retried(text: str, lower: str | None = None) -> bool:
    """Whether a record says the client retried (`_RETRY`), the regex behind its gate (`_gates`); `lower` as in
    `find_model`."""
    return admits(_gates().retry, folded(text) if lower is None else lower) and bool(_RETRY.search(text))


def judge(text: str, ids: Collection[int]) -> Facts:
    """Classify one record (origin "log") with the literal ids the prefilter found in it, and read what
    follows from its words; every row the ids cannot trigger is skipped (`Engine.evaluate`). The facts keep what
    the engine read of the text's digits (`Engine.read`), for `judge_like`."""
    found, hit, reading = classifier().read(text, ids)
    matches = relevant(found)
    if not matches or outcomes.quiet(text):  # a client's metadata record is never an error (`[[quiet]]`)
        return Facts(text, (), (), 0, False, reading=reading)
    lower = folded(text)
    hint, free = _hint_and_free(text, lower)
    providers = tuple(hint or _prefix_provider(m.signature.id) for m in matches)
    return Facts(
        text,
        tuple(matches),
        providers,
        record_status(text, hit),
        retried(text, lower),
        find_model(text, lower),
        bool(find_request_ids(text, lower)),
        tuple(m.signature.id for m in matches),
        tuple(m.signature.cause.value for m in matches),
        reading,
        free,
    )


def judge_like(template: Facts, text: str, ids: Collection[int]) -> Facts | None:
    """`judge(text, ids)` for a record whose key has the shape of the one `template` was judged for (the same
    bytes but for the values of ASCII digits: `Retry in 17s`, `Retry in 42s`), or None when the engine reads it
    otherwise (`Engine.reread`: another status, a row that reads digits deciding otherwise, other literals).

    The engine's matches are the template's; the provider, status and model are read from the record's own words
    (its retry and request-id words read no digit's value: the template's hold), so the facts are `template`
    itself when those agree (counted as its repeats) and otherwise new facts that keep the template's text (its
    excerpts are that text's)."""
    reading = template.reading
    if reading is None:
        return None
    lower = folded(text)
    same, hit = classifier().reread(text, ids, reading, lower)
    if not same:
        return None
    if not template.matches:
        return template
    hint = hint_like(text, lower, template.free_hint)
    blind_retry, blind_ids = _blind_fields()
    providers = tuple(hint or _prefix_provider(sid) for sid in template.sids)
    status = record_status(text, hit)
    retry = template.retry if blind_retry else retried(text, lower)
    model = find_model(text, lower)
    request_ids = template.request_ids if blind_ids else bool(find_request_ids(text, lower))
    if (providers, status, retry, model, request_ids) == (
        template.providers,
        template.status,
        template.retry,
        template.model,
        template.request_ids,
    ):
        return template  # (compared before any new facts are made: the common case makes none)
    return Facts(
        template.text,
        template.matches,
        providers,
        status,
        retry,
        model,
        request_ids,
        template.sids,
        template.causes,
        reading,
        template.free_hint,
    )


def settles(template: Facts, shape: str, span: tuple[int, int] | None = None, reference: str | None = None) -> bool:
    """Whether `judge_like(template, text, ids)` gives the same for every record text of `shape` (the text with
    each ASCII digit read as `0`) in which the prefilter finds the literals `template` was read with: the engine
    reads them all alike (`Engine.settles`), and nothing `judge_like` reads of their words can be in any of them:
    a status field, a model, a hint word with a digit (`digits.cannot_match`). Then a record of that shape whose
    literals are those is counted as the first one was judged (`RecordMemo.find`), without judging it (~5–15 µs
    a record less).

    With `span` (start, end), for the record texts of `shape` that differ from `reference` (the text `template` was
    judged for, or one `judge_like` judged as `template`) only in the digits of `shape[start:end]`: the engine
    reads them alike, and what `judge_like` reads of their words reads no character of the span
    (`digits.cannot_match` with the span, `status_unread` with the reference): the status, the model and the hint
    words are in all of them what they are in the reference."""
    reading = template.reading  # (positions are characters: `folded` keeps them, one character for one)
    if reading is None or not classifier().settles(reading, shape, span):
        return False
    if not template.matches:
        return True  # (`judge_like` reads nothing more of a quiet record)
    flat, folded_shape = _hint_flat(), folded(shape)
    return (
        _blind_fields() == (True, True)
        and template.free_hint is not None
        and flat is not None
        and folded_shape is not None
        and not any(_holds_at(flat[k][0].translate(ZEROS), folded_shape, span) for k in _hint_digit_words())
        and status_unread(shape, span, reference)
        and cannot_match(_MODEL_FIELD, shape, span)
        and cannot_match(MODEL_RE, shape, span)
    )


def _holds_at(word: str, text: str, span: tuple[int, int] | None) -> bool:
    """Whether `word` stands in `text` (with `span`: over a character of `text[start:end]`)."""
    if span is None:
        return word in text
    start, end = span
    at = text.find(word, max(0, start - len(word) + 1))
    return 0 <= at < end


@cache
def _blind_fields() -> tuple[bool, bool]:
    """Whether `retried` and whether `find_request_ids` say the same of every text of one digit shape: their
    patterns and the words they test first read no digit's value (`digits.reads_digits`)."""
    gates = _gates()

    def blind(rx: re.Pattern[str], gate: Gate) -> bool:
        return not reads_digits(rx.pattern, rx.flags) and not any(ch.isdigit() for lit in gate for ch in lit)

    return blind(_RETRY, gates.retry), blind(_REQUEST_ID, gates.request_id)


_KEY_TS = re.compile(
    rb"(?:19|20)\d\d-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?|"
    rb"1\d{9}(?:\d{3})?(?:\.\d+)?(?!\d)|"
    rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d\d:\d\d:\d\d"
)
_KEY_TS_WITHIN = 48
"""The leading timestamp starts this close to the record's start (after a `[`, a level, a JSON key)."""
_KEY_TS_FIRST = frozenset((b"1", b"2", b"J", b"F", b"M", b"A", b"S", b"O", b"N", b"D"))
"""The bytes a `_KEY_TS` match starts with (a year, an epoch, a month): no other record starts with one."""
_KEY_ID = re.compile(rb"(?<![\w-])(?:[0-9a-fA-F][0-9a-fA-F-]{15,}|(?:req_|chatcmpl-)[A-Za-z0-9]{8,})(?![\w-])")
_KEY_IP = re.compile(rb"(?<![\d.])(?!127\.|0\.0\.0\.0)\d{1,3}(?:\.\d{1,3}){3}(?::(?!11434\b)\d{1,5})?(?![\d.])")
"""What differs between repeats of one error in an incident log: the leading timestamp, request, trace
and message ids (hex runs of 16+ characters, UUIDs, `req_…`) and client addresses (an IPv4 address and port,
but not a loopback or any-address, nor Ollama's port: the local-server hints read those). The tables never
read the rest (no row, spelling or hint has words inside them; tests pin that corpus texts classify the same
whatever they are), so a record is judged once per text with them left out."""
_HEX_MAP = bytes(0x68 if chr(b) in "0123456789abcdefABCDEF-" else b for b in range(256))
_HEX_RUN = b"h" * 16
_DIGIT_MAP = bytes(0x30 if chr(b) in "0123456789" else b for b in range(256))
_ADDRESS_MARK = b"0.0"
"""Seen through `_HEX_MAP` (one C pass), a hex id starts a run of 16 `h`; through `_DIGIT_MAP`, an address
contains `0.0` (`_ADDRESS_MARK`): the regexes run only from there (Python's regex engine has no fast scan for
their shapes)."""


def _id_start(raw: bytes) -> int:
    """Where the first id `_KEY_ID` may cut out of `raw` starts at the earliest: a run of 16 hex characters or a
    `req_` / `chatcmpl-` prefix (-1: none can)."""
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


def _blank_addresses(raw: bytes, digits: bytes, spans: list[tuple[int, int]] | None = None) -> bytes:
    """`raw` with its client addresses (`_KEY_IP`) replaced by one NUL byte each, trying the regex only where
    a digit, a dot and a digit meet (`digits` is `raw` through `_DIGIT_MAP`); each address's span is appended
    to `spans` when given."""
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
        if spans is not None:
            spans.append(m.span())
        at = digits.find(_ADDRESS_MARK, last)
    if not parts:
        return raw
    parts.append(raw[last:])
    return b"".join(parts)


def record_key(raw: bytes) -> bytes:
    """The memo key of a record: its bytes with the leading timestamp, the ids and client addresses cut out."""
    return _record_key(raw)[0]


def _record_key(raw: bytes) -> tuple[bytes, tuple[tuple[int, int], ...] | None]:
    """`record_key(raw)`, and the spans of `raw` it cut out when they were only client addresses (None when a
    timestamp or an id was cut too): what a `RecordMemo` template of the record needs (`_Template`)."""
    digits = raw.translate(_DIGIT_MAP)
    head = digits[:_KEY_TS_WITHIN]
    plain = True  # nothing but addresses cut so far
    if b"00:00" in head or b"0000000000" in head:  # every _KEY_TS shape has a time of day or ten digits
        m = _KEY_TS.search(raw, 0, _KEY_TS_WITHIN)
        if m:
            raw = raw[: m.start()] + b"\x00" + raw[m.end() :]
            digits = raw.translate(_DIGIT_MAP)
            plain = False
    at = _id_start(raw)
    if at >= 0:
        blanked = _blank(raw, _KEY_ID, at)
        if blanked is not raw:
            raw, plain = blanked, False
            digits = raw.translate(_DIGIT_MAP)
    spans: list[tuple[int, int]] = []
    key = _blank_addresses(raw, digits, spans)
    return key, (tuple(spans) if plain and spans else None)


@dataclass(frozen=True)
class _Template:
    """A judged record whose key cut out only client addresses, for records of the same shape (`RecordMemo`):
    the bytes around the addresses that hold a digit (a record of the same shape has every other byte the
    same), the addresses' spans, the key and the facts."""

    pieces: tuple[tuple[int, int, bytes], ...]
    spans: tuple[tuple[int, int, int], ...]
    """Each address's start, end and where its port starts (-1: it has none)."""
    key: bytes
    facts: Facts

    @classmethod
    def of(cls, raw: bytes, spans: tuple[tuple[int, int], ...], key: bytes, facts: Facts) -> _Template:
        """The template of `raw`, whose key `key` cut out exactly `spans`."""
        pieces: list[tuple[int, int, bytes]] = []
        last = 0
        for start, end in (*spans, (len(raw), len(raw))):
            piece = raw[last:start]
            if piece.translate(_DIGIT_MAP) != piece:  # only a digit's value can differ there
                pieces.append((last, start, piece))
            last = end
        ports = tuple((start, end, (raw.find(b":", start, end) + 1) or -1) for start, end in spans)
        return cls(tuple(pieces), ports, key, facts)

    def fits(self, raw: bytes) -> bool:
        """Whether `record_key(raw)` is this template's key, for a `raw` of the template's shape (the same
        length, digits where it has digits, every other byte the same): the bytes around the addresses are the
        template's (only those holding a digit are compared), and each address span still holds an address,
        whole: what `_KEY_IP.fullmatch(raw, start, end)` says, read off the three things it reads of the digits'
        values, since the shape fixes the rest (its octets' and port's lengths, the bytes before the address): a
        loopback or any-address first, or Ollama's port, is not cut, and makes this a miss. (The regex costs
        ~0.4 µs an address, on every quiet access-log line.)"""
        for start, end, piece in self.pieces:
            if raw[start:end] != piece:
                return False
        for start, end, port in self.spans:
            if raw.startswith((b"127.", b"0.0.0.0"), start) or (port > 0 and raw[port:end] == b"11434"):
                return False
        return True


MEMO_ENTRIES = 4096
MEMO_KEY_BYTES = 2048
"""The memo holds at most MEMO_ENTRIES records of at most MEMO_KEY_BYTES each (longer ones are judged every
time) in each of its six tables: ~48 MB at the very worst (every record 2 KB and different), whatever the log;
~1 MB of keys in the benchmark's log whose every error text differs."""


class RecordMemo:
    """A bounded LRU of `Facts` by record key: dense incident logs repeat the same few errors thousands of
    times, with only the timestamp and the request id changing."""

    def __init__(self, entries: int | None = None, key_bytes: int | None = None) -> None:
        self.entries = MEMO_ENTRIES if entries is None else entries
        self.key_bytes = MEMO_KEY_BYTES if key_bytes is None else key_bytes
        self._data: OrderedDict[bytes, Facts] = OrderedDict()
        self._exact: dict[bytes, Facts] = {}
        """Facts by the record's bytes after a timestamp at its very start, for records with nothing else to
        leave out of the key (no id, no address): found without computing the key. Emptied when full."""
        self._shapes: dict[bytes, _Template] = {}
        """Templates by the record's shape (its bytes with every digit read as `0`), for records whose key left
        out only client addresses (an access log's `10.0.47.100:57016`): found by one translation, a few byte
        comparisons and the address pattern on the addresses alone (`_Template.fits`). Emptied when full."""
        self._similar: dict[bytes, Facts] = {}
        """Facts by the shape of their record's key (every ASCII digit read as `0`), for facts that keep what the
        engine read of the digits (`Facts.reading`): a record of that shape is judged like them (`judge_like`)
        rather than afresh. Emptied when full."""
        self._alike: dict[bytes, Facts] = {}
        """The same facts by the shape of the whole record (`find`): a record whose every byte but its digits is
        that of a judged one (`[seq 17]`, `[seq 42]`, their timestamps) is judged like it without computing its
        key first. Emptied when full."""
        self._settled: dict[bytes, tuple[Facts, bool | None, bool, bytes, int]] = {}
        """By a record's shape: the `_alike` facts of that shape, whether every record of it with their literals is
        judged as they say (`settles`; None: not asked yet, `find` asks when the shape's next record comes): then
        `find` gives those facts at once, and whether every record of it has their literals
        (`Engine.literals_settle`); and a record judged as they say (the reference `_here` compares a record with)
        and where its leading timestamp ends (0: none). Emptied when full."""
        self._spans: dict[tuple[bytes, int, int], tuple[Facts, bool, bool]] = {}
        """By a record's shape and the span (whole digit runs) where its digits differ from those of its shape's
        reference (`_settled`): whether every record of the shape that differs from the reference only there is
        judged as the shape's `_alike` facts say (`settles` with the span), and whether each has their literals
        (`Engine.literals_settle` with the span). Emptied when full."""
        self.hits = 0
        self.misses = 0
        self._missed: tuple[bytes, bytes | None, bytes, tuple[tuple[int, int], ...] | None] | None = None
        """The last record `lookup` missed, with its bytes after the timestamp, shape and address spans."""

    def __len__(self) -> int:
        return len(self._data)

    def lookup(self, raw: bytes) -> tuple[bytes, Facts | None]:
        """The key of the record `raw` (`record_key`) and the facts remembered for it, or None (a miss).

        A record that starts with its timestamp is first looked up by the bytes after it: when the rest held
        nothing to leave out, its key is those bytes behind one NUL, and the key need not be computed. A record
        of the shape of one whose key left out only its client addresses is found by that template."""
        key, facts, _ = self.find(raw, alike=False)
        assert key is not None  # (alike=False: the key is always computed)
        return key, facts

    def find(self, raw: bytes, alike: bool = True) -> tuple[bytes | None, Facts | None, Facts | None]:
        """`lookup(raw)` and a third value: with `alike`, before the key is computed, facts judged for a record
        of the same shape (`_alike`), to judge `raw` like them (`judge_like`); then the key is None (`keep_alike`
        remembers the outcome, `lookup` computes the key when the engine reads `raw` otherwise). Where every record
        of that shape is judged alike (`settles`), those facts are also the second value: they are `raw`'s, when
        the third is None (every record of the shape has their literals), or when the prefilter found in it the
        literals they were read with (the caller asks, `_same_literals`; else it judges `raw` like the third)."""
        m = _KEY_TS.match(raw, 0, _KEY_TS_WITHIN) if raw[:1] in _KEY_TS_FIRST else None
        rest = raw[m.end() :] if m is not None else None
        if rest is not None:
            facts = self._exact.get(rest)
            if facts is not None:
                self.hits += 1
                return b"\x00" + rest, facts, None
        shape = raw.translate(_DIGIT_MAP)
        template = self._shapes.get(shape)
        if template is not None and template.fits(raw):
            self.hits += 1
            return template.key, template.facts, None
        like = self._alike.get(shape) if alike else None
        if like is not None:
            settled = self._settled.get(shape)
            if settled is not None and settled[0] is like:
                if settled[1] is None:
                    settled = self._settle(shape, settled)
                same = settled[2] if settled[1] else self._here(raw, shape, 0 if m is None else m.end(), settled)
                if same is not None:
                    self.hits += 1
                    return None, like, (None if same else like)
            self._missed = (raw, rest, shape, None)
            return None, None, like
        key, spans = _record_key(raw)
        facts = self.get(key)
        if facts is not None:
            if rest is not None:
                self._remember_exact(key, rest, facts)
            if spans is not None:
                self._remember_shape(raw, shape, spans, key, facts)
        else:
            self._missed = (raw, rest, shape, spans)  # what `put` needs when this record is judged next
        return key, facts, None

    def _settle(
        self, shape: bytes, pending: tuple[Facts, bool | None, bool, bytes, int]
    ) -> tuple[Facts, bool | None, bool, bytes, int]:
        """The `_settled` entry of `shape` with `settles` and `literals_settle` asked, kept."""
        facts, _, _, ref, start = pending
        text = shape.decode("utf-8", "replace")
        ok = settles(facts, text)
        entry = self._settled[shape] = (facts, ok, ok and classifier().literals_settle(text), ref, start)
        return entry

    def _pend(self, shape: bytes, facts: Facts, raw: bytes, rest: bytes | None) -> None:
        """Keep `raw`, judged as `facts` say, as the reference of `shape` (`_settled`), its settling not asked yet."""
        if len(self._settled) >= self.entries:
            self._settled.clear()
        self._settled[shape] = (facts, None, False, raw, 0 if rest is None else len(raw) - len(rest))

    def _here(
        self, raw: bytes, shape: bytes, start: int, settled: tuple[Facts, bool | None, bool, bytes, int]
    ) -> bool | None:
        """For a record `raw` of a shape whose records are not all judged alike (`settled`, its `_settled` entry):
        whether the span where its digits differ from those of the shape's reference record settles (`_spans`),
        and then whether the record has the literals the facts were read with (None: it does not settle; the
        record is judged like them). `start`: where `raw`'s leading timestamp ends (0: none).

        The reference record was judged as the facts say (it is the one they were judged for, or `judge_like` gave
        them for it: `keep_alike`), so a record that differs from it only in the digits of a settled span is too.
        The leading timestamps are left out of the comparison: the memo judges a record once whatever its timestamp
        (`record_key`)."""
        facts, _, _, ref, ref_start = settled
        if start != ref_start:
            return None
        diff = int.from_bytes(raw[start:], "big") ^ int.from_bytes(ref[start:], "big")  # (same shape: same length)
        if not diff:  # the reference's words, another timestamp: the memo's `_exact` gives such records the facts
            return _stamp_literals_settle(shape, start)
        last = len(raw) - 1 - ((diff & -diff).bit_length() - 1) // 8
        first = len(raw) - 1 - (diff.bit_length() - 1) // 8
        while first > start and shape[first - 1] == 0x30:  # whole digit runs: the spans of one field's values agree
            first -= 1
        while last + 1 < len(shape) and shape[last + 1] == 0x30:
            last += 1
        key = (shape, first, last + 1)
        known = self._spans.get(key)
        if known is None or known[0] is not facts:
            if len(self._spans) >= self.entries:
                self._spans.clear()
            known = self._spans[key] = (facts, *self._span_settles(facts, shape, ref, (first, last + 1), start))
        return known[2] if known[1] else None

    @staticmethod
    def _span_settles(facts: Facts, shape: bytes, ref: bytes, span: tuple[int, int], start: int) -> tuple[bool, bool]:
        """`_here`'s two answers for the byte span `span` of `shape` (digits only), `ref` its reference record:
        whether it settles, and whether each record differing there only has the same literals. Positions are
        read as the text's characters: the bytes before the span decoded (its digits, and every byte but the
        digits of a record of the shape, are the reference's; a record that is not UTF-8 is not followed)."""
        try:
            text, reference = shape.decode("utf-8"), ref.decode("utf-8")
            at = span[0] if shape.isascii() else len(shape[: span[0]].decode("utf-8"))
        except UnicodeDecodeError:
            return False, False
        chars = (at, at + span[1] - span[0])
        ok = settles(facts, text, chars, reference)
        return ok, ok and classifier().literals_settle(text, chars) and _stamp_literals_settle(shape, start)

    def keep_alike(self, raw: bytes, facts: Facts) -> None:
        """Remember `facts`, judged for the record `raw` for which `find` just gave facts of its shape, by the bytes
        after its timestamp when nothing else would leave the key (as `put` does): the same bytes again are found
        at once. Its key is not computed; nothing that could be an id or an address in those bytes (`_id_start`,
        `_ADDRESS_MARK`) is the sure sign that it is those bytes behind one NUL."""
        missed = self._missed
        self._missed = None
        self.hits += 1
        if missed is None or missed[0] is not raw:
            return
        _, rest, shape, _ = missed
        if self._alike.get(shape) is facts:  # judged as the shape's facts themselves: a reference for the shape
            known = self._settled.get(shape)
            if known is None or known[0] is not facts:
                self._pend(shape, facts, raw, rest)
        if (
            rest is not None
            and len(rest) < self.key_bytes
            and shape.find(_ADDRESS_MARK, len(raw) - len(rest)) < 0
            and _id_start(rest) < 0
        ):
            if len(self._exact) >= self.entries:
                self._exact.clear()
            self._exact[rest] = facts

    def _remember_shape(
        self, raw: bytes, shape: bytes, spans: tuple[tuple[int, int], ...], key: bytes, facts: Facts
    ) -> None:
        if len(raw) <= self.key_bytes:
            if len(self._shapes) >= self.entries:
                self._shapes.clear()
            self._shapes[shape] = _Template.of(raw, spans, key, facts)

    def _remember_exact(self, key: bytes, rest: bytes, facts: Facts) -> None:
        if len(key) == len(rest) + 1 and key[1:] == rest and len(key) <= self.key_bytes:
            if len(self._exact) >= self.entries:
                self._exact.clear()
            self._exact[rest] = facts

    def similar(self, key: bytes) -> Facts | None:
        """Facts judged for a key of the shape of `key` (the same but for its digits' values), or None."""
        return self._similar.get(key.translate(_DIGIT_MAP)) if self._similar else None

    def get(self, key: bytes) -> Facts | None:
        """The facts judged for `key`, or None (counted as a miss)."""
        facts = self._data.get(key)
        if facts is None:
            self.misses += 1
            return None
        self.hits += 1
        self._data.move_to_end(key)
        return facts

    def put(self, key: bytes, facts: Facts, raw: bytes | None = None) -> None:
        """Remember `facts` for `key` (not when the key is too long), evicting the least recently used; `raw`,
        the record, lets a record whose key is only its timestamp left out be found by its bytes (`lookup`)."""
        if len(key) > self.key_bytes:
            return
        shape = b""
        if raw is not None:
            missed = self._missed
            if missed is not None and missed[0] is raw:  # the record `lookup` just missed: its parts are known
                _, rest, shape, spans = missed
            else:
                m = _KEY_TS.match(raw, 0, _KEY_TS_WITHIN)
                rest = raw[m.end() :] if m is not None else None
                same, spans = _record_key(raw)
                spans = spans if same == key else None
                shape = raw.translate(_DIGIT_MAP) if spans is not None else b""
            if rest is not None:
                self._remember_exact(key, rest, facts)
            if spans is not None:
                self._remember_shape(raw, shape, spans, key, facts)
        self._missed = None
        if facts.reading is not None and self.entries:
            if len(self._similar) >= self.entries:
                self._similar.clear()
            self._similar[key.translate(_DIGIT_MAP)] = facts
            if raw is not None and len(raw) <= self.key_bytes:
                if len(self._alike) >= self.entries:
                    self._alike.clear()
                alike = shape if shape else raw.translate(_DIGIT_MAP)
                self._alike[alike] = facts
                self._pend(alike, facts, raw, rest)  # (asked when the shape's next record comes: `find`)
        self._data[key] = facts
        if len(self._data) > self.entries:
            self._data.popitem(last=False)


def _stamp_literals_settle(shape: bytes, start: int) -> bool:
    """Whether no literal with a digit can stand over the leading timestamp of a record of `shape`, which
    ends at `start` (`Engine.literals_settle`): then two records of the shape that differ only there hold the same
    literals, as the settled path asks of its records (`_same_literals`). (The timestamp starts the record: its
    bytes are its characters.)"""
    return not start or classifier().literals_settle(shape.decode("utf-8", "replace"), (0, start))


def example_of(text: str) -> str:
    """A record as shown in findings: whitespace collapsed, at most EXAMPLE_CHARS."""
    return " ".join(text.split())[:EXAMPLE_CHARS]


_BODY_LINE = re.compile(
    "(?i:response|body|响应|返回|응답|レスポンス)(?: body)? *(?::|：|=) *[{[]"
    r"""|\{ ?(?:"error"|'error'|"object":"error"|"type":"error")""".encode()
)
"""An error body printed on its own line under the status that reported it, as is (`{"error": …}`) or labelled
(`Response: {…}`, `响应：{…}`): it continues that record, so the status is judged with the body's words. A JSON
log line starts with its level or time, never with an error object."""
_NOT_CONT_FIRST = frozenset(b"0123456789ADEGHIJKLMNOPQSUVWXYZcdefghijklmnopqstuvwxyz")
"""First bytes of a line that `_is_continuation` never accepts (no prefix, bracket or tag starts with them):
the common case, a timestamped or plain line, is decided without copying the line out."""


def _is_continuation(line: bytes) -> bool:
    """A stack frame, an indented or closing line, a bare opening bracket, an HTML tag or an error body (`_BODY_LINE`):
    the body under the line that reported it (`Error code: 429` then `{`, `unexpected status 403` then `<h1>…`,
    `Status 429` then `响应：{"error": …}`)."""
    return (
        line.startswith(_CONT_PREFIXES)
        or line.rstrip() in (b"{", b"[")
        or bool(_HTML_LINE.match(line))
        or bool(_BODY_LINE.match(line))
    ) and not _TS_HEAD.match(line)


def _line_at(buf: bytearray, start: int, stop: int) -> bytes:
    end = buf.find(b"\n", start, min(stop, start + 512))
    return bytes(buf[start : end if end >= 0 else min(stop, start + 512)])


class _Tally:
    """The records of one remembered judgement (one `Facts`) after its first, in one input: how many, and their
    first and last times. Everything else they add to the statistics follows from the facts alone, so it is
    added once per judgement when the input ends (`_FileScanner._fold`) instead of once per record."""

    __slots__ = ("count", "facts", "first", "ids_open", "last")

    def __init__(self, facts: Facts, ids_open: bool) -> None:
        self.facts = facts
        self.count = 0
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.ids_open = ids_open
        """Whether a row of these facts still collects request ids (fewer than KEPT_IDS so far)."""


class _FileScanner:
    """Scans the chunks of one input (or one byte range of it) into a ScanResult."""

    def __init__(
        self,
        prefilter: Any,
        options: ScanOptions,
        path: str,
        result: ScanResult,
        memo: RecordMemo | None = None,
        shown: Collection[str] = (),
    ) -> None:
        self.pf = prefilter
        self.memo = memo if memo is not None else RecordMemo()
        self.shown = shown
        """Rows whose example an earlier byte range of this file, scanned by the same worker, holds: the ranges
        are merged in file order and the first example stays, so this range's would be dropped (finding its
        excerpt again costs a classification)."""
        self.opt = options
        self.path = path
        self.res = result
        self.info = FileInfo(path)
        self.res.files.append(self.info)
        self.last_success = -1
        self.pending = True  # a completed request is looked for until one is found after the newest error
        self._chunk_record_end = 0
        self.huge = False
        self._tallies: dict[int, _Tally] = {}
        """By `id(facts)` (the tally holds the facts, so the id stays theirs): the judgements seen before here."""
        self._marker_from = [_UNSEARCHED] * len(SUCCESS_MARKERS)
        self._marker_to = [0] * len(SUCCESS_MARKERS)
        self._marker_at = [-1] * len(SUCCESS_MARKERS)
        """Per success marker, in the chunk being processed: the bytes the last search for it read and the first
        occurrence it found there (-1: none). See `_succeeded`."""
        self.open_retries: list[tuple[int, int]] = []
        """Retried errors whose success window runs past the chunk they are in, with no success marker before its
        end: each event's index in the result and the absolute offset where its window ends. The next chunk (or,
        at a byte range's end, the bytes after it: `settle_retries`) says whether they succeeded, so the answer is
        the same however the input is cut."""

    def run(
        self,
        reader: Any,
        line_base: int = 0,
        base: int = 0,
        size_hint: int | None = None,
        buffer: bytearray | None = None,
    ) -> None:
        """Scan everything `reader` yields; `base` is the absolute offset of its first byte.

        One buffer of `chunk_bytes + CARRY_CAP` is reused for the whole input: each round fills it after
        the carried-over partial line, scans up to the last newline, and moves the tail to the front. `buffer`:
        one of that size to use (a pool worker's, kept for all its ranges: a new one costs ~5 ms of page faults).
        """
        chunk = self.opt.chunk_bytes if size_hint is None else max(1, min(self.opt.chunk_bytes, size_hint + 1))
        carry_cap = CARRY_CAP if size_hint is None else min(CARRY_CAP, size_hint + 1)
        # sized to the file: 100,000 small files must not cost 9 MiB each
        buf = buffer if buffer is not None and len(buffer) == chunk + carry_cap else bytearray(chunk + carry_cap)
        view = memoryview(buf)
        carry = 0
        lines = line_base
        unterminated = False  # bytes of a huge line were scanned and no newline has ended it yet
        try:
            while True:
                n = reader.readinto(view[carry : carry + chunk])
                if n == 0:
                    break
                self.info.bytes += n
                end = carry + n
                if n < chunk:  # the reader fills its view unless the input ended: scan the rest in one piece,
                    lines += self._process(buf, view, end, base, lines)  # so the last record stays whole
                    unterminated = buf[end - 1] != 0x0A
                    base += end
                    carry = 0
                    continue
                cut = buf.rfind(b"\n", carry, end) + 1
                if cut == 0:
                    if end > carry_cap:  # a line longer than the carry: scan it in windows, as is
                        self.huge = unterminated = True
                        lines += self._process(buf, view, end, base, lines)
                        base += end
                        carry = 0
                    else:
                        carry = end
                    continue
                lines += self._process(buf, view, cut, base, lines)
                unterminated = False
                rest = end - cut
                if rest > carry_cap:  # the tail is itself a huge partial line
                    self.huge = unterminated = True
                    view[0:rest] = view[cut:end]
                    lines += self._process(buf, view, rest, base + cut, lines)
                    base += end
                    carry = 0
                    continue
                view[0:rest] = view[cut:end]
                carry = rest
                base += cut
        except src.SourceError as exc:
            self.info.skipped = str(exc)
        finally:
            reader.close()
        if carry:
            self._process(buf, view, carry, base, lines)
        if carry or unterminated:
            lines += 1  # the last line has no newline
        self.info.lines = lines - line_base
        if self.huge:
            self.info.note = f"a line longer than {CARRY_CAP // 1024} KiB was scanned in windows"
        self.res.last_success[self.path] = max(self.res.last_success.get(self.path, -1), self.last_success)
        self._fold()

    def _fold(self) -> None:
        """Add each tally to the statistics of its facts' rows: what `_record` adds per record, times the count
        (the first record of each judgement went through `_record`, so every key is already in its counter and
        the counters keep the order in which the records first named them)."""
        stats = self.res.stats
        for tally in self._tallies.values():
            n = tally.count
            if not n:
                continue
            facts = tally.facts
            for sid, provider in zip(facts.sids, facts.providers, strict=True):
                stat = stats[sid]
                stat.count += n
                stat.first = _min_dt(stat.first, tally.first)
                stat.last = _max_dt(stat.last, tally.last)
                if facts.model:
                    stat.models[facts.model] += n
                if provider:
                    stat.providers[provider] += n
                if facts.status:
                    stat.statuses[facts.status] += n
        self._tallies.clear()

    def _process(self, buf: bytearray, view: memoryview, cut: int, base: int, line_base: int) -> int:
        """Find, group and classify the candidate lines of buf[:cut]; returns the newlines counted there."""
        self._chunk_record_end = 0
        self._marker_from = [_UNSEARCHED] * len(SUCCESS_MARKERS)  # a new chunk: nothing known of its markers
        if self.open_retries:
            self.settle_retries(buf, base, cut)
        ends, ids = self.pf.hits(view[:cut])
        if not ends:
            self._look_for_success(buf, cut, base)
            return buf.count(b"\n", 0, cut)
        records: dict[int, list[tuple[int, int]]] = {}
        looked: dict[int, tuple[bytes, bytes, Facts]] = {}
        """A one-line record's bytes, memo key (empty when it was judged like a record of its shape: `RecordMemo.find`,
        `keep_alike`) and facts, by its start: judged (or looked up) as it was found."""
        memo = self.memo
        quiet: dict[int, int] = {}
        """One-line records judged before as no error, by start -> end: dropped as found (an access log's 404)."""
        in_order = True  # records were found in the order of their starts (no continuation reached back)
        rfind, find = buf.rfind, buf.find
        memo_lookup, memo_find = self.memo.lookup, self.memo.find
        last_end = -1
        for e in ends:
            if e <= last_end:  # another literal on a line already taken
                continue
            p = e - 1
            ls = rfind(b"\n", 0, p) + 1
            le = find(b"\n", p, cut)
            if le < 0:
                le = cut
            if le - ls > MAX_LINE:
                self.huge = True
                ws, we = max(ls, p - WINDOW), min(le, p + WINDOW)
                records.setdefault(ws, []).append((ws, we))
                last_end = we
                continue
            last_end = le
            head = ls
            if head and buf[head] not in _NOT_CONT_FIRST:  # the common line is no continuation: no loop set up
                for _ in range(CONT_LINES):
                    if head == 0 or buf[head] in _NOT_CONT_FIRST or not _is_continuation(_line_at(buf, head, cut)):
                        break
                    head = rfind(b"\n", 0, head - 1) + 1
            if head == ls:
                if le - ls <= RECORD_CHARS:
                    line = bytes(buf[ls:le])
                    line_key, line_facts, like = memo_find(line)
                    if line_facts is like is not None and not self._same_literals(like, line, ids, ends, ls, le):
                        line_facts = None  # a settled shape, but another literal with a digit: judged below
                    if line_facts is None:  # judged now (nothing else happens to it before it is counted below)
                        text = line.decode("utf-8", "replace")
                        lits = _literals_in(self.pf, text, line, ids, ends, ls, le)
                        line_facts = judge_like(like, text, lits) if like is not None else None
                        if line_facts is not None:  # a record of a judged one's shape (its key is not needed)
                            memo.keep_alike(line, line_facts)
                        else:
                            if line_key is None:  # the engine read it otherwise: looked up by its key after all
                                line_key, line_facts = memo_lookup(line)
                            if line_facts is None:
                                line_facts = self._judge(text, lits, line_key, refused=like)
                                memo.put(line_key, line_facts, line)
                    if not line_facts.matches:
                        quiet[ls] = le
                        continue
                    looked[ls] = (line, b"" if line_key is None else line_key, line_facts)
                records[ls] = [(ls, le)]
                continue
            in_order = False
            spans = records.get(head)
            if spans is None:  # a record whose first candidate line is this continuation (or a quiet line above it)
                spans = records[head] = [(head, quiet.pop(head))] if head in quiet else []
            spans.append((ls, le))
            looked.pop(head, None)  # no longer one line: looked up whole below
        counted_to, count = 0, 0
        tallies = self._tallies
        for head in records if in_order else sorted(records):
            spans = records[head]
            end = spans[-1][1]
            raw: bytes | None = None
            key: bytes | None = None
            facts: Facts | None = None
            if end - head <= RECORD_CHARS:
                seen = looked.get(head)
                if seen is not None:
                    raw, key, facts = seen
                else:
                    raw = bytes(buf[head:end])
                    key, facts = memo_lookup(raw)
                if facts is not None:
                    if not facts.matches:
                        continue  # a record judged before as no error
                    tally = tallies.get(id(facts))
                    if tally is not None:  # an error judged before in this input: its time and event only
                        count += buf.count(b"\n", counted_to, head)
                        counted_to = head
                        self._again(buf, cut, head, end, base, line_base + count + 1, raw, tally)
                        continue
            count += buf.count(b"\n", counted_to, head)  # lines are counted up to the records that need a number
            counted_to = head
            self._record(buf, cut, head, spans, base, line_base + count + 1, ends, ids, raw, key, facts)
        self._look_for_success(buf, cut, base)
        return count + buf.count(b"\n", counted_to, cut)

    def _same_literals(
        self, facts: Facts, line: bytes, ids: list[int] | None, ends: list[int], start: int, end: int
    ) -> bool:
        """Whether the prefilter found in the record `line` (buf[start:end]) the literals `facts` were read with
        (`RecordMemo.find` gave them for its settled shape: the literals with a digit may differ)."""
        reading = facts.reading
        if reading is None:
            return False
        if ids is not None and line.isascii():  # (a record of the shape those literals were found in: `shaped`)
            return self.pf.shaped(ids[bisect_right(ends, start) : bisect_right(ends, end)], line, reading.ids)  # type: ignore[no-any-return]
        text = line.decode("utf-8", "replace")
        return frozenset(_literals_in(self.pf, text, line, ids, ends, start, end)) == reading.ids

    def _judge(self, text: str, lits: Collection[int], key: bytes | None, refused: Facts | None = None) -> Facts:
        """The facts of a record the memo does not hold (`key`: its memo key, None for a long record): judged like
        a remembered record whose key differs only in its digits' values when the engine reads both alike
        (`judge_like`), else afresh (`judge`). `refused`: facts `judge_like` already refused for this record
        (found by its shape), not tried again."""
        template = self.memo.similar(key) if key is not None else None
        facts = judge_like(template, text, lits) if template is not None and template is not refused else None
        return facts if facts is not None else judge(text, lits)

    def _look_for_success(self, buf: bytearray, cut: int, base: int) -> None:
        """Record the first completed request after the newest error (only searched while one is pending)."""
        if not self.pending:
            return
        start = self._chunk_record_end
        best = -1
        for marker in SUCCESS_MARKERS:
            pos = buf.find(marker, start, cut)
            while pos >= 0 and buf[max(0, pos - 7) : pos] == b"before ":
                pos = buf.find(marker, pos + 1, cut)
            if pos >= 0 and (best < 0 or pos < best):
                best = pos
        if best >= 0:
            self.last_success = base + best
            self.pending = False

    def _record(
        self,
        buf: bytearray,
        cut: int,
        head: int,
        spans: list[tuple[int, int]],
        base: int,
        line_no: int,
        ends: list[int],
        ids: list[int] | None,
        raw: bytes | None,
        key: bytes | None,
        facts: Facts | None,
    ) -> None:
        """Judge one candidate record and fold it into the statistics (`raw`, `key` and `facts`: the record's
        bytes, memo key and remembered facts when `_process` already looked them up; None for a long record).

        The classification and everything that follows from the record's words alone come from the memo
        (`RecordMemo`) when the same text, timestamp and ids aside, was judged before; a record that is no error
        costs nothing more. An error's time is read next: one older than `since` is only counted (`too_old`).
        """
        end = spans[-1][1]
        if raw is None:  # a long record: its head and the first spans, judged every time (no key)
            parts = [bytes(buf[head : min(spans[0][0], head + 1024)])] if head < spans[0][0] else []
            parts += [bytes(buf[s : min(e, s + 4096)]) for s, e in spans[:4]]
            raw = b"\n".join(parts)
        text = ""
        if facts is None:
            text = raw.decode("utf-8", "replace")
            facts = self._judge(text, _literals_in(self.pf, text, raw, ids, ends, head, end), key)
            if key is not None:
                self.memo.put(key, facts, raw)
        if not facts.matches:
            return
        text = text or raw.decode("utf-8", "replace")
        nl = text.find("\n")
        ts = parse_timestamp(text if nl < 0 else text[:nl], self.opt.now)
        if self._too_old(ts):
            return
        matches = facts.matches
        model = facts.model
        rids: list[str] | None = None
        stats = self.res.stats
        for m, provider, sid, cause in zip(matches, facts.providers, facts.sids, facts.causes, strict=True):
            stat = stats.get(sid)
            if stat is None:
                stat = stats[sid] = SigStat(sid, cause)
            stat.count += 1
            if ts is not None:  # inline min/max: this loop runs once per error record
                if stat.first is None or ts < stat.first:
                    stat.first = ts
                if stat.last is None or ts > stat.last:
                    stat.last = ts
            if not stat.example and sid not in self.shown:
                stat.example, stat.example_path, stat.example_line = example_of(text), self.path, line_no
                stat.excerpt = (
                    m.excerpt
                    if facts.text == text
                    else _excerpt_in(text, _literals_in(self.pf, text, raw, ids, ends, head, end), sid, m.excerpt)
                )
            if model:
                stat.models[model] += 1
            if provider:
                stat.providers[provider] += 1
            if facts.request_ids and stat.ids_open:  # the first few are kept: stop looking then
                if rids is None:
                    rids = find_request_ids(text)
                stat.keep_ids(rids)
            if facts.status:
                stat.statuses[facts.status] += 1
        if key is not None and id(facts) not in self._tallies:
            if len(self._tallies) >= MEMO_ENTRIES:  # bounded like the memo: a log of unique texts keeps no more
                self._fold()
            self._tallies[id(facts)] = _Tally(facts, _ids_open(facts, stats))
        self._event(buf, cut, head, end, base, line_no, ts, facts)

    def _again(
        self, buf: bytearray, cut: int, head: int, end: int, base: int, line_no: int, raw: bytes, tally: _Tally
    ) -> None:
        """One more record of a judgement this input saw before (`_Tally`): what `_record` does for it, less
        what follows from the facts alone (counted once per judgement by `_fold`): its time (and `--since`), the
        request ids while its rows collect them, whether a retry then succeeded, and its event."""
        facts = tally.facts
        nl = raw.find(b"\n")
        ts = parse_timestamp((raw if nl < 0 else raw[:nl]).decode("utf-8", "replace"), self.opt.now)
        if self._too_old(ts):
            return
        if ts is not None:
            if tally.first is None or ts < tally.first:
                tally.first = ts
            if tally.last is None or ts > tally.last:
                tally.last = ts
        tally.count += 1
        if tally.ids_open:
            stats = self.res.stats
            rids = find_request_ids(raw.decode("utf-8", "replace"))
            for sid in facts.sids:
                stats[sid].keep_ids(rids)
            tally.ids_open = _ids_open(facts, stats)
        self._event(buf, cut, head, end, base, line_no, ts, facts)

    def _succeeded(self, buf: bytearray, cut: int, end: int) -> bool:
        """Whether a success marker lies wholly in `buf[end:min(cut, end + SUCCESS_WINDOW)]`: what
        `any(buf.find(m, end, stop) >= 0 for m in SUCCESS_MARKERS)` says, without searching the same bytes again
        for every retried record (a marker absent from a dense log cost a 256 KiB search per record, ~100 µs).

        Per marker, what the last search read is kept: it searched `[lo, hi)` and found its first whole occurrence
        at `at` (-1: none). While `at` lies at or after `end` it is also the first from `end`, and the window
        holds the marker exactly when that occurrence ends inside it. While there is none, a window that starts
        inside `[lo, hi)` reads only what follows `hi` (an occurrence ending past `hi` starts after
        `hi - len(marker)`); anything else is read afresh from `end`."""
        stop = min(cut, end + SUCCESS_WINDOW)
        los, his, ats = self._marker_from, self._marker_to, self._marker_at
        for k, marker in enumerate(SUCCESS_MARKERS):
            at = ats[k]
            if at < 0 and los[k] <= end <= his[k] < stop:  # none up to `hi`: only what follows is new
                at = ats[k] = buf.find(marker, max(los[k], his[k] - len(marker) + 1), stop)
                his[k] = stop
            if end < los[k] or 0 <= at < end or (at < 0 and stop > his[k]):  # read from `end` afresh
                at = ats[k] = buf.find(marker, end, stop)
                los[k], his[k] = end, stop
            if at >= 0 and at + len(marker) <= stop:
                return True
        return False

    def _too_old(self, ts: datetime | None) -> bool:
        """Whether a record written at `ts` is older than `--since` (then only counted, in `too_old`)."""
        since = self.opt.since
        if ts is not None and since is not None and ts < since:
            self.res.too_old += 1
            return True
        return False

    def _event(
        self, buf: bytearray, cut: int, head: int, end: int, base: int, line_no: int, ts: datetime | None, facts: Facts
    ) -> None:
        """The event of one error record (`_record`, `_again`): whether a request completed soon after it (it
        recovered; with a retry it announced, the retry succeeded), and that a completed request is looked for
        after it."""
        succeeded = self._succeeded(buf, cut, end)
        self.pending = True
        if end > self._chunk_record_end:
            self._chunk_record_end = end
        events = self.res.events
        if len(events) < MAX_EVENTS:
            if not succeeded and end + SUCCESS_WINDOW > cut:  # its window goes on after this chunk
                self.open_retries.append((len(events), base + end + SUCCESS_WINDOW))
            events.append(
                Event(
                    ts,
                    facts.causes[0],
                    facts.sids[0],
                    facts.model,
                    facts.retry,
                    succeeded,
                    self.path,
                    line_no,
                    base + head,
                )
            )
        else:
            self.res.events_dropped += 1

    def settle_retries(self, data: bytes | bytearray, base: int, cut: int | None = None) -> None:
        """Mark succeeded the open retries (`open_retries`) whose window holds a success marker in `data[:cut]`,
        the bytes that follow them from absolute offset `base` on; those whose window ends within them are settled
        either way, the others stay open. (A chunk ends at a line's end, so no marker spans two.)"""
        cut = len(data) if cut is None else cut
        events = self.res.events
        still: list[tuple[int, int]] = []
        for index, stop in self.open_retries:
            local = min(cut, stop - base)
            if any(data.find(marker, 0, local) >= 0 for marker in SUCCESS_MARKERS):
                events[index] = events[index]._replace(succeeded=True)
            elif stop - base > cut:
                still.append((index, stop))
        self.open_retries = still


def _ids_open(facts: Facts, stats: dict[str, SigStat]) -> bool:
    """Whether a record of `facts` could still add a request id: it names some, and a row of it has fewer than
    KEPT_IDS (`SigStat.keep_ids`)."""
    return facts.request_ids and any(stats[sid].ids_open for sid in facts.sids)


def _literals_in(
    pf: Any, text: str, raw: bytes, ids: list[int] | None, ends: list[int], head: int, end: int
) -> Collection[int]:
    """The ids of the literals in the record `raw` (buf[head:end], decoded: `text`), as `Engine.literal_ids`
    gives them: the prefilter's own hits inside it, with the literals that hold one of them (`complete`: the
    database leaves those out); for non-ASCII text (whose case folding only Python does
    right) the prefilter's hits in its lower-cased form, the literals being lower-case; the engine's literal
    finder only when the prefilter names no literals (compiling that finder costs more than a dense scan)."""
    if ids is None:
        return classifier().literal_ids(text)
    if raw.isascii():
        return pf.complete(ids[bisect_right(ends, head) : bisect_right(ends, end)], raw)  # type: ignore[no-any-return]
    low = text.lower().encode("utf-8", "surrogatepass")
    return frozenset(pf.complete(pf.hits(low)[1] or (), low))


def _excerpt_in(text: str, lits: Collection[int], signature_id: str, fallback: str) -> str:
    """The deciding words of `signature_id` in this very text (a remembered judgement was made on a text whose
    timestamp or ids differ; the first example of a signature shows its own words). `lits`: the literal ids in
    it (the prefilter's: compiling the engine's own literal finder costs more than a dense scan's records)."""
    for m in classifier().classify_candidates(text, lits, origin="log"):
        if m.signature.id == signature_id:
            return m.excerpt
    return fallback


_PREFILTERS: dict[str | None, Any] = {}


def prefilter_for(engine: str | None) -> Any:
    """The process-wide prefilter for `engine` (built once: compiling the database is the costly part)."""
    from capdoctor.logscan.engine import build_prefilter

    if engine not in _PREFILTERS:
        _PREFILTERS[engine] = build_prefilter(classifier().literals(), prefer=engine)
    return _PREFILTERS[engine]


def scan_bytes(data: bytes, name: str = "<text>", options: ScanOptions | None = None) -> ScanResult:
    """Scan an in-memory text (tests, pasted excerpts) exactly as a file would be scanned."""
    opts = options or ScanOptions()
    res = ScanResult()
    pf = prefilter_for(opts.engine)
    res.engine = pf.name
    _FileScanner(pf, opts, name, res).run(
        src.Reader(io.BytesIO(data), [], (OSError,), "read failed"), size_hint=len(data)
    )
    if not res.stats and not res.too_old:
        res.unplaced = _unplaced([data[: unplaced.HEAD_BYTES]])
    return res


def _unplaced(heads: Sequence[bytes]) -> str:
    """The first mark of an error in `heads` (the inputs' first bytes) that no row placed, named, or ""."""
    for head in heads:
        found = unplaced.describe(head.decode("utf-8", "replace"))
        if found:
            return found
    return ""


def _heads(sources: Sequence[src.Source]) -> list[bytes]:
    """The first `unplaced.HEAD_BYTES` of each plain file among `sources` (stdin was read already; a compressed
    file is left out: the marks are a fallback for a quiet paste or log, not a second scan)."""
    heads = []
    for s in sources:
        if s.path == "-" or s.compressed:
            continue
        try:
            with open(s.path, "rb") as fh:
                heads.append(fh.read(unplaced.HEAD_BYTES))
        except OSError:
            continue
    return heads


def _aligned_start(path: str, start: int, stop: int | None = None) -> int:
    """The offset of the first line that starts at or after `start` (the file size if there is none); with
    `stop`, `stop` when none starts before it: the range holds no line of its own (a huge line crosses it, and
    the range where that line starts scans it), so it is not read to its end looking for one."""
    if start == 0:
        return 0
    with open(path, "rb") as fh:
        fh.seek(start - 1)
        pos = start - 1
        while stop is None or pos < stop:
            piece = fh.read(65536)
            if not piece:
                return pos
            nl = piece.find(b"\n")
            if nl >= 0:
                return pos + nl + 1
            pos += len(piece)
        return stop


class _Worker:
    """What a pool worker keeps for every range it scans: one memo (what a record's words say does not depend on
    where in the file it stands), one read buffer, and per file the rows whose example a range it scanned holds
    (a worker takes ranges in file order, and the first example stays when they are merged)."""

    def __init__(self, chunk_bytes: int) -> None:
        self.memo = RecordMemo()
        self.buffer = bytearray(chunk_bytes + CARRY_CAP)
        self.shown: dict[str, set[str]] = {}


_WORKER: _Worker | None = None
"""This process's `_Worker` when it is a pool worker (`_start_worker`), else None."""


def _start_worker(chunk_bytes: int) -> None:
    """A pool worker's start: its `_Worker`, and the collector off (a process of its own, gone when the scan is
    done; spawned workers start with it on)."""
    global _WORKER
    _WORKER = _Worker(chunk_bytes)
    gc.disable()


def _scan_range_pickled(args: tuple[str, int, int, ScanOptions]) -> bytes:
    """`_scan_range_worker(args)`, pickled here: the pool's result thread in the parent then passes bytes on, and
    the parent unpickles each range's result in order as it comes, while the workers scan the next ranges (measured
    against results the pool unpickles itself: ~0.07–0.09 s less for a 256 MiB log on two cores)."""
    import pickle  # (here: a scan without workers, the common small log, does not import it)

    return pickle.dumps(_scan_range_worker(args), protocol=pickle.HIGHEST_PROTOCOL)


def _scan_range_worker(args: tuple[str, int, int, ScanOptions]) -> ScanResult:
    """One byte range of a big file, in a pool worker: the lines that start in [start, stop)."""
    path, start, stop, opts = args
    res = ScanResult()
    pf = prefilter_for(opts.engine)
    res.engine = pf.name
    worker = _WORKER
    shown = worker.shown.setdefault(path, set()) if worker is not None else set()
    scanner = _FileScanner(pf, opts, path, res, worker.memo if worker else None, frozenset(shown))
    try:
        begin = _aligned_start(path, start, stop)
        if begin < stop:
            reader = src.open_reader(src.Source(path), start=begin, limit=stop - begin)
            scanner.run(reader, base=begin, buffer=worker.buffer if worker else None)
            if scanner.open_retries:  # the windows of the last retries run on into the next range: read on
                after = begin + scanner.info.bytes
                with open(path, "rb") as fh:
                    fh.seek(after)
                    scanner.settle_retries(fh.read(max(end for _, end in scanner.open_retries) - after), after)
    except (OSError, src.SourceError) as exc:
        scanner.info.skipped = f"read failed: {exc}"
    shown.update(sid for sid, stat in res.stats.items() if stat.example)
    return res


def _plain_splittable(source: src.Source) -> bool:
    if source.path == "-" or source.compressed:
        return False
    try:
        with open(source.path, "rb") as fh:
            head = fh.read(src.BINARY_SNIFF)
    except OSError:
        return False
    return not head.startswith((src.GZIP_MAGIC, src.ZSTD_MAGIC)) and b"\x00" not in head


def _pool_context() -> Any:
    """How to start the workers: forked from this process when that is safe (a POSIX process with one thread,
    as `capdoctor logs` is), so each inherits the engine and the compiled prefilter built here once instead of
    importing and compiling them again; else spawned fresh (a thread holding a lock must not be forked)."""
    import multiprocessing
    import threading

    if os.name == "posix" and sys.platform != "darwin" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _run_pool(jobs: list[tuple[str, int, int, ScanOptions]], workers: int) -> list[ScanResult] | None:
    """Run the byte-range jobs on `workers` processes, each job handed to the first worker free (`_pieces`), and
    give their results in job order; None when processes cannot be used here."""
    try:
        ctx = _pool_context()
        frozen = False
        if not classifier().prepared():  # the first run on these tables (or the cache off): every row compiled
            classifier().prepare()  # here once and stored; forked workers inherit them, spawned ones read them
        if ctx.get_start_method() == "fork":
            for engine in {job[3].engine for job in jobs}:
                prefilter_for(engine)  # built once here, inherited by every worker
            if not gc.get_freeze_count():  # (a caller that froze objects itself keeps them so)
                gc.freeze()  # what exists now is shared with the workers and stays so: no collection touches it there
                frozen = True
        try:
            chunk_bytes = jobs[0][3].chunk_bytes if jobs else 0
            import pickle

            with ctx.Pool(workers, initializer=_start_worker, initargs=(chunk_bytes,)) as pool:
                return [pickle.loads(b) for b in pool.imap(_scan_range_pickled, jobs, chunksize=1)]
        finally:
            if frozen:
                gc.unfreeze()
    except (OSError, RuntimeError, EOFError, ImportError):
        return None  # e.g. an embedding script without a __main__ guard: scan in this process instead


def _shift_lines(part: ScanResult, offset: int) -> None:
    """Make a byte range's line numbers file-absolute (each worker counts from its own first line)."""
    if not offset:
        return
    new = tuple.__new__  # (`_replace` per event was a visible share of a dense scan; unpacking costs least)
    part.events = [new(Event, (t, c, s, m, r, ok, p, n + offset, o)) for t, c, s, m, r, ok, p, n, o in part.events]
    for stat in part.stats.values():
        if stat.example_line:
            stat.example_line += offset


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a scan, as it was after it.

    A dense log makes tens of thousands of events, each a tuple with a datetime, that live until the scan
    ends; every few hundred of them the collector walks the young objects and now and then everything, none of
    them garbage (a scan leaves a few dozen objects in reference cycles, whatever its size). That cost ~10% of a
    1-in-10 scan end to end, and more of sending a worker's events to the parent. Memory is unaffected: every
    object the scan drops is freed by its reference count as before, and those few cycles once the collector is
    back on. A forked worker inherits the collector off; the parent freezes what it holds before forking
    (`_run_pool`), which also keeps a worker from writing to the pages it shares with the parent."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def scan(sources: Sequence[src.Source], options: ScanOptions | None = None) -> ScanResult:
    """Scan every source; big plain files are split into byte ranges over a process pool.

    Results are merged in input order so first/last/example are deterministic, and line numbers of a
    split file are made file-absolute as the ranges are merged. The parent builds
    no prefilter when every byte goes to the workers, which keeps the whole process tree small.
    """
    with _collector_paused():
        return _scan(sources, options)


def _scan(sources: Sequence[src.Source], options: ScanOptions | None) -> ScanResult:
    opts = options or ScanOptions()
    workers = opts.workers or min(os.cpu_count() or 1, 8)
    big = [s for s in sources if s.size >= PARALLEL_MIN_BYTES and _plain_splittable(s)]
    result = ScanResult()
    partials: list[ScanResult] | None = None
    jobs: list[tuple[str, int, int, ScanOptions]] = []
    if workers > 1 and big:
        for s in big:
            jobs += [(s.path, a, b, opts) for a, b in _pieces(s.size, workers)]
        partials = _run_pool(jobs, workers)
    done = {s.path for s in big} if partials is not None else set()
    memo = RecordMemo()  # one per scan: the same errors recur across the files of one client
    for s in sources:
        if s.path in done:
            lines_before = 0
            for job, part in zip(jobs, partials or [], strict=True):
                if job[0] == s.path:
                    _shift_lines(part, lines_before)
                    lines_before += sum(f.lines for f in part.files)
                    result.merge(part)
            for info in result.files:
                if info.path == s.path:
                    info.bytes = s.size
        else:
            pf = prefilter_for(opts.engine)
            result.engine = result.engine or pf.name
            _scan_one(pf, opts, s, result, memo)
    if not result.engine:
        result.engine = prefilter_for(opts.engine).name if not partials else partials[0].engine
    if not result.stats and not result.too_old:
        result.unplaced = _unplaced(_heads(sources))
    return result


def _pieces(size: int, workers: int) -> list[tuple[int, int]]:
    """The byte ranges a file of `size` bytes is cut into for `workers` processes, in file order: four fifths in
    `workers` equal ranges, then the last fifth in up to `workers` ranges of at least PIECE_MIN_BYTES (none: the
    first ranges take it all); more where a range would pass PIECE_MAX_BYTES. A worker whose first range was the
    heavier takes none or one of the small ones, so the workers end within a small range of each other, and a
    range costs its worker ~10 ms (its first record of each error text and its result), so there are few."""
    tail = size // TAIL_SHARE
    small = min(workers, tail // PIECE_MIN_BYTES)
    small = max(small, -(-tail // PIECE_MAX_BYTES)) if small else 0
    body = size - tail if small else size
    big = max(workers, -(-body // PIECE_MAX_BYTES))
    cuts = sorted({body * k // big for k in range(big)} | {body + (size - body) * k // small for k in range(small)})
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], size], strict=True) if a < b]  # (a file of fewer bytes than
    # workers has fewer ranges)


def _scan_one(pf: Any, opts: ScanOptions, source: src.Source, result: ScanResult, memo: RecordMemo) -> None:
    scanner = _FileScanner(pf, opts, source.path, result, memo)
    try:
        reader = src.open_reader(source)
    except src.SourceError as exc:
        scanner.info.skipped = str(exc)
        return
    scanner.run(reader, size_hint=source.size if getattr(reader, "plain", False) else None)


__all__ = ["Event", "FileInfo", "ScanOptions", "ScanResult", "SigStat", "scan", "scan_bytes"]
