"""The engine's regular expressions, compiled once and kept between runs as regex programs.

Contract: `pattern(source, flags)` returns what `re.compile(source, flags)` returns. Compiling the tables'
patterns (the rows, the status spellings and names, the context patterns, the literal finder) is Python work:
~0.35 s for all of them, paid again by every process that uses them (each worker of a parallel log scan, every
`explain`). So the program Python's regex compiler makes of each pattern (`re._compiler._code`: a list of
ints) is kept in the build cache (`capdoctor.buildcache`), and a pattern found there is made by `_sre.compile`
alone, in microseconds. `warm(build, inputs)` runs `build` (which compiles every pattern the engine has) and stores
the programs it compiled when any was new, so the file holds exactly the current tables' patterns, with a digest
of what they were made from: `complete(inputs)` then says, without building, that every one is there.
`widened(source, flags, widen)` does the same for a pattern made from a changed parse (`digits.cover`).

The stored programs are keyed by Python's exact version and the regex engine's constants (a program is only
valid for the engine that made it) and by this module's source; each is looked up by its pattern's own text
and flags, so a pattern that changed is a miss, never another pattern's program. Beside the programs it keeps the
phrases' gates (`gated`, `gates.required`), read from the parse that compiling makes anyway, and whether each
pattern reads digits' values (`reads`, `digits.reads_digits`: a parse too). The payload is
`marshal`ed plain data (strings, ints, tuples, lists, dicts), checked for shape when loaded. Anything unexpected — a
Python whose regex internals differ, a damaged file, a program `_sre` rejects — costs one `re.compile`,
never a wrong pattern or a crash. Imports nothing heavy; reads the cache on first use only.
"""

from __future__ import annotations

import marshal
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from capdoctor import buildcache

Gate = tuple[str, ...]
"""Literals of which every match of a pattern contains one, lower-case (see `gates.required`)."""

CACHE_NAME = "regex-programs"
_Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
"""What `_sre.compile` takes after the pattern: flags, code, groups - 1, group index, index group."""

_programs: dict[tuple[str, int], _Program] | None = None
"""The programs loaded from the build cache (None: not read yet), by (pattern, flags)."""
_gates: dict[tuple[str, int], Gate] = {}
"""The gates (`gates.required`) loaded from the build cache with the programs, by (pattern, flags)."""
_made: dict[tuple[str, int], _Program] = {}
"""Programs compiled in this process (what `warm` stores)."""
_made_gates: dict[tuple[str, int], Gate] = {}
_asked: set[tuple[str, int]] | None = None
"""While `warm` runs its build: every (pattern, flags) asked for."""
_asked_gates: set[tuple[str, int]] | None = None
_reads: dict[tuple[str, int], bool] = {}
"""Whether each pattern reads the values of digits (`digits.reads_digits`), loaded with the programs."""
_made_reads: dict[tuple[str, int], bool] = {}
_asked_reads: set[tuple[str, int]] | None = None
_built_from: bytes = b""
"""What the build whose programs are stored was made from (`warm`'s `inputs`), loaded with them: b"" when unknown."""


@cache
def _internals() -> tuple[Any, Any, Any] | None:
    """Python's regex compiler modules and `_sre` (3.11+: `re._parser`/`re._compiler`; 3.10: `sre_*`), or
    None when they are not what this module knows."""
    from importlib import import_module

    modern = sys.version_info >= (3, 11)
    try:
        sre: Any = import_module("_sre")
        compiler: Any = import_module("re._compiler" if modern else "sre_compile")
        parser: Any = import_module("re._parser" if modern else "sre_parse")
        compiler._code, parser.parse, sre.compile  # noqa: B018 - the three this module calls
    except (ImportError, AttributeError):
        return None
    return parser, compiler, sre


def parser() -> Any:
    """Python's regex parser module (`re._parser`, 3.10: `sre_parse`), or None when the internals differ from
    what this module knows (`gates.required` reads patterns with it)."""
    internals = _internals()
    return internals[0] if internals is not None else None


