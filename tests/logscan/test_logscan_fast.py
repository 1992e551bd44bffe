"""The scanner's fast path is the classification engine itself: the prefilter's literal ids, the record memo and
the reused status give exactly what `classify` gives, counts stay exact at every error density, `--since` is
applied to errors only, and the memo stays bounded. No timing is asserted anywhere here."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from capdoctor.classifier.digits import ZEROS
from capdoctor.classifier.signatures import classify, extract_error, rows
from capdoctor.classifier.signatures import engine as classifier
from capdoctor.classifier.structure import error_status
from capdoctor.classifier.structure import extract_error as fields_of
from capdoctor.logscan import scanner
from capdoctor.logscan.engine import build_prefilter
from capdoctor.logscan.scanner import Facts, RecordMemo, ScanOptions, judge, record_key, relevant, scan_bytes
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
    pf = scanner.prefilter_for(None)
    _, ids = pf.hits(text.encode("utf-8"))
    return list(pf.complete(ids, text.encode("utf-8"))) if ids is not None else sorted(classifier().literal_ids(text))


def _scanned_ids(text: str) -> list[int]:
    """The literal ids the scanner reads for the record `text` (`_literals_in`: a non-ASCII record lower-cased)."""
    pf, raw = scanner.prefilter_for(None), text.encode("utf-8")
    ends, ids = pf.hits(raw)
    return list(scanner._literals_in(pf, text, raw, ids, ends, 0, len(raw)))


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
            assert facts.providers == tuple(scanner.find_provider(text, m.signature.id) for m in want), text


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
    from capdoctor.logscan.engine import _hs_escape

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
    rng = random.Random(41)
    differ = same = 0
    for text in _examples() + _corpus_texts():
        if not text.isascii() or not re.search("[0-9]", text):
            continue
        raw = text.encode()
        want = frozenset(every_id(raw))
        for planted in ("404", "429", "11434", "1302", None):
            copy = re.sub(  # each digit run another value of its length (a status, a port, a code, any)
                b"[0-9]+",
                lambda m, p=planted: ((p or str(rng.randrange(10**9))).encode() * 9)[: len(m.group(0))],
                raw,
            )
            _, ids = pf.hits(copy)
            truth = every_id(copy) == want
            assert pf.shaped(ids or [], copy, want) is truth, (text, copy)
            same += truth
            differ += not truth
    assert same > 500 and differ > 100, (same, differ)


def test_contained_literals() -> None:
    """`contained`: each literal that holds another names the ones it holds that hold none (caseless for ASCII;
    of two equal ones, the first is kept)."""
    from capdoctor.logscan.engine import contained

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


def _count_alike(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A two-item list counting, from now on, the records found by the shape of a judged one (`RecordMemo.find`
    gave facts of their shape: judged like them, or settled) and of those, the ones of a settled shape."""
    calls = [0, 0]
    find = RecordMemo.find

    def counted(memo: RecordMemo, raw: bytes, alike: bool = True) -> tuple[bytes | None, Facts | None, Facts | None]:
        out = find(memo, raw, alike)
        calls[0] += out[0] is None  # (no key: found by its shape)
        calls[1] += out[0] is None and out[1] is not None
        return out

    monkeypatch.setattr(RecordMemo, "find", counted)
    return calls


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
    with the memo off and the pure-Python prefilter (which gives no ids) has identical statistics and events.
    Unique error lines without ids differ from earlier ones only in their digits: most are judged like a record
    of their shape or counted as its settled shape says (`RecordMemo.find`), which the scan is checked to have
    done."""
    data, planted = _dense_log(3000, every, unique, ids=ids)
    alike = _count_alike(monkeypatch)
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert len(fast.events) == planted
    if unique and not ids and every == 1:
        assert alike[0] > planted // 2, (alike, planted)
        assert alike[1] > planted // 4, (alike, planted)  # most shapes settled: nothing judged for their records
    monkeypatch.setattr(scanner, "MEMO_ENTRIES", 0)  # every record judged afresh
    slow = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384, engine="python"))
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
            out += [access, "  " + "detail " * (scanner.RECORD_CHARS // 6), "  overloaded_error"]
        elif kind == 3:
            out += [f"{ts} ERROR {rng.choice(errors)} request_id=req_{rng.getrandbits(64):016x}"]
        else:
            out += [access]
    data = ("\n".join(out) + "\n").encode()
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert sum(s.count for s in fast.stats.values()) > 400
    monkeypatch.setattr(scanner, "MEMO_ENTRIES", 0)
    slow = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384, engine="python"))
    _same_scans(fast, slow)


def test_memo_is_used_and_bounded() -> None:
    """A dense log repeating a few errors judges each text once (hits), and the memo never holds more than its
    bound; a key longer than the bound is not kept."""
    data, planted = _dense_log(2000, 5, False)
    memo = RecordMemo(entries=8, key_bytes=2048)
    res = scanner.ScanResult()
    import io

    from capdoctor.logscan import sources as src

    scanner._FileScanner(scanner.prefilter_for(None), ScanOptions(now=NOW), "x", res, memo).run(
        src.Reader(io.BytesIO(data), [], (OSError,), "read failed"), size_hint=len(data)
    )
    assert len(res.events) == planted
    assert len(memo) <= 8 and memo.hits > 0
    small = RecordMemo(entries=3, key_bytes=10)
    facts = Facts("t", (), (), 0, False)
    for i in range(10):
        small.put(b"k%d" % i, facts)
    assert len(small) == 3 and small.get(b"k9") is facts and small.get(b"k0") is None
    small.put(b"x" * 11, facts)
    assert small.get(b"x" * 11) is None


def test_record_key_drops_only_what_differs_between_repeats() -> None:
    """Timestamps, request/trace ids and client addresses leave the key; statuses, loopback addresses and
    Ollama's port (which the local-server hints read) stay."""
    a = b"2026-11-29T10:00:00.123Z ERROR Error code: 429 request_id=req_011CSHgkd83jdk3abc from 10.1.2.3:5555"
    b = b"2026-11-30T11:59:59.999Z ERROR Error code: 429 request_id=req_99ZZZZZZZZZZZZZZZZ from 10.9.9.9:6000"
    assert record_key(a) == record_key(b)
    assert record_key(a) != record_key(a.replace(b"429", b"503"))
    uuid = b"trace 550e8400-e29b-41d4-a716-446655440000 failed: overloaded"
    assert record_key(uuid) == record_key(uuid.replace(b"550e8400", b"660f9511"))
    local = b"connection refused http://127.0.0.1:8080 and 192.168.1.2:11434"
    assert b"127.0.0.1:8080" in record_key(local) and b":11434" in record_key(local)


