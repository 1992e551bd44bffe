"""Big plain files spread over worker processes in byte ranges, and the ranges' results put back in file order.

Contract: `scan_ranges(jobs, workers)` scans each (path, start, stop, options) job — the lines that start in
[start, stop) — in a pool of `workers` processes and returns their results in job order (None when processes
cannot be used here: the caller scans in its own process). Workers are forked from the parent's built engine and
prefilter where that is safe; a worker keeps its memo, read buffer and the examples it already holds across its
ranges. `pieces` says how a file is cut. It must not print or classify anything itself.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

from capdoctor.classifier.signatures import engine as classifier
from capdoctor.logscan import sources as src
from capdoctor.logscan.filescan import CARRY_CAP, FileScanner
from capdoctor.logscan.memo import RecordMemo
from capdoctor.logscan.prefilter import prefilter_for
from capdoctor.logscan.results import Event, ScanOptions, ScanResult

PARALLEL_MIN_BYTES = 64 * 1024 * 1024
"""Plain data above this is split over the CPU cores (process start-up costs more than it saves below)."""
PIECE_MIN_BYTES = 16 * 1024 * 1024
PIECE_MAX_BYTES = 256 * 1024 * 1024
TAIL_SHARE = 5
"""A big file is cut into byte ranges handed out in order as workers come free (`pieces`): one per worker for
most of it, then smaller ones for its last 1/TAIL_SHARE (none under PIECE_MIN_BYTES, none over PIECE_MAX_BYTES).
Errors cluster in time: an incident's dense stretch makes one worker's range slower, and the other workers take
the small ones meanwhile instead of waiting for it."""

Job = tuple[str, int, int, ScanOptions]


def pieces(size: int, workers: int) -> list[tuple[int, int]]:
    """The byte ranges a file of `size` bytes is cut into for `workers` processes, in file order: four fifths in
    `workers` equal ranges, then the last fifth in up to `workers` ranges of at least PIECE_MIN_BYTES (none: the
    first ranges take it all); more where a range would pass PIECE_MAX_BYTES."""
    tail = size // TAIL_SHARE
    small = min(workers, tail // PIECE_MIN_BYTES)
    small = max(small, -(-tail // PIECE_MAX_BYTES)) if small else 0
    body = size - tail if small else size
    big = max(workers, -(-body // PIECE_MAX_BYTES))
    cuts = sorted({body * k // big for k in range(big)} | {body + (size - body) * k // small for k in range(small)})
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], size], strict=True) if a < b]  # (a tiny file: fewer ranges)


def splittable(source: src.Source) -> bool:
    """Whether `source` is a plain file (not stdin, not compressed, not binary) that can be read in ranges."""
    if source.path == "-" or source.compressed:
        return False
    try:
        with open(source.path, "rb") as fh:
            head = fh.read(src.BINARY_SNIFF)
    except OSError:
        return False
    return not head.startswith((src.GZIP_MAGIC, src.ZSTD_MAGIC)) and b"\x00" not in head


def aligned_start(path: str, start: int, stop: int | None = None) -> int:
    """The offset of the first line that starts at or after `start` (the file size if there is none); with
    `stop`, `stop` when none starts before it: the range holds no line of its own (a huge line crosses it, and
    the range where that line starts scans it)."""
    if start == 0:
        return 0
    with open(path, "rb") as fh:
        fh.seek(start - 1)
        pos = start - 1
        while stop is None or pos < stop:
            piece = fh.read(65536)
            if not piece:
                return pos
            nl = piece.find(b"\n")
            if nl >= 0:
                return pos + nl + 1
            pos += len(piece)
        return stop


class _Worker:
    """What a pool worker keeps for every range it scans: one memo, one read buffer, and per file the rows whose
    example a range it scanned holds (a worker takes ranges in file order; the first example stays)."""

    def __init__(self, chunk_bytes: int) -> None:
        self.memo = RecordMemo()
        self.buffer = bytearray(chunk_bytes + CARRY_CAP)
        self.shown: dict[str, set[str]] = {}


_WORKER: _Worker | None = None
"""This process's `_Worker` when it is a pool worker (`_start_worker`), else None."""


