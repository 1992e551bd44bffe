"""The log scanner on real files: chunk boundaries, compression, bad input, huge lines, time handling,
multi-line records, the parallel split and the pure-Python engine agreeing with hyperscan."""

from __future__ import annotations

import gzip
import io
import os
import sys
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from capdoctor.classifier.signatures import engine as classifier
from capdoctor.logscan import scanner, sources
from capdoctor.logscan.prefilter import build_prefilter
from capdoctor.logscan.scanner import ScanOptions, scan, scan_bytes
from capdoctor.logscan.timestamps import parse_since, parse_timestamp
from capdoctor.model import Strength

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
OVERLOADED = (
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
    '"request_id":"req_011CXfakeTestAbCdEf"}'
)
QUOTA = '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}'


def _log(n_ok: int, errors: list[tuple[str, str]]) -> bytes:
    lines = [f"2026-11-29T08:{i % 60:02d}:00Z INFO POST /v1/messages 200 in 900ms\n" for i in range(n_ok)]
    lines += [f"{ts} ERROR {text}\n" for ts, text in errors]
    return "".join(lines).encode()


def _scan_file(path: Path, **kw: object) -> scanner.ScanResult:
    srcs, skipped = sources.expand([str(path)])
    res = scan(srcs, ScanOptions(now=NOW, **kw))  # type: ignore[arg-type]
    res.files += [scanner.FileInfo(s.path, skipped=s.reason) for s in skipped]
    return res


def test_counts_first_last_model_request_id(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(
        _log(
            50,
            [
                ("2026-11-29T09:00:00Z", OVERLOADED + " model=claude-sonnet-4-5"),
                ("2026-11-29T10:30:00Z", OVERLOADED + " model=claude-sonnet-4-5"),
            ],
        )
    )
    res = _scan_file(p)
    stat = res.stats["anthropic.overloaded_error"]
    assert stat.count == 2
    assert stat.first == datetime(2026, 11, 29, 9, tzinfo=timezone.utc)
    assert stat.last == datetime(2026, 11, 29, 10, 30, tzinfo=timezone.utc)
    assert stat.models["claude-sonnet-4-5"] == 2
    assert stat.request_ids == ["req_011CXfakeTestAbCdEf"]
    assert stat.statuses[529] == 2
    assert res.files[0].lines == 52 and res.files[0].skipped is None


def test_chunk_boundaries_lose_nothing(tmp_path: Path) -> None:
    data = _log(400, [(f"2026-11-29T09:{i:02d}:00Z", QUOTA) for i in range(30)])
    p = tmp_path / "b.log"
    p.write_bytes(data)
    for chunk in (7, 64, 1000, 1 << 20):
        res = _scan_file(p, chunk_bytes=chunk)
        assert res.stats["openai.insufficient_quota"].count == 30, chunk
        assert res.files[0].lines == 430


def test_since_filters_dated_records(tmp_path: Path) -> None:
    p = tmp_path / "c.log"
    p.write_bytes(_log(0, [("2026-10-01T09:00:00Z", QUOTA), ("2026-11-29T09:00:00Z", QUOTA)]))
    res = _scan_file(p, since=parse_since("7d", NOW))
    assert res.stats["openai.insufficient_quota"].count == 1 and res.too_old == 1


def test_stack_trace_belongs_to_the_error_above(tmp_path: Path) -> None:
    text = (
        "2026-11-29T09:00:00Z ERROR request failed model=gpt-5.5\n"
        "Traceback (most recent call last):\n"
        '  File "client.py", line 3, in call\n'
        "    raise APIConnectionError(...)\n"
        "  cause: read ECONNRESET\n"
        "2026-11-29T09:00:05Z INFO next\n"
    )
    res = scan_bytes(text.encode(), options=ScanOptions(now=NOW))
    ev = [e for e in res.events if e.cause == "network"]
    assert ev and ev[0].ts == datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc) and ev[0].line == 1
    assert ev[0].model == "gpt-5.5"


def test_pretty_printed_json_is_one_record() -> None:
    text = (
        'Error code: 429\n{\n  "error": {\n    "message": "You exceeded your current quota",\n'
        '    "type": "insufficient_quota"\n  }\n}\n'
    )
    res = scan_bytes(text.encode(), options=ScanOptions(now=NOW))
    assert res.stats["openai.insufficient_quota"].count == 1
    assert len(res.events) == 1


