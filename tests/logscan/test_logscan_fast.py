"""The scanner's fast path is the classification engine itself: the prefilter's literal ids, the record memo and
the reused status give exactly what `classify` gives, counts stay exact at every error density, `--since` is
applied to errors only, and the memo stays bounded. No timing is asserted anywhere here."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from capdoctor.classifier.signatures import classify, extract_error, rows
from capdoctor.classifier.signatures import engine as classifier
from capdoctor.classifier.structure import error_status
from capdoctor.classifier.structure import extract_error as fields_of
from capdoctor.logscan import facts as fields
from capdoctor.logscan import filescan, memo, recovery, scanner
from capdoctor.logscan import parallel as ranges
from capdoctor.logscan.facts import Facts, judge, relevant
from capdoctor.logscan.memo import RecordMemo, record_key
from capdoctor.logscan.prefilter import build_prefilter
from capdoctor.logscan.records import RECORD_CHARS
from capdoctor.logscan.scanner import ScanOptions, scan_bytes
from tests.classifier.test_gates import spelled

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
CORPUS = Path(__file__).parents[1] / "data" / "corpus"


def _examples() -> list[str]:
    """Every row example, one line each (what a log line carrying it looks like)."""
    return [" ".join(ex.split()) for sig in rows() for ex in sig.examples]


def _corpus_texts() -> list[str]:
    out = []
    for half in ("tune", "tune2", "holdout"):
        for line in (CORPUS / f"{half}.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["text"])
    return out


def _hs_ids(text: str) -> list[int]:
    """The engine's literal ids the prefilter finds in `text`."""
    pf = scanner.prefilter_for(None)
    _, ids = pf.hits(text.encode("utf-8"))
    if ids is None:
        return sorted(classifier().literal_ids(text))
    return list(pf.complete(ids, text.encode("utf-8")))


def _scanned_ids(text: str) -> list[int]:
    """The literal ids the scanner reads for the record `text` (`_literals_in`: a non-ASCII record lower-cased)."""
    pf, raw = scanner.prefilter_for(None), text.encode("utf-8")
    ends, ids = pf.hits(raw)
    one = filescan.FileScanner(pf, ScanOptions(now=NOW), "<t>", scanner.ScanResult())
    return list(one._literals_in(text, raw, ids, ends, 0, len(raw)))


def _summary(matches: list) -> list[tuple[str, float, str]]:  # type: ignore[type-arg]
    return [(m.signature.id, m.score, m.excerpt) for m in matches]


@pytest.mark.parametrize("source", ["examples", "corpus"])
def test_fast_path_equals_classify(source: str) -> None:
    """`judge` with the prefilter's ids gives the same matches (ids, scores, excerpts, order) as the reference
    `classify(text, origin="log")`, and the same status as `extract_error` (every row example and every corpus
    text: the corpus and field-case scores cannot move)."""
    texts = _examples() if source == "examples" else _corpus_texts()
    assert len(texts) > 100
    for text in texts:
        if not text.isascii():
            ids: list[int] = sorted(classifier().literal_ids(text))  # what the scanner does for such a record
        else:
            ids = _hs_ids(text)
        facts = judge(text, ids)
        want = relevant(classify(text, origin="log"))
        assert _summary(list(facts.matches)) == _summary(want), text
        if want:
            assert facts.status == (extract_error(text)["status"] or 0), text
            assert facts.providers == tuple(fields.find_provider(text, m.signature.id) for m in want), text


def test_prefilter_ids_are_the_engines_literals() -> None:
    """Hyperscan's match ids are the engine's literal ids, ends ascending (what `judge` relies on)."""
    pytest.importorskip("hyperscan")
    pf = build_prefilter(classifier().literals())
    for text in _examples()[:200]:
        if not text.isascii():
            continue
        ends, ids = pf.hits(text.encode())
        assert ids is not None and ends == sorted(ends) and len(ends) == len(ids)
        assert set(pf.complete(ids, text.encode())) >= classifier().literal_ids(text), text


def test_literals_holding_another_are_found_in_the_records_that_need_them() -> None:
    """The database leaves out every literal that holds another (`contained`), and loses nothing by it: over every
    row example and corpus text (and each upper-cased), the lines where it finds a literal are those where a
    database of every literal finds one, and `complete` gives each line exactly the literal ids that one gives."""
    hyperscan = pytest.importorskip("hyperscan")
    from capdoctor.logscan.prefilter import _hs_escape

    literals = [lit.encode("utf-8") for lit in classifier().literals() if lit]
    pf = build_prefilter(classifier().literals())
    full = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    full.compile(
        expressions=[_hs_escape(lit) for lit in literals],
        ids=list(range(len(literals))),
        elements=len(literals),
        flags=[hyperscan.HS_FLAG_CASELESS] * len(literals),
    )
    scratch = hyperscan.Scratch(full)

    def every_id(raw: bytes) -> set[int]:
        found: set[int] = set()
        full.scan(raw, match_event_handler=lambda i, _s, _e, _f, _c: found.add(i), scratch=scratch)
        return found

    left_out = {j for more in pf._supers.values() for j, _ in more}
    assert len(left_out) > 300
    checked = completed = 0
    for text in [*_examples(), *_corpus_texts()]:
        for raw in (text.encode("utf-8"), text.upper().encode("utf-8")):
            want = every_id(raw)
            ends, ids = pf.hits(raw)
            assert bool(ends) == bool(want) and not set(ids or []) & left_out, text
            assert set(pf.complete(ids or [], raw)) == want, text
            checked += 1
            completed += len(want) > len(set(ids or []))
    assert checked > 1500 and completed > 300, (checked, completed)