def _start_worker(chunk_bytes: int) -> None:
    """A pool worker's start: its `_Worker`, and the collector off (a process of its own, gone when the scan is
    done; spawned workers start with it on)."""
    global _WORKER
    _WORKER = _Worker(chunk_bytes)
    gc.disable()


def _scan_range_pickled(job: Job) -> bytes:
    """`scan_range(job)`, pickled here: the pool's result thread in the parent then passes bytes on, and the
    parent unpickles each range's result in order while the workers scan the next ranges."""
    import pickle  # (here: a scan without workers, the common small log, does not import it)

    return pickle.dumps(scan_range(job), protocol=pickle.HIGHEST_PROTOCOL)


def scan_range(job: Job) -> ScanResult:
    """One byte range of a big file (in a pool worker, or a test): the lines that start in [start, stop)."""
    path, start, stop, opts = job
    res = ScanResult()
    pf = prefilter_for(opts.engine)
    res.engine = pf.name
    worker = _WORKER
    shown = worker.shown.setdefault(path, set()) if worker is not None else set()
    scanner = FileScanner(pf, opts, path, res, worker.memo if worker else None, frozenset(shown))
    try:
        begin = aligned_start(path, start, stop)
        if begin < stop:
            reader = src.open_reader(src.Source(path), start=begin, limit=stop - begin)
            scanner.run(reader, base=begin, buffer=worker.buffer if worker else None)
            open_errors = scanner.recovery.open
            if open_errors:  # the windows of the last errors run on into the next range: read on
                after = begin + scanner.info.bytes
                with open(path, "rb") as fh:
                    fh.seek(after)
                    data = fh.read(max(end for _, end in open_errors) - after)
                scanner.recovery.settle(res.events, data, after)
    except (OSError, src.SourceError) as exc:
        scanner.info.skipped = f"read failed: {exc}"
    shown.update(sid for sid, stat in res.stats.items() if stat.example)
    return res


def _pool_context() -> Any:
    """How to start the workers: forked from this process when that is safe (a POSIX process with one thread,
    as `capdoctor logs` is), so each inherits the engine and the compiled prefilter built here once; else
    spawned fresh (a thread holding a lock must not be forked)."""
    import multiprocessing
    import threading

    if os.name == "posix" and sys.platform != "darwin" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def scan_ranges(jobs: list[Job], workers: int) -> list[ScanResult] | None:
    """Run the byte-range jobs on `workers` processes, each job handed to the first worker free, and give their
    results in job order; None when processes cannot be used here."""
    try:
        ctx = _pool_context()
        frozen = False
        if not classifier().prepared():  # the first run on these tables (or the cache off): every row compiled
            classifier().prepare()  # here once and stored; forked workers inherit them, spawned ones read them
        if ctx.get_start_method() == "fork":
            for engine in {job[3].engine for job in jobs}:
                prefilter_for(engine)  # built once here, inherited by every worker
            if not gc.get_freeze_count():  # (a caller that froze objects itself keeps them so)
                gc.freeze()  # what exists now is shared with the workers and stays so: no collection touches it
                frozen = True
        try:
            chunk_bytes = jobs[0][3].chunk_bytes if jobs else 0
            import pickle

            with ctx.Pool(workers, initializer=_start_worker, initargs=(chunk_bytes,)) as pool:
                return [pickle.loads(b) for b in pool.imap(_scan_range_pickled, jobs, chunksize=1)]
        finally:
            if frozen:
                gc.unfreeze()
    except (OSError, RuntimeError, EOFError, ImportError):
        return None  # e.g. an embedding script without a __main__ guard: scan in this process instead


def shift_lines(part: ScanResult, offset: int) -> None:
    """Make a byte range's line numbers file-absolute (each worker counts from its own first line)."""
    if not offset:
        return
    new = tuple.__new__  # (`_replace` per event was a visible share of a dense scan; unpacking costs least)
    part.events = [new(Event, (t, c, s, m, r, ok, p, n + offset, o)) for t, c, s, m, r, ok, p, n, o in part.events]
    for stat in part.stats.values():
        if stat.example_line:
            stat.example_line += offset
