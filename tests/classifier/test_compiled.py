"""The engine's regex patterns and their gates (`capdoctor.classifier.compiled`): patterns are `re.compile`'s,
the gates kept in the build cache are those a parse gives, a damaged payload only means
reading again, and with Python's regex internals unavailable the engine judges every text as it does with them.
Every test points `CAPDOCTOR_CACHE_DIR` at its own directory."""

from __future__ import annotations

import dataclasses
import marshal
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from capdoctor.classifier import buildcache, compiled, gates
from capdoctor.classifier.engine import Engine
from capdoctor.classifier.gates import required
from capdoctor.classifier.tables import tables
from capdoctor.logscan import facts, filescan, scanner
from capdoctor.logscan.scanner import ScanOptions
from tests.logscan.test_logscan_fast import NOW, _counts, _dense_log

DATA = Path(__file__).parents[1] / "data"


def _forget() -> None:
    """A fresh process's view: nothing loaded or read, no parse-derived answer remembered."""
    compiled._reset()
    for cached in (gates._fold, gates._folds_to_ascii):
        cached.cache_clear()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache directory, and this process's loaded and read state forgotten before and after."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(buildcache.ENV_VAR, str(folder))
    _forget()
    yield folder
    _forget()


def _texts() -> list[str]:
    """Every row's examples as log lines, and the fresh texts (wording no row was written from), some non-ASCII."""
    out = [f"2025-11-30T00:00:00Z ERROR {ex}" for sig in tables().rows for ex in sig.examples]
    for tsv in sorted((DATA / "fresh").glob("*.tsv"))[:6]:
        for line in tsv.read_text(encoding="utf-8").splitlines():
            if "\t" in line:
                out.append(line.split("\t", 1)[1].replace("\\n", "\n"))
    return out


def _judged(engine: Engine, texts: list[str]) -> list[list[tuple[str, float, str]]]:
    return [[(m.signature.id, m.score, m.excerpt) for m in engine.classify(t, origin="log")] for t in texts]


def test_patterns_are_re_compiles() -> None:
    for source, flags in (("overload(?:ed)?", 0), (r"rate[ _]limit(?P<n>\d+)", re.IGNORECASE)):
        assert compiled.pattern(source, flags) is re.compile(source, flags)
    with pytest.raises(re.error):
        compiled.pattern("(unclosed")


def test_stored_gates_are_the_parsed_patterns_gates(cache_dir: Path) -> None:
    """`prepare` stores every phrase's gate; a fresh process reads them back, each the gate `gates.required`
    reads from the pattern itself, and the rows it builds carry them."""
    Engine(tables()).prepare()
    assert (cache_dir / f"{compiled.CACHE_NAME}.bin").is_file()
    _forget()
    stored = dict(compiled._load())
    assert len(stored) > 1000  # every phrase and `unless` pattern of the rows
    for (source, flags), gate in stored.items():
        assert gate == required(source, flags), source
    cached = Engine(tables())
    row = cached._row(next(i for i, s in enumerate(cached._text_rows) if s.phrases))
    assert row.phrase is not None and all(
        stored[(rx.pattern, rx.flags & ~re.UNICODE)] == g for g, rx in row.phrase.parts
    )


def test_a_damaged_payload_is_read_again(cache_dir: Path) -> None:
    """A payload of the wrong shape (the programs an older capdoctor kept, or not data at all) reads as a miss:
    the gate is read from the pattern, as with no cache."""
    source, flags = r"rate[ _]limit(?P<n>\d+)", int(re.IGNORECASE)
    old = ({(source, flags): (flags, [1, 2], 0, {"n": 1}, (None, "n"))}, b"")
    for payload in (marshal.dumps(old), marshal.dumps(["not", "readings"]), b"\x00garbage"):
        _forget()
        assert buildcache.store(compiled.CACHE_NAME, compiled._key(), payload)
        assert compiled._load() == {}
        rx, gate = compiled.gated(source, flags)
        assert rx.search("RATE_LIMIT42") is not None and gate == required(source, flags)


