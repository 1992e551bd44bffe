"""Alternations searched pattern by pattern, each skipped unless the text holds a literal it requires.

Contract: `required(source)` is a gate of the regex `source`: literals, folded, of which every match
contains at least one (() when it cannot tell; `compiled.gated` keeps each phrase's gate in the build cache);
`Alternation(patterns, gates)` searches like one regex of `(?:p1)|(?:p2)|…` (the leftmost match, the first
alternative at that position), but runs only the alternatives whose gate has a literal in the text's folded
form (`folded`). Pure; nothing compiled here.

Why: a row of the phrase layer is an alternation of dozens of phrases searched with IGNORECASE, where Python's
regex engine tries every alternative at every position (~40 µs on a 150-character text for the English rows)
and none of its fast scans for a literal prefix applies. Most of a row's phrases cannot match a given text: a
substring test per phrase (~50 ns) says which might, and only those run.

Folding: IGNORECASE takes two characters as the same when their lower-case forms are (one character each, as
the regex engine lowers them), or when those are in one of its few extra groups (`ı` and `i`, `ſ` and `s`, `ς`
and `σ`, the Kelvin sign lowers to `k`). `folded` maps every character to its group's smallest member, and gates
hold their characters so, so a text holds a gate's literal whenever a pattern with that gate matches it, in any
script. An ASCII text folds to `str.lower()` (every ASCII character is its group's smallest). Where this
Python's regex engine does not list its extra groups, a non-ASCII text is not folded and runs every phrase.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

from capdoctor.classifier.compiled import Gate, extra_cases, parser

_SKIP = frozenset(("AT", "ASSERT", "ASSERT_NOT"))
"""Zero-width items: the characters on either side of one are still next to each other in the match."""
_REPEATS = frozenset(("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))
_ASCII = "".join(map(chr, range(128)))
_MAX_SET = 4
"""A character set of at most this many literals (`['’]`) multiplies a run's spellings instead of ending it."""
_MAX_SPELLINGS = 16


@cache
def _folds_to_ascii(ch: str) -> bool:
    """Whether IGNORECASE lets the non-ASCII `ch` match an ASCII character (`ſ` matches `s`, `K` (Kelvin) `k`)."""
    return re.search(re.escape(ch), _ASCII, re.IGNORECASE) is not None


_COMMON = (
    "localhost",
    "127.0.0.1",
    "0.0.0.0",
    "http://",
    "https://",
    "not found",
    "no such file or directory",
    "context window",
    "context length",
    "context size",
    "model",
    "status",
    "token",
    "request",
)
"""Words an agent's ordinary log is full of (its local servers' URLs, 404 access lines, a tool call's missing
file, a model's context window, status and tokens in its request log): they count for nothing in a gate's
length (`rarity`), so a pattern is gated by another run of its literals where it has one (`.gguf` rather than
`no such file or directory`, `http_proxy` rather than `localhost`)."""


def _minimal(lits: Sequence[str]) -> Gate:
    """`lits` without those that hold another of them (a text holding the longer one holds the shorter)."""
    uniq = list(dict.fromkeys(lits))
    return tuple(x for x in uniq if not any(y != x and y in x for y in uniq))


def rarity(gate: Gate) -> int:
    """How rare a text holding one of a gate's literals is, as the length of its shortest literal in UTF-8 bytes
    (what a multi-pattern engine matches; a CJK character is as rare as three letters) less the common words in
    it (`_COMMON`): `http://localhost` counts 0, `http_proxy` 10, `context window exceeded` 9. A literal of fewer
    than three bytes is no gate worth the name (-1)."""
    out = None
    for lit in gate:
        size = len(lit.encode("utf-8", "surrogatepass"))
        rare = -1 if size < 3 else size - sum(len(word) for word in _COMMON if word in lit)
        out = rare if out is None else min(out, rare)
    return -1 if out is None else out


def _rank(gate: Gate) -> tuple[int, int, int]:
    """How selective a gate is: its `rarity`, then the longer shortest literal, then the fewer literals."""
    return (rarity(gate), min(map(len, gate)), -len(gate))


def _better(a: Gate, b: Gate) -> Gate:
    """The more selective of two gates (`_rank`)."""
    if not a:
        return b
    if not b:
        return a
    return a if _rank(a) >= _rank(b) else b


