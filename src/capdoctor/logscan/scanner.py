"""The streaming scanner's entry points: sources in, classified error records and per-signature statistics out.

Contract: `scan(sources, options)` scans every source (`filescan.FileScanner`), spreading big plain files over the
CPU cores in byte ranges (`parallel`) and merging the results in input order, so the output is the one one
process gives; `scan_bytes` scans an in-memory text the same way. When no error was placed it names the first
mark of one the inputs' heads hold (`unplaced`). An unreadable input becomes a `FileInfo` with `skipped` set;
nothing here raises for bad input, prints, decides verdicts or touches the network. It also gives the scanner's
public names (`Event`, `SigStat`, `ScanResult`, the field readers) to the command glue.
"""

from __future__ import annotations

import gc
import io
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from capdoctor.logscan import sources as src
from capdoctor.logscan import unplaced
from capdoctor.logscan.facts import find_model, find_provider, find_request_ids
from capdoctor.logscan.filescan import FileScanner
from capdoctor.logscan.memo import RecordMemo
from capdoctor.logscan.parallel import PARALLEL_MIN_BYTES, Job, pieces, scan_ranges, shift_lines, splittable
from capdoctor.logscan.prefilter import Prefilter, prefilter_for
from capdoctor.logscan.records import EXAMPLE_CHARS
from capdoctor.logscan.results import Event, FileInfo, ScanOptions, ScanResult, SigStat


def scan_bytes(data: bytes, name: str = "<text>", options: ScanOptions | None = None) -> ScanResult:
    """Scan an in-memory text (tests, pasted excerpts) exactly as a file would be scanned."""
    opts = options or ScanOptions()
    res = ScanResult()
    pf = prefilter_for(opts.engine)
    res.engine = pf.name
    reader = src.Reader(io.BytesIO(data), [], (OSError,), "read failed")
    FileScanner(pf, opts, name, res).run(reader, size_hint=len(data))
    if not res.stats and not res.too_old:
        res.unplaced = _unplaced([data[: unplaced.HEAD_BYTES]])
    return res


def scan(sources: Sequence[src.Source], options: ScanOptions | None = None) -> ScanResult:
    """Scan every source; big plain files are split into byte ranges over a process pool.

    Results are merged in input order so first/last/example are deterministic, and line numbers of a split file
    are made file-absolute as the ranges are merged. The parent builds no prefilter when every byte goes to the
    workers, which keeps the whole process tree small."""
    with _collector_paused():
        return _scan(sources, options or ScanOptions())


def _scan(sources: Sequence[src.Source], opts: ScanOptions) -> ScanResult:
    workers = opts.workers or min(os.cpu_count() or 1, 8)
    big = [s for s in sources if s.size >= PARALLEL_MIN_BYTES and splittable(s)]
    result = ScanResult()
    partials: list[ScanResult] | None = None
    jobs: list[Job] = []
    if workers > 1 and big:
        for s in big:
            jobs += [(s.path, a, b, opts) for a, b in pieces(s.size, workers)]
        partials = scan_ranges(jobs, workers)
    done = {s.path for s in big} if partials is not None else set()
    memo = RecordMemo()  # one per scan: the same errors recur across the files of one client
    for s in sources:
        if s.path in done:
            _merge_ranges(result, s, jobs, partials or [])
        else:
            pf = prefilter_for(opts.engine)
            result.engine = result.engine or pf.name
            _scan_one(pf, opts, s, result, memo)
    if not result.engine:
        result.engine = prefilter_for(opts.engine).name if not partials else partials[0].engine
    if not result.stats and not result.too_old:
        result.unplaced = _unplaced(_heads(sources))
    return result


def _merge_ranges(result: ScanResult, source: src.Source, jobs: list[Job], partials: list[ScanResult]) -> None:
    """Fold the byte ranges' results of `source` into `result`, in file order, with file-absolute line numbers."""
    lines_before = 0
    for job, part in zip(jobs, partials, strict=True):
        if job[0] == source.path:
            shift_lines(part, lines_before)
            lines_before += sum(f.lines for f in part.files)
            result.merge(part)
    for info in result.files:
        if info.path == source.path:
            info.bytes = source.size


def _scan_one(pf: Prefilter, opts: ScanOptions, source: src.Source, result: ScanResult, memo: RecordMemo) -> None:
    scanner = FileScanner(pf, opts, source.path, result, memo)
    try:
        reader = src.open_reader(source)
    except src.SourceError as exc:
        scanner.info.skipped = str(exc)
        return
    scanner.run(reader, size_hint=source.size if getattr(reader, "plain", False) else None)


def _unplaced(heads: Sequence[bytes]) -> str:
    """The first mark of an error in `heads` (the inputs' first bytes) that no row placed, named, or ""."""
    for head in heads:
        found = unplaced.describe(head.decode("utf-8", "replace"))
        if found:
            return found
    return ""


def _heads(sources: Sequence[src.Source]) -> list[bytes]:
    """The first `unplaced.HEAD_BYTES` of each plain file among `sources` (stdin was read already; a compressed
    file is left out: the marks are a fallback for a quiet paste or log, not a second scan)."""
    heads = []
    for s in sources:
        if s.path == "-" or s.compressed:
            continue
        try:
            with open(s.path, "rb") as fh:
                heads.append(fh.read(unplaced.HEAD_BYTES))
        except OSError:
            continue
    return heads


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a scan, as it was after it.

    A dense log makes tens of thousands of events that live until the scan ends, none of them garbage; the
    collector's passes over them cost ~10% of a 1-in-10 scan. Memory is unaffected: every object the scan drops
    is freed by its reference count as before. A forked worker inherits the collector off; the parent freezes
    what it holds before forking (`parallel.scan_ranges`)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


__all__ = [
    "EXAMPLE_CHARS",
    "Event",
    "FileInfo",
    "ScanOptions",
    "ScanResult",
    "SigStat",
    "find_model",
    "find_provider",
    "find_request_ids",
    "prefilter_for",
    "scan",
    "scan_bytes",
]