def test_contained_literals() -> None:
    """`contained`: each literal that holds another names the ones it holds that hold none (caseless for ASCII;
    of two equal ones, the first is kept)."""
    from capdoctor.logscan.prefilter import contained

    lits = [b"not found", b"404 Not Found", b"model not found", b"NOT FOUND", b"found", b"quota"]
    assert contained(lits) == {0: (4,), 1: (4,), 2: (4,), 3: (4,)}
    assert contained([b"abc", b"ABC", b"xyz"]) == {1: (0,)}


def _dense_log(n_lines: int, every: int, unique: bool, seed: int = 3, ids: bool = True) -> tuple[bytes, int]:
    """Ordinary lines full of common words (404s, account, proxy, daily, retry) with one error line in `every`;
    every line has its own timestamp and (error lines: with `ids`) request id. Returns the log and how many error
    lines were planted."""
    rng = random.Random(seed)
    errors = [e for e in _examples() if classify(f"2026-11-29T00:00:00Z ERROR {e}", origin="log")]
    ordinary = (
        'INFO:     10.0.{a}.{b}:{port} - "GET /v1/models HTTP/1.1" 404 Not Found',
        "{ts} INFO  account {n}: daily usage report sent ({n} requests, 0 errors)",
        "{ts} DEBUG proxy: using HTTPS_PROXY from the environment for api.openai.com",
        "{ts} INFO  retrying in 2s (attempt 1/5) after a slow first byte request_id=req_{rid}",
        '{ts} INFO  POST /v1/chat/completions -> 200 OK "status": 200 account=daily',
    )
    out, planted = [], 0
    for i in range(n_lines):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        if every and i % every == every - 1:
            tail = f" [seq {i}]" if unique else ""
            rid = f" request_id=req_{rng.getrandbits(64):016x}" if ids else ""
            out.append(f"{ts} ERROR {rng.choice(errors)}{rid}{tail}")
            planted += 1
        else:
            out.append(
                rng.choice(ordinary).format(
                    ts=ts, n=i, a=i % 250, b=i % 199, port=1024 + i % 60000, rid=f"{rng.getrandbits(64):016x}"
                )
            )
    return ("\n".join(out) + "\n").encode(), planted


def _counts(res: scanner.ScanResult) -> dict[str, int]:
    return {k: v.count for k, v in res.stats.items()}


@pytest.mark.parametrize(
    ("every", "unique", "ids"),
    [
        (0, False, True),
        (1000, False, True),
        (100, False, True),
        (100, True, True),
        (100, True, False),
        (10, False, True),
        (1, False, True),
        (1, True, False),
    ],
)
def test_counts_exact_at_every_density(every: int, unique: bool, ids: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every planted error line is one record; the memo and the prefilter's ids change nothing: the same scan
    with the memo off and the pure-Python prefilter (which gives no ids) has identical statistics and events."""
    data, planted = _dense_log(3000, every, unique, ids=ids)
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert len(fast.events) == planted
    slow = _oracle(monkeypatch, data)
    assert _counts(fast) == _counts(slow)
    assert [(e.signature, e.ts, e.line, e.offset, e.model, e.retry) for e in fast.events] == [
        (e.signature, e.ts, e.line, e.offset, e.model, e.retry) for e in slow.events
    ]
    for sid, stat in fast.stats.items():
        other = slow.stats[sid]
        assert (
            stat.example,
            stat.excerpt,
            stat.example_line,
            list(stat.statuses.items()),  # in order: ties in most_common() keep the order keys came in
            list(stat.providers.items()),
            list(stat.models.items()),
            stat.request_ids,
            stat.first,
            stat.last,
        ) == (
            other.example,
            other.excerpt,
            other.example_line,
            list(other.statuses.items()),
            list(other.providers.items()),
            list(other.models.items()),
            other.request_ids,
            other.first,
            other.last,
        ), sid


def _oracle(monkeypatch: pytest.MonkeyPatch, data: bytes) -> scanner.ScanResult:
    """The differential oracle: `data` scanned with no memo (every record judged afresh) and the pure-Python
    prefilter (no literal ids: the engine finds each record's literals itself)."""
    with monkeypatch.context() as patched:
        patched.setattr(memo, "MEMO_ENTRIES", 0)
        return scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384, engine="python"))


def _same_scans(fast: scanner.ScanResult, slow: scanner.ScanResult) -> None:
    assert _counts(fast) == _counts(slow)
    assert fast.events == slow.events
    for sid, stat in fast.stats.items():
        other = slow.stats[sid]
        assert (stat.example, stat.excerpt, stat.example_line, stat.request_ids, stat.first, stat.last) == (
            other.example,
            other.excerpt,
            other.example_line,
            other.request_ids,
            other.first,
            other.last,
        ), sid
        for mine, theirs in ((stat.statuses, other.statuses), (stat.providers, other.providers)):
            assert list(mine.items()) == list(theirs.items()), sid
        assert list(stat.models.items()) == list(other.models.items()), sid


