"""The one module that touches Python's regex internals, and the readings of the patterns kept between runs.

Contract: `pattern(source, flags)` is `re.compile(source, flags)`. The engine also reads its patterns' parse
trees (`re._parser`, a private module): which literals every match of a phrase holds (`gates.required`), whether a
pattern reads the values of digits (`digits.reads_digits`) and its digit-blind cover (`digits.cover`, a parse
changed and compiled with `re._compiler`). Only this module imports them (`parser()`, `from_parsed`,
`extra_cases()`); where they are not what it knows (a new Python), each says None and the engine takes the public
way, which judges every text the same, only slower: no gates (every phrase runs), every pattern taken to read
digits (records judged afresh), no covers, no extra case groups (non-ASCII texts run every phrase).
A test disables them (`_internals`) and compares.

The readings (`gated`'s gates and `reads`'s answers) are plain data, kept in the build cache
(`capdoctor.classifier.buildcache`) so that no run parses a pattern for them twice: `warm(build, inputs)` runs
`build` (which compiles every pattern the engine has) and stores the readings it made when any was new, with a
digest of what the patterns were made from: `complete(inputs)` then says, without building, that every one is there.
They are keyed by Python's exact version (its parser made them) and by the sources of this module, `gates` and
`digits`, and looked up by each pattern's own text and flags. The payload is `marshal`ed plain data, checked for
shape when loaded; anything unexpected is a miss, never a wrong reading or a crash.

Why no compiled regex programs are kept: making each pattern from a stored program (`_sre.compile`) instead of
compiling it saved 1-5% of the CPU time of `explain`, `logs` and `diagnose` (`bench/regex_cache.py`: a few ms of
~200-300 ms; a command compiles only the rows it uses), short of the 30% that would pay for depending on the
bytecode arrays each Python may change. Imports nothing heavy; reads the cache on first use.
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

CACHE_NAME = "regex-readings"
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
_reads: dict[_Key, bool] = {}
"""Whether each pattern reads the values of digits (`digits.reads_digits`), loaded from the build cache."""
_made_reads: dict[_Key, bool] = {}
_asked_reads: set[_Key] | None = None
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
    knows (`gates.required` and `digits` read patterns with it)."""
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
    """The build-cache key: Python's exact version (its parser made the readings) and the sources of this module,
    `gates` (the gates are what its `required` made) and `digits` (what `reads_digits` answered)."""
    here = Path(__file__)
    how = b""
    for source in (here, here.with_name("gates.py"), here.with_name("digits.py")):
        try:
            how += source.read_bytes()
        except OSError:
            how += b"no source"
    return buildcache.key(b"regex-readings", sys.version.encode(), how)


def _valid_key(key: Any) -> bool:
    """Whether a loaded key has the shape of (pattern, flags)."""
    return isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)


def _valid_gate(key: Any, gate: Any) -> bool:
    """Whether a loaded entry has the shape of (pattern, flags) -> gate (a tuple of strings)."""
    return _valid_key(key) and isinstance(gate, tuple) and all(isinstance(lit, str) for lit in gate)


def _load() -> dict[_Key, Gate]:
    """The stored gates ({} when the cache is off, empty, stale or damaged), and the stored digit readings and
    build inputs into `_reads` and `_built_from`; read once per process."""
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
                and len(data) == 3
                and all(isinstance(part, dict) for part in data[:2])
                and isinstance(data[2], bytes)
                and all(_valid_gate(k, v) for k, v in data[0].items())
                and all(_valid_key(k) and isinstance(v, bool) for k, v in data[1].items())
            ):
                _gates.update(data[0])
                _reads.update(data[1])
                _built_from = data[2]
    return _gates


def pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`; a bad pattern raises `re.error`."""
    return re.compile(source, int(flags))


def from_parsed(parsed: Any, flags: int) -> re.Pattern[str] | None:
    """A pattern compiled from a parse made here (`re._parser`'s SubPattern, as `digits` changes them), or None
    when the regex internals are not the ones this module knows or the compiler refuses it."""
    internals = _internals()
    if internals is None:
        return None
    try:
        rx: re.Pattern[str] = internals[1].compile(parsed, int(flags))
    except Exception:  # internals that differ from what this module knows: no such pattern
        return None
    return rx


def widened(source: str, flags: int, widen: Callable[[Any], Any]) -> re.Pattern[str] | None:
    """The pattern compiled from `widen(parse of source)` (`digits.cover`; `digits` keeps it for the process).
    None when the regex internals are not the ones this module knows, or `widen` raises (it cannot widen that
    pattern)."""
    internals = _internals()
    if internals is None:
        return None
    try:
        changed = widen(internals[0].parse(source, int(flags)))
    except Exception:  # `widen` refused, or internals that differ from what this module knows
        return None
    return from_parsed(changed, flags)


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


def reads(source: str, flags: int, read: Callable[[], bool]) -> bool:
    """`read()`, whether the pattern `source` reads the values of digits (`digits.reads_digits`, which parses it):
    from the build cache when it holds the answer, else read now and kept for `warm`."""
    key = (source, int(flags))
    if _asked_reads is not None:
        _asked_reads.add(key)
    _load()
    known = _reads.get(key)
    if known is None:
        known = _made_reads.get(key)
        if known is None:
            known = _made_reads[key] = read()
    return known


def warm(build: Callable[[], object], inputs: bytes = b"") -> None:
    """Run `build`, which makes patterns through `gated` and `reads`, then store the readings of exactly the
    patterns it asked about when any of them was not stored yet, or the stored ones were not made from `inputs`
    (what `build` makes its patterns of: the first run after an install or a table change). With the cache off,
    nothing: compiling every pattern up front then costs more than compiling those used."""
    global _asked_gates, _asked_reads, _built_from
    if buildcache.directory() is None:
        return
    _asked_gates, _asked_reads = set(), set()
    try:
        build()
        asked_gates, asked_reads = _asked_gates, _asked_reads
    finally:
        _asked_gates = _asked_reads = None
    stored = _load()
    new_gates = any(key not in stored for key in asked_gates)
    if _built_from == inputs and not new_gates and all(key in _reads for key in asked_reads):
        return
    gates = {key: gate for key in asked_gates if (gate := _made_gates.get(key, stored.get(key))) is not None}
    read = {key: known for key in asked_reads if (known := _made_reads.get(key, _reads.get(key))) is not None}
    try:
        payload = marshal.dumps((gates, read, inputs))
    except ValueError:  # not plain data after all: nothing stored
        return
    if buildcache.store(CACHE_NAME, _key(), payload):
        stored.update(gates)
        _reads.update(read)
        _built_from = inputs


def complete(inputs: bytes) -> bool:
    """Whether the stored readings are those of a `warm` whose build was made from `inputs` (then they hold every
    pattern that build asks about, its gate and digit reading); loads them now (once per process). False for
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
    _reads.clear()
    _made_reads.clear()


__all__ = ["complete", "extra_cases", "from_parsed", "gated", "parser", "pattern", "reads", "warm", "widened"]