def _key() -> bytes:
    """The build-cache key: Python's exact version, the regex engine's constants, this module's source and those of
    `gates` (the stored gates are what its `required` made) and `digits` (the widened programs, `widened`)."""
    internals = _internals()
    sre = internals[2] if internals else None
    consts = f"{getattr(sre, 'MAGIC', '')} {getattr(sre, 'CODESIZE', '')} {getattr(sre, 'MAXREPEAT', '')}"
    here = Path(__file__)
    how = b""
    for source in (here, here.with_name("gates.py"), here.with_name("digits.py")):
        try:
            how += source.read_bytes()
        except OSError:
            how += b"no source"
    return buildcache.key(b"regex-programs", sys.version.encode(), consts.encode(), how)


def _valid_key(key: Any) -> bool:
    """Whether a loaded key has the shape of (pattern, flags)."""
    return isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)


def _valid(key: Any, prog: Any) -> bool:
    """Whether a loaded entry has the shape of (pattern, flags) -> `_Program`."""
    return (
        _valid_key(key)
        and isinstance(prog, tuple)
        and len(prog) == 5
        and isinstance(prog[0], int)
        and isinstance(prog[1], list)
        and isinstance(prog[2], int)
        and isinstance(prog[3], dict)
        and isinstance(prog[4], tuple)
    )


def _valid_gate(key: Any, gate: Any) -> bool:
    """Whether a loaded entry has the shape of (pattern, flags) -> gate (a tuple of strings)."""
    return _valid_key(key) and isinstance(gate, tuple) and all(isinstance(lit, str) for lit in gate)


def _load() -> dict[tuple[str, int], _Program]:
    """The stored programs ({} when the cache is off, empty, stale or damaged), and the stored gates, digit
    readings and build inputs into `_gates`, `_reads` and `_built_from`; read once per process."""
    global _programs, _built_from
    if _programs is None:
        _programs = {}
        payload = buildcache.load(CACHE_NAME, _key()) if _internals() is not None else None
        if payload is not None:
            try:
                data = marshal.loads(payload)
            except (EOFError, ValueError, TypeError):
                data = None
            if (
                isinstance(data, tuple)
                and len(data) == 4
                and all(isinstance(part, dict) for part in data[:3])
                and isinstance(data[3], bytes)
                and all(_valid(k, v) for k, v in data[0].items())
                and all(_valid_gate(k, v) for k, v in data[1].items())
                and all(_valid_key(k) and isinstance(v, bool) for k, v in data[2].items())
            ):
                _programs = data[0]
                _gates.update(data[1])
                _reads.update(data[2])
                _built_from = data[3]
    return _programs


def _compile(source: str, flags: int, gate: bool = False) -> re.Pattern[str]:
    """`re.compile(source, flags)`, keeping the program it makes (in `_made`) when the internals allow, and
    with `gate` the pattern's gate read from the same parse (in `_made_gates`)."""
    internals = _internals()
    if internals is None:
        return re.compile(source, flags)
    parser, compiler, sre = internals
    try:
        parsed = parser.parse(source, flags)
        if gate:
            from capdoctor.classifier.gates import of_parsed

            _made_gates[(source, flags)] = of_parsed(parsed)
        prog = _program(compiler, parsed, flags)
        rx: re.Pattern[str] = sre.compile(source, *prog)
    except Exception:  # internals that differ from what this module knows: the public way
        return re.compile(source, flags)
    _made[(source, flags)] = prog
    return rx


def _program(compiler: Any, parsed: Any, flags: int) -> _Program:
    """The program `_sre.compile` takes after the pattern, for a parse (`re._compiler.compile`'s steps)."""
    code = [int(op) for op in compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex, tuple(indexgroup))


def pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`: from its stored program when the build cache holds it, else compiled (and
    its program kept for `warm`). A bad pattern raises `re.error` as `re.compile` would."""
    flags = int(flags)
    key = (source, flags)
    if _asked is not None:
        _asked.add(key)
    rx = _stored(key, source)
    return rx if rx is not None else _compile(source, flags)


def _stored(key: tuple[str, int], source: str) -> re.Pattern[str] | None:
    """The pattern made from the stored program under `key`, or None (none stored, or one this `_sre` rejects:
    the caller compiles it again)."""
    prog = _load().get(key)
    internals = _internals()
    if prog is None or internals is None:
        return None
    try:
        rx: re.Pattern[str] = internals[2].compile(source, *prog)
    except Exception:
        return None
    return rx


def from_parsed(parsed: Any, flags: int) -> re.Pattern[str] | None:
    """A pattern compiled from a parse made here (`re._parser`'s SubPattern), not kept: None when the regex
    internals are not the ones this module knows or the compiler refuses it."""
    internals = _internals()
    if internals is None:
        return None
    _, compiler, sre = internals
    try:
        rx: re.Pattern[str] = sre.compile("", *_program(compiler, parsed, int(flags)))
    except Exception:
        return None
    return rx


WIDENED = "\x00widened\x00"
"""What the key of a widened pattern's program (`widened`) starts with: no pattern's source does."""


def widened(source: str, flags: int, widen: Callable[[Any], Any]) -> re.Pattern[str] | None:
    """The pattern compiled from `widen(parse of source)` (`digits.cover`): from its stored program when the build
    cache holds it (keyed by `WIDENED`, the source and flags), else made now and kept for `warm`. None when the
    regex internals are not the ones this module knows, or `widen` raises (it cannot widen that pattern)."""
    flags = int(flags)
    key = (WIDENED + source, flags)
    internals = _internals()
    if internals is None:
        return None
    rx = _stored(key, source)
    if rx is None:
        parser, compiler, sre = internals
        try:
            prog = _program(compiler, widen(parser.parse(source, flags)), flags)
            rx = sre.compile(source, *prog)
        except Exception:  # `widen` refused, or internals that differ from what this module knows: none to keep
            return None
        _made[key] = prog
    if _asked is not None:  # (only a pattern widened: one refused is asked again in every process, cheaply)
        _asked.add(key)
    return rx


def gated(source: str, flags: int = 0) -> tuple[re.Pattern[str], Gate]:
    """`pattern(source, flags)` and its gate (`gates.required`: literals of which every match contains one),
    both from the build cache when it holds them; a pattern compiled here has its gate read from the parse the
    compiling makes anyway (a gate alone costs a parse: ~0.1 ms a phrase)."""
    flags = int(flags)
    key = (source, flags)
    if _asked_gates is not None:
        _asked_gates.add(key)
    if key in _load():
        rx = pattern(source, flags)
    else:
        if _asked is not None:
            _asked.add(key)
        rx = _compile(source, flags, gate=True)
    gate = _gates.get(key, _made_gates.get(key))
    if gate is None:  # a stored program without its gate, or internals that do not parse
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
    """Run `build`, which compiles patterns through `pattern`, then store the programs of exactly the patterns
    it asked for when any of them was not stored yet, or the stored ones were not built from `inputs` (what
    `build` makes its patterns of: the first run after an install or a table change). With the cache off,
    nothing: compiling every pattern up front then costs more than compiling those used."""
    global _asked, _asked_gates, _asked_reads, _built_from
    if buildcache.directory() is None or _internals() is None:
        return
    _asked, _asked_gates, _asked_reads = set(), set(), set()
    try:
        build()
        asked, asked_gates, asked_reads = _asked, _asked_gates, _asked_reads
    finally:
        _asked = _asked_gates = _asked_reads = None
    stored = _load()
    if (
        _built_from == inputs
        and all(key in stored for key in asked)
        and all(key in _gates for key in asked_gates)
        and all(key in _reads for key in asked_reads)
    ):
        return
    out = {key: prog for key in asked if (prog := _made.get(key) or stored.get(key)) is not None}
    gates = {key: gate for key in asked_gates if (gate := _made_gates.get(key) or _gates.get(key)) is not None}
    read = {key: known for key in asked_reads if (known := _made_reads.get(key, _reads.get(key))) is not None}
    try:
        payload = marshal.dumps((out, gates, read, inputs))
    except ValueError:  # not plain data after all: nothing stored
        return
    if buildcache.store(CACHE_NAME, _key(), payload):
        stored.update(out)
        _gates.update(gates)
        _reads.update(read)
        _built_from = inputs


def complete(inputs: bytes) -> bool:
    """Whether the stored programs are those of a `warm` whose build was made from `inputs` (then they hold every
    pattern that build asks for, with its gate and digit reading); loads them now (once per process). False for
    empty `inputs`, and with the cache off."""
    _load()
    return bool(inputs) and _built_from == inputs


def _reset() -> None:
    """Forget what this process loaded and compiled (tests: a fresh process's view of the cache)."""
    global _programs, _built_from
    _programs = None
    _built_from = b""
    _made.clear()
    _gates.clear()
    _made_gates.clear()
    _reads.clear()
    _made_reads.clear()


__all__ = ["WIDENED", "complete", "gated", "pattern", "reads", "warm", "widened"]