class _Fold(NamedTuple):
    """The regex engine's extra case groups as `str.translate` reads them, and a pattern finding any character
    they change."""

    table: dict[int, int]
    changed: re.Pattern[str]


@cache
def _fold() -> _Fold | None:
    """Each member of the regex engine's extra case groups (`compiled.extra_cases`) mapped to its group's
    smallest member, or None when this Python does not list them."""
    extra = extra_cases()
    if extra is None:
        return None
    table: dict[int, int] = {}
    for low, others in extra.items():
        smallest = min((low, *others))
        for member in (low, *others):
            if member != smallest:
                table[member] = smallest
    changed = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(table)) + "]")
    return _Fold(table, changed)


def fold_char(ch: str) -> str:
    """One character as `folded` maps it: lower-cased as the regex engine lowers one character (`str.lower` but
    for `İ`, which it lowers to two, of which the engine keeps the first), then its group's smallest member."""
    low = ch.lower()[:1] or ch
    fold = _fold()
    return chr(fold.table.get(ord(low), ord(low))) if fold is not None else low


def folded(text: str) -> str | None:
    """`text` with every character folded (see the module docstring): what gates are looked for in, one character
    for one, so positions agree with `text`'s. For an ASCII text, `text.lower()`. None for a non-ASCII text when
    the regex engine's extra case groups are unknown (every gate then admits it)."""
    if text.isascii():
        return text.lower()
    fold = _fold()
    if fold is None:
        return None
    low = text.lower()  # one C pass: the engine's lowering but for `İ` (two characters) and a final `Σ` (`ς`,
    if len(low) != len(text):  # which folds with `σ` anyway): with an `İ`, character by character
        return "".join(map(fold_char, text))
    return low.translate(fold.table) if fold.changed.search(low) else low


def _char(code: int) -> str | None:
    """A literal character as a gate holds it (folded), or None when IGNORECASE may fold it to an ASCII character
    and the regex engine's extra case groups are unknown (a non-ASCII text is then never gated, an ASCII one is)."""
    if code < 128:
        return chr(code).lower()
    if _fold() is not None:
        return fold_char(chr(code))
    return None if _folds_to_ascii(chr(code)) else chr(code)


def _set_chars(items: Any) -> list[str] | None:
    """The characters of a small character set of literals only (`['’]`, `[134]`), else None."""
    chars = [_char(av) if str(op) == "LITERAL" else None for op, av in items]
    if not chars or len(chars) > _MAX_SET or any(ch is None for ch in chars):
        return None
    return list(dict.fromkeys(ch for ch in chars if ch is not None))


def _spellings(items: Any, most: int = _MAX_SPELLINGS) -> list[str] | None:
    """Every string a parsed sequence can match, folded, when it is made of literal characters only: small
    character sets, groups, branches of such sequences and optional pieces of them (`(?:the )?`, `s?`), at most
    `most` of them; else None."""
    out = [""]
    for op, av in items:
        name = str(op)
        piece: list[str] | None
        if name == "LITERAL":
            ch = _char(av)
            piece = None if ch is None else [ch]
        elif name == "IN":
            piece = _set_chars(av)
        elif name == "SUBPATTERN":
            piece = _spellings(av[-1], most)
        elif name == "BRANCH":
            alts = [_spellings(alt, most) for alt in av[1]]
            piece = None if any(a is None for a in alts) else [x for a in alts for x in a or ()]
        elif name in _REPEATS and av[0] == 0 and av[1] == 1:
            inner = _spellings(av[2], most)
            piece = None if inner is None else ["", *inner]
        elif name in _SKIP:
            continue
        else:
            piece = None
        if piece is None or len(out) * len(piece) > most:
            return None
        out = [o + x for o in out for x in piece]
    return list(dict.fromkeys(out))