def test_warm_stores_only_when_something_was_new(cache_dir: Path) -> None:
    """The first `warm` stores the gates of exactly what its build asked about; a second with nothing new leaves
    the file alone."""
    path = cache_dir / f"{compiled.CACHE_NAME}.bin"
    compiled.warm(lambda: [compiled.gated("alpha|beta"), compiled.gated("gamma", re.IGNORECASE)])
    payload = buildcache.load(compiled.CACHE_NAME, compiled._key())
    assert payload is not None and marshal.loads(payload)[0] == {
        ("alpha|beta", 0): ("alpha", "beta"),
        ("gamma", int(re.IGNORECASE)): ("gamma",),
    }
    before = path.stat().st_mtime_ns
    compiled._reset()
    compiled.warm(lambda: compiled.gated("alpha|beta"))
    assert path.stat().st_mtime_ns == before


def test_complete_only_for_the_inputs_the_stored_build_was_made_from(cache_dir: Path) -> None:
    """`complete(inputs)` is true in a fresh process exactly when the stored readings are those of a `warm` given
    the same inputs; a `warm` with other inputs stores again, even when every pattern it asks about is stored. An
    `Engine` counts as prepared only for the packaged tables, once a `prepare` stored their readings."""
    path = cache_dir / f"{compiled.CACHE_NAME}.bin"

    def build() -> None:
        compiled.gated("alpha|beta")

    compiled.warm(build, b"one")
    compiled._reset()
    assert compiled.complete(b"one") and not compiled.complete(b"two") and not compiled.complete(b"")
    before = path.read_bytes()
    compiled.warm(build, b"one")
    assert path.read_bytes() == before  # nothing new: left alone
    compiled.warm(build, b"two")
    compiled._reset()
    assert compiled.complete(b"two") and not compiled.complete(b"one")
    compiled._reset()
    engine = Engine(tables())
    assert not engine.prepared()
    engine.prepare()
    compiled._reset()
    assert Engine(tables()).prepared()
    other = Engine(dataclasses.replace(tables()))  # the same rows, but not the packaged tables object
    assert not other.prepared()


def test_cache_off_reads_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cache off nothing is stored or read and `warm` builds nothing up front (the patterns used compile
    when used)."""
    monkeypatch.setenv(buildcache.ENV_VAR, "off")
    compiled._reset()
    built: list[bool] = []
    try:
        compiled.warm(lambda: built.append(True), b"inputs")
        assert built == [] and compiled._load() == {} and not compiled.complete(b"inputs")
        assert compiled.gated("overload(?:ed)?")[1] == ("overload",)
    finally:
        compiled._reset()


def test_without_the_regex_internals_every_text_is_judged_the_same(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The public fallback: with `re._parser`, `re._compiler` and `re._casefix` unavailable (a Python whose
    internals this module does not know), there are no gates (every phrase runs); every example and fresh text is
    classified, and a dense log scanned, exactly as with them."""
    texts = _texts()
    assert len(texts) > 500 and any(not t.isascii() for t in texts)
    data, planted = _dense_log(1500, 7, False)
    with_internals = Engine(tables())
    judged = _judged(with_internals, texts)
    for module in (facts, filescan):
        monkeypatch.setattr(module, "classifier", lambda: with_internals)
    scanned = scanner.scan_bytes(data, options=ScanOptions(now=NOW))
    assert compiled.parser() is not None and gates._fold() is not None

    _forget()
    monkeypatch.setattr(compiled, "_internals", lambda: None)
    assert compiled.parser() is None and compiled.extra_cases() is None
    without = Engine(tables())
    assert _judged(without, texts) == judged
    row = without._row(next(i for i, s in enumerate(without._text_rows) if s.phrases))
    assert row.phrase is not None and all(g == () for g, _ in row.phrase.parts)  # no gates: every phrase runs
    for module in (facts, filescan):
        monkeypatch.setattr(module, "classifier", lambda: without)
    fallback = scanner.scan_bytes(data, options=ScanOptions(now=NOW))
    assert len(fallback.events) == len(scanned.events) == planted
    assert _counts(fallback) == _counts(scanned)
