"""The classification engine: one compiled object that reads an error text layer by layer.

Contract: `engine()` builds the `Engine` once per process (lazily, on first use) from `tables.tables()`.
`Engine.classify(text, status=, headers=, origin=, local=)` returns every row that matches, best first, each
recording its layer:

1. structure: the HTTP status wherever the text states it, and exception, error-type, gRPC and errno names;
2. provider: documented provider codes and messages;
3. phrase: phrase families per cause and language;
4. status: what the status means, in context: the words of the earlier layers may name a cause the status
   is compatible with (a 429 that speaks of overload is capacity), and a local server's 5xx is never the
   provider's capacity;
5. words: only where nothing, or only something weak, read an error text, the cause its vocabulary leans
   towards (`words.py`, a naive Bayes model counted from the labelled tuning excerpts).

Every text row and status spelling is reachable only through its prefilter literals: `literals()` lists them
(lower-case, the log scanner's multi-pattern prefilter compiles exactly these) and
`classify_candidates(text, ids)` evaluates only the rows and spellings that the literal ids `ids` can
trigger. `classify` is `classify_candidates` over the literals present in the text, so the scanner's fast
path and every other caller share one evaluation. Pure: no I/O after the tables are read, no clock.

It must not decide a verdict (that is `capdoctor.verdict`) or print anything.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from capdoctor.classifier import compiled
from capdoctor.classifier.compiled import Gate
from capdoctor.classifier.gates import Alternation, admits, folded
from capdoctor.classifier.regexes import token_pattern, trie_pattern
from capdoctor.classifier.structure import StatusHit, StatusReader, ascii_words
from capdoctor.classifier.tables import (
    ORIGINS,
    SPECIFICITY,
    STRENGTH_RANK,
    Layer,
    Outcome,
    Signature,
    StatusRule,
    Tables,
    package_parts,
    tables,
)
from capdoctor.model import Cause

EXCERPT_CHARS = 160
SCORE_CODE = 3.0
SCORE_NAME = 2.5
SCORE_HEADER = 3.0
SCORE_PHRASE = 2.0
SCORE_STATUS = 1.0
SCORE_STATUS_FIT = 0.5
"""Specificity of what matched inside a row: a machine code beats an exception name, which beats a phrase."""
PREFILTER_SPELLINGS = 64
"""A phrase's selective literals spell out up to this many ways of writing its most selective run (the phrase
gates searched per text hold at most `gates._MAX_SPELLINGS`): a multi-pattern engine takes thousands at no cost."""
MIN_RARITY = 1
"""A row's phrases give its selective literals only when each phrase's gate is at least this rare
(`gates.rarity`); else the row's table literals stand in."""
WEAK_RANK = 1
"""`STRENGTH_RANK` of a weak row: a text read no more surely than this also hears what its words say."""


@dataclass(frozen=True)
class Match:
    """One row that matched a text: `score` is how specific the match was, `excerpt` the words that decided."""

    signature: Signature
    score: float
    excerpt: str

    @property
    def layer(self) -> Layer:
        """The layer that decided this match."""
        return self.signature.layer


_Confirm = tuple[tuple[tuple[int, int], ...], tuple[int, ...]]
"""What confirms a literal (`Engine.confirm`): the (text row, phrase index) pairs and the spellings behind it."""


@dataclass(frozen=True)
class _Row:
    """A row with its patterns compiled."""

    sig: Signature
    token_re: re.Pattern[str] | None
    phrase: Alternation | None
    also_re: tuple[re.Pattern[str], ...]
    unless: Alternation | None
    header_re: tuple[tuple[str, re.Pattern[str]], ...]


def _alternation(patterns: Sequence[str]) -> Alternation | None:
    """A row's phrases (or `unless` patterns) as one alternation searched phrase by phrase, each behind its
    gate (`gates.Alternation`; pattern and gate from the build cache, `compiled.gated`)."""
    if not patterns:
        return None
    flags = re.IGNORECASE | re.DOTALL
    made = [compiled.gated(ascii_words(p), flags) for p in patterns]
    return Alternation([rx for rx, _ in made], [gate for _, gate in made])


