"""The multi-pattern prefilter: one engine over every literal anchor of the signature table.

Contract: `build_prefilter()` returns an object whose `ends(buf)` lists the end offsets of every literal
occurrence in a bytes buffer (case-insensitive for ASCII). It uses hyperscan (block mode, SINGLEMATCH off,
so every occurrence is reported) when the module imports, else a pure-Python fallback: one lower-casing
pass, then one trie-shaped regex of the escaped literals (the classification engine's trie
builder). Only candidate lines found here are decoded
and confirmed by the signature regexes; this module never decodes text or classifies anything.
Heavy imports (hyperscan) happen inside `build_prefilter`, never at import time. The compiled hyperscan
database is kept between runs in the build cache (`capdoctor.buildcache`), keyed by the literals, the library's
version and the machine; a cached database that does not load or scan is compiled again.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from capdoctor import buildcache


class Prefilter(Protocol):
    """Finds candidate positions in raw bytes."""

    name: str

    def ends(self, buf: bytes | memoryview) -> list[int]:
        """End offsets (exclusive) of every literal occurrence in `buf`, in any order."""
        ...

    def hits(self, buf: bytes | memoryview) -> tuple[list[int], list[int] | None]:
        """The end offsets of every literal occurrence in `buf`, ascending, and the literal id of each
        (aligned with the ends; None when this engine cannot say which literal it found)."""
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


def _cached_database(hyperscan: Any, key: bytes, literals: Sequence[bytes]) -> Any:
    """The compiled database of `literals` from the build cache, or None. It must load and find the first
    literal in a trial scan (a database made for another CPU or library build fails one or the other): anything
    else is a miss, and the caller compiles."""
    payload = buildcache.load("prefilter-hyperscan", key)
    if payload is None or not literals:
        return None
    try:
        db = hyperscan.loadb(payload, hyperscan.HS_MODE_BLOCK)
        found: list[int] = []

        def _on_match(lit: int, _start: int, _end: int, _flags: int, _ctx: object) -> None:
            found.append(lit)

        db.scan(literals[0], match_event_handler=_on_match, scratch=hyperscan.Scratch(db))
    except Exception:  # whatever a damaged or foreign database raises: compile instead
        return None
    return db if 0 in found else None


class HyperscanPrefilter:
    """Hyperscan block-mode database of all literals (caseless), reporting every match end offset."""

    name = "hyperscan"

    def __init__(self, literals: Sequence[bytes]) -> None:
        import hyperscan

        self._hs: Any = hyperscan
        self._n = max(1, len(literals))
        key = _cache_key(hyperscan, literals)
        self._db: Any = _cached_database(hyperscan, key, literals)
        if self._db is None:
            exprs = [_hs_escape(lit) for lit in literals]
            self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            self._db.compile(
                expressions=exprs,
                ids=list(range(len(exprs))),
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

    def ends(self, buf: bytes | memoryview) -> list[int]:
        """Every match end offset in `buf` (a line with several anchors is reported several times)."""
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
        from capdoctor.classifier.engine import trie_pattern

        words = sorted({lit.decode("utf-8").lower() for lit in literals if lit})
        self._rx = re.compile(trie_pattern(words).encode("utf-8"))

    def ends(self, buf: bytes | memoryview) -> list[int]:
        """Every non-overlapping match end offset in `buf` (one per literal occurrence, shortest first)."""
        return [m.end() for m in self._rx.finditer(bytes(buf).lower())]

    def hits(self, buf: bytes | memoryview) -> tuple[list[int], list[int] | None]:
        """The ends, ascending; no ids (non-overlapping matches cannot list every literal): the classification
        engine then finds the literals of each candidate record itself."""
        return self.ends(buf), None


def build_prefilter(literals: Sequence[str], *, prefer: str | None = None) -> Prefilter:
    """The fastest available engine over `literals` (hyperscan, else Python); `prefer="python"` forces it."""
    encoded = [lit.encode("utf-8") for lit in literals if lit]
    if prefer != "python":
        try:
            return HyperscanPrefilter(encoded)
        except Exception:
            pass
    return PythonPrefilter(encoded)