def _gate(items: Any, most: int = _MAX_SPELLINGS) -> Gate:
    """The best gate of a parsed sequence (see `required`), of runs of at most `most` spellings."""
    best: Gate = ()
    run: list[str] = []
    """The spellings of the run of literal characters being read ([]: none)."""

    def flush() -> None:
        nonlocal best, run
        if run and all(run):
            best = _better(best, _minimal(run))
        run = []

    def extend(chars: list[str]) -> None:
        nonlocal run
        if len(run) * len(chars) > most:
            flush()
        run = [r + ch for r in run or [""] for ch in chars]

    def walk(seq: Any) -> None:
        nonlocal best
        for op, av in seq:
            name = str(op)
            ch = _char(av) if name == "LITERAL" else None
            chars = _set_chars(av) if name == "IN" else None
            spelled = _spellings([(op, av)], most) if name in ("BRANCH", *_REPEATS) and not chars else None
            if ch is not None:
                extend([ch])
            elif chars is not None:
                extend(chars)
            elif spelled is not None and len(spelled) > 1:  # a small branch or optional piece of literals
                extend(spelled)
            elif name == "SUBPATTERN":
                walk(av[-1])  # a group in a sequence is that sequence: its literals continue the run
            elif name in _SKIP:
                continue
            elif name in _REPEATS and av[0] >= 1:  # repeated at least once: its own gate holds
                flush()
                best = _better(best, _gate(av[2], most))
            elif name == "BRANCH":  # when every alternative has a gate, one of their literals is in every match
                flush()
                alts = [_gate(alt, most) for alt in av[1]]
                if all(alts):
                    best = _better(best, _minimal([lit for alt in alts for lit in alt]))
            else:
                flush()

    walk(items)
    flush()
    return best


def required(source: str, flags: int = re.IGNORECASE | re.DOTALL, most: int = _MAX_SPELLINGS) -> Gate:
    """Literals, folded (`folded`), of which every match of `source` contains at least one (() when none is found
    or the pattern cannot be read): runs of literal characters next to each other in its sequence (through groups
    and zero-width assertions), inside a group repeated at least once, or one per alternative of a branch whose
    alternatives all have some. Where the regex engine's extra case groups are unknown, a run stops at a
    non-ASCII character that IGNORECASE may take for an ASCII one (`ſ`, `K`); other non-ASCII characters are kept
    as written (an ASCII text cannot hold them, nor anything they match, and no non-ASCII text is gated). A run
    spells small branches and optional pieces out (`overload(?:ed)? (?:error|exception)`), while it has at most
    `most` spellings; the most selective run wins (`_rank`)."""
    mod = parser()
    if mod is None:
        return ()
    try:
        return of_parsed(mod.parse(source, flags), most)
    except (re.error, RecursionError, ValueError, TypeError):
        return ()


def of_parsed(parsed: Any, most: int = _MAX_SPELLINGS) -> Gate:
    """`required` of a pattern already parsed (`re._parser.parse`): what compiling a pattern reads it from."""
    try:
        return _gate(parsed, most)
    except (RecursionError, ValueError, TypeError, IndexError):
        return ()


def admits(gate: Gate, lower: str | None) -> bool:
    """Whether a text may hold a match of a pattern with this gate: `lower` is the text `folded` (None: no gate
    applies)."""
    if lower is None or not gate:
        return True
    for lit in gate:  # noqa: SIM110 - a loop, not any(): it runs per pattern per text
        if lit in lower:
            return True
    return False


class Alternation:
    """Compiled alternatives searched as one alternation, each behind its gate (`required`)."""

    __slots__ = ("parts",)

    def __init__(self, patterns: Sequence[re.Pattern[str]], gates: Sequence[Gate]) -> None:
        self.parts = tuple(zip(gates, patterns, strict=True))

    def search(self, text: str, lower: str | None) -> re.Match[str] | None:
        """What `re.search("(?:p1)|(?:p2)|…", text)` finds: the leftmost match, of the first alternative that
        matches there. `lower`: `folded(text)` (alternatives whose gate it lacks are not run; None: every
        alternative runs)."""
        best: re.Match[str] | None = None
        for gate, rx in self.parts:
            if lower is not None and gate:
                for lit in gate:  # (a loop, not any(): this runs for every phrase of every row a text triggers)
                    if lit in lower:
                        break
                else:
                    continue
            m = rx.search(text)
            if m is not None and (best is None or m.start() < best.start()):
                best = m
                if not best.start():
                    break  # nothing starts further left, and an earlier alternative won a tie
        return best

    def found(self, text: str, lower: str | None) -> bool:
        """Whether any alternative matches `text`."""
        return self.search(text, lower) is not None
