"""How the engine spells its word lists as regexes: whole tokens (`token_pattern`) and a trie of literals
(`trie_pattern`, the literal finder's and the pure-Python prefilter's).

Contract: pure functions from words to pattern sources (or a compiled token pattern); nothing else is compiled
or read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from capdoctor.classifier import compiled

_CLASS_NAME = re.compile(r"[A-Z][A-Za-z0-9]*(?:Error|Exception)")
"""An exception class name: it may also end a longer class name (`OpenAIRateLimitError`, `GroqRateLimitError`:
SDKs prefix the provider's name). The whole name must still start with an upper-case letter, so a function
named `isRateLimitError` in a stack trace is not the class."""


def token_pattern(tokens: Iterable[str]) -> re.Pattern[str] | None:
    """One regex for whole tokens: names with an upper-case letter match in their own case (`UNAVAILABLE`,
    `RateLimitError` are not the words "unavailable" or "ratelimiterror"), all-lower-case ones in any case;
    an exception class name also as the tail of a CamelCase name (see _CLASS_NAME)."""
    alts = [
        rf"(?<![A-Za-z0-9_])(?:[A-Z][A-Za-z0-9]*?)?{re.escape(t)}"
        if _CLASS_NAME.fullmatch(t)
        else rf"(?<![A-Za-z0-9_]){re.escape(t)}"
        if t != t.lower()
        else rf"(?<![A-Za-z0-9_])(?i:{re.escape(t)})"
        for t in tokens
    ]
    if not alts:
        return None
    return compiled.pattern("(?:" + "|".join(alts) + r")(?![A-Za-z0-9_])")


def trie_pattern(words: Sequence[str]) -> str:
    """One regex matching any of `words`, shaped as a trie (`a(?:bc|de)|x`): one branch per character
    instead of every alternative at every position. Greedy, so at a position it matches the longest word."""
    root: dict[str | None, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[None] = {}

    escapes: dict[str, str] = {}  # (re.escape once per character: ~6,000 nodes for the digit literals alone)

    def _emit(node: dict) -> str:  # type: ignore[type-arg]
        alts = []
        for k in sorted(k for k in node if k is not None):
            esc = escapes.get(k)
            if esc is None:
                esc = escapes[k] = re.escape(k)
            alts.append(esc + _emit(node[k]))
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if None in node else body

    return _emit(root)
