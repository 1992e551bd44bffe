"""The one module that touches Python's regex internals, and the gates of the patterns kept between runs.

Contract: `pattern(source, flags)` is `re.compile(source, flags)`. The engine also reads its patterns' parse
trees (`re._parser`, a private module) for the literals every match of a phrase holds (`gates.required`). Only
this module imports it (`parser()`, `extra_cases()`); on a Python it does not know, each says None and the
engine takes the public way, which judges every text the same, only slower. A test disables them (`_internals`)
and compares.

The gates (`gated`) are plain data kept in the build cache so that no run parses a pattern twice: `warm(build,
inputs)` runs `build` and stores the gates when any was new, with a digest of what the patterns were made from,
and `complete(inputs)` then says, without building, that every one is there. They are keyed by Python's exact
version and the sources of this module and `gates`; the `marshal`ed payload is checked for shape when loaded,
and anything unexpected is a miss, never a wrong gate or a crash.

Why no compiled regex programs are kept: building patterns from stored programs (`_sre.compile`) saved only 1-5%
of the CPU time (`bench/regex_cache.py`), short of the 30% that would pay for depending on bytecode each Python
may change. Imports nothing heavy; reads the cache on first use.
"""

from __future__ import annotations

import marshal
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from capdoctor.classifier import buildcache

Gate = tuple[str, ...]
"""Literals of which every match of a pattern contains one, lower-case (see `gates.required`)."""

CACHE_NAME = "regex-gates"
_Key = tuple[str, int]
"""A pattern's (source, flags)."""

_loaded = False
"""Whether the build cache was read in this process (once)."""
_gates: dict[_Key, Gate] = {}
"""The gates (`gates.required`) loaded from the build cache, by (pattern, flags)."""
_made_gates: dict[_Key, Gate] = {}
"""Gates read in this process (what `warm` stores)."""
_asked_gates: set[_Key] | None = None
"""While `warm` runs its build: every (pattern, flags) whose gate was asked for."""
_built_from: bytes = b""
"""What the build whose readings are stored was made from (`warm`'s `inputs`), loaded with them: b"" when unknown."""


@cache
def _internals() -> tuple[Any, Any] | None:
    """Python's regex parser and compiler modules (`re._parser`, `re._compiler`), or None when they are not what
    this module knows: then every caller takes the public way."""
    from importlib import import_module

    try:
        parser: Any = import_module("re._parser")
        compiler: Any = import_module("re._compiler")
        parser.parse, parser.SubPattern, parser.State, compiler.compile  # noqa: B018 - what the engine calls
    except (ImportError, AttributeError):
        return None
    return parser, compiler


def parser() -> Any:
    """Python's regex parser module (`re._parser`), or None when the internals differ from what this module
    knows (`gates.required` reads patterns with it)."""
    internals = _internals()
    return internals[0] if internals is not None else None


def extra_cases() -> dict[int, Any] | None:
    """The regex engine's extra case groups (`re._casefix._EXTRA_CASES`: characters IGNORECASE takes for others
    beyond lower-casing, `ſ` for `s`), or None where this Python does not list them (`gates.folded`)."""
    if _internals() is None:
        return None
    from importlib import import_module

    try:
        extra = import_module("re._casefix")._EXTRA_CASES
    except (ImportError, AttributeError):
        return None
    return extra if isinstance(extra, dict) and extra else None


def _key() -> bytes:
    """The build-cache key: Python's exact version (its parser made the gates) and the sources of this module and
    `gates` (the gates are what its `required` made)."""
    here = Path(__file__)
    how = b""
    for source in (here, here.with_name("gates.py")):
        try:
            how += source.read_bytes()
        except OSError:
            how += b"no source"
    return buildcache.key(b"regex-gates", sys.version.encode(), how)


def _valid_key(key: Any) -> bool:
    """Whether a loaded key has the shape of (pattern, flags)."""
    return isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)


def _valid_gate(key: Any, gate: Any) -> bool:
    """Whether a loaded entry has the shape of (pattern, flags) -> gate (a tuple of strings)."""
    return _valid_key(key) and isinstance(gate, tuple) and all(isinstance(lit, str) for lit in gate)


def _load() -> dict[_Key, Gate]:
    """The stored gates ({} when the cache is off, empty, stale or damaged), and the build inputs they were made
    from into `_built_from`; read once per process."""
    global _loaded, _built_from
    if not _loaded:
        _loaded = True
        payload = buildcache.load(CACHE_NAME, _key())
        if payload is not None:
            try:
                data = marshal.loads(payload)
            except (EOFError, ValueError, TypeError):
                data = None
            if (
                isinstance(data, tuple)
                and len(data) == 2
                and isinstance(data[0], dict)
                and isinstance(data[1], bytes)
                and all(_valid_gate(k, v) for k, v in data[0].items())
            ):
                _gates.update(data[0])
                _built_from = data[1]
    return _gates


def pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`; a bad pattern raises `re.error`."""
    return re.compile(source, int(flags))


def gated(source: str, flags: int = 0) -> tuple[re.Pattern[str], Gate]:
    """`pattern(source, flags)` and its gate (`gates.required`: literals of which every match contains one), the
    gate from the build cache when it holds it, else read from the pattern's parse now (~0.1 ms a phrase) and
    kept for `warm`."""
    flags = int(flags)
    key = (source, flags)
    if _asked_gates is not None:
        _asked_gates.add(key)
    rx = pattern(source, flags)
    gate = _load().get(key, _made_gates.get(key))
    if gate is None:
        from capdoctor.classifier.gates import required

        gate = _made_gates[key] = required(source, flags)
    return rx, gate


def warm(build: Callable[[], object], inputs: bytes = b"") -> None:
    """Run `build`, which makes patterns through `gated`, then store the gates of exactly the patterns it asked
    about when any of them was not stored yet, or the stored ones were not made from `inputs` (what `build` makes
    its patterns of: the first run after an install or a table change). With the cache off, nothing: compiling
    every pattern up front then costs more than compiling those used."""
    global _asked_gates, _built_from
    if buildcache.directory() is None:
        return
    _asked_gates = set()
    try:
        build()
        asked = _asked_gates
    finally:
        _asked_gates = None
    stored = _load()
    if _built_from == inputs and all(key in stored for key in asked):
        return
    gates = {key: gate for key in asked if (gate := _made_gates.get(key, stored.get(key))) is not None}
    try:
        payload = marshal.dumps((gates, inputs))
    except ValueError:  # not plain data after all: nothing stored
        return
    if buildcache.store(CACHE_NAME, _key(), payload):
        stored.update(gates)
        _built_from = inputs


def complete(inputs: bytes) -> bool:
    """Whether the stored gates are those of a `warm` whose build was made from `inputs` (then they hold every
    pattern that build asks about); loads them now (once per process). False for
    empty `inputs`, and with the cache off."""
    _load()
    return bool(inputs) and _built_from == inputs


def _reset() -> None:
    """Forget what this process loaded and read (tests: a fresh process's view of the cache)."""
    global _loaded, _built_from
    _loaded = False
    _built_from = b""
    _gates.clear()
    _made_gates.clear()


__all__ = ["complete", "extra_cases", "gated", "parser", "pattern", "warm"]
