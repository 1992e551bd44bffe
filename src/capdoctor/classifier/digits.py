"""Which regular expressions read the values of ASCII digits, and which only see that a digit is there.

Contract: `reads_digits(source, flags)` is False only when the pattern `source` treats the ten ASCII digits
alike everywhere: no literal digit, no character set holding some digits but not all, no backreference. Such a
pattern finds the same matches, at the same spans, in two texts that differ only in which digits stand where
(`Retry in 17s` and `Retry in 42s`): what the classification engine's `Reading` relies on to judge a record
like one judged before without running those patterns again. True whenever it cannot tell. `cover(source,
flags)` is a pattern blind to digits that matches wherever `source` matches in any text differing only in its
digits, so that where it finds nothing in a text whose every ASCII digit is `0` (a record's shape), `source`
finds nothing in any text of that shape (`cannot_match`); None where it cannot be made. It is compiled
by `compiled.widened` (once a process); `reads_digits` compiles nothing.

Why: an incident log repeats one error with numbers that change every line (seconds to wait, tokens used, a
sequence number), so a scanner that remembers judgements by exact text judges every line afresh (~100 µs). Most
of a row's patterns read `\\d+` or no digit at all; the few that read values (`HTTP {s}` with `[45]\\d\\d`, an
error code `1302`) are what has to run again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from capdoctor.classifier import compiled
from capdoctor.classifier.compiled import parser

_DIGITS = range(0x30, 0x3A)
ZEROS = str.maketrans("0123456789", "0000000000")
"""`text.translate(ZEROS)`: the text's shape, every ASCII digit read as `0` (texts of one shape differ only in
their digits' values)."""
_NESTED = frozenset(("SUBPATTERN", "ATOMIC_GROUP", "ASSERT", "ASSERT_NOT"))
_REPEATS = frozenset(("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))
_BLIND = frozenset(("ANY", "AT", "CATEGORY"))
"""Items that treat every ASCII digit alike: any character, a position (`\\b`: digits are word characters),
a class (`\\d`, `\\w`, `\\s` hold all ten or none)."""
_MAY_READ = re.compile(r"[0-9]|\\N|\(\?P=")
"""What a pattern's source must hold to tell digits apart: a digit (a literal, a range's end, an escape such as
`\\x34` or `\\1`), a named character (`\\N{DIGIT ONE}`) or a named backreference."""


def _set_reads(items: Any) -> bool:
    """Whether a character set holds some ASCII digits but not all (negated or not: a negation splits the digits
    exactly where the set does)."""
    inside: set[int] = set()
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            continue
        if name == "LITERAL":
            if av in _DIGITS:
                inside.add(av)
        elif name == "RANGE":
            inside.update(d for d in _DIGITS if av[0] <= d <= av[1])
        elif name == "CATEGORY":
            if str(av) in ("CATEGORY_DIGIT", "CATEGORY_WORD", "CATEGORY_NOT_SPACE"):
                inside.update(_DIGITS)
            elif str(av) not in ("CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD", "CATEGORY_SPACE"):
                return True  # a class this reading does not know: assume it tells digits apart
        else:
            return True
    return 0 < len(inside) < len(_DIGITS)


def _seq_reads(items: Any) -> bool:
    """Whether a parsed sequence tells ASCII digits apart anywhere."""
    for op, av in items:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL"):
            if av in _DIGITS:
                return True
        elif name == "IN":
            if _set_reads(av):
                return True
        elif name in _REPEATS:
            if _seq_reads(av[2]):
                return True
        elif name in _NESTED:
            if _seq_reads(av if name == "ATOMIC_GROUP" else av[-1]):  # (an atomic group's value is its items)
                return True
        elif name == "BRANCH":
            if any(_seq_reads(alt) for alt in av[1]):
                return True
        elif name not in _BLIND:
            return True  # a backreference, a conditional group, anything unknown
    return False


def may_read(source: str) -> bool:
    """Whether the pattern `source` may tell ASCII digits apart at all (it holds a digit, a named character or a
    named backreference): a pattern without any is blind as written, and its own cover (`cover`)."""
    return _MAY_READ.search(source) is not None


@cache
def reads_digits(source: str, flags: int = 0) -> bool:
    """Whether the pattern `source` may tell ASCII digits apart (see the module's contract). A source with no
    digit in it, no named character and no named backreference is read as it is written; any other is parsed
    (`re._parser`) and each item checked, the answer kept in the build cache (`compiled.reads`); True when it
    cannot be parsed."""
    if not may_read(source):
        return False
    return compiled.reads(source, flags, lambda: _parsed_reads(source, flags))


def _parsed_reads(source: str, flags: int) -> bool:
    """`reads_digits` from the parse of `source` (kept in the build cache by `compiled.reads`)."""
    mod = parser()
    if mod is None:
        return True
    try:
        return _seq_reads(mod.parse(source, flags))
    except (re.error, RecursionError, ValueError, TypeError, IndexError):
        return True


class _NoCover(Exception):
    """A construct no digit-blind pattern stands in for (`cover`)."""


_ALL_DIGITS = ((0x30, 0x39),)


def _cover_set(mod: Any, items: list[Any]) -> list[Any]:
    """A character set that holds every ASCII digit and whatever `items` holds (negated: excludes no digit)."""
    if not _set_reads(items):
        return items
    if not items or str(items[0][0]) != "NEGATE":
        return [*items, (mod.RANGE, _ALL_DIGITS[0])]
    kept: list[Any] = [items[0]]
    for op, av in items[1:]:
        name = str(op)
        if name == "LITERAL" and av in _DIGITS:
            continue
        if name == "RANGE" and av[0] <= 0x39 and av[1] >= 0x30:
            kept += [(op, r) for r in ((av[0], 0x2F), (0x3A, av[1])) if r[0] <= r[1]]
            continue
        if name not in ("LITERAL", "RANGE", "CATEGORY"):
            raise _NoCover(name)  # an item this reading does not know may exclude digits
        kept.append((op, av))
    if len(kept) == 1:  # nothing left to exclude: any character
        return [(mod.CATEGORY, mod.CATEGORY_SPACE), (mod.CATEGORY, mod.CATEGORY_NOT_SPACE)]
    return kept


def _groups(sub: Any, out: dict[int, Any]) -> dict[int, Any]:
    """Every capturing group in a parse, by number: its flags and what it holds (`SUBPATTERN`'s value)."""
    for op, av in sub:
        name = str(op)
        if name == "SUBPATTERN":
            if av[0] is not None:
                out[av[0]] = av
            _groups(av[3], out)
        elif name in _REPEATS:
            _groups(av[2], out)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _groups(av[1], out)
        elif name == "ATOMIC_GROUP":
            _groups(av, out)
        elif name == "BRANCH":
            for alt in av[1]:
                _groups(alt, out)
        elif name == "GROUPREF_EXISTS":
            for alt in av[1:]:
                if alt is not None:
                    _groups(alt, out)
    return out


def _cover_seq(mod: Any, sub: Any, groups: dict[int, Any], depth: int = 0) -> Any:
    """`sub` with every item that tells digits apart widened so that it matches wherever it did and any ASCII
    digit where it took some: a digit or a set takes every digit; a lookaround that reads digits is dropped
    (a condition fewer), an atomic group or possessive repeat that does becomes a plain one (it may then match
    in more ways, never fewer), and a backreference becomes what its group may match."""
    if depth > 50:
        raise _NoCover("nested too deep")
    out: list[Any] = []
    for op, av in sub:
        name = str(op)
        if not _seq_reads([(op, av)]):
            out.append((op, av))  # blind as written: the same in every text of one shape
        elif name == "LITERAL":
            out.append((mod.IN, [(mod.RANGE, _ALL_DIGITS[0])]))
        elif name == "NOT_LITERAL":
            out.append((mod.IN, [(mod.CATEGORY, mod.CATEGORY_SPACE), (mod.CATEGORY, mod.CATEGORY_NOT_SPACE)]))
        elif name == "IN":
            out.append((op, _cover_set(mod, av)))
        elif name in _REPEATS:
            out.append((mod.MAX_REPEAT, (av[0], av[1], _cover_seq(mod, av[2], groups, depth + 1))))
        elif name == "SUBPATTERN":
            out.append((op, (av[0], av[1], av[2], _cover_seq(mod, av[3], groups, depth + 1))))
        elif name == "ATOMIC_GROUP":
            out.append((mod.SUBPATTERN, (None, 0, 0, _cover_seq(mod, av, groups, depth + 1))))
        elif name == "ASSERT":
            out.append((op, (av[0], _cover_seq(mod, av[1], groups, depth + 1))))
        elif name == "ASSERT_NOT":
            continue
        elif name == "BRANCH":
            out.append((op, (av[0], [_cover_seq(mod, alt, groups, depth + 1) for alt in av[1]])))
        elif name == "GROUPREF" and av in groups:
            group = groups[av]
            out.append((mod.SUBPATTERN, (None, group[1], group[2], _cover_seq(mod, group[3], groups, depth + 1))))
        else:  # a conditional group, a reference to no group, anything this reading does not know
            raise _NoCover(name)
    return mod.SubPattern(sub.state, out) if hasattr(sub, "state") else out


@cache
def cover(source: str, flags: int = 0) -> re.Pattern[str] | None:
    """A pattern blind to digits' values that matches every text the pattern `source` matches, and every text
    that differs from one of those only in its ASCII digits' values: each literal digit, and each set that holds
    some digits, takes any digit there. So where it finds nothing in a text whose every ASCII digit is `0` (a
    record's shape), `source` finds nothing in any text of that shape (`_cover_seq` says how each construct is
    widened). The pattern itself when it is blind; None when no such pattern is made here (a conditional group)
    or the regex internals are not the ones this module knows (`compiled.widened`); made once a process.

    Why: most records that differ only in their digits (a sequence number, a duration) are of a shape where no
    pattern that reads digits' values can match at all; such a shape is judged once (`Engine.settles`)."""
    if not may_read(source):
        return compiled.pattern(source, flags)
    return compiled.widened(source, flags, _widen)


def _widen(parsed: Any) -> Any:
    """`parsed` (a parse of `re._parser`) with every item that tells digits apart widened (`cover`)."""
    mod = parser()
    if mod is None:
        raise _NoCover("no parser")
    return _cover_seq(mod, parsed, _groups(parsed, {}))


def cannot_match(rx: re.Pattern[str], shape: str, span: tuple[int, int] | None = None) -> bool:
    """Whether `rx` matches no text of `shape` (a text with every ASCII digit read as `0`): its `cover` finds
    nothing there. False when there is no cover.

    With `span` (start, end): whether no match of `rx` in any text of `shape` reads a character in
    `shape[start:end]`, so that `rx` finds the same (spans, groups, every match in turn) in all the texts of
    `shape` that differ only in the values of the digits there. A match of `rx` starting at `s` reads only
    `[s - behind, s + ahead)` (`reach`), so only a match starting in `(start - ahead, end + behind)` can read the
    span, and the cover finds one there wherever `rx` has one in such a text (it is `rx` widened item by item:
    a path of `rx` from `s` is a path of the cover from `s`). A match starting before the span reads it only by
    running on to it: it consumes only characters one of `rx`'s items may take (`_consumed`, widened as the cover
    is: the same run in every text of the shape) and reads at most `_beyond` more, so a start whose run ends far
    enough before the span cannot (`gpt-4o` before `[seq 17]`, where `reach` bounds the model name's repeat by the
    longest run of its characters anywhere in the shape). Where no match of `rx` can read the span, every match
    either text has reads the same characters in both, so both have the same matches."""
    made = cover(rx.pattern, rx.flags)
    if made is None:
        return False
    m = made.search(shape)
    if m is None or span is None:
        return m is None
    start, end = span
    ahead, behind = reach(rx.pattern, rx.flags, shape)  # (only for a pattern whose cover matches: most do not)
    first = 0 if ahead is None else max(0, start - ahead + 1)
    if m.start() < first:
        m = made.search(shape, first)  # (a search from `first` still reads what stands before it: lookbehinds, `\b`)
    if m is not None and m.start() < start:  # a match starting before the span reads it only by running on to it
        runs, beyond = _consumed(rx.pattern, rx.flags), _beyond(rx.pattern, rx.flags, shape)
        if runs is None or beyond is None:
            return False
        while m is not None and m.start() < start:
            taken = runs.match(shape, m.start())  # (the longest run of characters a match there may take)
            if (m.start() if taken is None else taken.end()) + beyond > start:
                return False
            m = made.search(shape, m.start() + 1)
    return m is None or (behind is not None and m.start() > end - 1 + behind)


def _items(items: Any, flags: int, depth: int = 0) -> Iterator[tuple[str, Any, int]]:
    """What a parse holds for `_consumed` and `_beyond`, outside lookarounds: each item that consumes one character
    ("one"), each lookaround ("assert") and anchor or `\b` ("at"), with the flags it is under; "other" for a
    backreference, a conditional group or anything this reading does not know."""
    if depth > 50:
        yield "other", None, flags
        return
    for op, av in items:
        name = str(op)
        if name in _ONE:
            yield "one", (op, av), flags
        elif name == "AT":
            yield "at", av, flags
        elif name in ("ASSERT", "ASSERT_NOT"):
            yield "assert", av, flags
        elif name == "SUBPATTERN":
            yield from _items(av[3], (flags | av[1]) & ~av[2], depth + 1)
        elif name == "ATOMIC_GROUP":
            yield from _items(av, flags, depth + 1)
        elif name in _REPEATS:
            yield from _items(av[2], flags, depth + 1)
        elif name == "BRANCH":
            for alt in av[1]:
                yield from _items(alt, flags, depth + 1)
        else:
            yield "other", (op, av), flags


@cache
def _consumed(source: str, flags: int) -> re.Pattern[str] | None:
    """A pattern that takes, from where it is matched, every character any item of `source` that consumes one may
    take, each under its own flags and widened as `cover` widens it (a digit where it takes some takes any): a
    match of `source` starting there consumes at most that run in any text of the shape (`cannot_match`). None
    where `source` holds a backreference or a construct this reading does not know, or the regex internals differ."""
    made, mod = _parsed(source, int(flags)), parser()
    if made is None or mod is None:
        return None
    parsed, _ = made
    top = int(flags) | int(parsed.state.flags)
    alts: list[Any] = []
    try:
        for kind, item, item_flags in _items(parsed, top):
            if kind == "other":
                return None
            if kind == "one":
                one = mod.SubPattern(mod.State(), list(_cover_seq(mod, [item], {})))
                alts.append(
                    mod.SubPattern(mod.State(), [(mod.SUBPATTERN, (None, item_flags & ~top, top & ~item_flags, one))])
                )
        if not alts:
            return None
        branch = mod.SubPattern(mod.State(), [(mod.BRANCH, (None, alts))])
        return compiled.from_parsed(mod.SubPattern(mod.State(), [(mod.MAX_REPEAT, (0, mod.MAXREPEAT, branch))]), top)
    except Exception:  # internals that differ from what this module knows: no run
        return None


def _beyond(source: str, flags: int, shape: str) -> int | None:
    """How many characters past the last one it consumed a match of `source` may read, in a text of `shape`: its
    lookarounds' reach ahead (a repeat of one character bounded by its longest run in the shape, as in `reach`),
    one for an anchor or `\\b`; None where that has no bound."""
    fixed = _fixed_beyond(source, int(flags))  # (most lookarounds have a fixed width: the shape is not needed)
    return fixed if fixed is not None else _beyond_in(source, int(flags), shape)


@cache
def _fixed_beyond(source: str, flags: int) -> int | None:
    """`_beyond` in any text: None where a lookaround repeats without a bound of its own."""
    return _beyond_in(source, flags, None)


def _beyond_in(source: str, flags: int, shape: str | None) -> int | None:
    """`_beyond` for the texts of `shape` (None: of any shape)."""
    made = _parsed(source, int(flags))
    if made is None:
        return None
    parsed, groups = made
    top = int(flags) | int(parsed.state.flags)
    run = _runs_in(shape)
    most = 0.0
    try:
        for kind, item, item_flags in _items(parsed, top):
            if kind == "at":
                most = max(most, 1.0)
            elif kind == "assert":
                direction, sub = item
                width, ahead, _ = _reach(sub, item_flags, groups, run, 0)
                most = max(most, max(0.0, ahead - width) if direction < 0 else ahead)
    except (re.error, RecursionError, ValueError, TypeError, IndexError, AttributeError):
        return None
    return None if most == _INF else int(most)


def reach(source: str, flags: int = 0, shape: str | None = None) -> tuple[int | None, int | None]:
    """How far from where a match of the pattern `source` starts it may read: up to `ahead` characters from
    there (what it consumes, what its lookaheads and `\\b` read after it) and `behind` characters before it (its
    lookbehinds, `\\b`); None where that has no bound (a repeat without one, a construct this reading does not
    know, no parser). With `shape`, for the texts of that shape only: a repeat of one character (`\\s*`,
    `[^"]+`) repeats at most as often as the longest run of characters it may take there (its cover's, in the
    shape). What `cannot_match` needs to tell which matches may read a span."""
    made = _parsed(source, int(flags))
    if made is None:
        return None, None
    parsed, groups = made
    try:
        _, ahead, behind = _reach(parsed, int(flags) | int(parsed.state.flags), groups, _runs_in(shape), 0)
    except (re.error, RecursionError, ValueError, TypeError, IndexError, AttributeError):
        return None, None
    return (None if ahead == _INF else int(ahead)), (None if behind == _INF else int(behind))


def _runs_in(shape: str | None) -> Callable[[Any, int], float]:
    """For `_reach`: the longest run in `shape` of characters a one-character item (widened) may take, under its
    flags, each found once (no bound without a shape)."""
    longest: dict[str, float] = {}

    def run(item: Any, item_flags: int) -> float:
        if shape is None:
            return _INF
        key = f"{item_flags} {item}"
        if key not in longest:
            rx = _run_pattern(key, item, item_flags)
            longest[key] = _INF if rx is None else float(max(map(len, rx.findall(shape)), default=0))
        return longest[key]

    return run


@cache
def _parsed(source: str, flags: int) -> tuple[Any, dict[int, Any]] | None:
    """The parse of `source` (`re._parser`) and its capturing groups by number (`_groups`), or None."""
    mod = parser()
    if mod is None:
        return None
    try:
        parsed = mod.parse(source, flags)
    except (re.error, RecursionError, ValueError, TypeError, IndexError):
        return None
    return parsed, _groups(parsed, {})


_RUNS: dict[str, re.Pattern[str] | None] = {}
"""`_run_pattern`'s patterns, by the item and its flags."""


def _run_pattern(key: str, item: Any, flags: int) -> re.Pattern[str] | None:
    """`(?:item)+` with `item` widened (`_cover_seq`: a digit where it takes one takes any), compiled from the
    parse (None when it cannot be)."""
    if key not in _RUNS:
        mod = parser()
        try:
            one = _cover_seq(mod, [item], {})
            repeat = [(mod.MAX_REPEAT, (1, mod.MAXREPEAT, mod.SubPattern(mod.State(), list(one))))]
            _RUNS[key] = compiled.from_parsed(mod.SubPattern(mod.State(), repeat), flags)
        except Exception:  # internals that differ from what this module knows: no bound
            _RUNS[key] = None
    return _RUNS[key]


_INF = float("inf")
_UNBOUNDED = 0xFFFF
"""A repeat bound this high is read as none (the parser's own unbounded repeat is `MAXREPEAT`)."""
_ONE = frozenset(("LITERAL", "NOT_LITERAL", "ANY", "IN", "CATEGORY"))
"""Items that consume one character and read no other."""


def _reach(
    items: Any, flags: int, groups: dict[int, Any], run: Callable[[Any, int], float], depth: int
) -> tuple[float, float, float]:
    """(width, ahead, behind) of a parsed sequence under `flags`: the most characters it consumes, the furthest
    it reads past where it starts (width included) and the furthest it reads before that (`reach`); inf where
    unbounded. Each item is taken at the furthest offset the items before it may have consumed, and a lookbehind
    as reading before offset 0: a bound, never less than what a path reads. `run(item, flags)`: how often a
    one-character item may repeat (`reach`)."""
    if depth > 50:
        return _INF, _INF, _INF
    width = ahead = behind = 0.0
    for op, av in items:
        name = str(op)
        if name in _ONE:
            w, a, b = 1.0, 1.0, 0.0
        elif name == "AT":
            w, a, b = 0.0, 1.0, 1.0  # `\\b`, `^`, `$`: the characters on either side
        elif name == "SUBPATTERN":
            inner = (flags | av[1]) & ~av[2]
            w, a, b = _reach(av[3], inner, groups, run, depth + 1)
        elif name == "ATOMIC_GROUP":
            w, a, b = _reach(av, flags, groups, run, depth + 1)
        elif name == "GROUPREF" and av in groups:  # what the group took, again: at most as wide as the group
            w = _reach(groups[av][3], (flags | groups[av][1]) & ~groups[av][2], groups, run, depth + 1)[0]
            a, b = w, 0.0
        elif name in _REPEATS:
            _, high, sub = av
            w, a, b = _reach(sub, flags, groups, run, depth + 1)
            unbounded = high >= _UNBOUNDED or str(high) == "MAXREPEAT"
            if len(sub) == 1 and str(sub[0][0]) in _ONE:  # at most the longest run of characters it takes there
                high = min(_INF if unbounded else high, run(sub[0], flags))
            elif unbounded and w:
                high = _INF
            if high == 0:
                w = a = b = 0.0
            elif high == _INF:
                w, a = (_INF, _INF) if w else (0.0, a)
            else:
                w, a = high * w, (high - 1) * w + a
        elif name == "BRANCH":
            alts = [_reach(alt, flags, groups, run, depth + 1) for alt in av[1]] or [(0.0, 0.0, 0.0)]
            w, a, b = max(x[0] for x in alts), max(x[1] for x in alts), max(x[2] for x in alts)
        elif name in ("ASSERT", "ASSERT_NOT"):
            direction, sub = av
            w, a, b = _reach(sub, flags, groups, run, depth + 1)
            if direction < 0:  # a lookbehind matches `sub` ending here: it reads `w` back, and what `sub` reads
                w, a, b = 0.0, max(0.0, a - w), w + b
            else:
                w = 0.0
        else:  # a conditional group, anything unknown: no bound
            return _INF, _INF, _INF
        ahead = max(ahead, width + a)
        behind = max(behind, b)
        width += w
    return width, max(ahead, width), behind


__all__ = ["ZEROS", "cannot_match", "cover", "may_read", "reach", "reads_digits"]
