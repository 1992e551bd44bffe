"""The engine: one diagnosis run, from a target and options to results, a verdict and a redacted report.

The CLI calls `diagnose` (for `diagnose`, `check` and `demo` alike); it builds the context, picks the checks,
runs them under one deadline, decides and builds the report. It never prints: progress goes to the observer
the caller passes, and presentation is the renderers' job.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capdoctor.checks.base import Check
from capdoctor.model import CheckResult, Status, Verdict
from capdoctor.run.context import Context, Target
from capdoctor.run.runner import Observer, run_checks

FINISH_RESERVE_S = 0.4
"""The checks stop this long before `started + timeout`: the verdict, the report, printing and the exit happen
in it (and in the half second the timeout's promise allows), even on a loaded machine."""

SECRET_ENV_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|COOKIE|CREDENTIAL)", re.IGNORECASE)


def env_secrets(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names say they hold secrets: scrubbed from every output."""
    return [v for k, v in env.items() if SECRET_ENV_NAME.search(k) and len(v) >= 8]


@dataclass
class RunRequest:
    """What to diagnose and how: everything the CLI parsed, nothing it printed."""

    target: Target | None
    env: Mapping[str, str]
    home: Path
    cwd: Path
    timeout: float = 30.0
    only: list[str] | None = None
    skip: list[str] | None = None
    no_inference: bool = False
    verbose: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    checks: Sequence[Check] | None = None
    demo: dict[str, str] | None = None  # {scenario, description} when diagnosing the simulator
    started: float | None = None
    """The `time.monotonic()` instant the timeout counts from: the process start for the CLI (see
    `startclock`), else (None) the moment `diagnose` is called."""


@dataclass
class RunOutcome:
    """The results in stage order, the verdict over them, and the redacted report dict."""

    results: list[CheckResult]
    verdict: Verdict
    report: dict[str, Any]


def diagnose(request: RunRequest, observer: Observer | None = None) -> RunOutcome:
    """Run the selected checks under one deadline and decide; raises `UsageError` for unknown check ids.

    The checks' deadline is `started + timeout - FINISH_RESERVE_S`; the verdict and report are imported before
    the checks start, so the work after the deadline is only computing.
    """
    from capdoctor.checks import registry
    from capdoctor.render.report import build
    from capdoctor.run.budget import PRIORITY_CHECK, models_reserve
    from capdoctor.target.clientuse import client_in_use
    from capdoctor.verdict.decision import decide

    started = time.monotonic() if request.started is None else request.started
    checks = list(request.checks) if request.checks is not None else registry.select(request.only, request.skip)
    ctx = Context(
        env=request.env,
        home=request.home,
        cwd=request.cwd,
        target=request.target,
        deadline=started + request.timeout - FINISH_RESERVE_S,
        no_inference=request.no_inference,
        verbose=request.verbose,
        options=request.options,
        selected=frozenset(c.id for c in checks),
    )
    if any(c.id == PRIORITY_CHECK for c in checks):
        ctx.provider_budget.reserve(PRIORITY_CHECK, models_reserve(ctx.options))
    results = run_checks(checks, ctx, observer)
    client_data = next((r.data for r in results if r.id == "client" and r.status is not Status.SKIP), None)
    client = client_in_use(request.target.to_dict() if request.target else None, client_data)
    verdict = decide(results, client)
    report = build(
        results,
        verdict,
        request.target,
        ctx.now(),
        secrets=env_secrets(request.env),
        home=str(request.home),
        client=client.to_dict(),
        demo=request.demo,
        budget=ctx.provider_budget.to_dict(),
    )
    return RunOutcome(results, verdict, report)
