"""The multi-pattern prefilter: one engine over every literal anchor of the signature table.

Contract: `build_prefilter()` returns an object whose `ends(buf)` lists end offsets of literal occurrences in a
bytes buffer (case-insensitive for ASCII), at least one in every line that holds a literal, and whose
`complete(ids, raw)` gives the ids of every literal in a record from those `hits` found in it. It uses hyperscan
(block mode, SINGLEMATCH off, so every occurrence of the literals that hold no other is reported) when the module
imports, else a pure-Python fallback: one lower-casing pass, then one trie-shaped regex of the escaped literals
(the classification engine's trie builder). Only candidate lines found here are decoded
and confirmed by the signature regexes; this module never decodes text or classifies anything.
Heavy imports (hyperscan) happen inside `build_prefilter`, never at import time. The compiled hyperscan
database is kept between runs in the build cache (`capdoctor.classifier.buildcache`), keyed by the
literals, the library's version and the machine; a cached database that does not load or scan is compiled again.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from capdoctor.classifier import buildcache


class Prefilter(Protocol):
    """Finds candidate positions in raw bytes: what the file scanner asks of any engine (hyperscan, Python)."""

    name: str

    def ends(self, buf: bytes | memoryview) -> list[int]:
        """End offsets (exclusive) of every literal occurrence in `buf`, in any order."""
        ...

    def hits(self, buf: bytes | memoryview) -> tuple[list[int], list[int] | None]:
        """The end offsets of literal occurrences in `buf`, ascending, and the literal id of each (aligned with
        the ends; None when this engine cannot say which literal it found): every line holding a literal holds one
        of these, and `complete` gives the ids of all the literals in a record from those found in it."""
        ...

    def complete(self, ids: Sequence[int], raw: bytes) -> Sequence[int]:
        """The ids of every literal in `raw` (ASCII lower-cased or not), given the ids `hits` found in it."""
        ...


def _hs_escape(literal: bytes) -> bytes:
    """A hyperscan (PCRE) pattern matching `literal` exactly: every non-alphanumeric byte as \\xHH."""
    return b"".join(
        bytes([b]) if (48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122) else b"\\x%02x" % b for b in literal
    )


def _cache_key(hyperscan: Any, literals: Sequence[bytes]) -> bytes:
    """The build-cache key of a database of `literals`: the literals, this module's source (how it compiles
    them), the library's version and the machine it was built for (a serialised database is only valid there)."""
    version = str(getattr(hyperscan, "__version__", "")) + "/" + str(getattr(hyperscan, "HS_VERSION", ""))
    machine = os.uname().machine if hasattr(os, "uname") else os.environ.get("PROCESSOR_ARCHITECTURE", "")
    try:  # how the literals are compiled is this module's code: a change to it is a change of key
        how = Path(__file__).read_bytes()
    except OSError:
        how = b"no source"
    return buildcache.key(how, version.encode(), f"{sys.platform} {machine}".encode(), b"\x00".join(literals))


def _cached_containment(key: bytes, literals: Sequence[bytes]) -> dict[int, tuple[int, ...]]:
    """`contained(literals)`, from the build cache when it holds it under `key` (the database's), else computed
    and stored."""
    import json

    payload = buildcache.load("prefilter-contained", key)
    if payload is not None:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            return {int(i): tuple(int(j) for j in kept) for i, kept in json.loads(payload).items()}
    holds = contained(literals)
    with contextlib.suppress(Exception):  # a map that does not store is only not cached
        buildcache.store("prefilter-contained", key, json.dumps(holds).encode())
    return holds


def _cached_database(hyperscan: Any, key: bytes, literals: Sequence[bytes], holds: Mapping[int, object]) -> Any:
    """The compiled database of `literals` (but those in `holds`) from the build cache, or None. It must load and
    find the first literal in the database in a trial scan (a database made for another CPU or library build fails
    one or the other): anything else is a miss, and the caller compiles."""
    payload = buildcache.load("prefilter-hyperscan", key)
    probe = next((i for i in range(len(literals)) if i not in holds), None)
    if payload is None or probe is None:
        return None
    try:
        db = hyperscan.loadb(payload, hyperscan.HS_MODE_BLOCK)
        found: list[int] = []

        def _on_match(lit: int, _start: int, _end: int, _flags: int, _ctx: object) -> None:
            found.append(lit)

        db.scan(literals[probe], match_event_handler=_on_match, scratch=hyperscan.Scratch(db))
    except Exception:  # whatever a damaged or foreign database raises: compile instead
        return None
    return db if probe in found else None


