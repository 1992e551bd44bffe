"""`capdoctor logs PATH...`: scan logs, judge from them alone, print JSON or the terminal view.

Contract: `run_logs(...)` is the one pipeline (expand → scan → patterns → findings → verdict → document) shared
by the command and the `logs` check; `logs_command(...)` adds argument checks and output and returns the exit
code: 2 with one line on `err` for a missing path, a bad `--since`, or when none of the named inputs could be
read (unreadable ones beside readable ones are a warning line each); otherwise `exitcodes.for_verdict`. It
never prints a traceback for bad input, nor a secret: documents are redacted in `findings.py`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from capdoctor.model import CheckResult, Verdict

DEFAULT_SINCE = "7d"


@dataclass
class LogsRun:
    """Everything one logs run produced: the check-shaped result, the verdict and the JSON document.

    `unreadable` lists the named inputs (and files inside named folders) that could not be read, as
    (shown path, reason); `read_named` is True when at least one named input was read.
    """

    check: CheckResult
    verdict: Verdict
    doc: dict[str, Any]
    scan: Any = None
    """The scanner's `ScanResult` (its events feed `logs --into`)."""
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    read_named: bool = False


def run_logs(
    paths: Sequence[str],
    *,
    since: str | None,
    env: Mapping[str, str],
    home: Path,
    platform: str,
    now: datetime | None = None,
    stage: Any = None,
    discover_when_empty: bool = True,
    engine: str | None = None,
) -> LogsRun:
    """Scan `paths` (or the discovered client logs when there are none) and judge. ValueError: bad since.

    What the user names is read whole unless `since` is given; the default window (DEFAULT_SINCE) only
    bounds the logs that were discovered, where old sessions would otherwise drown the recent failure.
    """
    from capdoctor.logscan import client_logs, findings, patterns, scanner, sources
    from capdoctor.logscan.timestamps import parse_since

    now = now or datetime.now(timezone.utc)
    named = list(paths)
    cutoff = parse_since(since or (DEFAULT_SINCE if not named and discover_when_empty else "all"), now)
    discovered: list[tuple[str, Path]] = []
    if not named and discover_when_empty:
        discovered = client_logs.discover(env, home, platform, cutoff.timestamp() if cutoff else None)
    srcs, skipped = sources.expand(named, since_ts=cutoff.timestamp() if cutoff else None)
    named_paths = {s.path for s in srcs} | {s.path for s in skipped}
    if discovered:
        more, more_skipped = sources.expand(
            [str(p) for _, p in discovered], since_ts=cutoff.timestamp() if cutoff else None, keep=client_logs.wanted
        )
        srcs += more
        skipped += more_skipped
    result = scanner.scan(srcs, scanner.ScanOptions(since=cutoff, now=now, engine=engine))
    result.files += [scanner.FileInfo(s.path, skipped=s.reason) for s in skipped]
    pats = patterns.analyse(result.events)
    for burst in pats.bursts[:20]:
        burst.request_ids = sampled_ids(burst.sample)
    check = findings.logs_result(result, pats, home=str(home), stage=stage)
    verdict = findings.verdict_of(check)
    extra = {
        "since": cutoff.isoformat().replace("+00:00", "Z") if cutoff else None,
        "discovered": [{"client": c, "path": sources.display_path(str(p), home)} for c, p in discovered],
    }
    doc = findings.to_json(result, pats, verdict, home, extra)
    mine = [f for f in result.files if f.path in named_paths]
    unreadable = [(sources.display_path(f.path, home), f.skipped) for f in mine if f.skipped]
    return LogsRun(check, verdict, doc, result, unreadable, any(f.skipped is None for f in mine))


