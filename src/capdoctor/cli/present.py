"""One diagnosis from request to exit code: run the engine, then present the report as the view asks.

The CLI's `diagnose`, `check` and `demo` share this path. It holds no decision of its own: the engine runs the
checks and the verdict, the renderers draw, and the exit code is the verdict's (`exitcodes.for_verdict`).
Heavy modules (the engine, rich) load inside the function so that importing this module stays cheap.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capdoctor.render.view import View
    from capdoctor.run.diagnosis import RunRequest


def run_and_present(request: RunRequest, view: View, header: str) -> int:
    """Run a diagnosis, present it as `view` asks (stdout, `--report`), and return the verdict's exit code."""
    from contextlib import nullcontext

    from capdoctor.checks import registry
    from capdoctor.cli import exitcodes
    from capdoctor.errors import UsageError
    from capdoctor.redact import redact_text
    from capdoctor.render import console as consoles
    from capdoctor.render import for_path, terminal
    from capdoctor.render import json as json_render
    from capdoctor.run import diagnosis as engine

    if view.json_out and view.report_to_stdout:
        raise UsageError("--json and --report - both print on stdout; use one of them")
    writer = for_path(view.report) if view.report else None
    if view.report and not view.report_to_stdout:
        from capdoctor.render.report import check_destination

        check_destination(view.report)  # a missing or read-only folder is said now, not after the whole run
    checks = request.checks if request.checks is not None else registry.select(request.only, request.skip)
    request.checks = checks
    console = consoles.console_for(sys.stdout, view.no_color)
    ascii_only = consoles.ascii_only(sys.stdout)
    secrets = [*engine.env_secrets(request.env), *([request.target.api_key] if request.target else [])]

    def scrub(text: str) -> str:
        return redact_text(text, [s for s in secrets if s], str(request.home))

    header = scrub(header)  # a base URL can carry credentials
    progress = (
        terminal.Checklist(checks, console, header, ascii_only, scrub, live=consoles.is_tty(sys.stdout))
        if view.human and not view.quiet
        else None
    )
    with progress or nullcontext():
        outcome = engine.diagnose(request, progress)
    if view.json_out:
        sys.stdout.write(json_render.render(outcome.report, ascii_only=ascii_only))
    elif view.quiet and view.human:
        console.print(terminal.verdict_line(outcome.report), soft_wrap=True)
    elif view.human:
        terminal.render(outcome.report, console, view.verbose, ascii_only, header)
    if writer and view.report_to_stdout:
        sys.stdout.write(writer(outcome.report))
    elif writer and view.report:
        from capdoctor.render.report import write_atomic

        try:
            write_atomic(view.report, writer(outcome.report))
        except OSError as exc:
            raise UsageError(f"cannot write the report to {view.report}: {exc.strerror or exc}") from None
        if view.human and not view.quiet:
            console.print(f"Report written to {view.report}", soft_wrap=True)
    return int(exitcodes.for_verdict(outcome.verdict.cause))
