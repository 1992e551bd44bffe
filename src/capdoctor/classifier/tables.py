"""The rows of every layer of the classifier, read from the TOML tables beside this module: data, not code.

Contract: `load()` parses `structure.toml` (exception, error-type, gRPC and errno names), `providers.toml`
(documented provider codes and messages), `phrases.toml` (phrase families per cause, one row per language)
and `statuses.toml` (where texts put an HTTP status, and what a status means in context) into frozen
dataclasses, validates them (a bad row is a ValueError naming it) and returns one `Tables`. `tables()` is the
cached instance, kept between runs in the build cache (`capdoctor.classifier.buildcache`). Nothing here compiles a
pattern or classifies: that is `engine.py`. No I/O but reading the packaged files and that cache; nothing heavy
is imported.
"""

from __future__ import annotations

import io
import itertools
import pickle
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from capdoctor.classifier import buildcache
from capdoctor.model import Cause, Strength

ORIGINS = ("body", "stream", "log", "exception")
"""Where a classified text came from: an HTTP body, an SSE event, a log line, or a client exception."""

MEMORY_KINDS = ("ram", "vram", "kv-cache")
"""What ran out, for hardware rows that say: system RAM, GPU memory, or the GPU memory left for the KV cache."""

STRENGTH_RANK = {Strength.STRONG: 3, Strength.MODERATE: 2, Strength.WEAK: 1, Strength.CONTEXT: 0, Strength.AGAINST: 0}

FILES = ("structure.toml", "providers.toml", "phrases.toml", "statuses.toml", "words.toml")


class Layer(str, Enum):
    """Which layer of the engine a row belongs to, in the order the engine reads a text."""

    STRUCTURE = "structure"
    PROVIDER = "provider"
    PHRASE = "phrase"
    STATUS = "status"
    WORDS = "words"


SPECIFICITY = {Layer.PROVIDER: 3, Layer.STRUCTURE: 2, Layer.PHRASE: 1, Layer.STATUS: 0, Layer.WORDS: -1}
"""Between rows of equal strength, the more specific layer speaks first (a provider's own code beats a
generic phrase, which beats what a bare status means, which beats what the words lean towards)."""


