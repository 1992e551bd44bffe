"""Alternations searched pattern by pattern, each skipped unless the text holds a literal it requires.

Contract: `required(source)` is a gate of the regex `source`: literals, lower-case, of which every match
contains at least one (() when it cannot tell; `compiled.gated` keeps each phrase's gate in the build cache
beside its regex program); `Alternation(patterns, gates)` searches like one regex of
`(?:p1)|(?:p2)|…` (the leftmost match, the first alternative at that position), but on an ASCII text runs only
the alternatives whose gate has a literal in the text's lower-case form. Pure; nothing compiled here.

Why: a row of the phrase layer is an alternation of dozens of phrases searched with IGNORECASE, where Python's
regex engine tries every alternative at every position (~40 µs on a 150-character text for the English rows)
and none of its fast scans for a literal prefix applies. Most of a row's phrases cannot match a given text: a
substring test per phrase (~50 ns) says which might, and only those run. A non-ASCII text runs every phrase:
Python's case folding there (`ſ` is `s`, the Kelvin sign is `k`) is more than `str.lower` can tell.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import cache
from typing import Any

from capdoctor.classifier.compiled import Gate, parser

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


def _better(a: Gate, b: Gate) -> Gate:
    """The more selective of two gates: the longer shortest literal, then the fewer literals."""
    if not a:
        return b
    if not b:
        return a
    return a if (min(map(len, a)), -len(a)) >= (min(map(len, b)), -len(b)) else b


def _char(code: int) -> str | None:
    """A literal character as a gate holds it (lower-case), or None when IGNORECASE may fold it to an ASCII
    character that a lower-case test would miss."""
    if code < 128:
        return chr(code).lower()
    return None if _folds_to_ascii(chr(code)) else chr(code)


def _set_chars(items: Any) -> list[str] | None:
    """The characters of a small character set of literals only (`['’]`, `[134]`), else None."""
    chars = [_char(av) if str(op) == "LITERAL" else None for op, av in items]
    if not chars or len(chars) > _MAX_SET or any(ch is None for ch in chars):
        return None
    return list(dict.fromkeys(ch for ch in chars if ch is not None))


def _gate(items: Any) -> Gate:
    """The best gate of a parsed sequence (see `required`)."""
    best: Gate = ()
    run: list[str] = []
    """The spellings of the run of literal characters being read ([]: none)."""

    def flush() -> None:
        nonlocal best, run
        if run:
            best = _better(best, tuple(dict.fromkeys(run)))
        run = []

    def extend(chars: list[str]) -> None:
        nonlocal run
        if len(run) * len(chars) > _MAX_SPELLINGS:
            flush()
        run = [r + ch for r in run or [""] for ch in chars]

    def walk(seq: Any) -> None:
        nonlocal best
        for op, av in seq:
            name = str(op)
            ch = _char(av) if name == "LITERAL" else None
            chars = _set_chars(av) if name == "IN" else None
            if ch is not None:
                extend([ch])
            elif chars is not None:
                extend(chars)
            elif name == "SUBPATTERN":
                walk(av[-1])  # a group in a sequence is that sequence: its literals continue the run
            elif name in _SKIP:
                continue
            elif name in _REPEATS and av[0] >= 1:  # repeated at least once: its own gate holds
                flush()
                best = _better(best, _gate(av[2]))
            elif name == "BRANCH":  # when every alternative has a gate, one of their literals is in every match
                flush()
                alts = [_gate(alt) for alt in av[1]]
                if all(alts):
                    best = _better(best, tuple(dict.fromkeys(lit for alt in alts for lit in alt)))
            else:
                flush()

    walk(items)
    flush()
    return best


def required(source: str, flags: int = re.IGNORECASE | re.DOTALL) -> Gate:
    """Literals, lower-case, of which every match of `source` contains at least one (() when none is found or
    the pattern cannot be read): runs of literal characters next to each other in its sequence (through groups
    and zero-width assertions), inside a group repeated at least once, or one per alternative of a branch whose
    alternatives all have some. A run stops at a character that IGNORECASE may fold to another outside the run's
    reach: a non-ASCII one that matches an ASCII letter (`ſ`, `K`); other non-ASCII characters are kept (an
    ASCII text cannot hold them, nor anything they match)."""
    mod = parser()
    if mod is None:
        return ()
    try:
        return of_parsed(mod.parse(source, flags))
    except (re.error, RecursionError, ValueError, TypeError):
        return ()


def of_parsed(parsed: Any) -> Gate:
    """`required` of a pattern already parsed (`re._parser.parse`): what compiling a pattern reads it from."""
    try:
        return _gate(parsed)
    except (RecursionError, ValueError, TypeError, IndexError):
        return ()


def ascii_lower(text: str) -> str | None:
    """`text.lower()` for an ASCII text (exactly how IGNORECASE folds it), else None: what gates read."""
    return text.lower() if text.isascii() else None


def admits(gate: Gate, lower: str | None) -> bool:
    """Whether a text may hold a match of a pattern with this gate: `lower` is the text lower-cased when it is
    ASCII (None otherwise: no gate applies to a non-ASCII text)."""
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
        matches there. `lower`: `text.lower()` when `text` is ASCII (alternatives whose gate it lacks are not
        run), else None (every alternative runs)."""
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

    def found(self, text: str, lower: str | None, only: Collection[re.Pattern[str]] | None = None) -> bool:
        """Whether any alternative matches `text`; with `only`, any of those alternatives (each behind its gate)."""
        if only is None:
            return self.search(text, lower) is not None
        return any(rx in only and admits(gate, lower) and rx.search(text) is not None for gate, rx in self.parts)