def test_gzip_and_zstd(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    data = _log(100, [("2026-11-29T09:00:00Z", QUOTA)])
    (tmp_path / "a.log.gz").write_bytes(gzip.compress(data))
    (tmp_path / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    res = _scan_file(tmp_path)
    assert res.stats["openai.insufficient_quota"].count == 2
    assert all(f.skipped is None for f in res.files)


def test_bad_inputs_are_skipped_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "ok.log").write_bytes(_log(3, [("2026-11-29T09:00:00Z", QUOTA)]))
    (tmp_path / "broken.gz").write_bytes(gzip.compress(b"x" * 10000)[:40])
    (tmp_path / "fake.gz").write_bytes(b"plain text pretending")
    (tmp_path / "broken.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\xff" * 64)
    (tmp_path / "image.bin").write_bytes(b"\x89PNG\x00\x00\x01" + os.urandom(2000))
    (tmp_path / "latin1.log").write_bytes(b"2026-11-29T09:00:00Z caf\xe9 \xff\xfe Connection refused (os error 111)\n")
    res = _scan_file(tmp_path)
    reasons = {Path(f.path).name: f.skipped for f in res.files}
    assert reasons["ok.log"] is None and reasons["latin1.log"] is None
    assert "gzip" in (reasons["broken.gz"] or "")
    assert "gzip" in (reasons["fake.gz"] or "")
    assert "zstd" in (reasons["broken.zst"] or "")
    assert "binary" in (reasons["image.bin"] or "")
    assert res.stats["openai.insufficient_quota"].count == 1
    assert res.stats["phrase.connection.en"].count == 1


def test_missing_and_unreadable_paths(tmp_path: Path) -> None:
    srcs, skipped = sources.expand([str(tmp_path / "nope.log")])
    assert not srcs and "cannot read" in skipped[0].reason
    locked = tmp_path / "locked.log"
    locked.write_text("x")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as a user that can read mode-000 files (root)")
        res = _scan_file(locked)
        assert "cannot read" in (res.files[0].skipped or "")
    finally:
        locked.chmod(0o600)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_skipped_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    srcs, skipped = sources.expand([str(fifo)])
    assert not srcs and skipped[0].reason == "not a regular file"
    srcs, skipped = sources.expand([str(tmp_path)])
    assert not srcs  # inside a directory, non-regular files are passed over


def test_huge_line_without_newline_is_windowed(tmp_path: Path) -> None:
    p = tmp_path / "huge.log"
    with open(p, "wb") as fh:
        fh.write(b"a" * (3 * 1024 * 1024))
        fh.write(b" Selected model is at capacity. Please try a different model. ")
        fh.write(b"b" * (3 * 1024 * 1024))
    res = _scan_file(p, chunk_bytes=1024 * 1024)
    assert res.stats["codex.selected_model_at_capacity"].count == 1
    assert len(res.stats["codex.selected_model_at_capacity"].example) <= scanner.EXAMPLE_CHARS
    assert res.files[0].note and "windows" in res.files[0].note
    assert res.files[0].lines == 1


def test_many_files_directory(tmp_path: Path) -> None:
    d = tmp_path / "many"
    d.mkdir()
    for i in range(100_000):
        (d / f"f{i:05d}.log").write_bytes(b"INFO ok\n" if i != 54_321 else QUOTA.encode() + b"\n")
    res = _scan_file(d)
    assert len(res.files) == 100_000
    assert res.stats["openai.insufficient_quota"].count == 1


def test_file_cap_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_FILES", 10)
    for i in range(15):
        (tmp_path / f"{i}.log").write_text("x\n")
    srcs, skipped = sources.expand([str(tmp_path)])
    assert len(srcs) == 10 and "more than 10 files" in skipped[-1].reason


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(_log(2, [("2026-11-29T09:00:00Z", QUOTA)])))
    monkeypatch.setattr(sys, "stdin", fake)
    res = scan([sources.Source("-")], ScanOptions(now=NOW))
    assert res.stats["openai.insufficient_quota"].count == 1


def test_parallel_split_equals_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    errors = [
        (f"2026-11-29T{h:02d}:{m:02d}:00Z", OVERLOADED if m % 2 else QUOTA) for h in range(24) for m in range(0, 60, 7)
    ]
    p = tmp_path / "big.log"
    p.write_bytes(_log(3000, errors) + _log(3000, []))
    serial = _scan_file(p)
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    parallel = _scan_file(p, workers=2, chunk_bytes=4096)
    assert {k: v.count for k, v in parallel.stats.items()} == {k: v.count for k, v in serial.stats.items()}
    assert parallel.files[0].lines == serial.files[0].lines == 6000 + len(errors)
    assert parallel.files[0].bytes == p.stat().st_size
    assert sorted(e.offset for e in parallel.events) == sorted(e.offset for e in serial.events)
    assert sorted(e.line for e in parallel.events) == sorted(e.line for e in serial.events)


def test_python_engine_agrees_with_hyperscan() -> None:
    pytest.importorskip("hyperscan")
    data = _log(
        200,
        [
            ("2026-11-29T09:00:00Z", t)
            for t in (OVERLOADED, QUOTA, "由于目标计算机积极拒绝，无法连接。", "CUDA out of memory", "ECONNRESET")
        ],
    )
    hs = build_prefilter(classifier().literals())
    py = build_prefilter(classifier().literals(), prefer="python")
    assert hs.name == "hyperscan" and py.name == "python-re"

    def lines(ends: list[int]) -> set[int]:
        return {data.rfind(b"\n", 0, e - 1) + 1 for e in ends}

    assert lines(hs.ends(data)) == lines(py.ends(data))
    a = scan_bytes(data, options=ScanOptions(now=NOW))
    b = scan_bytes(data, options=ScanOptions(now=NOW, engine="python"))
    assert {k: v.count for k, v in a.stats.items()} == {k: v.count for k, v in b.stats.items()}


