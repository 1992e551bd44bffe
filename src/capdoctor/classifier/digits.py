"""Which regular expressions read the values of ASCII digits, and which only see that a digit is there.

Contract: `reads_digits(source, flags)` is False only when the pattern `source` treats the ten ASCII digits
alike everywhere: no literal digit, no character set holding some digits but not all, no backreference. Such a
pattern finds the same matches, at the same spans, in two texts that differ only in which digits stand where
(`Retry in 17s` and `Retry in 42s`): what the classification engine's `Reading` relies on to judge a record
like one judged before without running those patterns again. True whenever it cannot tell. Pure; nothing
compiled here.

Why: an incident log repeats one error with numbers that change every line (seconds to wait, tokens used, a
sequence number), so a scanner that remembers judgements by exact text judges every line afresh (~100 µs). Most
of a row's patterns read `\\d+` or no digit at all; the few that read values (`HTTP {s}` with `[45]\\d\\d`, an
error code `1302`) are what has to run again.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from capdoctor.classifier.compiled import parser

_DIGITS = range(0x30, 0x3A)
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
            if _seq_reads(av[-1]):
                return True
        elif name == "BRANCH":
            if any(_seq_reads(alt) for alt in av[1]):
                return True
        elif name not in _BLIND:
            return True  # a backreference, a conditional group, anything unknown
    return False


@cache
def reads_digits(source: str, flags: int = 0) -> bool:
    """Whether the pattern `source` may tell ASCII digits apart (see the module's contract). A source with no
    digit in it, no named character and no named backreference is read as it is written; any other is parsed
    (`re._parser`) and each item checked; True when it cannot be parsed."""
    if _MAY_READ.search(source) is None:
        return False
    mod = parser()
    if mod is None:
        return True
    try:
        return _seq_reads(mod.parse(source, flags))
    except (re.error, RecursionError, ValueError, TypeError, IndexError):
        return True


__all__ = ["reads_digits"]
