"""The engine's regex programs kept in the build cache (`capdoctor.classifier.compiled`): patterns rebuilt from
stored programs are the patterns `re.compile` makes and judge every text the same; a damaged program or an
unusable cache only means compiling again. Every test points `CAPDOCTOR_CACHE_DIR` at its own directory."""

from __future__ import annotations

import dataclasses
import marshal
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from capdoctor import buildcache
from capdoctor.classifier import compiled, digits
from capdoctor.classifier.engine import Engine
from capdoctor.classifier.gates import required
from capdoctor.classifier.tables import tables


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache directory, and this process's loaded and compiled programs forgotten before and after."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(buildcache.ENV_VAR, str(folder))
    compiled._reset()
    yield folder
    compiled._reset()


def _texts() -> list[str]:
    return [f"2025-11-30T00:00:00Z ERROR {ex}" for sig in tables().rows for ex in sig.examples]


def _judged(engine: Engine, texts: list[str]) -> list[list[tuple[str, float, str]]]:
    return [[(m.signature.id, m.score, m.excerpt) for m in engine.classify(t, origin="log")] for t in texts]


def _same(a: re.Pattern[str], b: re.Pattern[str]) -> bool:
    return (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)


def test_stored_programs_make_the_same_patterns(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`prepare` compiles and stores every pattern; a fresh process (state forgotten) whose compiler is made to
    fail builds every one from the stored programs, equal to `re.compile`'s, judging every example the same."""
    fresh = Engine(tables())
    fresh.prepare()
    assert (cache_dir / f"{compiled.CACHE_NAME}.bin").is_file()
    compiled._reset()
    stored = compiled._load()
    assert len(stored) > 200  # every row's patterns, spellings, names and context patterns

    def no_compile(source: str, flags: int) -> re.Pattern[str]:
        raise AssertionError(f"compiled although the cache holds it: {source[:60]}")

    monkeypatch.setattr(compiled, "_compile", no_compile)
    cached = Engine(tables())
    cached.prepare()
    for source, flags in stored:
        assert _same(compiled.pattern(source, flags), re.compile(source, flags))
    texts = _texts()
    assert len(texts) > 100
    monkeypatch.undo()  # the literal finder of `classify` is not prepared: it may compile
    assert _judged(cached, texts) == _judged(fresh, texts)


def test_stored_gates_are_the_parsed_patterns_gates(cache_dir: Path) -> None:
    """`prepare` stores every phrase's gate beside its program; a fresh process reads them back, each the gate
    `gates.required` reads from the pattern itself, and the rows it builds carry them."""
    Engine(tables()).prepare()
    compiled._reset()
    compiled._load()
    stored = dict(compiled._gates)
    assert len(stored) > 1000  # every phrase and `unless` pattern of the rows
    for (source, flags), gate in stored.items():
        assert gate == required(source, flags), source
    cached = Engine(tables())
    row = cached._row(next(i for i, s in enumerate(cached._text_rows) if s.phrases))
    assert row.phrase is not None and all(
        stored[(rx.pattern, rx.flags & ~re.UNICODE)] == g for g, rx in row.phrase.parts
    )


def test_a_damaged_program_is_compiled_again(cache_dir: Path) -> None:
    """A stored program `_sre` rejects, or a payload that is not programs, reads as a miss: the pattern is
    compiled as `re.compile` would, and matches."""
    source, flags = r"rate[ _]limit(?P<n>\d+)", re.IGNORECASE
    bad = {(source, int(flags)): (int(flags), [999999, 1, 2], 0, {"n": 1}, (None, "n"))}
    assert buildcache.store(compiled.CACHE_NAME, compiled._key(), marshal.dumps((bad, {}, {}, b"")))
    rx = compiled.pattern(source, flags)
    assert _same(rx, re.compile(source, flags))
    m = rx.search("RATE_LIMIT42")
    assert m is not None and m.group("n") == "42"
    compiled._reset()
    assert buildcache.store(compiled.CACHE_NAME, compiled._key(), marshal.dumps(["not", "programs"]))
    assert compiled._load() == {}
    assert compiled.pattern(source, flags).search("rate limit7") is not None


def test_warm_stores_only_when_something_was_new(cache_dir: Path) -> None:
    """The first `warm` stores the programs of exactly what its build asked for; a second with nothing new
    leaves the file alone; a bad pattern still raises `re.error`."""
    path = cache_dir / f"{compiled.CACHE_NAME}.bin"
    compiled.warm(lambda: [compiled.pattern("alpha|beta"), compiled.pattern("gamma", re.IGNORECASE)])
    payload = buildcache.load(compiled.CACHE_NAME, compiled._key())
    assert payload is not None and set(marshal.loads(payload)[0]) == {
        ("alpha|beta", 0),
        ("gamma", int(re.IGNORECASE)),
    }
    before = path.stat().st_mtime_ns
    compiled._reset()
    compiled.warm(lambda: compiled.pattern("alpha|beta"))
    assert path.stat().st_mtime_ns == before
    with pytest.raises(re.error):
        compiled.pattern("(unclosed")


def test_complete_only_for_the_inputs_the_stored_build_was_made_from(cache_dir: Path) -> None:
    """`complete(inputs)` is true in a fresh process exactly when the stored programs are those of a `warm` given
    the same inputs; a `warm` with other inputs stores again, even when every pattern it asks for is stored. An
    `Engine` counts as prepared only for the packaged tables, once a `prepare` stored their programs."""
    path = cache_dir / f"{compiled.CACHE_NAME}.bin"

    def build() -> None:
        compiled.pattern("alpha|beta")

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


def test_cache_off_compiles_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cache off nothing is stored or read, `warm` compiles nothing up front (the patterns used compile
    when used), and patterns are still `re.compile`'s."""
    monkeypatch.setenv(buildcache.ENV_VAR, "off")
    compiled._reset()
    built: list[bool] = []
    try:
        compiled.warm(lambda: built.append(True), b"inputs")
        assert built == [] and compiled._load() == {} and not compiled.complete(b"inputs")
        assert _same(compiled.pattern("overload(?:ed)?"), re.compile("overload(?:ed)?"))
    finally:
        compiled._reset()


def test_digit_readings_and_covers_kept_with_the_programs(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`warm(compile_all)` stores, beside the programs, whether each pattern reads digits' values and the programs
    of their digit-blind covers (`digits.cover`); a fresh process reads both back without parsing a pattern, and
    gets the same answers and the same cover programs. A stored reading that is not a bool makes the file a miss."""
    digits.reads_digits.cache_clear()
    digits.cover.cache_clear()
    compiled.warm(Engine(tables()).compile_all)
    made_reads = dict(compiled._made_reads)
    made_covers = {k: v for k, v in compiled._made.items() if k[0].startswith(compiled.WIDENED)}
    assert len(made_reads) > 300 and any(made_reads.values()) and not all(made_reads.values())
    assert len(made_covers) > 100
    compiled._reset()
    digits.reads_digits.cache_clear()
    digits.cover.cache_clear()

    def no_parse(source: str, flags: int) -> bool:
        raise AssertionError(f"parsed {source!r}")

    monkeypatch.setattr(digits, "_parsed_reads", no_parse)
    assert all(digits.reads_digits(source, flags) is known for (source, flags), known in made_reads.items())
    stored = compiled._load()
    assert all(stored[key] == prog for key, prog in made_covers.items())
    for (key, flags), prog in list(made_covers.items())[:20]:
        source = key[len(compiled.WIDENED) :]
        made = digits.cover(source, flags)
        assert made is not None and (made.flags, made.groups) == (prog[0], prog[2])
    compiled._reset()
    digits.reads_digits.cache_clear()
    digits.cover.cache_clear()
    payload = marshal.loads(buildcache.load(compiled.CACHE_NAME, compiled._key()) or b"")
    bad = dict(payload[2])
    bad[next(iter(bad))] = "yes"
    assert buildcache.store(
        compiled.CACHE_NAME, compiled._key(), marshal.dumps((payload[0], payload[1], bad, payload[3]))
    )
    assert compiled._load() == {}
    digits.reads_digits.cache_clear()
    digits.cover.cache_clear()