def test_repeats_with_other_timestamps_and_ids_classify_alike() -> None:
    """What the memo assumes, on every row example: the leading timestamp and the ids do not change a record's
    classification."""
    for ex in _examples():
        one = f"2026-11-29T10:00:00.123Z ERROR {ex} request_id=req_011CSHgkd83jdk3abc"
        two = f"2025-01-02T23:59:59.999Z ERROR {ex} request_id=req_99ZZZZZZZZZZZZZZZZZZ"
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
    monkeypatch.setattr(scanner, "_pool_context", lambda: multiprocessing.get_context(method))
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
        monkeypatch.setattr(scanner, "classifier", lambda: parent)
        monkeypatch.setattr(scanner, "_pool_context", lambda: multiprocessing.get_context(method))
        parallel = scanner.scan(srcs, ScanOptions(now=NOW, workers=2, chunk_bytes=8192))
        made = [c is not None for c in parent._compiled]
        assert not any(made) if stored else all(made)
        compiled._reset()
        assert Engine(tables()).prepared()  # stored before, or by this scan's parent
        monkeypatch.setattr(scanner, "classifier", classifier)
        serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
        assert len(parallel.events) == len(serial.events) == planted
        assert _counts(parallel) == _counts(serial)
    finally:
        compiled._reset()


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("size", [0, 1, 2, 7, 64 << 20, 67 << 20, 268_551_795, 1 << 30, 10 << 30])
def test_pieces_cover_the_file_in_order(size: int, workers: int) -> None:
    """A big file's byte ranges (`_pieces`) cover it once, in order, none empty: one per worker for four fifths,
    then up to one per worker for the rest, none of those under PIECE_MIN_BYTES (more ranges where one would pass
    PIECE_MAX_BYTES)."""
    pieces = scanner._pieces(size, workers)
    assert [a for a, _ in pieces] == sorted({0} | {b for _, b in pieces[:-1]}) if size else pieces == []
    assert all(a < b for a, b in pieces) and (not pieces or (pieces[0][0], pieces[-1][1]) == (0, size))
    assert all(b - a <= scanner.PIECE_MAX_BYTES for a, b in pieces)
    tail = size // scanner.TAIL_SHARE
    big = max(workers, -(-(size - tail) // scanner.PIECE_MAX_BYTES))
    small = pieces[big:]
    assert len(small) <= max(workers, -(-tail // scanner.PIECE_MAX_BYTES))
    assert all(b - a >= scanner.PIECE_MIN_BYTES for a, b in small)
    if workers * scanner.PIECE_MIN_BYTES <= tail <= workers * scanner.PIECE_MAX_BYTES:  # (256 MiB, two cores)
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
    monkeypatch.setattr(scanner, "PIECE_MIN_BYTES", len(data) // 10)
    monkeypatch.setattr(scanner, "TAIL_SHARE", 2)
    monkeypatch.setattr(scanner, "_pool_context", lambda: multiprocessing.get_context(method))
    assert len(scanner._pieces(path.stat().st_size, 2)) == 4
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
    first = scanner._scan_range_worker((str(path), 0, boundary, ScanOptions(now=NOW, chunk_bytes=512)))
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
        want = next((name for name, rx in scanner.provider_hints() if rx.search(text)), None)
        assert scanner.provider_hint(text) == want, text


def test_gated_fields_equal_the_regexes() -> None:
    """`error_status` gives the status `extract_error` reads from the fields (no status reader), and the gated
    `find_model` and `find_request_ids` what their regexes give ungated, on every example and corpus text,
    upper-cased, beside a long s and with letters spelled by characters IGNORECASE takes for them (`ſ` for `s`)."""
    texts = _examples() + _corpus_texts()
    texts += ['{"status": "error", "code": "429"}', "'status': 'x', 'code': 503", '"\u017ftatus": 503', "code=1"]
    for text in texts + [t.upper() for t in texts] + [f"\u017f {t}" for t in texts[:200]] + list(map(spelled, texts)):
        assert error_status(text) == fields_of(text)["status"], text
        m = scanner._MODEL_FIELD.search(text)
        m2 = scanner.MODEL_RE.search(text)
        want = (
            m.group(1).lower()
            if m and scanner.MODEL_RE.fullmatch(m.group(1))
            else m2.group(1).lower().rstrip(".:")
            if m2
            else None
        )
        assert scanner.find_model(text) == want, text
        ids = [next(g for g in rid.groups() if g) for rid in scanner._REQUEST_ID.finditer(text)]
        kept = [v for i, v in enumerate(ids) if v not in ids[:i] and not v.lower().startswith("redacted")][:3]
        assert scanner.find_request_ids(text) == kept, text


def test_retried_shortcut_equals_the_regex() -> None:
    """`retried` says what `_RETRY` says, on every example and corpus text and on retry wordings."""
    texts = _examples() + _corpus_texts()
    texts += ["Retrying in 2s", "RECONNECTING...", "attempt 3/5", "AttemptNumber=2", "retried 4 times", "x"]
    texts += ["重试：Retrying in 2s", "ſtream reconnecting…", "Attempt 2/5 — İnvalid", "ATTEMPTNUMBER=1 ошибка"]
    for text in texts + [t.upper() for t in texts]:
        assert scanner.retried(text) == bool(scanner._RETRY.search(text)), text


def test_huge_line_split_over_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line without a newline crossing every byte range is scanned once, by the range it starts in; the
    others find no line of their own and stop at their end (they do not read the rest of the file)."""
    filler = b"retry account daily proxy 404 token timeout " * 2000
    data = filler + b" Error code: 429 rate_limit_exceeded " + filler * 3 + b" Error code: 429 rate_limit_exceeded "
    path = tmp_path / "huge.log"
    path.write_bytes(data)
    assert scanner._aligned_start(str(path), 1000, 5000) == 5000  # no newline in the range
    from capdoctor.logscan import sources

    srcs, _ = sources.expand([str(path)])
    serial = scanner.scan(srcs, ScanOptions(now=NOW, workers=1))
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(scanner, "CARRY_CAP", 4096)
    parallel = scanner.scan(srcs, ScanOptions(now=NOW, workers=3, chunk_bytes=8192))
    assert _counts(parallel) == _counts(serial) and sum(_counts(serial).values()) == 2


def test_records_of_one_shape_with_other_statuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records whose every byte but their digits is the same are judged like an earlier one of their shape only
    where the engine reads them alike: a status, a model version, a port or an address among the digits that
    change gives each record its own facts, as the scan that judges every record afresh finds them."""
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
    alike = _count_alike(monkeypatch)
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert alike[0] > 100 and len({e.signature for e in fast.events}) > 3
    monkeypatch.setattr(scanner, "MEMO_ENTRIES", 0)
    slow = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384, engine="python"))
    _same_scans(fast, slow)


def test_memo_finds_records_of_a_judged_shape() -> None:
    """`find` gives the facts of a judged record for a record of its shape before computing its key. A shape whose
    every record is judged as its facts say (nothing they read can differ between them: `settles`, asked when the
    shape's second record comes) gives them as the record's own; `keep_alike` remembers a record judged like them
    by the bytes after its timestamp only when nothing else could leave the key: `lookup` still gives
    `record_key`'s key for every record."""
    memo = RecordMemo()
    facts = Facts("t", (), (), 0, False, reading=classifier().read("x", ())[2])
    assert facts.reading is not None
    first = b"2026-11-29T10:00:00.123Z ERROR Error code: 529 overloaded [seq 17]"
    key, _ = memo.lookup(first)
    memo.put(key, facts, first)
    for raw in (
        b"2026-11-29T10:00:01.456Z ERROR Error code: 529 overloaded [seq 42]",
        b"2026-11-29T10:00:01.456Z ERROR Error code: 429 overloaded [seq 42]",
        b"2026-11-30T11:00:02.000Z ERROR Error code: 529 overloaded [seq 99]",
    ):
        assert memo.find(raw) == (None, facts, facts), raw  # (its literals are asked: a digit literal may differ)
    memo._settled.clear()  # (as when it was full): the next record is judged like them, and is the reference
    raw = b"2026-11-29T10:00:01.456Z ERROR Error code: 529 overloaded [seq 43]"
    assert memo.find(raw) == (None, None, facts)
    memo.keep_alike(raw, facts)
    assert memo.lookup(raw) == (record_key(raw), facts), raw
    assert memo._settled[raw.translate(scanner._DIGIT_MAP)][3] is raw
    dotted = b"2026-11-29T10:00:00.123Z ERROR upstream 120.0.0.1:8080 said 529 overloaded"
    key, _ = memo.lookup(dotted)
    memo.put(key, facts, dotted)
    other = b"2026-11-29T10:00:00.123Z ERROR upstream 127.0.0.1:8080 said 529 overloaded"
    assert memo.find(other) == (None, facts, facts)  # (the address is not in its key: `lookup` says otherwise)
    memo.keep_alike(other, facts)  # an address-like text: not remembered by its bytes, its key differs
    assert memo.lookup(other) == (record_key(other), None) and record_key(other) != key
    assert memo.find(other[:-1] + b"X", alike=False)[2] is None


def test_memo_lookup_by_the_bytes_after_the_timestamp() -> None:
    """A record that is its timestamp plus words with nothing else to leave out is found by those words; its
    key is what `record_key` gives. One with an id is found through the key (the ids differ between repeats)."""
    memo = RecordMemo()
    facts = Facts("t", (), (), 0, False)
    one = b"2026-11-29T10:00:00.123Z ERROR Error code: 529 overloaded"
    two = b"2026-11-30T11:00:00.999Z ERROR Error code: 529 overloaded"
    key, found = memo.lookup(one)
    assert found is None and key == record_key(one)
    memo.put(key, facts, one)
    assert memo.lookup(two) == (record_key(two), facts)
    with_id = one + b" request_id=req_011CSHgkd83jdk3abc"
    key, found = memo.lookup(with_id)
    memo.put(key, facts, with_id)
    assert memo.lookup(two + b" request_id=req_99ZZZZZZZZZZZZZZZZZZ") == (key, facts)


def test_memo_templates_give_the_key_record_key_gives() -> None:
    """A record of the shape of one whose key cut out only client addresses is found by that template: the key
    it returns is always `record_key`'s, whatever the addresses (loopback, any-address and Ollama's port stay in
    the key, so those records are misses, not wrong hits), and only a record with that key gets the facts."""
    rng = random.Random(5)
    memo = RecordMemo()
    facts = Facts("t", (), (), 0, False)
    template = b'INFO:     %s - "GET /v1/models HTTP/1.1" 404 Not Found'
    first = template % b"10.0.47.100:57016"
    key, found = memo.lookup(first)
    assert found is None
    memo.put(key, facts, first)
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


def test_templates_fit_where_the_address_pattern_does() -> None:
    """`_Template.fits` reads the three things `_KEY_IP` reads of an address's digits (a loopback or any-address
    first, Ollama's port) and nothing else: for access-log lines of many address shapes, and addresses of each
    shape with those values planted among random ones, it fits exactly where the pattern matches the address
    whole and the key is the template's."""
    rng = random.Random(17)
    template = b'INFO:     %s - "GET /v1/models HTTP/1.1" 404 Not Found'
    facts = Facts("t", (), (), 0, False)
    fitted = refused = 0
    for _ in range(60):
        widths = [rng.randrange(1, 4) for _ in range(4)]
        port_width = rng.choice((0, 1, 4, 5, 5))

        def address(planted: bytes | None = None, w: list[int] = widths, pw: int = port_width) -> bytes:
            octets = [b"%0*d" % (n, rng.randrange(10**n)) for n in w]
            if planted == b"127" and w[0] == 3:
                octets[0] = b"127"
            if planted == b"0" and w == [1, 1, 1, 1]:
                octets = [b"0"] * 4
            port = b"%0*d" % (pw, rng.randrange(10**pw)) if pw else b""
            if planted == b"11434" and pw == 5:
                port = b"11434"
            return b".".join(octets) + (b":" + port if pw else b"")

        first = template % address()
        key, spans = scanner._record_key(first)
        if spans is None:
            continue  # (the first octet drew 127, or the like: its key keeps it)
        made = scanner._Template.of(first, spans, key, facts)
        for planted in (None, None, b"127", b"0", b"11434"):
            raw = template % address(planted)
            regex = all(scanner._KEY_IP.fullmatch(raw, a, b) is not None for a, b, _ in made.spans)
            assert made.fits(raw) is regex, raw
            assert regex is (record_key(raw) == key), raw
            fitted += regex
            refused += not regex
    assert fitted > 100 and refused > 20, (fitted, refused)


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
    monkeypatch.setattr(scanner, "MEMO_ENTRIES", 3)
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert len(fast.events) == planted
    monkeypatch.setattr(scanner, "MEMO_ENTRIES", 0)
    slow = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384, engine="python"))
    _same_scans(fast, slow)


def test_success_markers_kept_per_chunk_answer_as_a_search_of_each_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_succeeded` says what searching each record's window for every marker says, for record ends in any order
    (a continuation can end a record after the next one starts), markers absent, dense or cut by the window's or
    the chunk's end."""
    monkeypatch.setattr(scanner, "SUCCESS_WINDOW", 64)
    rng = random.Random(5)
    markers = scanner.SUCCESS_MARKERS
    for _ in range(200):
        pieces = [rng.choice((b"x" * rng.randrange(1, 90), b"\n", *markers[: rng.randrange(len(markers) + 1)]))]
        pieces += [rng.choice((b"y" * rng.randrange(1, 40), b"\n", rng.choice(markers))) for _ in range(30)]
        buf = bytearray(b"".join(pieces))
        cut = rng.randrange(len(buf) // 2, len(buf) + 1)
        sc = scanner._FileScanner(None, ScanOptions(now=NOW), "<t>", scanner.ScanResult())
        sc._marker_from = [scanner._UNSEARCHED] * len(markers)
        ends = sorted(rng.randrange(cut + 1) for _ in range(25))
        ends = [e if rng.random() < 0.85 else rng.randrange(cut + 1) for e in ends]  # now and then out of order
        for end in ends:
            stop = min(cut, end + scanner.SUCCESS_WINDOW)
            assert sc._succeeded(buf, cut, end) == any(buf.find(m, end, stop) >= 0 for m in markers), (end, cut)


def test_records_differing_in_digits_are_judged_like_the_first() -> None:
    """`judge_like` of a record differing from a judged one only in its digits' values gives what `judge` gives
    it (the rows, scores, providers, status, retry, model and request ids), or None; it is the first record's
    facts themselves when all of that agrees, and it is used for most such records."""
    rng = random.Random(8)
    texts = [t for t in _examples() + _corpus_texts() if t.isascii() and any(ch.isdigit() for ch in t)]
    alike = same_object = 0
    for text in texts:
        first = judge(text, _hs_ids(text))
        for keep in (0.8, 0.0):
            other = "".join(str(rng.randrange(10)) if ch.isdigit() and rng.random() >= keep else ch for ch in text)
            ids = _hs_ids(other)
            like = scanner.judge_like(first, other, ids)
            if like is None:
                continue
            alike += 1
            same_object += like is first
            want = judge(other, ids)
            assert [(m.signature.id, m.score) for m in like.matches] == [
                (m.signature.id, m.score) for m in want.matches
            ], other
            assert (like.providers, like.status, like.retry, like.model, like.request_ids) == (
                want.providers,
                want.status,
                want.retry,
                want.model,
                want.request_ids,
            ), other
            assert like.text == first.text  # its excerpts are that text's: a scan reads them again from its own
    assert alike > len(texts) and same_object > alike // 2, (len(texts), alike, same_object)


def _judged_as(facts: Facts, text: str, copy: str, copy_ids: list[int]) -> None:
    """`copy` (of `text`, with other digits) is judged with `facts` (rows, status, model, providers, retry, request
    ids), and `judge_like` gives the facts themselves."""
    again = judge(copy, copy_ids)
    assert (again.sids, again.status, again.model, again.providers, again.retry, again.request_ids) == (
        facts.sids,
        facts.status,
        facts.model,
        facts.providers,
        facts.retry,
        facts.request_ids,
    ), (text, copy)
    assert scanner.judge_like(facts, copy, copy_ids) is facts, copy


def _sequenced_records(
    rng: random.Random, digits: int, ids_of: Callable[[str], list[int]]
) -> Iterator[tuple[str, list[int], Facts, str]]:
    """Every row example and corpus text as an error record ending in a sequence number of up to `digits` digits
    (drawn from `rng` as each is made): the record, its literal ids (`ids_of`), its facts (`judge`) and its shape."""
    for body in [*_examples(), *_corpus_texts()]:
        text = f"2026-11-30T12:34:56.789Z ERROR {' '.join(body.split())} [seq {rng.randrange(10**digits)}]"
        ids = ids_of(text)
        yield text, ids, judge(text, ids), text.translate(ZEROS)


def test_settled_shapes_judge_every_record_of_the_shape_alike() -> None:
    """Where `settles` says a record's shape is settled for its facts, every copy of the record with other digits
    (statuses and model versions planted among them) in which the prefilter finds the same literals is judged
    with the same facts (`judge`: rows, status, model, providers, retry, request ids), and `judge_like` gives the
    facts themselves; where `literals_settle` says so, every copy holds the record's literals, however found.
    Most shapes of the row examples and corpus texts settle; some do not (a status or a model among their
    digits)."""
    rng = random.Random(23)
    settled = unsettled = compared = free = 0
    eng = classifier()
    for text, ids, facts, shape in _sequenced_records(rng, 4, _hs_ids):
        if facts.reading is None:
            continue
        same_literals = eng.literals_settle(shape)
        free += same_literals
        if not scanner.settles(facts, shape):
            unsettled += 1
            continue
        settled += 1
        for keep in (0.0, 0.5):
            copy = re.sub("[0-9]", lambda m, k=keep: m.group(0) if rng.random() < k else str(rng.randrange(10)), text)
            copy_ids = _hs_ids(copy)
            if same_literals:  # every way of finding the literals finds the same in every text of the shape
                assert frozenset(copy_ids) == frozenset(ids), copy
                assert eng.literal_ids(copy) == eng.literal_ids(text), copy
                assert frozenset(_hs_ids(copy.lower())) == frozenset(_hs_ids(text.lower())), copy
            if frozenset(copy_ids) != facts.reading.ids:
                continue  # (`_same_literals`: judged afresh)
            _judged_as(facts, text, copy, copy_ids)
            compared += 1
    assert settled > 300 and unsettled > 50 and compared > 500, (settled, unsettled, compared)
    assert settled // 2 < free < settled + unsettled, (free, settled, unsettled)
    assert not eng.literals_settle("0000-00-00 error: http 000 too many requests")  # (`http 4`: a literal)


def test_records_differing_only_where_nothing_reads_them_are_judged_alike() -> None:
    """Where `settles` with a span says so (a record's sequence number, its shape not settled as a whole: a
    status, a model or an error code stands among its digits), every copy of the record with other digits there
    (statuses, ports and error codes planted among them) in which the prefilter finds the same literals is judged
    with the record's facts (`judge`: rows, status, model, providers, retry, request ids), and `judge_like` gives
    the facts themselves; where `literals_settle` with the span says so, every copy holds the record's literals.
    Many shapes that do not settle as a whole settle for their sequence number; some do not (a pattern may read
    it: a port, a code of the same length)."""
    rng = random.Random(31)
    local = refused = compared = wide = 0
    eng = classifier()
    for text, ids, facts, shape in _sequenced_records(rng, 5, _scanned_ids):
        if facts.reading is None or scanner.settles(facts, shape):
            continue
        seq = re.search(r"\[seq ([0-9]+)\]$", text)
        assert seq is not None
        span = seq.span(1)
        if not scanner.settles(facts, shape, span, text):
            refused += 1
            continue
        local += 1
        wide += not text.isascii()
        same_literals = eng.literals_settle(shape, span)
        width = span[1] - span[0]
        for planted in ("429", "503", "11434", "1302", "8080", str(rng.randrange(10**width))):
            copy = text[: span[0]] + (planted * width)[:width] + text[span[1] :]
            copy_ids = _scanned_ids(copy)
            if same_literals:
                assert frozenset(copy_ids) == frozenset(ids), copy
            if frozenset(copy_ids) != facts.reading.ids:
                continue  # (`_same_literals`: judged like the facts)
            _judged_as(facts, text, copy, copy_ids)
            compared += 1
    assert local > 100 and refused > 10 and compared > 500 and wide > 20, (local, refused, compared, wide)


def test_literals_settle_in_a_span_counts_what_lowering_adds_before_it() -> None:
    """`İ` lowers to two characters, so in the lower-cased text the prefilter reads a span stands further on:
    `literals_settle` with a span answers for a text with `İ`s before it what it answers for the same text with
    a letter in place of each (`返回 4` is a literal with a digit; the sequence number six characters after it is
    read where it stands, not six characters back, on the literal)."""
    eng = classifier()
    for text in ("İİİİİİ返回 0 [00]", "İİİİİİ返回 000 错误 [seq 00]", "İ error: http 000 [00]", "日本語 İİ 0 返回 0"):
        plain = text.replace("İ", "x")
        for run in re.finditer("0+", text):
            assert eng.literals_settle(text, run.span()) is eng.literals_settle(plain, run.span()), (text, run)
    assert eng.literals_settle("İİİİİİ返回 0 [00]", (12, 14))
    assert not eng.literals_settle("İİİİİİ返回 0 [00]", (9, 10))


def test_a_span_settles_only_where_the_status_and_its_meaning_cannot_read_it() -> None:
    """What a 5xx means depends on whether a local server is named (the local hints read addresses and ports):
    a span where a hint could stand (a port that could be Ollama's) does not settle, a sequence number far from
    any does. The status of a JSON error body is read the same in every record only where the span lies after
    the body: a span inside a JSON value (its numbers are read) does not settle."""
    eng = classifier()
    text = "2026-11-30T12:34:56.789Z ERROR upstream returned HTTP 503 via 10.1.2.3:18080 [seq 12345]"
    facts = judge(text, _hs_ids(text))
    assert facts.reading is not None and facts.reading.hit is not None and facts.reading.hit[0] == 503
    shape = text.translate(ZEROS)
    port = re.search(r":([0-9]+) ", text)
    assert port is not None and eng._rule_reads_digits(503)
    assert not eng.settles(facts.reading, shape, port.span(1))
    plain = "2026-11-30T12:34:56.789Z ERROR upstream returned HTTP 503 [seq 12345]"
    facts = judge(plain, _hs_ids(plain))
    assert facts.reading is not None
    assert eng.settles(facts.reading, plain.translate(ZEROS), (len(plain) - 6, len(plain) - 1))
    from capdoctor.classifier.structure import status_unread

    for body, want in (
        ('{"error": {"code": 429, "seq": 12345}}', False),
        ('{"error": {"code": 429}} [seq 12345]', True),
    ):
        span = re.search("12345", body)
        assert span is not None
        assert status_unread(body.translate(ZEROS), span.span(), body) is want, body
        if want:
            assert error_status(body.replace("12345", "42900")) == error_status(body) == 429


def test_memo_finds_records_differing_from_a_judged_one_where_nothing_reads_them() -> None:
    """A shape with a status among its digits is not settled as a whole; once a record of it was judged like its
    facts, `find` gives them for a record that differs from that one only in its sequence number (the span
    settles), and for one whose status differs it gives them only to be judged like (`judge_like` decides)."""
    for seq, asked in ((b"17", False), (b"10017", True)):  # (`11434` may be a five-digit sequence number)
        memo = RecordMemo()
        first = b"2026-11-29T10:00:00.123Z ERROR upstream returned HTTP 529: overloaded [seq " + seq + b"]"
        facts = judge(first.decode(), _hs_ids(first.decode()))
        assert facts.matches and facts.reading is not None
        assert not scanner.settles(facts, first.decode().translate(ZEROS))
        key, _ = memo.lookup(first)
        memo.put(key, facts, first)
        second = first.replace(b"00.123Z", b"01.456Z").replace(seq, seq[:-2] + b"42")
        assert memo.find(second) == (None, facts, facts if asked else None), second
        other = second.replace(b"HTTP 529", b"HTTP 429")
        assert memo.find(other) == (None, None, facts)
        assert scanner.judge_like(facts, second.decode(), _hs_ids(second.decode())) is facts
        memo.keep_alike(second, facts)  # a reference judged like them is as good as the first
        third = first.replace(b"29T10", b"30T11").replace(seq, seq[:-2] + b"99")
        assert memo.find(third) == (None, facts, facts if asked else None), third
    # Records that are not ASCII: the span is read in characters (in the second, the sequence number's bytes stand
    # where `HTTP 529` does in characters).
    for words in (
        "上游返回 HTTP 529：服务过载 [seq 17]",
        "上游返回 [seq 17] HTTP 529：服务过载",
        "İstanbul edge: upstream returned HTTP 529: overloaded [seq 17]",
    ):
        memo = RecordMemo()
        first = f"2026-11-29T10:00:00.123Z ERROR {words}".encode()
        facts = judge(first.decode(), _scanned_ids(first.decode()))
        assert facts.matches and not scanner.settles(facts, first.decode().translate(ZEROS))
        key, _ = memo.lookup(first)
        memo.put(key, facts, first)
        assert memo.find(first.replace(b"[seq 17]", b"[seq 42]")) == (None, facts, None)
        assert memo.find(first.replace(b"529", b"429")) == (None, None, facts)
    memo = RecordMemo()  # a record that is not UTF-8: judged like the facts, never read as settled
    first = b"2026-11-29T10:00:00.123Z ERROR upstream returned HTTP 529: overloaded \xff\xfe [seq 17]"
    facts = judge(first.decode("utf-8", "replace"), _scanned_ids(first.decode("utf-8", "replace")))
    key, _ = memo.lookup(first)
    memo.put(key, facts, first)
    assert memo.find(first.replace(b"[seq 17]", b"[seq 42]")) == (None, None, facts)
    memo = RecordMemo()  # an epoch timestamp may hold a literal with a digit (`11434`): the literals are asked
    first = b"1764460800.123 ERROR upstream returned HTTP 529: overloaded [seq 17]"
    facts = judge(first.decode(), _hs_ids(first.decode()))
    key, _ = memo.lookup(first)
    memo.put(key, facts, first)
    for raw in (first.replace(b"[seq 17]", b"[seq 42]"), first.replace(b"0800.123", b"1434.123")[:-3] + b"43]"):
        assert memo.find(raw) == (None, facts, facts), raw


def _scans_as_judged_afresh(monkeypatch: pytest.MonkeyPatch, data: bytes, settled: int) -> scanner.ScanResult:
    """The memo's scan of `data`, checked: more than `settled` of its records were counted by a settled shape or
    span, and it equals the scan that judges every record afresh (no memo, the Python prefilter)."""
    alike = _count_alike(monkeypatch)
    fast = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384))
    assert alike[1] > settled, alike
    monkeypatch.setattr(scanner, "MEMO_ENTRIES", 0)
    slow = scan_bytes(data, options=ScanOptions(now=NOW, chunk_bytes=16384, engine="python"))
    _same_scans(fast, slow)
    return fast


@pytest.mark.parametrize("script", ["ascii", "wide"])
def test_records_with_growing_sequence_numbers_scan_as_judged_afresh(
    monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    """A log whose error records each carry their own sequence number (the benchmark's "every error text
    different" log) scans as the scan that judges every record afresh does, and most of its records are found
    by a settled shape or span rather than judged; records that are not ASCII too (Chinese, Japanese, an `İ`,
    which lowers to two characters, before the digits)."""
    rng = random.Random(13)
    plain = [b for b in _examples() if b.isascii()]
    bodies = plain[:60] if script == "ascii" else [b for b in _examples() if not b.isascii()][:40]
    if script == "wide":
        bodies += [f"İstanbul: {b}" for b in plain[:20]]
    out = []
    for i in range(4000):
        ts = f"2026-11-29T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        out.append(f"{ts} ERROR {rng.choice(bodies)} [seq {i * 7}]")
    _scans_as_judged_afresh(monkeypatch, ("\n".join(out) + "\n").encode(), settled=2000)


def test_records_whose_numbers_change_among_their_words_scan_as_judged_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors whose numbers change from record to record among their words (a retry count in Chinese, the tokens
    used after a model name, a queue depth after one, where a long path makes `reach` alone too wide) scan as the
    scan that judges every record afresh does, and nearly all of their records are counted as a settled span says,
    not judged again (~45 µs each)."""
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
    fast = _scans_as_judged_afresh(monkeypatch, ("\n".join(out) + "\n").encode(), settled=2900)
    assert sum(s.count for s in fast.stats.values()) == 3000


def test_a_status_among_the_digits_keeps_a_shape_unsettled() -> None:
    """A shape where a status spelling, a model or a status field can read digits is not settled; one whose only
    digits are a timestamp and a sequence number is."""
    plain = "2026-11-30T12:34:56.789Z ERROR upstream connect error or disconnect/reset before headers [seq 4711]"
    for text, want in (
        (plain, True),
        ("2026-11-30T12:34:56.789Z ERROR HTTP 529 overloaded [seq 4711]", False),
        ("2026-11-30T12:34:56.789Z ERROR The model gpt-4o-mini is overloaded, try again later [seq 4711]", False),
        ('2026-11-30T12:34:56.789Z ERROR {"error": {"code": 429}} [seq 4711]', False),
    ):
        facts = judge(text, _hs_ids(text))
        assert facts.matches and facts.reading is not None, text
        assert scanner.settles(facts, text.translate(ZEROS)) is want, text
