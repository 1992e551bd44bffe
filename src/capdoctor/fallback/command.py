"""The `capdoctor fallback` command's flow: a report (live or saved) → a pool → a format → stdout or a file.

Contract: `run(opts, live, out, err)` checks every option first, so bad input, and a `--format` that cannot
serve the discovered target (`generate.check_fits`), are usage errors before anything is sent. Then it gets the
report (from `--from-report`, or a live run of only the `models` check: `live()`) and builds everything from the
report dict alone, so a saved report gives exactly the live output. It refuses to print or write anything that
holds a secret, shows the diff before merging, and returns 0 or `NO_FALLBACK` (the reason on stderr).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from capdoctor.cli.exitcodes import ExitCode
from capdoctor.errors import CapdoctorError, UsageError

if TYPE_CHECKING:
    from capdoctor.fallback.generate import Generated


@dataclass(frozen=True)
class FallbackOptions:
    """What the command line said (target flags are only counted: the live request is built elsewhere)."""

    fmt: str | None = None
    from_report: Path | None = None
    write: Path | None = None
    merge: bool = False
    report: Path | None = None
    target_flags: tuple[str, ...] = ()


def check_options(opts: FallbackOptions) -> None:
    """Every usage error that can be known before anything is read or sent."""
    from capdoctor.fallback.generate import check_format

    if opts.fmt is not None:
        check_format(opts.fmt)
    if opts.from_report is not None and opts.target_flags:
        raise UsageError(f"--from-report takes the target from the report; drop {', '.join(opts.target_flags)}")
    if opts.from_report is not None and opts.report is not None:
        raise UsageError("--report saves a live run's report; with --from-report nothing runs")
    if opts.report is not None and str(opts.report) != "-":
        from capdoctor.render.report import check_destination

        check_destination(opts.report)  # a report that cannot be written is said now, not after the probes
    if opts.merge and opts.write is None:
        raise UsageError("--merge merges into the --write file: give --write PATH")
    if opts.write is not None:
        path = opts.write.expanduser()
        if path.is_dir():
            raise UsageError(f"--write {opts.write} is a directory; give a file name")
        if not path.parent.is_dir():
            raise UsageError(f"cannot write to {opts.write} (--write): its folder does not exist")
        if path.exists() and not opts.merge:
            raise UsageError(
                f"{opts.write} exists; add --merge to merge into it (the diff is shown first), or write elsewhere"
            )


def read_report(path: Path) -> dict[str, Any]:
    """A saved JSON report; `UsageError` naming the file for anything unreadable or not JSON."""
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"report {path} does not exist (--from-report)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read report {path} (--from-report): {getattr(exc, 'strerror', None) or exc}"
        ) from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"report {path} is not JSON (--from-report): {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"report {path} is not a capdoctor report (--from-report): not a JSON object")
    return doc


def live_report(request: Any, report_path: Path | None, err: TextIO) -> dict[str, Any]:
    """Run the live diagnosis (`request` selects the `models` check) and return its redacted report.

    The report is saved to `report_path` when given, so `--from-report` can reproduce this run's output.
    """
    from capdoctor.render import for_path
    from capdoctor.run import diagnosis as engine

    if request.target is None:
        raise UsageError("no provider target found: pass --provider/--base-url/--model (see capdoctor config)")
    writer = for_path(report_path) if report_path else None
    err.write(
        f"capdoctor fallback: probing {request.target.model} and its alternatives ({request.target.provider})...\n"
    )
    report: dict[str, Any] = engine.diagnose(request).report
    if writer is not None and report_path is not None:
        from capdoctor.render.report import write_atomic

        try:
            write_atomic(report_path, writer(report))
        except OSError as exc:
            raise UsageError(f"cannot write the report to {report_path}: {exc.strerror or exc}") from None
        err.write(f"capdoctor fallback: report written to {report_path}\n")
    return report


def _write(path: Path, text: str) -> None:
    """Write atomically, keeping an existing file's permissions."""
    from capdoctor.render.report import write_atomic

    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    try:
        write_atomic(path, text)
        if mode is not None:
            os.chmod(path, mode)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def load_note(made: Generated, write: Path | None) -> str:
    """How to load what was generated, naming the file it is really in: the `--write` file, else the name
    the format suggests, with the word to save this output there (nothing was written)."""
    if write is None:
        return f"Save this output as {made.file} (or use --write {made.file}); then: {made.load.format(file=made.file)}"
    shown = str(write)
    if made.syntax == "env" and "/" not in shown:
        shown = f"./{shown}"  # `. name` would search PATH, not this folder
    return made.load.format(file=shown)


def run(
    opts: FallbackOptions, live: Callable[[], Any], out: TextIO, err: TextIO, env: Mapping[str, str], home: str
) -> int:
    """The whole command; returns the exit code (usage errors raise `UsageError`)."""
    from capdoctor.fallback.default_format import report_client
    from capdoctor.fallback.generate import generate
    from capdoctor.fallback.pool import NoFallback, ReportError, pool_from_report
    from capdoctor.redact import MASK, contains_secret, redact_text
    from capdoctor.run.diagnosis import env_secrets

    check_options(opts)
    secrets = env_secrets(env)
    if opts.from_report is not None:
        report, where = read_report(opts.from_report), f"report {opts.from_report}"
    else:
        request = live()
        if opts.fmt is not None and request.target is not None:
            from capdoctor.fallback.generate import check_fits

            check_fits(opts.fmt, request.target.provider)  # a format that cannot serve it: said before any request
        if request.target is not None and request.target.api_key:
            secrets.append(request.target.api_key)
        report, where = live_report(request, opts.report, err), "this run"
    try:
        pool = pool_from_report(report)
    except ReportError as exc:
        raise UsageError(f"{where}: {exc}") from None
    except NoFallback as exc:
        err.write(redact_text(f"capdoctor fallback: nothing generated: {exc}.\n", secrets, home))
        return int(ExitCode.NO_FALLBACK)
    name = opts.fmt or report_client(report).fallback_format
    made = generate(pool, name)
    if contains_secret(made.text, secrets):
        raise CapdoctorError(
            "internal error: the generated configuration would hold a secret; nothing was written (please report)"
        )
    notes = list(made.notes)
    if pool.verdict not in ("", "capacity", "none", "inconclusive"):
        notes.append(
            f"The verdict was {pool.verdict}, not capacity: switching models will not fix that; see "
            "`capdoctor diagnose`."
        )
    if MASK in pool.base_url:
        notes.append("The base URL carried credentials, which capdoctor never writes: put them back by hand.")
    if made.load:
        notes.append(load_note(made, opts.write))
    if opts.write is None:
        out.write(made.text)
    else:
        path = opts.write.expanduser()
        if path.exists():
            from capdoctor.fallback.merge import diff, merge

            try:
                old = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                why = getattr(exc, "strerror", None) or exc
                raise UsageError(f"cannot read {opts.write} to merge into it: {why}") from None
            merged = merge(made.syntax, old, made.text, str(opts.write), notes)

            def scrub(line: str) -> str:
                return redact_text(line, secrets, home)

            out.write(diff(old, merged, str(opts.write), made.text.splitlines(), scrub) or "(no change)\n")
            _write(path, merged)
            notes.append(f"Merged into {opts.write} (your other keys and comments kept).")
        else:
            _write(path, made.text)
            notes.append(f"Wrote {opts.write}.")
    if opts.fmt is None:
        err.write(f"capdoctor fallback: format {name}, for the client in use (choose another with --format)\n")
    for note in notes:
        err.write(f"capdoctor fallback: {note}\n")
    return int(ExitCode.OK)