def test_records_under_quiet_lines_and_long_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines judged before as no error are dropped as they are found, yet a continuation line under one (a JSON
    error body under an access line, a stack frame) still makes one record with it, long records included; the
    scan equals the one that judges every record afresh with the pure-Python prefilter, chunk by small chunk."""
    rng = random.Random(5)
    errors = [e for e in _examples() if classify(f"2026-11-29T00:00:00Z ERROR {e}", origin="log")]
    out: list[str] = []
    for i in range(1500):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        access = f'INFO:     10.0.{i % 250}.{i % 199}:{1024 + i} - "GET /v1/models HTTP/1.1" 404 Not Found'
        kind = i % 7
        if kind == 0:
            out += [access, '  {"error": {"code": "rate_limit_exceeded", "message": "Rate limit reached"}}']
        elif kind == 1:
            out += [f"{ts} ERROR {rng.choice(errors)}", "    at retry (client.js:10:3)", "  status: 429"]
        elif kind == 2:
            out += [access, "  " + "detail " * (RECORD_CHARS // 6), "  overloaded_error"]
        elif kind == 3:
            out += [f"{ts} ERROR {rng.choice(errors)} request_id=req_{rng.getrandbits(64):016x}"]
        else:
            out += [access]
    data = ("\n".join(out) + "\n").encode()
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert sum(s.count for s in fast.stats.values()) > 400
    _same_scans(fast, _oracle(monkeypatch, data))


def test_memo_is_bounded() -> None:
    """A scan through a small memo counts every planted error, and the memo never holds more than its bound; a
    key longer than the bound is not kept."""
    data, planted = _dense_log(2000, 5, False)
    small_memo = RecordMemo(entries=8, key_bytes=2048)
    res = scanner.ScanResult()
    import io

    from capdoctor.logscan import sources as src

    filescan.FileScanner(scanner.prefilter_for(None), ScanOptions(now=NOW), "x", res, small_memo).run(
        src.Reader(io.BytesIO(data), [], (OSError,), "read failed"), size_hint=len(data)
    )
    assert len(res.events) == planted and 0 < len(small_memo) <= 8
    small = RecordMemo(entries=3, key_bytes=10)
    facts = Facts("t", (), (), 0, False)
    for i in range(10):
        small.put(b"k%d" % i, facts)
    assert len(small) == 3 and small.lookup(b"k9") == (b"k9", facts) and small.lookup(b"k0") == (b"k0", None)
    small.put(b"x" * 11, facts)
    assert small.lookup(b"x" * 11)[1] is None


def test_record_key_drops_only_what_differs_between_repeats() -> None:
    """Timestamps, request/trace ids, client addresses and a local server's port leave the key; statuses, loopback
    hosts and Ollama's port (which the local-server hints read) stay."""
    a = b"2026-11-29T10:00:00.123Z ERROR Error code: 429 request_id=req_011CSHgkd83jdk3abc from 10.1.2.3:5555"
    b = b"2026-11-30T11:59:59.999Z ERROR Error code: 429 request_id=req_99ZZZZZZZZZZZZZZZZ from 10.9.9.9:6000"
    assert record_key(a) == record_key(b)
    assert record_key(a) != record_key(a.replace(b"429", b"503"))
    uuid = b"trace 550e8400-e29b-41d4-a716-446655440000 failed: overloaded"
    assert record_key(uuid) == record_key(uuid.replace(b"550e8400", b"660f9511"))
    local = b"connection refused http://127.0.0.1:8080 and 192.168.1.2:11434 and localhost:11434"
    assert b"127.0.0.1:\x00" in record_key(local) and b":11434" in record_key(local)  # the host stays, not its port
    assert b"localhost:11434" in record_key(local) and record_key(local) == record_key(local.replace(b"8080", b"9"))


def test_repeats_with_other_timestamps_and_ids_classify_alike() -> None:
    """What the memo assumes, on every row example: the leading timestamp, the ids and a local server's port do not
    change a record's classification."""
    for ex in _examples():
        one = f"2026-11-29T10:00:00.123Z ERROR {ex} request_id=req_011CSHgkd83jdk3abc via http://127.0.0.1:8080"
        two = f"2025-01-02T23:59:59.999Z ERROR {ex} request_id=req_99ZZZZZZZZZZZZZZZZZZ via http://127.0.0.1:443"
        if record_key(one.encode()) != record_key(two.encode()):
            continue
        assert [m.signature.id for m in relevant(classify(one, origin="log"))] == [
            m.signature.id for m in relevant(classify(two, origin="log"))
        ], ex