def _compile(sig: Signature) -> _Row:
    flags = re.IGNORECASE | re.DOTALL
    return _Row(
        sig,
        token_pattern(sig.names + sig.codes),
        _alternation(sig.phrases),
        tuple(compiled.pattern(ascii_words(p), flags) for p in sig.also),
        _alternation(sig.unless),
        tuple((n, compiled.pattern(rx, re.IGNORECASE)) for n, rx in sig.headers),
    )


def _excerpt(text: str, start: int, end: int) -> str:
    """The matched span with a little context, on one line, at most EXCERPT_CHARS long."""
    pad = max(0, (EXCERPT_CHARS - (end - start)) // 2)
    lo, hi = max(0, start - pad), min(len(text), end + pad)
    return " ".join(text[lo:hi].split())[:EXCERPT_CHARS]


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def unescape(text: str) -> str:
    """`text` with JSON `\\uXXXX` escapes decoded (bodies serialised with ASCII escapes hide their words)."""
    if "\\u" not in text:
        return text
    decoded = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return decoded.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def escaped(literal: str) -> str:
    """The form a literal takes in a body serialised with ASCII escapes (`繁忙` -> `\\u7e41\\u5fd9`), or ""."""
    if literal.isascii():
        return ""
    return "".join(ch if ch.isascii() else "".join(f"\\u{u:04x}" for u in _utf16(ch)) for ch in literal)


def _utf16(ch: str) -> list[int]:
    data = ch.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def header_error_text(headers: Mapping[str, str] | None) -> str:
    """The JSON error some backends put in a header (Codex: base64 `x-error-json`), as extra text to read."""
    for name, value in (headers or {}).items():
        if name.lower() == "x-error-json" and value:
            try:
                decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=False)
            except (binascii.Error, ValueError):
                return ""
            return "\n" + decoded.decode("utf-8", "replace")[:4096]
    return ""