@dataclass(frozen=True)
class Signature:
    """One row of any layer: what a failure looks like, what it means, and the one next step for it.

    The match spec (`names`, `codes`, `phrases`, `also`, `unless`, `headers`, `literals`) is documented in
    the header of each TOML file. `literals` are the row's prefilter anchors: every text the row matches
    contains one of them (lower-case), which is what lets the engine evaluate only the candidate rows.
    """

    id: str
    cause: Cause
    strength: Strength
    title: str
    remedy: str
    source: str
    layer: Layer
    retryable: bool | None = None
    memory: str | None = None
    names: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    statuses: tuple[int, ...] = ()
    status_strict: bool = False
    not_statuses: tuple[int, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    origins: tuple[str, ...] = ORIGINS
    literals: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    explains: tuple[str, ...] = ()
    family: str | None = None
    lang: str | None = None
    yields: bool = False
    """Heard only where other rows are silent: in a log where a row that does not yield spoke with moderate
    strength or more, this row's findings are context. Every words row is one (vocabulary is the last word), and
    so is a family whose words are often a symptom of another failure (a client's own type error after an API
    refusal it did not expect)."""

    @property
    def generic(self) -> bool:
        """True for rows that stand for a shape rather than a provider's own words (phrase, status, words)."""
        return self.layer in (Layer.PHRASE, Layer.STATUS, Layer.WORDS)


@dataclass(frozen=True)
class StatusName:
    """Names that stand for an HTTP status (`RateLimitError` is a 429): read by the status semantics."""

    id: str
    names: tuple[str, ...]
    status: int
    source: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Spelling:
    """One way texts write an HTTP status (`{s}` in `pattern` is the status), with its prefilter literals.

    `needs_error_word`: the spelling is also how ordinary traffic records write a status (`"status": 404` in a
    JSON access log, `status=404` in logfmt), so it counts only in a record that carries an error word.
    `not_after_request`: the spelling is also how access logs write a status after the request line
    (`"GET /x HTTP/1.1" 404 Not Found`); there it is traffic, not an error.
    """

    id: str
    pattern: str
    literals: tuple[str, ...]
    needs_error_word: bool = False
    not_after_request: bool = False
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """One meaning of a status rule, tried in order: `row` is emitted when its conditions hold.

    `words`: only when the earlier layers named this cause (the status then backs them); `local`: only for a
    local server (True) or a remote provider (False); `text`: only when this regex is in the text.
    """

    row: Signature
    words: bool = False
    local: bool | None = None
    text: str | None = None


@dataclass(frozen=True)
class StatusRule:
    """What a status means in context: the outcomes for the statuses it covers, first that applies wins."""

    id: str
    statuses: tuple[int, ...]
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class WordsSpec:
    """The words layer's settings (`words.toml` [model]) and its one row per cause (`words.<cause>`)."""

    alpha: float
    threshold: float
    min_tokens: int
    min_excerpts: int
    rows: Mapping[str, Signature]
    """The row a words-only finding reports, by cause value."""
    quiet_levels: str = ""
    """A regex for the log levels of chatter (INFO, DEBUG): a record whose first line has one is no error."""
    error_marks: str = ""
    """A regex for what marks an error beside the status layer's error words (exception class names…)."""


@dataclass(frozen=True)
class Tables:
    """Everything the engine compiles: the rows of each layer and the status reading rules."""

    rows: tuple[Signature, ...]
    status_names: tuple[StatusName, ...]
    spellings: tuple[Spelling, ...]
    rules: tuple[StatusRule, ...]
    error_words: str
    access_line: str
    local_hints: str
    by_id: Mapping[str, Signature] = field(default_factory=dict)
    words: WordsSpec | None = None
    """None only for tables built from texts that leave `words.toml` out (tests)."""


def expand(template: str, placeholders: Mapping[str, Sequence[str]]) -> list[str]:
    """Every string `template` stands for, each `{name}` replaced by each of `placeholders[name]`."""
    names = re.findall(r"\{(\w+)\}", template)
    unknown = [n for n in names if n not in placeholders]
    if unknown:
        raise ValueError(f"unknown placeholder {{{unknown[0]}}} in {template!r}")
    out: list[str] = []
    for combo in itertools.product(*(placeholders[n] for n in names)):
        text = template
        for name, value in zip(names, combo, strict=True):
            text = text.replace("{" + name + "}", value, 1)
        out.append(text)
    return out


def reason_spellings(codes: Mapping[str, Sequence[str]]) -> list[Spelling]:
    """Two spellings per standard reason phrase: `429 Too Many Requests` and `Too Many Requests (429)`."""
    out: list[Spelling] = []
    for code, phrases in codes.items():
        if not (str(code).isdigit() and len(str(code)) == 3):
            raise ValueError(f"reason: {code!r} is not an HTTP status")
        for phrase in phrases:
            words = re.escape(str(phrase).lower())
            out.append(
                Spelling(
                    f"reason-{code}",
                    rf"(?<![\d.])(?P<s>{code}) {words}",
                    (f"{code} {phrase}".lower(),),
                    not_after_request=True,
                )
            )
            out.append(Spelling(f"reason-{code}-after", rf"{words} \((?P<s>{code})\)", (f"{phrase} ({code}".lower(),)))
    return out


def _strs(row: Mapping[str, Any], key: str) -> tuple[str, ...]:
    return tuple(str(v) for v in row.get(key, ()))


def _headers(row: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for cond in row.get("headers", ()):
        name, _, rx = str(cond).partition("=")
        out.append((name.strip().lower(), rx))
    return tuple(out)


def _memory(row: Mapping[str, Any]) -> str | None:
    memory = row.get("memory")
    if memory is not None and memory not in MEMORY_KINDS:
        raise ValueError(f"memory must be one of {', '.join(MEMORY_KINDS)}, not {memory!r}")
    return None if memory is None else str(memory)


def _row(row: Mapping[str, Any], layer: Layer, base: Mapping[str, Any] | None = None) -> Signature:
    """One `Signature` from a TOML row; `base` supplies what a phrase family shares (cause, title…)."""
    merged = {**(base or {}), **row}
    names = _strs(merged, "names")
    literals = tuple(lit.lower() for lit in _strs(merged, "literals"))
    if layer is Layer.STRUCTURE:  # a name is its own anchor
        literals = tuple(dict.fromkeys(literals + tuple(n.lower() for n in names)))
    origins = _strs(merged, "origins") or ORIGINS
    if set(origins) - set(ORIGINS):
        raise ValueError(f"unknown origin in {origins}")
    return Signature(
        id=str(merged["id"]),
        cause=Cause(merged["cause"]),
        strength=Strength(merged["strength"]),
        title=str(merged["title"]),
        remedy=str(merged["remedy"]),
        source=str(merged["source"]),
        layer=layer,
        retryable=merged.get("retryable"),
        memory=_memory(merged),
        names=names,
        codes=_strs(merged, "codes"),
        phrases=_strs(merged, "phrases"),
        also=_strs(merged, "also"),
        unless=_strs(merged, "unless"),
        statuses=tuple(int(s) for s in merged.get("statuses", ())),
        status_strict=bool(merged.get("status_strict", False)),
        not_statuses=tuple(int(s) for s in merged.get("not_statuses", ())),
        headers=_headers(merged),
        origins=origins,
        literals=literals,
        examples=_strs(merged, "examples"),
        explains=_strs(merged, "explains"),
        family=merged.get("family"),
        lang=merged.get("lang"),
        yields=layer is Layer.WORDS or bool(merged.get("yields", False)),
    )


def _checked(kind: str, rows: Iterable[Mapping[str, Any]], build: Any) -> list[Any]:
    out = []
    for row in rows:
        try:
            out.append(build(row))
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"{kind}: bad row {row.get('id', '?')}: {exc}") from exc
    return out


def _read(name: str, texts: Mapping[str, str] | None) -> dict[str, Any]:
    if texts is not None:
        return dict(tomllib.loads(texts[name])) if name in texts else {}
    return dict(tomllib.loads(resources.files("capdoctor.classifier").joinpath(name).read_text("utf-8")))


def load(texts: Mapping[str, str] | None = None) -> Tables:
    """Parse and validate the four tables (the packaged files, or `texts` by file name, for tests)."""
    structure = _read("structure.toml", texts)
    providers = _read("providers.toml", texts)
    phrases = _read("phrases.toml", texts)
    statuses = _read("statuses.toml", texts)

    rows: list[Signature] = []
    rows += _checked("structure.toml", structure.get("name", ()), lambda r: _row(r, Layer.STRUCTURE))
    status_names = _checked(
        "structure.toml",
        structure.get("status_name", ()),
        lambda r: StatusName(str(r["id"]), _strs(r, "names"), int(r["status"]), str(r["source"]), _strs(r, "examples")),
    )
    rows += _checked("providers.toml", providers.get("signature", ()), lambda r: _row(r, Layer.PROVIDER))
    families: Mapping[str, Any] = phrases.get("families", {})

    def phrase_row(r: Mapping[str, Any]) -> Signature:
        family = str(r["family"])
        if family not in families:
            raise ValueError(f"unknown family {family!r}")
        return _row(r, Layer.PHRASE, {"id": r.get("id"), **families[family]})

    rows += _checked("phrases.toml", phrases.get("phrase", ()), phrase_row)

    placeholders = {k: [str(x) for x in v] for k, v in statuses.get("placeholders", {}).items()}
    spellings = _checked(
        "statuses.toml",
        statuses.get("spelling", ()),
        lambda r: Spelling(
            str(r["id"]),
            str(r["pattern"]),
            tuple(dict.fromkeys(x.lower() for lit in _strs(r, "literals") for x in expand(lit, placeholders))),
            bool(r.get("needs_error_word", False)),
            bool(r.get("not_after_request", False)),
            _strs(r, "examples"),
        ),
    )
    for reason in statuses.get("reason", ()):
        spellings += reason_spellings(reason.get("codes", {}))
    rules: list[StatusRule] = []
    for rule in statuses.get("status", ()):

        def outcome(o: Mapping[str, Any], rule: Mapping[str, Any] = rule) -> Outcome:
            base = {
                "title": rule.get("title"),
                "source": rule.get("source"),
                "retryable": rule.get("retryable"),
                "remedy": rule.get("remedy"),
                "statuses": rule.get("statuses", ()),
            }
            sig = _row({k: v for k, v in o.items() if k not in ("words", "local", "text")}, Layer.STATUS, base)
            return Outcome(sig, bool(o.get("words", False)), o.get("local"), o.get("text"))

        outs = _checked("statuses.toml", rule.get("means", ()), outcome)
        rules.append(StatusRule(str(rule["id"]), tuple(int(s) for s in rule["statuses"]), tuple(outs)))
    rows += [o.row for r in rules for o in r.outcomes]
    words = _words(_read("words.toml", texts)) if texts is None or "words.toml" in texts else None
    if words is not None:
        rows += list(words.rows.values())

    by_id: dict[str, Signature] = {}
    for sig in rows:
        if sig.id in by_id:
            raise ValueError(f"duplicate id {sig.id}")
        by_id[sig.id] = sig
    unknown = sorted({e for s in rows for e in s.explains} - set(by_id))
    if unknown:  # a typo in the data must fail loudly, in tests, not silently in the field
        raise ValueError(f"explains names unknown ids: {', '.join(unknown)}")
    covered: dict[int, str] = {}
    for rule in rules:
        for status in rule.statuses:
            if status in covered:
                raise ValueError(f"status {status} is in both {covered[status]} and {rule.id}")
            covered[status] = rule.id
    return Tables(
        tuple(rows),
        tuple(status_names),
        tuple(spellings),
        tuple(rules),
        str(statuses.get("error_words", "")),
        str(statuses.get("access_line", "")),
        str(statuses.get("local_hints", "")),
        by_id,
        words,
    )


def _words(doc: Mapping[str, Any]) -> WordsSpec:
    """The words layer's settings and rows; every cause needs exactly one row, never strong."""
    spec = doc.get("model", {})
    rows = _checked("words.toml", doc.get("row", ()), lambda r: _row(r, Layer.WORDS))
    by_cause = {sig.cause.value: sig for sig in rows}
    missing = sorted({c.value for c in Cause} - set(by_cause))
    if missing or len(by_cause) != len(rows):
        raise ValueError(f"words.toml: one row per cause is needed (missing: {', '.join(missing) or 'none'})")
    if any(sig.strength not in (Strength.WEAK, Strength.MODERATE) for sig in rows):
        raise ValueError("words.toml: a words row is weak or moderate (vocabulary alone is never strong)")
    try:
        threshold = float(spec["threshold"])
        out = WordsSpec(
            float(spec["alpha"]),
            threshold,
            int(spec["min_tokens"]),
            int(spec["min_excerpts"]),
            by_cause,
            str(spec.get("quiet_levels", "")),
            str(spec.get("error_marks", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"words.toml: [model] needs alpha, threshold, min_tokens, min_excerpts ({exc})") from exc
    if not 0.5 <= threshold < 1.0 or out.alpha <= 0:
        raise ValueError("words.toml: threshold must be in [0.5, 1) and alpha above 0")
    return out


@lru_cache(maxsize=1)
def tables() -> Tables:
    """The packaged tables, loaded once per process on first use.

    Parsing the TOML is a visible share of every command's start-up, so the parsed tables are kept in the build
    cache (`capdoctor.classifier.buildcache`), keyed by the bytes of every table file in the package (whichever `load`
    reads), this module's and `model`'s source, capdoctor's and Python's versions: any change to what they are
    built from rebuilds them. A cache that cannot be read or written only means parsing again.
    """
    key = _cache_key()
    if key is not None:
        cached = _unpickle(buildcache.load("tables", key))
        if cached is not None:
            return cached
    data = load()
    if key is not None:
        import pickle

        buildcache.store("tables", key, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return data


def _cache_key() -> bytes | None:
    """The build-cache key of the packaged tables (None when a source file cannot be read)."""
    from capdoctor import __version__, model

    try:
        parts = package_parts(lambda name: name.endswith(".toml"))
        code = [Path(__file__).read_bytes(), Path(model.__file__).read_bytes()]
    except (OSError, TypeError):
        return None
    return buildcache.key(b"tables", __version__.encode(), sys.version.encode(), *code, *parts)


def package_parts(keep: Callable[[str], bool]) -> list[bytes]:
    """Each file of this package whose name `keep` accepts, as its name and its bytes, in name order: what a
    build-cache key of something made from them hashes (`_cache_key`, `engine.build_inputs`). Raises `OSError`
    (or `TypeError`, from an unusual package loader) when one cannot be read."""
    folder = resources.files("capdoctor.classifier")
    files = sorted((f for f in folder.iterdir() if f.is_file() and keep(f.name)), key=lambda f: f.name)
    return [part for f in files for part in (f.name.encode("utf-8"), f.read_bytes())]


class _TablesUnpickler(pickle.Unpickler):
    """Unpickles only the classes `Tables` is made of (the cache file is data, never code to run)."""

    def find_class(self, module: str, name: str) -> Any:
        if module in ("capdoctor.classifier.tables", "capdoctor.model", "copyreg") or (
            module == "builtins" and name in ("tuple", "dict", "list", "frozenset", "set")
        ):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of the tables")


def _unpickle(payload: bytes | None) -> Tables | None:
    """The `Tables` in a cached payload, or None when there is none or it does not unpickle to one."""
    if payload is None:
        return None
    try:
        data = _TablesUnpickler(io.BytesIO(payload)).load()
    except Exception:  # a damaged or foreign payload is a miss, whatever it raises
        return None
    return data if isinstance(data, Tables) else None