def test_since_counts_old_errors_only() -> None:
    """Old error records are counted in `too_old` and nothing else; old ordinary candidate lines are no
    errors and count nowhere."""
    lines = [
        "2026-11-20T10:00:00Z ERROR Error code: 429 - rate_limit_exceeded",
        '2026-11-20T10:00:01Z INFO:     10.0.0.1:5000 - "GET /v1/models HTTP/1.1" 404 Not Found',
        "2026-11-29T10:00:00Z ERROR Error code: 429 - rate_limit_exceeded",
        "2026-11-20T10:00:02Z ERROR Error code: 429 - rate_limit_exceeded",
    ]
    data = ("\n".join(lines) + "\n").encode()
    assert classifier().literal_ids(lines[1]) and not classify(lines[1], origin="log")  # a candidate, no error
    res = scan_bytes(data, options=ScanOptions(now=NOW, since=datetime(2026, 11, 28, tzinfo=timezone.utc)))
    assert res.too_old == 2
    assert len(res.events) == 1 and res.events[0].line == 3
    assert sum(s.count for s in res.stats.values()) >= 1


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_parallel_workers_forked_or_spawned_agree(tmp_path: Path, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte ranges scanned by forked workers (which inherit the parent's engine and prefilter) or spawned ones
    (which build their own, once per worker) count exactly what one process counts."""
    import multiprocessing

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    data, planted = _dense_log(4000, 7, False)
    path = tmp_path / "dense.log"
    path.write_bytes(data)
    from capdoctor.logscan import sources

    srcs, _ = sources.expand([str(path)])
    serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(ranges, "_pool_context", lambda: multiprocessing.get_context(method))
    parallel = scanner.scan(srcs, ScanOptions(now=NOW, workers=2, chunk_bytes=8192))
    assert len(serial.events) == len(parallel.events) == planted
    assert _counts(parallel) == _counts(serial)
    assert sorted(e.line for e in parallel.events) == sorted(e.line for e in serial.events)


@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("stored", [True, False])
def test_workers_compile_the_rows_they_need_when_the_cache_holds_them(
    tmp_path: Path, stored: bool, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a build cache that a `prepare` of these tables filled (`Engine.prepared`), the parent compiles no row
    before starting its workers (a forked one inherits the loaded programs, a spawned one reads them): each worker
    makes the rows its lines need. With a cache that holds none, the parent compiles every row once first and
    stores them, so the next run (and a spawned worker) finds them. Either way the workers count exactly what one
    process counts."""
    import multiprocessing

    from capdoctor.classifier import buildcache, compiled
    from capdoctor.classifier.engine import Engine
    from capdoctor.classifier.tables import tables
    from capdoctor.logscan import sources

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    monkeypatch.setenv(buildcache.ENV_VAR, str(tmp_path / "cache"))
    compiled._reset()
    try:
        if stored:
            Engine(tables()).prepare()
            compiled._reset()  # a fresh process's view: the programs are on disk only
        parent = Engine(tables())
        assert parent.prepared() is stored
        data, planted = _dense_log(3000, 7, False)
        path = tmp_path / "dense.log"
        path.write_bytes(data)
        srcs, _ = sources.expand([str(path)])
        monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
        monkeypatch.setattr(ranges, "classifier", lambda: parent)
        monkeypatch.setattr(ranges, "_pool_context", lambda: multiprocessing.get_context(method))
        parallel = scanner.scan(srcs, ScanOptions(now=NOW, workers=2, chunk_bytes=8192))
        made = [c is not None for c in parent._compiled]
        assert not any(made) if stored else all(made)
        compiled._reset()
        assert Engine(tables()).prepared()  # stored before, or by this scan's parent
        monkeypatch.setattr(ranges, "classifier", classifier)
        serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
        assert len(parallel.events) == len(serial.events) == planted
        assert _counts(parallel) == _counts(serial)
    finally:
        compiled._reset()


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("size", [0, 1, 2, 7, 64 << 20, 67 << 20, 268_551_795, 1 << 30, 10 << 30])
def test_pieces_cover_the_file_in_order(size: int, workers: int) -> None:
    """A big file's byte ranges (`parallel.pieces`) cover it once, in order, none empty: one per worker for four fifths,
    then up to one per worker for the rest, none of those under PIECE_MIN_BYTES (more ranges where one would pass
    PIECE_MAX_BYTES)."""
    pieces = ranges.pieces(size, workers)
    assert [a for a, _ in pieces] == sorted({0} | {b for _, b in pieces[:-1]}) if size else pieces == []
    assert all(a < b for a, b in pieces) and (not pieces or (pieces[0][0], pieces[-1][1]) == (0, size))
    assert all(b - a <= ranges.PIECE_MAX_BYTES for a, b in pieces)
    tail = size // ranges.TAIL_SHARE
    big = max(workers, -(-(size - tail) // ranges.PIECE_MAX_BYTES))
    small = pieces[big:]
    assert len(small) <= max(workers, -(-tail // ranges.PIECE_MAX_BYTES))
    assert all(b - a >= ranges.PIECE_MIN_BYTES for a, b in small)
    if workers * ranges.PIECE_MIN_BYTES <= tail <= workers * ranges.PIECE_MAX_BYTES:  # (256 MiB, two cores)
        assert len(small) == workers and sum(b - a for a, b in small) == tail


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_ranges_handed_to_free_workers_equal_one_process(
    tmp_path: Path, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file cut into more ranges than workers, each range scanned by whichever worker is free (with the memo and
    the examples it already holds from its earlier ranges), gives what one process gives: every row's count,
    first and last time, example, its line and excerpt, models, providers, statuses and request ids, the events in
    order (whether a retry succeeded too, where its window runs on into the next chunk or range), and the file's
    lines and bytes."""
    import multiprocessing

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    data, planted = _dense_log(6000, 5, False)
    unique, more = _dense_log(3000, 3, True, seed=9)
    path = tmp_path / "dense.log"
    path.write_bytes(data + unique + data)
    from capdoctor.logscan import sources

    srcs, _ = sources.expand([str(path)])
    serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(ranges, "PIECE_MIN_BYTES", len(data) // 10)
    monkeypatch.setattr(ranges, "TAIL_SHARE", 2)
    monkeypatch.setattr(ranges, "_pool_context", lambda: multiprocessing.get_context(method))
    assert len(ranges.pieces(path.stat().st_size, 2)) == 4
    split = scanner.scan(srcs, ScanOptions(now=NOW, workers=2, chunk_bytes=8192))

    def stats(res: scanner.ScanResult) -> dict[str, tuple[object, ...]]:
        fields = ("count", "first", "last", "example", "example_line", "excerpt", "models", "providers", "statuses")
        return {sid: (*(getattr(s, f) for f in fields), s.request_ids) for sid, s in res.stats.items()}

    assert len(serial.events) == 2 * planted + more
    assert stats(split) == stats(serial) and split.events == serial.events
    assert sum(e.succeeded for e in serial.events) > 10  # (a retry's success is looked for past a chunk's end)
    assert scanner.scan(srcs, ScanOptions(now=NOW, workers=1, chunk_bytes=4096)).events == serial.events
    assert [(f.lines, f.bytes) for f in split.files] == [(f.lines, f.bytes) for f in serial.files]


def test_a_retry_near_a_range_end_sees_the_success_after_it(tmp_path: Path) -> None:
    """A retried error just before the end of a worker's byte range, whose request then completed just after it,
    succeeded: the worker reads on past its range's end for the rest of the retry's window, as one process
    scanning the whole file sees it."""
    retry = "2026-11-29T00:00:01Z ERROR API Error: 529 overloaded_error · Retrying in 2 seconds… (attempt 1/10)\n"
    filler = "2026-11-29T00:00:02Z DEBUG tool: exec `pytest -q` exited 0\n" * 50
    done = '2026-11-29T00:00:03Z INFO {"type":"response.completed"}\n'
    path = tmp_path / "retry.log"
    path.write_text(filler + retry + filler + done + filler, "utf-8")
    boundary = len((filler + retry + filler[:100]).encode())
    from capdoctor.logscan import sources

    srcs, _ = sources.expand([str(path)])
    serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
    first = ranges.scan_range((str(path), 0, boundary, ScanOptions(now=NOW, chunk_bytes=512)))
    assert [e.succeeded for e in serial.events] == [e.succeeded for e in first.events] == [True]


def test_scan_gives_the_collector_back_as_it_found_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan pauses Python's cyclic collector and freezes the parent's objects before forking: afterwards the
    collector is on again (or still off, when the caller had it off) and nothing it froze stays frozen, so a
    long-lived process (watch mode) collects as before."""
    import gc

    data, _ = _dense_log(2000, 7, False)
    path = tmp_path / "dense.log"
    path.write_bytes(data)
    from capdoctor.logscan import sources

    srcs, _ = sources.expand([str(path)])
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    assert gc.isenabled()
    for workers in (1, 2):
        scanner.scan(srcs, ScanOptions(now=NOW, workers=workers, chunk_bytes=8192))
        assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        scanner.scan(srcs, ScanOptions(now=NOW, workers=2, chunk_bytes=8192))
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    gc.freeze()  # a caller's own frozen objects stay frozen
    try:
        frozen = gc.get_freeze_count()
        scanner.scan(srcs, ScanOptions(now=NOW, workers=2, chunk_bytes=8192))
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_provider_hint_by_words_equals_the_regexes() -> None:
    """The substring shortcut of `provider_hint` names the provider the ordered regexes name, on every example,
    every corpus text, their upper-case forms and with letters spelled by characters IGNORECASE takes for them."""
    texts = _examples() + _corpus_texts()
    for text in texts + [t.upper() for t in texts] + [spelled(t) for t in texts]:
        want = next((name for name, rx in fields.provider_hints() if rx.search(text)), None)
        assert fields.provider_hint(text) == want, text


def test_gated_fields_equal_the_regexes() -> None:
    """`error_status` gives the status `extract_error` reads from the fields (no status reader), and the gated
    `find_model` and `find_request_ids` what their regexes give ungated, on every example and corpus text,
    upper-cased, beside a long s and with letters spelled by characters IGNORECASE takes for them (`ſ` for `s`)."""
    texts = _examples() + _corpus_texts()
    texts += ['{"status": "error", "code": "429"}', "'status': 'x', 'code': 503", '"\u017ftatus": 503', "code=1"]
    for text in texts + [t.upper() for t in texts] + [f"\u017f {t}" for t in texts[:200]] + list(map(spelled, texts)):
        assert error_status(text) == fields_of(text)["status"], text
        m = fields.MODEL_FIELD.search(text)
        m2 = fields.MODEL_RE.search(text)
        want = (
            m.group(1).lower()
            if m and fields.MODEL_RE.fullmatch(m.group(1))
            else m2.group(1).lower().rstrip(".:")
            if m2
            else None
        )
        assert fields.find_model(text) == want, text
        ids = [next(g for g in rid.groups() if g) for rid in fields.REQUEST_ID.finditer(text)]
        kept = [v for i, v in enumerate(ids) if v not in ids[:i] and not v.lower().startswith("redacted")][:3]
        assert fields.find_request_ids(text) == kept, text


def test_retried_shortcut_equals_the_regex() -> None:
    """`retried` says what `RETRY` says, on every example and corpus text and on retry wordings."""
    texts = _examples() + _corpus_texts()
    texts += ["Retrying in 2s", "RECONNECTING...", "attempt 3/5", "AttemptNumber=2", "retried 4 times", "x"]
    texts += ["重试：Retrying in 2s", "ſtream reconnecting…", "Attempt 2/5 — İnvalid", "ATTEMPTNUMBER=1 ошибка"]
    for text in texts + [t.upper() for t in texts]:
        assert fields.retried(text) == bool(fields.RETRY.search(text)), text


def test_huge_line_split_over_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line without a newline crossing every byte range is scanned once, by the range it starts in; the
    others find no line of their own and stop at their end (they do not read the rest of the file)."""
    filler = b"retry account daily proxy 404 token timeout " * 2000
    data = filler + b" Error code: 429 rate_limit_exceeded " + filler * 3 + b" Error code: 429 rate_limit_exceeded "
    path = tmp_path / "huge.log"
    path.write_bytes(data)
    assert ranges.aligned_start(str(path), 1000, 5000) == 5000  # no newline in the range
    from capdoctor.logscan import sources

    srcs, _ = sources.expand([str(path)])
    serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(filescan, "CARRY_CAP", 4096)
    parallel = scanner.scan(srcs, ScanOptions(now=NOW, workers=3, chunk_bytes=8192))
    assert _counts(parallel) == _counts(serial) and sum(_counts(serial).values()) == 2


def test_records_of_one_shape_with_other_statuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records whose every byte but their digits is the same each get their own facts where a status, a model
    version, a port or an address among the digits changes, as the scan that judges every record afresh finds
    them."""
    rng = random.Random(11)
    shapes = (
        "{ts} ERROR upstream returned HTTP {code}: request failed [seq {i}]",
        "{ts} ERROR Error code: {code} - model gpt-{v}.{w} is overloaded, retry in {n}s",
        "{ts} ERROR connect ECONNREFUSED {a}.0.0.{b}:{port} while calling the model (attempt {n})",
        '{ts} WARN {{"error": {{"status": {code}, "message": "try again in {n} seconds"}}}}',
    )
    out = []
    for i in range(2500):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        out.append(
            rng.choice(shapes).format(
                ts=ts,
                i=rng.randrange(100, 999),
                code=rng.choice((429, 503, 529, 401, 404, 500, 400, 200, 402, 403)),
                v=rng.randrange(3, 6),
                w=rng.randrange(10),
                n=rng.randrange(10, 99),
                a=rng.choice((127, 10, 0)),
                b=rng.choice((1, 0, 2)),
                port=rng.choice((11434, 8080, 1234, 11435)),
            )
        )
    data = ("\n".join(out) + "\n").encode()
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert len({e.signature for e in fast.events}) > 3
    _same_scans(fast, _oracle(monkeypatch, data))


def test_memo_finds_repeats_with_other_timestamps_and_ids() -> None:
    """A record judged once is found again with another timestamp, and with another request id; the key is what
    `record_key` gives."""
    memo = RecordMemo()
    facts = Facts("t", (), (), 0, False)
    one = b"2026-11-29T10:00:00.123Z ERROR Error code: 529 overloaded"
    two = b"2026-11-30T11:00:00.999Z ERROR Error code: 529 overloaded"
    key, found = memo.lookup(one)
    assert found is None and key == record_key(one)
    memo.put(key, facts)
    assert memo.lookup(two) == (record_key(two), facts)
    with_id = one + b" request_id=req_011CSHgkd83jdk3abc"
    key, found = memo.lookup(with_id)
    memo.put(key, facts)
    assert memo.lookup(two + b" request_id=req_99ZZZZZZZZZZZZZZZZZZ") == (key, facts)


def test_memo_keys_cut_client_addresses_only() -> None:
    """Records that differ only in a client address share a key, whatever the address; loopback, any-address
    and Ollama's port stay in the key (the local-server hints read them), so those records are misses, not wrong
    hits, and only a record with that key gets the facts."""
    rng = random.Random(5)
    memo = RecordMemo()
    facts = Facts("t", (), (), 0, False)
    template = b'INFO:     %s - "GET /v1/models HTTP/1.1" 404 Not Found'
    first = template % b"10.0.47.100:57016"
    key, found = memo.lookup(first)
    assert found is None
    memo.put(key, facts)
    specials = [b"127.0.0.1:5000", b"0.0.0.0:8000", b"10.0.0.1:11434", b"10.10.10.10:1143", b"1.2.3.4"]
    hits = 0
    for i in range(3000):
        if i % 10 == 0:
            addr = rng.choice(specials)
        else:
            addr = b"%d.%d.%d.%d:%d" % (
                *(rng.choice([rng.randrange(10), rng.randrange(256)]) for _ in range(4)),
                rng.randrange(65536),
            )
        raw = template % addr
        got_key, got = memo.lookup(raw)
        assert got_key == record_key(raw), raw
        assert (got is facts) == (got_key == key), raw
        hits += got is facts
    assert hits > 100
    other = b'INFO:     10.0.47.100:57016 - "GET /v1/models HTTP/1.1" 403 Forbidden!'
    assert memo.lookup(other) == (record_key(other), None)
    for status in (b"500", b"405", b"404"):  # the same shape: a digit around the address decides
        raw = (template % b"10.0.47.100:57016").replace(b"404", status)
        assert memo.lookup(raw)[1] is (facts if status == b"404" else None), raw


def test_scan_result_pickles_events_exactly() -> None:
    """A worker's result crosses to the parent with its events' times as microseconds: what arrives equals what
    left, UTC, other zones and undated events alike."""
    import pickle
    from datetime import timedelta

    from capdoctor.logscan.scanner import Event, ScanResult

    times = [
        datetime(2026, 11, 30, 10, 0, 0, 123456, tzinfo=timezone.utc),
        datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
        datetime(2026, 1, 1, 8, 0, tzinfo=timezone(timedelta(hours=8))),
        None,
    ]
    res = ScanResult(
        events=[Event(ts, "capacity", "x.y", None, False, False, "p", i, i * 10) for i, ts in enumerate(times)]
    )
    back = pickle.loads(pickle.dumps(res))
    assert back.events == res.events
    assert [type(e) for e in back.events] == [Event] * 4
    assert [e.ts.tzinfo if e.ts else None for e in back.events] == [e.ts.tzinfo if e.ts else None for e in res.events]
    assert pickle.loads(pickle.dumps(ScanResult())).events == []  # no event: the columns are empty, not missing


def test_utc_head_shortcut_equals_the_regex() -> None:
    """The regex-free reading of a line that starts with a UTC time gives what the ISO regex gives, on the
    common shapes and on random damage to them (when the shortcut declines, the regex path runs)."""
    from capdoctor.logscan import timestamps as ts

    rng = random.Random(3)
    shapes = [
        "2025-11-30T00:00:00.008Z ERROR x",
        "1999-12-31 23:59:59Z y",
        "2026-02-29T10:00:00.123456789Z",
        "2026-01-01T00:00:60Z a",
        "2025-11-30T00:00:00.0123456789Z",
    ]
    used = 0
    for _ in range(30000):
        head = list(rng.choice(shapes))
        for _ in range(rng.randrange(3)):
            head[rng.randrange(len(head))] = rng.choice("0123456789-T :.Z,+x")
        text = "".join(head)
        fast = ts._utc_head(text)
        if fast is None:
            continue
        used += 1
        m = ts._ISO.search(text, 0, ts._ISO_POSITION_LIMIT)
        assert m is not None, text
        slow = ts._from_iso(m)
        assert slow == fast and slow is not None and slow.tzinfo is fast.tzinfo, text
    assert used > 1000


def test_bursts_from_the_sorted_times() -> None:
    """Errors closer than BURST_GAP form one burst when there are at least BURST_MIN of them, whatever order the
    events came in; undated events count apart."""
    from capdoctor.logscan.patterns import BURST_MIN, analyse

    assert BURST_MIN == 3
    t0 = datetime(2026, 11, 29, 10, 0, tzinfo=timezone.utc)
    offsets = [0, 10, 20, 200, 210, 215, 220, 1000, 1010]
    events = [
        scanner.Event(t0 + timedelta(seconds=s), "capacity", "x", None, False, False, "p", i, i)
        for i, s in enumerate(offsets)
    ]
    events.reverse()
    events.append(scanner.Event(None, "capacity", "x", None, False, False, "p", 99, 99))
    pats = analyse(events)
    assert [(b.start, b.end, b.count) for b in pats.bursts] == [
        (t0.isoformat(), (t0 + timedelta(seconds=20)).isoformat(), 3),
        ((t0 + timedelta(seconds=200)).isoformat(), (t0 + timedelta(seconds=220)).isoformat(), 4),
    ]
    assert (pats.dated, pats.undated) == (9, 1)


def test_tallies_folded_early_count_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for only a few judgements, repeats are tallied and folded into the statistics many times over an
    input; the statistics and events are those of the scan that judges every record afresh."""
    data, planted = _dense_log(3000, 4, False)
    monkeypatch.setattr(memo, "MEMO_ENTRIES", 3)
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert len(fast.events) == planted
    _same_scans(fast, _oracle(monkeypatch, data))


def test_success_markers_kept_per_chunk_answer_as_a_search_of_each_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Recovery.succeeded` says what searching each record's window for every marker says, for record ends in any
    order (a continuation can end a record after the next one starts), markers absent, dense or cut by the
    window's or the chunk's end."""
    monkeypatch.setattr(recovery, "SUCCESS_WINDOW", 64)
    rng = random.Random(5)
    markers = recovery.SUCCESS_MARKERS
    for _ in range(200):
        pieces = [rng.choice((b"x" * rng.randrange(1, 90), b"\n", *markers[: rng.randrange(len(markers) + 1)]))]
        pieces += [rng.choice((b"y" * rng.randrange(1, 40), b"\n", rng.choice(markers))) for _ in range(30)]
        buf = bytearray(b"".join(pieces))
        cut = rng.randrange(len(buf) // 2, len(buf) + 1)
        rec = recovery.Recovery()
        rec.new_chunk()
        ends = sorted(rng.randrange(cut + 1) for _ in range(25))
        ends = [e if rng.random() < 0.85 else rng.randrange(cut + 1) for e in ends]  # now and then out of order
        for end in ends:
            stop = min(cut, end + recovery.SUCCESS_WINDOW)
            assert rec.succeeded(buf, cut, end) == any(buf.find(m, end, stop) >= 0 for m in markers), (end, cut)


def _scans_as_judged_afresh(monkeypatch: pytest.MonkeyPatch, data: bytes) -> scanner.ScanResult:
    """The memo's scan of `data`, checked to equal the scan that judges every record afresh (`_oracle`)."""
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    _same_scans(fast, _oracle(monkeypatch, data))
    return fast


@pytest.mark.parametrize("script", ["ascii", "wide"])
def test_records_with_growing_sequence_numbers_scan_as_judged_afresh(
    monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    """A log whose error records each carry their own sequence number (the benchmark's "every error text
    different" log) scans as the scan that judges every record afresh does; records that are not ASCII too
    (Chinese, Japanese, an `İ`, which lowers to two characters, before the digits)."""
    rng = random.Random(13)
    plain = [b for b in _examples() if b.isascii()]
    bodies = plain[:60] if script == "ascii" else [b for b in _examples() if not b.isascii()][:40]
    if script == "wide":
        bodies += [f"İstanbul: {b}" for b in plain[:20]]
    out = []
    for i in range(4000):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        out.append(f"{ts} ERROR {rng.choice(bodies)} [seq {i * 7}]")
    _scans_as_judged_afresh(monkeypatch, ("\n".join(out) + "\n").encode())


def test_records_whose_numbers_change_among_their_words_scan_as_judged_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors whose numbers change from record to record among their words (a retry count in Chinese, the tokens
    used after a model name, a queue depth after one) scan as the scan that judges every record afresh does."""
    rng = random.Random(7)
    kinds = (
        "ERROR 上游返回 HTTP 529：服务过载，第 {} 次重试",
        "ERROR Rate limit reached for gpt-4o-mini in organization org-abc on tokens per min (TPM): Limit 200000, "
        "Used {}, Requested 512.",
        "WARN /var/lib/ollama/models/blobs/sha256-e1f2a3: qwen2.5-72b: HTTP 503 upstream busy, queue depth {}",
    )
    out = []
    for i in range(3000):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        out.append(f"{ts} {kinds[i % 3].format(rng.randrange(1000, 10000))}")
    fast = _scans_as_judged_afresh(monkeypatch, ("\n".join(out) + "\n").encode())
    assert sum(s.count for s in fast.stats.values()) == 3000


def test_an_agents_ordinary_lines_scan_as_judged_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines that hold a literal of the engine but none of its selective ones are dropped unjudged only at a quiet
    level (INFO, DEBUG, a JSON `"level":"info"`); the same words at WARN or with no level, and the errors among
    them, scan exactly as the scan that judges every candidate record (`_oracle`)."""
    rng = random.Random(21)
    errors = [e for e in _examples() if e.isascii() and classify(f"2026-11-29T00:00:00Z ERROR {e}", origin="log")]
    kinds = (
        "{ts} DEBUG session: context window 200000 tokens, {n} used",
        "{ts} INFO  ollama: GET http://localhost:11434/api/tags -> 200 in {n}ms",
        "{ts} DEBUG provider: using local server http://127.0.0.1:{port}/v1",
        "{ts} INFO  tool: cat src/m_{n}.py: No such file or directory",
        '{{"level":"info","ts":"{ts}","msg":"model not found in cache, loading {n}"}}',
        "{ts} WARN  session: context window 200000 tokens, {n} used",
        "{ts} tool: cat src/m_{n}.py: No such file or directory",
        '{ts} INFO  127.0.0.1:{port} - "GET /api/v1/health HTTP/1.1" 404 Not Found',
        "{ts} INFO  upstream said 429 Too Many Requests, retrying in {n}ms",
        "{ts} ERROR {error}",
    )
    out = []
    for i in range(3000):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        n, port, error = rng.randrange(99999), rng.randrange(1024, 65536), rng.choice(errors)
        out.append(rng.choice(kinds).format(ts=ts, n=n, port=port, error=error))
    data = ("\n".join(out) + "\n").encode()
    fast = _scans_as_judged_afresh(monkeypatch, data)
    assert sum(s.count for s in fast.stats.values()) > 300


def test_every_match_holds_a_selective_literal() -> None:
    """What dropping a quiet line unjudged relies on: wherever a row, status name or spelling matches a text (every
    row example and corpus text, as a log line), the text holds one of the engine's selective literals."""
    eng = classifier()
    chosen = eng.selective
    checked = 0
    for text in [*_examples(), *_corpus_texts()]:
        if not text.isascii() or "\\u" in text:
            continue
        found = [m for m in classify(text, origin="log") if m.signature.layer.value != "words"]
        if found:
            low = text.lower()
            assert any(lit in low for lit in chosen), (text, [m.signature.id for m in found])
            checked += 1
    assert checked > 500


def test_a_match_on_confirmable_literals_alone_is_confirmed() -> None:
    """What dropping a quiet line that holds only confirmable literals relies on: wherever a row or spelling
    matches a text (every row example and corpus text) and the selective literals it holds are all ones a match
    must confirm (`Engine.confirm`), `Engine.confirms` says so."""
    eng = classifier()
    chosen, confirm = eng.selective, eng.confirm
    checked = 0
    for text in [*_examples(), *_corpus_texts()]:
        if not text.isascii() or "\\u" in text:
            continue
        low = text.lower()
        held = [lit for lit in chosen if lit in low]
        if not held or any(lit not in confirm for lit in held):
            continue
        found = [m for m in classify(text, origin="log") if m.signature.layer.value != "words"]
        if found:
            assert eng.confirms(text, held), (text, [m.signature.id for m in found])
            checked += 1
    assert checked > 200