def test_retries_that_succeeded_and_quiet_end() -> None:
    text = (
        "2026-11-29T09:00:00Z API Error (529 overloaded_error) · Retrying in 4 seconds… (attempt 1/10)\n"
        '2026-11-29T09:00:05Z {"type":"response.completed"}\n'
        "2026-11-29T09:10:00Z Selected model is at capacity. Please try a different model.\n"
    )
    res = scan_bytes(text.encode(), options=ScanOptions(now=NOW))
    retry = [e for e in res.events if e.retry]
    assert len(retry) == 1 and retry[0].succeeded
    from capdoctor.logscan.findings import last_error

    last = last_error(res)
    assert last is not None and last["signature"] == "codex.selected_model_at_capacity"
    res2 = scan_bytes(
        text.encode() + b'2026-11-29T09:11:00Z {"type":"response.completed"}\n', options=ScanOptions(now=NOW)
    )
    assert last_error(res2) is None


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("2026-11-29T10:00:01.5Z x", datetime(2026, 11, 29, 10, 0, 1, 500000, tzinfo=timezone.utc)),
        ("2026-11-29 10:00:01 x", datetime(2026, 11, 29, 10, 0, 1, tzinfo=timezone.utc)),
        ('{"timestamp":"2026-11-29T18:00:01+08:00","type":"x"}', datetime(2026, 11, 29, 10, 0, 1, tzinfo=timezone.utc)),
        ("Nov 29 10:00:01 host ollama[12]: x", datetime(2026, 11, 29, 10, 0, 1, tzinfo=timezone.utc)),
        ("Dec 31 23:59:59 host x", datetime(2025, 12, 31, 23, 59, 59, tzinfo=timezone.utc)),
        ("1764410401 x", datetime(2025, 11, 29, 10, 0, 1, tzinfo=timezone.utc)),
        ('{"ts":1764410401000,"msg":"x"}', datetime(2025, 11, 29, 10, 0, 1, tzinfo=timezone.utc)),
        ("no time here, port 2026", None),
        ("2026-13-45T99:99:99Z nonsense", None),
    ],
)
def test_timestamps(line: str, want: datetime | None) -> None:
    assert parse_timestamp(line, NOW) == want


def test_since_parsing() -> None:
    assert parse_since("all", NOW) is None
    assert parse_since("12h", NOW) == datetime(2026, 11, 30, 0, 0, tzinfo=timezone.utc)
    assert parse_since("2026-11-01", NOW) == datetime(2026, 11, 1, tzinfo=timezone.utc)
    with pytest.raises(ValueError, match="--since"):
        parse_since("yesterday-ish", NOW)


def test_the_signature_findings_kept_are_the_heaviest_in_the_order_of_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """`build_findings` keeps MAX_SIGNATURE_FINDINGS signature findings: the first of the whole list (every row
    a finding, heaviest first, the more frequent first among equals), words rows as context where a row speaks."""
    from capdoctor.classifier.signatures import by_id
    from capdoctor.logscan import findings as fnd
    from capdoctor.logscan.patterns import analyse
    from capdoctor.verdict.weighing import WEIGHTS

    rows = sorted(by_id())
    words = [sid for sid in rows if by_id()[sid].yields][:10]
    others = [sid for sid in rows if not by_id()[sid].yields][:30]
    now = datetime(2026, 11, 30, tzinfo=timezone.utc)
    result = scanner.ScanResult()
    for k, sid in enumerate(words + others):
        stat = scanner.SigStat(sid, by_id()[sid].cause.value, count=1 + (k * 7) % 9, first=now, last=now)
        stat.example = f"example {k}"
        result.stats[sid] = stat
    pats = analyse(result.events)

    def signature_findings() -> list[Any]:
        return [f for f in fnd.build_findings(result, pats) if "signature" in f.data]

    kept = signature_findings()
    monkeypatch.setattr(fnd, "MAX_SIGNATURE_FINDINGS", len(result.stats))
    every = signature_findings()
    assert len(every) == len(result.stats) and len(kept) == 12
    assert [f.data["signature"] for f in kept] == [f.data["signature"] for f in every[:12]]
    order = sorted(result.stats.values(), key=lambda s: (-s.count, s.signature))
    rank = {s.signature: i for i, s in enumerate(order)}
    for a, b in pairwise(every):
        wa, wb = WEIGHTS[a.strength], WEIGHTS[b.strength]
        assert wa > wb or (wa == wb and rank[a.data["signature"]] < rank[b.data["signature"]])
    assert all(f.strength is Strength.CONTEXT for f in every if by_id()[f.data["signature"]].yields)
