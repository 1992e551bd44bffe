"""The classifier's public face: the one engine that probes, the log scanner, the hardware check and `explain` use.

Contract: `classify(text, status=, headers=, origin=, local=)` returns every matching row, best first, each
with the layer that decided it (structure → provider → phrase → status → words; see `capdoctor.classifier.engine`);
`best_match` the first of them; `extract_error` the `{status, code, type, message}` of an error text;
`rows()` / `by_id()` the rows of every layer; `engine()` the compiled engine itself (the log scanner's
prefilter literals and candidate evaluation). Everything is compiled lazily on first use and cached, so
importing this module costs nothing. It must not decide a verdict (that is `capdoctor.verdict`) or print anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capdoctor.classifier.engine import Engine, Match
from capdoctor.classifier.tables import MEMORY_KINDS, ORIGINS, SPECIFICITY, STRENGTH_RANK, Layer, Signature

__all__ = [
    "MEMORY_KINDS",
    "ORIGINS",
    "SPECIFICITY",
    "STRENGTH_RANK",
    "Layer",
    "Match",
    "Signature",
    "best_match",
    "by_id",
    "classify",
    "engine",
    "extract_error",
    "rows",
]


def engine() -> Engine:
    """The process-wide classification engine (compiled on first use)."""
    from capdoctor.classifier.engine import engine as _engine

    return _engine()


def rows() -> tuple[Signature, ...]:
    """Every row of every layer, in table order."""
    return engine().rows


def by_id() -> Mapping[str, Signature]:
    """Rows by id."""
    return engine().by_id


def classify(
    text: str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    origin: str = "body",
    local: bool | None = None,
) -> list[Match]:
    """Every row that matches `text`, best first; [] when none does (see `Engine.classify`)."""
    return engine().classify(text, status=status, headers=headers, origin=origin, local=local)


def best_match(
    text: str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    origin: str = "body",
    local: bool | None = None,
) -> Match | None:
    """The single best match for `text` (see `classify`), or None."""
    found = classify(text, status=status, headers=headers, origin=origin, local=local)
    return found[0] if found else None


def extract_error(text: str) -> dict[str, Any]:
    """`{status, code, type, message}` of an error text, whatever wraps it (None where absent)."""
    from capdoctor.classifier.structure import extract_error as _extract

    return _extract(text, engine().reader)