def logs_command(
    paths: list[str],
    as_json: bool,
    since: str | None,
    verbose: bool,
    out: TextIO,
    err: TextIO,
    into: Path | None = None,
    report: Path | None = None,
) -> int:
    """Run `capdoctor logs` and return its exit code (see the module docstring).

    With `into`, the dated error events also go into that history database (an unusable one is a usage error
    before anything is scanned); with `report`, the `diagnose --report` ticket is written from the logs alone.
    """
    from capdoctor.cli.exitcodes import ExitCode, for_verdict
    from capdoctor.errors import UsageError
    from capdoctor.target.options import path_problem

    for p in paths:  # the rule `--log` and capdoctor.toml's `logs` follow too (options.path_problem)
        problem = path_problem(p, content=False)
        if problem:
            err.write(f"capdoctor: error: {p!r} (argument PATH) {problem}\n")
            return int(ExitCode.USAGE)
    if report is not None and str(report) != "-":
        from capdoctor.render.report import check_destination

        try:
            check_destination(report)  # a folder that cannot take the file is said now, not after the scan
        except UsageError as exc:
            err.write(f"capdoctor: error: {exc}\n")
            return int(ExitCode.USAGE)
    from contextlib import ExitStack

    with ExitStack() as stack:
        store = None
        if into is not None:
            from capdoctor.watch.command import feed_logs, open_history

            store = stack.enter_context(open_history(into))
        try:
            run = run_logs(paths, since=since, env=os.environ, home=Path.home(), platform=sys.platform)
        except ValueError as exc:
            err.write(f"capdoctor: error: {exc}\n")
            return int(ExitCode.USAGE)
        if paths == ["-"] and not any(f.get("bytes") for f in run.doc.get("files") or []):
            err.write("capdoctor: error: '-' (argument PATH): stdin is empty\n")
            return int(ExitCode.USAGE)
        nothing_read = bool(run.unreadable) and not run.read_named
        for shown, reason in run.unreadable:  # one line per input: what it is and why it was not read
            err.write(f"capdoctor: {'error' if nothing_read else 'warning'}: cannot read {shown}: {reason}\n")
        if nothing_read:
            return int(ExitCode.USAGE)
        if store is not None:
            feed_logs(run, store, err)
    if report is not None:
        try:
            ticket_written(run, report, out)
        except UsageError as exc:
            err.write(f"capdoctor: error: {exc}\n")
            return int(ExitCode.USAGE)
        if str(report) == "-":
            return int(for_verdict(run.verdict.cause))
    if as_json:
        from capdoctor.render.console import ascii_only
        from capdoctor.render.json import dumps

        out.write(dumps(run.doc, ascii_only=ascii_only(out)))
    else:
        from capdoctor.render.console import ascii_only
        from capdoctor.render.logs import render

        render(run.doc, out, verbose=verbose, ascii_only=ascii_only(out))
    return int(for_verdict(run.verdict.cause))


def ticket_written(run: LogsRun, path: Path, out: TextIO) -> None:
    """Write the support ticket of a logs run to `path` (`-`: `out`), laid out as `diagnose --report` lays
    out its own: a report-v1 document whose one check is the logs'. UsageError when it cannot be written."""
    from capdoctor.errors import UsageError
    from capdoctor.render import for_path
    from capdoctor.render.report import build, write_atomic

    doc = build([run.check], run.verdict, None, datetime.now(timezone.utc), home=str(Path.home()))
    text = for_path(path)(doc)
    if str(path) == "-":
        out.write(text)
        return
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror or exc}") from None


def sampled_ids(sample: Sequence[tuple[str, int]]) -> list[str]:
    """The request ids of the records that start at `sample`'s (path, byte offset) places, read again from plain
    files (a compressed file or stdin cannot be read twice cheaply: none from those), redacted, without repeats.
    The scanner keeps no id per record (that would cost a search on every error record of a dense log); a ticket
    needs only a few per incident."""
    from capdoctor.logscan.scanner import find_request_ids
    from capdoctor.redact import redact_text

    out: list[str] = []
    for path, offset in sample:
        if path == "-" or path.endswith((".gz", ".zst")) or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as fh:
                fh.seek(offset)
                line = fh.readline(8192).decode("utf-8", "replace")
        except OSError:
            continue
        out += [rid for rid in map(redact_text, find_request_ids(line)) if rid not in out]
    return out[:5]
