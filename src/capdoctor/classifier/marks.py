"""What the probes and checks read in a failure beside the layers: its transport kind, an HTML page, a mark.

Contract: `transport_kind(reader, chain, text)` names a failed request by structure.toml's `[[transport]]` rules
for that reader (`path`: a timed network path's error class; `exchange`: a probe's failed exchange), from the
exception chain (`Raised`: its classes and errno) and its message; `html_page(body)` is what an HTML body where
JSON was expected is (`[[page]]`); `marked(name, text)` whether one of `[marks]`' regexes is in a text. All of it
is data in the tables (`tables.tables()`), declared once, compiled here on first use. Pure: no I/O after the
tables are read, and it classifies nothing by the layers (that is `engine.py`).
"""

from __future__ import annotations

import errno as errnos
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from capdoctor.classifier.tables import TransportRule, tables


@dataclass(frozen=True)
class Raised:
    """One exception of a chain as the transport rules read it: the names of the classes it is an instance of
    (each bare and module-qualified: `ReadTimeout`, `httpx.ReadTimeout`) and its errno (None: none)."""

    names: frozenset[str]
    errno: int | None = None

    @classmethod
    def of(cls, exc: BaseException) -> Raised:
        """`exc` read: its classes' names and its errno."""
        names = {n for c in type(exc).__mro__ for n in (c.__name__, f"{c.__module__}.{c.__qualname__}")}
        code = getattr(exc, "errno", None)
        return cls(frozenset(names), code if isinstance(code, int) else None)


def _named(rule: TransportRule, raised: Raised) -> bool:
    """Whether the class or errno condition of `rule` holds for `raised` (True when it has none)."""
    if not rule.names and not rule.errnos:
        return True
    for name in rule.names:
        if name.startswith("*"):
            if any(n.endswith(name[1:]) for n in raised.names):
                return True
        elif name in raised.names:
            return True
    return raised.errno is not None and raised.errno in {getattr(errnos, e, None) for e in rule.errnos}


def _holds(rule: TransportRule, raised: Raised, text: str) -> bool:
    return _named(rule, raised) and (rule.text is None or _pattern(rule.text, 0).search(text) is not None)


def transport_kind(reader: str, chain: Sequence[Raised], text: str) -> str:
    """The kind of a failed request by `reader`'s transport rules: `chain` the exception raised first, then what
    caused it; `text` the message the rules' `text` is searched in. A run of `each` rules is tried on every
    exception of the chain in turn (the first any of them holds for decides); other rules on the one raised."""
    rules = [r for r in tables().transport if r.reader == reader]
    first = chain[0] if chain else Raised(frozenset())
    i = 0
    while i < len(rules):
        rule = rules[i]
        if not rule.each:
            if _holds(rule, first, text):
                return rule.kind
            i += 1
            continue
        run = [rule]
        while i + len(run) < len(rules) and rules[i + len(run)].each:
            run.append(rules[i + len(run)])
        for raised in chain:
            for each in run:
                if _holds(each, raised, text):
                    return each.kind
        i += len(run)
    raise ValueError(f"no transport rule for the {reader!r} reader")  # the tables end each reader with a catch-all


def html_page(body: str) -> tuple[str, str]:
    """(error class, what it is) of an HTML body where JSON was expected: the first `[[page]]` found in it."""
    for page in tables().pages:
        if _pattern(page.pattern, re.IGNORECASE).search(body):
            return page.kind, page.what
    return "html", "an HTML page"


def marked(name: str, text: str) -> bool:
    """Whether the mark `name` of structure.toml's `[marks]` (`missing_model`, `newer_client`) is in `text`."""
    return _pattern(tables().marks[name], 0).search(text) is not None


@cache
def _pattern(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)