class Engine:
    """The compiled tables: literals for the prefilter, rows and spellings per literal, status rules."""

    def __init__(self, data: Tables) -> None:
        self.tables = data
        self.rows: tuple[Signature, ...] = data.rows
        self.by_id: Mapping[str, Signature] = data.by_id
        self._order = {sig.id: i for i, sig in enumerate(data.rows)}
        self._text_rows = tuple(r for r in data.rows if r.layer not in (Layer.STATUS, Layer.WORDS))
        self._compiled: list[_Row | None] = [None] * len(self._text_rows)
        """Rows are compiled on first use (`_row`): a log with a handful of error kinds, or a process that
        classifies one probe reply, compiles only the rows its texts can trigger, not all ~180."""
        self._header_rows = tuple(i for i, r in enumerate(self._text_rows) if r.headers)
        self._names = data.status_names
        self._name_res: list[re.Pattern[str] | bool | None] = [False] * len(self._names)
        """Like the rows, the status-name patterns, the local hints and the outcome texts are compiled on first
        use (`_name_re`, `_holds`): compiling them all was a visible share of start-up."""
        self.reader = StatusReader(data.spellings, data.error_words, data.access_line)
        self._rules: dict[int, StatusRule] = {s: rule for rule in data.rules for s in rule.statuses}
        self._conditions: dict[str, tuple[re.Pattern[str], Gate]] = {}

        # The literal table: each literal -> the units (text rows, status names, spellings) it can trigger.
        units: dict[str, list[tuple[str, int]]] = {}
        for i, sig in enumerate(self._text_rows):
            for lit in sig.literals + tuple(code.lower() for code in sig.codes):
                units.setdefault(lit, []).append(("row", i))
        for i, name in enumerate(data.status_names):
            for lit in name.names:
                units.setdefault(lit.lower(), []).append(("name", i))
        for i, sp in enumerate(data.spellings):
            for lit in sp.literals:
                units.setdefault(lit, []).append(("spelling", i))
        for lit in list(units):  # a body with ASCII escapes carries the escaped form of non-ASCII words
            form = escaped(lit)
            if form:
                units.setdefault(form, []).extend(units[lit])
        units.pop("", None)
        self._literals: tuple[str, ...] = tuple(units)
        self._units: tuple[tuple[tuple[str, int], ...], ...] = tuple(tuple(dict.fromkeys(u)) for u in units.values())
        self._index = {lit: i for i, lit in enumerate(self._literals)}
        self._finder_re: re.Pattern[str] | None = None
        self._confirmers: dict[str, tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]] = {}
        """What `confirms` runs for each literal, compiled on first use."""

    def _row(self, i: int) -> _Row:
        """Text row `i` compiled (once, on first use)."""
        c = self._compiled[i]
        if c is None:
            c = self._compiled[i] = _compile(self._text_rows[i])
        return c

    def _name_re(self, i: int) -> re.Pattern[str] | None:
        """Status name `i`'s token pattern (compiled once, on first use)."""
        rx = self._name_res[i]
        if rx is False:
            rx = self._name_res[i] = token_pattern(self._names[i].names)
        return rx if isinstance(rx, re.Pattern) else None

    def _is_local(self, text: str, lower: str | None) -> bool:
        """Whether `text` names a local server (the tables' local hints). `lower`: `gates.folded(text)`."""
        hints = self.tables.local_hints
        return bool(hints) and self._holds(hints, text, lower)

    def _holds(self, condition: str, text: str, lower: str | None) -> bool:
        """Whether a context pattern of the status rules (the local hints, an outcome's `text`) matches `text`:
        compiled on first use, and searched only when `lower` (`gates.folded(text)`; None: always) holds one of its
        literals (its gate), since an alternation of words read case-blind costs ~25–75 µs a text and most texts
        that ask (every 5xx) hold none of them."""
        rx, gate = self._condition(condition)
        return admits(gate, lower) and rx.search(text) is not None

    def _condition(self, condition: str) -> tuple[re.Pattern[str], Gate]:
        """A context pattern of the status rules and its gate (`_holds`), compiled on first use."""
        made = self._conditions.get(condition)
        if made is None:
            made = self._conditions[condition] = compiled.gated(ascii_words(condition), re.IGNORECASE)
        return made

    @cached_property
    def _words_gate(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        """The words layer's chatter and error-mark patterns (`words.toml`), compiled on first use: most
        processes never reach the words layer."""
        spec = self.tables.words
        quiet, marks = (spec.quiet_levels, spec.error_marks) if spec is not None else ("", "")
        return (compiled.pattern(quiet) if quiet else None, compiled.pattern(marks) if marks else None)

    @property
    def _finder(self) -> re.Pattern[str]:
        """The literal finder of `literal_ids` (compiled on first use: the log scanner gets literal ids from
        its multi-pattern engine and never needs it)."""
        if self._finder_re is None:
            self._finder_re = compiled.pattern("(?=(" + trie_pattern(self._literals) + "))")
        return self._finder_re

    def compile_all(self) -> None:
        """Compile now every pattern `evaluate` can use: the rows, the status names and spellings, the context
        patterns and the outcomes' texts (their gates are what `prepare` stores). Not the literal finder: the log
        scanner, which prepares, never uses it, and spelling its trie out costs more than compiling a row."""
        for i in range(len(self._text_rows)):
            self._row(i)
        for i in range(len(self._names)):
            self._name_re(i)
        self.reader.compile_all()
        self._is_local("", "")
        for rule in self.tables.rules:
            for outcome in rule.outcomes:
                if outcome.text is not None:
                    self._holds(outcome.text, "", "")
        self._words_gate  # noqa: B018 - a cached property: compiled here

    def prepare(self) -> None:
        """Every pattern compiled, and their gates stored in the build cache when any was new
        (`compiled.warm`): a parent about to fork workers on a cache that lacks some (`prepared`) does this once,
        and no worker compiles a row."""
        compiled.warm(self.compile_all, self._inputs())

    def prepared(self) -> bool:
        """Whether the build cache holds the gates of every pattern `prepare` compiles: a
        `prepare` of the very files these tables and patterns are made of stored them (`compiled.complete`). Then a
        parent about to fork workers only loads them, and each worker compiles the patterns its lines need, as it
        needs them: a log whose candidates are a few kinds of line needs a few rows, and the parent starts the
        workers sooner."""
        return compiled.complete(self._inputs())

    def _inputs(self) -> bytes:
        """`build_inputs()` for the packaged tables; b"" (unknown) for any other."""
        return build_inputs() if self.tables is tables() else b""

    # -------------------------------------------------------------------------------- prefilter interface
    def literals(self) -> tuple[str, ...]:
        """Every prefilter literal, lower-case; a literal's id is its index here."""
        return self._literals

    @cached_property
    def selective(self) -> frozenset[str]:
        """Literals of which every match of every row, status name and spelling holds one, chosen to be rare in
        ordinary logs: each text row's phrase gates (`gates.required`, spelled out up to PREFILTER_SPELLINGS ways,
        `gates.rarity` at least MIN_RARITY), else its table literals; the names, codes and spellings' own
        literals (with the escaped forms of non-ASCII ones). A text holding none of them matches no row: only the
        words layer can still read it, and never on a line logged at a quiet level (`quiet_level`), so the log
        scanner skips such lines without judging them. Not ids: `literals()` stays the one id space."""
        return self._selective_sets[0]

    @property
    def confirm(self) -> Mapping[str, tuple[tuple[tuple[int, int], ...], tuple[int, ...]]]:
        """The selective literals that only rows' phrases (their gates, or the table literals of a row whose gates
        are too common to select: `_selective`) or access-log spellings (`not_after_request`) make selective,
        each with the phrases (text row, phrase index) and spellings behind it. A quiet line holding these alone
        is an error only if one of those phrases or spellings matches it (`confirms`): a 404 access line holds
        " not found" and "404 Not Found", and judging every such line was most of the log scanner's candidates
        on an agent's day."""
        return self._selective_sets[1]

    @cached_property
    def _selective_sets(self) -> tuple[frozenset[str], dict[str, _Confirm]]:
        """`selective` and `confirm`, kept in the build cache for the packaged tables (parsing every phrase costs
        ~0.2 s)."""
        import marshal
        import sys

        from capdoctor.classifier import buildcache

        inputs = self._inputs()
        key = buildcache.key(b"selective literals 3", sys.version.encode(), inputs) if inputs else b""
        payload = buildcache.load("selective-literals", key) if key else None
        if payload is not None:
            try:
                chosen, confirm = marshal.loads(payload)
                return frozenset(chosen), {
                    lit: (tuple((i, k) for i, k in phrases), tuple(sp)) for lit, (phrases, sp) in confirm.items()
                }
            except (EOFError, ValueError, TypeError):
                pass
        made = self._make_selective()
        if key:
            buildcache.store("selective-literals", key, marshal.dumps(([*sorted(made[0])], made[1])))
        return made

    def _make_selective(self) -> tuple[frozenset[str], dict[str, _Confirm]]:
        sure: set[str] = set()
        phrases: dict[str, list[tuple[int, int]]] = {}
        for i, sig in enumerate(self._text_rows):
            own, gated = _selective(sig)
            sure.update(own)
            for lit, k in gated:
                phrases.setdefault(lit, []).append((i, k))
        sure.update(lit.lower() for name in self._names for lit in name.names)
        spellings: dict[str, list[int]] = {}
        for j, sp in enumerate(self.tables.spellings):
            for lit in sp.literals:
                if sp.not_after_request:
                    spellings.setdefault(lit, []).append(j)
                else:
                    sure.add(lit)
        made = sure | set(phrases) | set(spellings)
        sure.update(form for lit in list(made) if (form := escaped(lit)))
        made.update(sure)
        made.discard("")
        confirm = {
            lit: (tuple(dict.fromkeys(phrases.get(lit, ()))), tuple(spellings.get(lit, ())))
            for lit in (set(phrases) | set(spellings)) - sure
        }
        return frozenset(made), confirm

    def confirms(self, text: str, literals: Iterable[str]) -> bool:
        """Whether a phrase or spelling behind the confirmable `literals` (`confirm`) matches `text`: a phrase
        anywhere (its row's vetoes and `also` patterns are not tried: this may say yes where the row would not,
        never the reverse), a spelling anywhere but after an access log's request line."""
        reader = self.reader
        for lit in literals:
            found = self._confirmers.get(lit)
            if found is None:
                phrases, spellings = self.confirm[lit]
                flags = re.IGNORECASE | re.DOTALL
                made = tuple(compiled.pattern(ascii_words(self._text_rows[i].phrases[k]), flags) for i, k in phrases)
                found = self._confirmers[lit] = (made, tuple(reader.pattern(j) for j in spellings))
            if any(rx.search(text) for rx in found[0]):
                return True
            if any(not reader.after_request(text, m.start()) for rx in found[1] for m in rx.finditer(text)):
                return True
        return False

    def quiet_level(self, line: str, cut: bool = False) -> bool:
        """Whether a record whose first line is `line` is a program's chatter to the words layer (a level such as
        INFO or DEBUG, a stack frame: `words.toml`'s quiet_levels), which then never speaks on it. With `cut`,
        `line` is the head of a longer line: only a match that ends before the head's last character counts (the
        pattern may look one character past a word)."""
        quiet = self._words_gate[0]
        m = quiet.search(line) if quiet is not None else None
        return m is not None and (not cut or m.end() < len(line))

    def literal_units(self, literal_id: int) -> tuple[str, ...]:
        """What literal `literal_id` can trigger, as row ids, `name:ID` and `spelling:ID` (for tests/tools)."""
        out = []
        for kind, i in self._units[literal_id]:
            if kind == "row":
                out.append(self._text_rows[i].id)
            elif kind == "name":
                out.append(f"name:{self.tables.status_names[i].id}")
            else:
                out.append(f"spelling:{self.tables.spellings[i].id}")
        return tuple(out)

    @cached_property
    def _prefixes(self) -> tuple[tuple[int, ...], ...]:
        """Per literal, the ids of every literal that is a prefix of it (itself included): found at the same position
        as the longer one (`literal_ids`; built on first use: the log scanner gets its ids from its multi-pattern
        engine, and building these took ~5 ms, as long as the rest of the engine's construction)."""
        index = self._index
        return tuple(
            tuple(index[lit[:k]] for k in range(1, len(lit) + 1) if lit[:k] in index) for lit in self._literals
        )

    def literal_ids(self, text: str) -> frozenset[int]:
        """The ids of every literal in `text` (case-insensitive), as a multi-pattern engine reports them."""
        found: set[int] = set()
        for m in self._finder.finditer(text.lower()):
            found.update(self._prefixes[self._index[m.group(1)]])
        return frozenset(found)

    # ------------------------------------------------------------------------------------ classification
    def classify(
        self,
        text: str,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        origin: str = "body",
        local: bool | None = None,
    ) -> list[Match]:
        """Every row that matches `text`, best first (strongest, then most specific layer); [] when none.

        `status` is the HTTP status when the caller knows it (a probe); otherwise the text's own is read
        (`API Error: 529 …`, `RateLimitError`). A base64 `x-error-json` header is decoded and read too.
        `origin` says where the text came from (`body`, `stream`, `log`, `exception`); `local` whether it
        came from a local model server (None: judged from the text, e.g. a loopback address or `ollama`).
        """
        text = text + header_error_text(headers)
        return self.classify_candidates(
            text, self.literal_ids(text), status=status, headers=headers, origin=origin, local=local
        )

    def classify_candidates(
        self,
        text: str,
        ids: Collection[int],
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        origin: str = "log",
        local: bool | None = None,
        gated: bool = True,
    ) -> list[Match]:
        """Like `classify`, evaluating only what the literal ids `ids` can trigger (the prefilter's hits).

        `gated=False` evaluates every row and spelling whatever `ids` says: only tests use it, to prove that
        the literals cover everything the rows can match.
        """
        return self.evaluate(text, ids, status=status, headers=headers, origin=origin, local=local, gated=gated)[0]

    def evaluate(
        self,
        text: str,
        ids: Collection[int],
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        origin: str = "log",
        local: bool | None = None,
        gated: bool = True,
    ) -> tuple[list[Match], StatusHit | None]:
        """`classify_candidates`' matches together with the status it judged (None: no error status), so a
        caller that also reports the status (the log scanner) reads it once instead of again.

        The status is the caller's when it gave one, else the first spelled one (what `extract_error` falls
        back to), else the one an exception or status name stands for.
        """
        return self._evaluate(text, ids, status, headers, origin, local, gated)

    def _units_of(self, ids: Collection[int]) -> tuple[set[int], set[int], set[int]]:
        """The text rows, status names and spellings the literal ids `ids` can trigger."""
        rows: set[int] = set()
        names: set[int] = set()
        spellings: set[int] = set()
        for lit in ids:
            for kind, i in self._units[lit]:
                (rows if kind == "row" else names if kind == "name" else spellings).add(i)
        return rows, names, spellings

    def _evaluate(
        self,
        text: str,
        ids: Collection[int],
        status: int | None,
        headers: Mapping[str, str] | None,
        origin: str,
        local: bool | None,
        gated: bool,
    ) -> tuple[list[Match], StatusHit | None]:
        """`evaluate`: the status, then each row the ids trigger, what the status means, and the words layer."""
        if origin not in ORIGINS:
            raise ValueError(f"unknown origin {origin!r} (one of {', '.join(ORIGINS)})")
        text = unescape(text)
        if gated:
            rows, names, spellings = self._units_of(ids)
        else:
            rows = set(range(len(self._text_rows)))
            names = set(range(len(self._names)))
            spellings = set(range(len(self.tables.spellings)))
        if headers:
            rows.update(self._header_rows)

        hit = self._status(text, status, spellings, names)
        found: list[Match] = []
        lower = folded(text)  # what the rows' phrase gates read (`gates.Alternation`)
        fit = hit.status if hit else None
        for i in sorted(rows):
            m = self._match_row(self._row(i), text, lower, status, fit, headers, origin)
            if m is not None:
                found.append(m)
        if hit is not None:
            sm = self._status_match(hit, text, found, local, status is not None)
            if sm is not None:
                found.append(sm)
        if all(STRENGTH_RANK[m.signature.strength] <= WEAK_RANK for m in found) and (
            present := ids if gated else self.literal_ids(text)
        ):
            wm = self._words_match(text, lower, self._worded_rows(present), hit is not None)
            if wm is not None:
                found.append(wm)
        found.sort(key=self._rank)
        return found, hit

    def _worded_rows(self, ids: Collection[int]) -> set[int]:
        """The text rows the literal ids `ids` can trigger through a literal with a letter in it (a number
        alone, such as Ollama's port 11434 inside `module_11434.py`, says nothing of an error)."""
        return {
            i
            for lit in ids
            if any(ch.isalpha() for ch in self._literals[lit])
            for kind, i in self._units[lit]
            if kind == "row"
        }

    def _error_marked(self, text: str) -> bool:
        """Whether `text` carries an error mark (`words.toml` error_marks: an exception class name…)."""
        marks = self._words_gate[1]
        return marks is not None and marks.search(text) is not None

    def _words_match(self, text: str, lower: str | None, triggered: Collection[int], status_read: bool) -> Match | None:
        """The words layer, as the last word on a candidate text that nothing else explained, or explained
        only weakly (a bare 400, a remote 5xx): only for an error (a status in an error position, a row's
        literal with a letter in it, an error word such as "failed", "invalid", "错误", or an error mark such
        as an exception class name or "does not exist"; an access line with a 404 is traffic) whose triggered
        rows did not veto it (`unless`: a row's words in a context its author knew to be no
        error), and only when the words lean clearly to one cause (`words.WordModel`). Beside a weak reading,
        the words back it when they agree and contest it when they don't. `lower`: as in `_match_row`."""
        spec = self.tables.words
        if spec is None:
            return None
        quiet = self._words_gate[0]
        first_line_end = text.find("\n")
        if quiet is not None and quiet.search(text, 0, len(text) if first_line_end < 0 else first_line_end):
            return None  # a record logged at INFO or DEBUG, or a stack frame: the program's chatter, not its error
        if not (status_read or triggered or self.reader.has_error_word(text) or self._error_marked(text)):
            return None
        if any((c := self._row(i)).unless is not None and c.unless.found(text, lower) for i in triggered):
            return None
        from capdoctor.classifier.words import model

        said = model(spec.alpha, spec.threshold, spec.min_tokens).judge(text)
        if said is None:
            return None
        return Match(spec.rows[said.cause], round(said.posterior, 3), "words: " + ", ".join(said.words))

    def _rank(self, m: Match) -> tuple[int, int, float, int]:
        sig = m.signature
        return (-STRENGTH_RANK[sig.strength], -SPECIFICITY[sig.layer], -m.score, self._order[sig.id])

    def _status(
        self, text: str, status: int | None, spellings: Collection[int], names: Collection[int]
    ) -> StatusHit | None:
        """The error status to judge: the caller's (when it is an error), else the text's spelled one, else
        the one an exception or status name stands for.

        A spelled 400 gives way to a name that stands for another status: 400 is what a wrapper answers when it
        cannot map an upstream failure (LiteLLM's `'status_code': 400` around Bedrock's
        `serviceUnavailableException`), and the name is the upstream's own word for it."""
        if status is not None and status >= 400:
            return StatusHit(status, "caller", -1, -1)
        hit = self.reader.read(text, spellings) if spellings else None
        if hit is not None and hit.status != 400:
            return hit
        for i in sorted(names):
            rx = self._name_re(i)
            m = rx.search(text) if rx is not None else None
            if m is not None and (hit is None or self._names[i].status != 400):
                name = self._names[i]
                return StatusHit(name.status, f"name:{name.id}", m.start(), m.end())
        return hit

    def _status_match(
        self, hit: StatusHit, text: str, found: Sequence[Match], local: bool | None, from_caller: bool
    ) -> Match | None:
        """What the status means here: the outcome backing the strongest compatible cause the words named,
        else the first unconditional outcome that fits the context. `local` (None: read from the text, and
        only when an outcome depends on it)."""
        rule = self._rules.get(hit.status)
        if rule is None:
            return None
        words: dict[Cause, tuple[int, int]] = {}
        for m in found:
            if STRENGTH_RANK[m.signature.strength] > 0:
                rank = (STRENGTH_RANK[m.signature.strength], SPECIFICITY[m.signature.layer])
                words[m.signature.cause] = max(words.get(m.signature.cause, (0, 0)), rank)

        lower = folded(text)  # what the conditions' gates read

        def fits(o: Outcome) -> bool:
            nonlocal local
            if o.local is not None:
                if local is None:
                    local = self._is_local(text, lower)
                if o.local != local:
                    return False
            return o.text is None or self._holds(o.text, text, lower)

        backing = [o for o in rule.outcomes if o.words and o.row.cause in words and fits(o)]
        if backing:
            chosen: Outcome | None = max(backing, key=lambda o: words[o.row.cause])
        else:
            chosen = next((o for o in rule.outcomes if not o.words and fits(o)), None)
        if chosen is None:
            return None
        excerpt = f"HTTP {hit.status}" if from_caller or hit.start < 0 else _excerpt(text, hit.start, hit.end)
        return Match(chosen.row, SCORE_STATUS, excerpt)

    def _match_row(
        self,
        c: _Row,
        text: str,
        lower: str | None,
        status: int | None,
        fit: int | None,
        headers: Mapping[str, str] | None,
        origin: str,
    ) -> Match | None:
        """Score one compiled row against one text: its match, or None when it does not match; `lower` is
        `gates.folded(text)` (what the phrase gates read), `status` the caller's (rows strict about their status need
        it), `fit` the status judged (it adds to rows listing it, and vetoes rows whose words it contradicts:
        `not_statuses`). It stops where the result is known: no name, code, phrase or header, a veto, an `also`
        pattern missing."""
        sig = c.sig
        if not _admitted(sig, status, fit, origin):
            return None
        token = c.token_re.search(text) if c.token_re is not None else None
        phrase = c.phrase.search(text, lower) if c.phrase is not None else None
        span = token.span() if token is not None else phrase.span() if phrase is not None else None
        header_hit = bool(c.header_re) and _headers_ok(c.header_re, headers)
        score = _row_score(sig, token is not None, phrase is not None, header_hit)
        if score == 0.0:
            return None
        if c.unless is not None and c.unless.search(text, lower) is not None:
            return None
        if any(rx.search(text) is None for rx in c.also_re):
            return None
        if fit is not None and fit in sig.statuses:
            score += SCORE_STATUS_FIT
        excerpt = "headers: " + ", ".join(n for n, _ in c.header_re) if span is None else _excerpt(text, *span)
        return Match(sig, score, excerpt)


def _selective(sig: Signature) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """A text row's part of `Engine.selective`: its names and codes, which match it outright, and its phrase
    gates, each with the phrase it gates, else (a gate too common to select) its table literals, each with every
    phrase of the row; those `Engine.confirms` can still confirm."""
    from capdoctor.classifier.gates import rarity, required

    own = (*(n.lower() for n in sig.names), *(c.lower() for c in sig.codes))
    gates = [required(ascii_words(p), re.IGNORECASE | re.DOTALL, PREFILTER_SPELLINGS) for p in sig.phrases]
    if any(rarity(g) < MIN_RARITY for g in gates):
        return own, tuple((lit, k) for lit in sig.literals for k in range(len(sig.phrases)))
    return own, tuple((lit, k) for k, gate in enumerate(gates) for lit in gate)


def _admitted(sig: Signature, status: int | None, fit: int | None, origin: str) -> bool:
    """Whether a row applies at all: to texts of this origin, with the caller's status when it is strict about it
    (`status`), and not vetoed by the status judged (`fit` in its `not_statuses`)."""
    if origin not in sig.origins:
        return False
    if sig.status_strict and sig.statuses and status not in sig.statuses:
        return False
    return fit is None or fit not in sig.not_statuses


def _row_score(sig: Signature, token: bool, phrase: bool, header: bool) -> float:
    """How specifically a row matched (0.0: not at all): its names or codes, its phrases, its headers."""
    score = 0.0
    if token:
        score = SCORE_CODE if sig.layer is not Layer.STRUCTURE else SCORE_NAME
    if phrase:
        score = max(score, SCORE_PHRASE) + (0.5 if score else 0.0)
    if header:
        score = max(score, SCORE_HEADER)
    return score


def _headers_ok(conds: Sequence[tuple[str, re.Pattern[str]]], headers: Mapping[str, str] | None) -> bool:
    if not headers:
        return False
    lower = {k.lower(): v for k, v in headers.items()}
    return all(any(re.fullmatch(name, k) and rx.search(str(v)) for k, v in lower.items()) for name, rx in conds)


@lru_cache(maxsize=1)
def build_inputs() -> bytes:
    """A digest of what the packaged tables' patterns are made of (`Engine.prepared`): every file of this package
    (the tables, the words, the code that turns them into patterns) and `capdoctor.model`'s source; b"" when one
    cannot be read (then no cache counts as complete)."""
    from pathlib import Path

    from capdoctor import model
    from capdoctor.classifier import buildcache

    try:
        parts = [*package_parts(lambda _name: True), Path(model.__file__).read_bytes()]
    except (OSError, TypeError):
        return b""
    return buildcache.key(b"engine inputs", *parts)


@lru_cache(maxsize=1)
def engine() -> Engine:
    """The process-wide engine, compiled on first use."""
    return Engine(tables())