def contained(literals: Sequence[bytes]) -> dict[int, tuple[int, ...]]:
    """For each literal that holds another (compared caseless for ASCII, as the database matches), the ids of the
    literals it holds that hold no other (an equal one, the first of them): wherever it stands, those stand too.
    Found by looking up each of its substrings of a literal's length (~0.1 s for the tables' 2,574 literals;
    kept in the build cache with the database)."""
    lowered = [lit.lower() for lit in literals]
    first: dict[bytes, int] = {}
    for i, low in enumerate(lowered):
        first.setdefault(low, i)
    lengths = sorted({len(low) for low in lowered if low})
    inside: dict[int, set[int]] = {}
    for i, low in enumerate(lowered):
        found: set[int] = set()
        for n in lengths:
            if n > len(low):
                break
            for at in range(len(low) - n + 1):
                j = first.get(low[at : at + n])
                if j is not None and j != i:
                    found.add(j)
        if found:
            inside[i] = found
    return {i: tuple(sorted(j for j in found if j not in inside)) for i, found in inside.items()}


class HyperscanPrefilter:
    """Hyperscan block-mode database of the literals that hold no other (caseless), reporting every match end
    offset: a literal that holds another (`404 not found` holds `not found`) is no candidate line more, and
    leaving it out spares a callback into Python on every line that has both (an access log's 404s); `complete`
    finds it in the records that need their literal ids."""

    name = "hyperscan"

    def __init__(self, literals: Sequence[bytes]) -> None:
        import hyperscan

        self._hs: Any = hyperscan
        self._n = max(1, len(literals))
        key = _cache_key(hyperscan, literals)
        holds = _cached_containment(key, literals)
        supers: dict[int, list[tuple[int, bytes]]] = {}
        for i, kept in holds.items():
            for j in kept:
                supers.setdefault(j, []).append((i, literals[i].lower()))
        self._supers = {j: tuple(more) for j, more in supers.items()}
        """For each literal in the database, the literals left out of it that hold it, lower-cased (`complete`)."""
        self._db: Any = _cached_database(hyperscan, key, literals, holds)
        if self._db is None:
            ids = [i for i in range(len(literals)) if i not in holds]
            exprs = [_hs_escape(literals[i]) for i in ids]
            self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            self._db.compile(
                expressions=exprs,
                ids=ids,
                elements=len(exprs),
                flags=[hyperscan.HS_FLAG_CASELESS] * len(exprs),
            )
            with contextlib.suppress(Exception):  # a database that does not serialise is only not cached
                buildcache.store("prefilter-hyperscan", key, hyperscan.dumpb(self._db))
        self._scratch: Any = hyperscan.Scratch(self._db)

    def hits(self, buf: bytes | memoryview) -> tuple[list[int], list[int] | None]:
        """Every match end offset in `buf`, ascending, with the literal id (the index in `literals`) of each:
        the ids say which rows the classification engine has to evaluate, so it never looks them up again."""
        n = self._n
        packed: list[int] = []
        append = packed.append

        def _on_match(lit: int, _start: int, end: int, _flags: int, _ctx: object) -> None:
            append(end * n + lit)  # one int per hit: sorting them sorts by end offset

        self._db.scan(buf, match_event_handler=_on_match, scratch=self._scratch)
        packed.sort()
        return [v // n for v in packed], [v % n for v in packed]

    def complete(self, ids: Sequence[int], raw: bytes) -> Sequence[int]:
        """The ids of every literal in the record `raw` (ASCII lower-cased or not), given the ids `hits` found in
        it: those, and each literal left out of the database that holds one of them and stands in `raw` (caseless
        for ASCII, as the database matches: `bytes.lower` folds ASCII only)."""
        supers = self._supers
        low: bytes | None = None
        extra: list[int] = []
        for i in set(ids):
            more = supers.get(i)
            if more:
                if low is None:
                    low = raw.lower()
                extra += [j for j, lit in more if lit in low]
        return [*ids, *extra] if extra else ids

    def ends(self, buf: bytes | memoryview) -> list[int]:
        """Every end offset in `buf` of the literals in the database (a line with several is reported several
        times)."""
        out: list[int] = []
        append = out.append

        def _on_match(_id: int, _start: int, end: int, _flags: int, _ctx: object) -> None:
            append(end)

        self._db.scan(buf, match_event_handler=_on_match, scratch=self._scratch)
        return out


class PythonPrefilter:
    """Pure-Python fallback: lower-case the buffer once, then one trie-shaped regex over all literals."""

    name = "python-re"

    def __init__(self, literals: Sequence[bytes]) -> None:
        from capdoctor.classifier.regexes import trie_pattern

        words = sorted({lit.decode("utf-8").lower() for lit in literals if lit})
        self._rx = re.compile(trie_pattern(words).encode("utf-8"))

    def ends(self, buf: bytes | memoryview) -> list[int]:
        """Every non-overlapping match end offset in `buf` (one per literal occurrence, shortest first)."""
        return [m.end() for m in self._rx.finditer(bytes(buf).lower())]

    def hits(self, buf: bytes | memoryview) -> tuple[list[int], list[int] | None]:
        """The ends, ascending; no ids (non-overlapping matches cannot list every literal): the classification
        engine then finds the literals of each candidate record itself."""
        return self.ends(buf), None

    def complete(self, ids: Sequence[int], raw: bytes) -> Sequence[int]:
        """`ids` (this engine names none: `hits`)."""
        return ids


def build_prefilter(literals: Sequence[str], *, prefer: str | None = None) -> Prefilter:
    """The fastest available engine over `literals` (hyperscan, else Python); `prefer="python"` forces it."""
    encoded = [lit.encode("utf-8") for lit in literals if lit]
    if prefer != "python":
        try:
            return HyperscanPrefilter(encoded)
        except Exception:
            pass
    return PythonPrefilter(encoded)


class ScanLiterals(NamedTuple):
    """How the file scanner reads the classification engine's literals (the prefilter's, ids as the engine's):
    per literal, SURE when it is one of the selective ones (`Engine.selective`) outright, CONFIRM when a match
    must still confirm it (`Engine.confirm`), else 0; and the selective ones the engine lacks (`extra`: a line
    holding none of these and no selective literal of the engine is judged only where the words layer may read
    it)."""

    selective: bytes
    extra: tuple[str, ...]
    extra_kinds: bytes
    """SURE or CONFIRM for each of `extra`."""


SURE, CONFIRM = 1, 2


def scan_literals() -> ScanLiterals:
    """The engine's selective literals, as the file scanner reads them (built once per process)."""
    global _SCAN_LITERALS
    if _SCAN_LITERALS is None:
        from capdoctor.classifier.signatures import engine as classifier

        eng = classifier()
        table, chosen, confirm = eng.literals(), eng.selective, eng.confirm
        extra = tuple(sorted(chosen - frozenset(table)))
        kinds = bytes(CONFIRM if lit in confirm else SURE if lit in chosen else 0 for lit in table)
        _SCAN_LITERALS = ScanLiterals(kinds, extra, bytes(CONFIRM if lit in confirm else SURE for lit in extra))
    return _SCAN_LITERALS


_SCAN_LITERALS: ScanLiterals | None = None
_PREFILTERS: dict[tuple[str | None, bool], Prefilter] = {}


def prefilter_for(engine: str | None, extra: bool = False) -> Prefilter:
    """The process-wide prefilter for `engine` over the classification engine's literals, or with `extra` over
    the selective literals it lacks (`scan_literals`); each built once: compiling the database is the costly
    part."""
    key = (engine, extra)
    if key not in _PREFILTERS:
        from capdoctor.classifier.signatures import engine as classifier

        literals = scan_literals().extra if extra else classifier().literals()
        _PREFILTERS[key] = build_prefilter(literals, prefer=engine)
    return _PREFILTERS[key]
