"""The build cache (`capdoctor.classifier.buildcache`): the parsed tables and the compiled prefilter database that a run
finds there behave exactly as freshly built ones; a damaged cache is rebuilt and an unwritable one only means
building every time. Every test points `CAPDOCTOR_CACHE_DIR` at its own temporary directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from capdoctor.classifier import buildcache
from capdoctor.classifier import tables as tables_mod
from capdoctor.classifier.engine import Engine

CORPUS = Path(__file__).parents[1] / "data" / "corpus"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache directory for this test; the process-wide tables are reloaded through it."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(buildcache.ENV_VAR, str(folder))
    tables_mod.tables.cache_clear()
    yield folder
    tables_mod.tables.cache_clear()


def _texts() -> list[str]:
    """Every row example and every corpus text."""
    out = [ex for sig in tables_mod.tables().rows for ex in sig.examples]
    for line in (CORPUS / "holdout.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line)["text"])
    return out


def _judged(engine: Engine, texts: list[str]) -> list[list[tuple[str, float, str]]]:
    return [[(m.signature.id, m.score, m.excerpt) for m in engine.classify(t, origin="log")] for t in texts]


def test_cached_tables_classify_exactly_as_parsed_ones(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first load parses and stores; the second comes from the cache (parsing is made to fail) and gives
    an engine with the same literals and the same judgement of every example and corpus text."""
    fresh = tables_mod.tables()
    assert (cache_dir / "tables.bin").is_file()
    tables_mod.tables.cache_clear()

    def no_parse(*_: object, **__: object) -> None:
        raise AssertionError("parsed although the cache holds the tables")

    monkeypatch.setattr(tables_mod, "load", no_parse)
    cached = tables_mod.tables()
    assert cached == fresh and cached is not fresh
    a, b = Engine(fresh), Engine(cached)
    assert a.literals() == b.literals()
    texts = _texts()
    assert len(texts) > 100
    assert _judged(a, texts) == _judged(b, texts)


def test_damaged_cache_is_rebuilt(cache_dir: Path) -> None:
    """A cache file that is garbage, truncated, or holds another key is a miss: the tables are parsed and the
    file is written again, whole."""
    good = tables_mod.tables()
    path = cache_dir / "tables.bin"
    whole = path.read_bytes()
    for damaged in (b"garbage", whole[: len(whole) // 2], whole[:-1] + bytes([whole[-1] ^ 1])):
        path.write_bytes(damaged)
        tables_mod.tables.cache_clear()
        assert tables_mod.tables() == good
        assert path.read_bytes() == whole
    other_key = buildcache.key(b"something else")
    assert buildcache.load("tables", other_key) is None


def test_a_payload_that_is_not_tables_is_a_miss(cache_dir: Path) -> None:
    """A payload with the right key that does not unpickle to tables (or names a class outside them) is not
    used."""
    import pickle

    key = tables_mod._cache_key()
    assert key is not None
    buildcache.store("tables", key, pickle.dumps({"not": "tables"}))
    assert tables_mod._unpickle(buildcache.load("tables", key)) is None
    buildcache.store("tables", key, pickle.dumps(print))  # a builtin the tables never hold
    assert tables_mod._unpickle(buildcache.load("tables", key)) is None
    assert tables_mod.tables() == tables_mod.load()


def test_unwritable_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache directory that cannot be created (its parent is a file) costs a rebuild every time, no error."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(buildcache.ENV_VAR, str(blocker / "cache"))
    tables_mod.tables.cache_clear()
    try:
        assert tables_mod.tables() == tables_mod.load()
        assert not buildcache.store("x", buildcache.key(b"x"), b"payload")
        assert buildcache.load("x", buildcache.key(b"x")) is None
    finally:
        tables_mod.tables.cache_clear()


def test_cache_off_and_default_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`CAPDOCTOR_CACHE_DIR=off` turns the cache off; unset, it is the platform's cache directory (XDG here)."""
    monkeypatch.setenv(buildcache.ENV_VAR, "off")
    assert buildcache.directory() is None
    assert not buildcache.store("x", buildcache.key(b"x"), b"payload")
    monkeypatch.delenv(buildcache.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert buildcache.directory() == tmp_path / "xdg" / "capdoctor" / "build"


def test_store_and_load_round_trip(cache_dir: Path) -> None:
    """A payload comes back under its key only, and no temporary file is left beside it."""
    key = buildcache.key(b"a", b"b")
    assert buildcache.key(b"ab") != key  # parts are length-prefixed: no two lists collide
    assert buildcache.store("thing", key, b"\x00payload")
    assert buildcache.load("thing", key) == b"\x00payload"
    assert buildcache.load("thing", buildcache.key(b"a", b"c")) is None
    assert [p.name for p in cache_dir.iterdir()] == ["thing.bin"]


def test_cached_hyperscan_database_finds_the_same_literals(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prefilter database loaded from the cache (compiling is made to fail) reports the same hits as the
    compiled one; a damaged database file is compiled again."""
    hyperscan = pytest.importorskip("hyperscan")
    from capdoctor.classifier.signatures import engine as classifier
    from capdoctor.logscan import prefilter as pf_engine

    literals = [lit.encode("utf-8") for lit in classifier().literals() if lit]
    compiled = pf_engine.HyperscanPrefilter(literals)
    path = cache_dir / "prefilter-hyperscan.bin"
    assert path.is_file()
    sample = "\n".join(_texts()).encode("utf-8")
    want = compiled.hits(sample)

    class NoCompile:
        def __init__(self, *_: object, **__: object) -> None:
            raise AssertionError("compiled although the cache holds the database")

    with monkeypatch.context() as m:
        m.setattr(hyperscan, "Database", NoCompile)
        loaded = pf_engine.HyperscanPrefilter(literals)
    assert loaded.hits(sample) == want and want[0]

    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 100])
    rebuilt = pf_engine.HyperscanPrefilter(literals)
    assert rebuilt.hits(sample) == want
    assert path.read_bytes() == whole


def test_tables_key_covers_every_table_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables' key reads every `.toml` beside the module, so an edited table or a new one (a layer added
    later) changes it and the cached tables are not used."""
    real = tables_mod._cache_key()
    folder = Path(tables_mod.__file__).parent
    copy = tmp_path / "classifier"
    copy.mkdir()
    for f in folder.glob("*.toml"):
        (copy / f.name).write_bytes(f.read_bytes())
    monkeypatch.setattr(tables_mod.resources, "files", lambda _package: copy)
    assert tables_mod._cache_key() == real
    (copy / "extra.toml").write_text("[x]\n", encoding="utf-8")
    assert tables_mod._cache_key() not in (real, None)
    (copy / "extra.toml").unlink()
    phrases = copy / "phrases.toml"
    phrases.write_bytes(phrases.read_bytes() + b"\n")
    assert tables_mod._cache_key() not in (real, None)
