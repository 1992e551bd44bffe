"""The staged runner: runs checks concurrently under one deadline, contains crashes, reports progress.

Cross-cutting concerns live here and nowhere else: ordering by stage, waiting for the checks a check reads
(`after`), skipping checks whose needs are unmet, timing, the single deadline, and turning crashes and
overruns into `error` results. Each check runs in a daemon thread, so a check that hangs can never keep the
CLI from finishing: at the deadline it is reported as "timed out after N s" and abandoned.
Progress goes to an observer (the terminal renderer draws spinners); the runner never prints.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import Protocol

from capdoctor.check import Check, Need
from capdoctor.context import Context
from capdoctor.model import CheckResult, Status, result_of


class Observer(Protocol):
    """Receives progress events; implementations must be thread-safe and quick."""

    def started(self, check: Check) -> None:
        """`check` began running."""

    def finished(self, result: CheckResult) -> None:
        """A check ended (in any status, including skip and timeout)."""


class NullObserver:
    """An observer that ignores everything (JSON output, tests)."""

    def started(self, check: Check) -> None:
        """Ignore."""

    def finished(self, result: CheckResult) -> None:
        """Ignore."""


def unmet_need(check: Check, ctx: Context) -> str | None:
    """Why `check` cannot run in `ctx`, as a one-line skip reason, or None when it can."""
    if Need.TARGET in check.needs and ctx.target is None:
        return "no target: pass --base-url/--model, or set a provider key such as OPENAI_API_KEY"
    if Need.INFERENCE in check.needs and ctx.no_inference:
        return "skipped: --no-inference forbids calls that spend tokens"
    return None


def _crash_result(check: Check, exc: BaseException) -> CheckResult:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {PurePath(last[0].filename).name}:{last[0].lineno}" if last else ""
    return result_of(
        check,
        Status.ERROR,
        f"the check crashed — please report: {type(exc).__name__}: {exc}{where}",
    )


def run_checks(
    checks: Sequence[Check],
    ctx: Context,
    observer: Observer | None = None,
) -> list[CheckResult]:
    """Run `checks` concurrently under `ctx.deadline` and return one result per check, in stage order.

    A check starts as soon as every check named in its `after` that is part of this run has finished.
    Results are added to `ctx.results` as they arrive so that dependants can read them.
    """
    obs = observer or NullObserver()
    selected = {c.id for c in checks}
    done = threading.Condition(threading.Lock())
    results: dict[str, CheckResult] = {}
    started_at: dict[str, float] = {}

    def finish(check: Check, result: CheckResult, t0: float) -> None:
        timed = replace(result, duration_ms=int((time.monotonic() - t0) * 1000))
        with done:
            if check.id in results:  # already reported as timed out
                return
            results[check.id] = timed
            ctx.results[check.id] = timed
            done.notify_all()
        obs.finished(timed)

    def body(check: Check) -> None:
        t0 = time.monotonic()
        with done:
            started_at[check.id] = t0
        obs.started(check)
        try:
            result = check.run(ctx)
        except BaseException as exc:
            result = _crash_result(check, exc)
        finish(check, result, t0)

    pending = list(checks)
    threads: list[threading.Thread] = []
    with done:
        while True:
            for check in list(pending):
                deps = [d for d in check.after if d in selected]
                if any(d not in results for d in deps):
                    continue
                pending.remove(check)
                reason = unmet_need(check, ctx)
                if reason is not None:
                    skip = result_of(check, Status.SKIP, reason)
                    results[check.id] = skip
                    ctx.results[check.id] = skip
                    obs.finished(skip)  # observers never take the runner's lock, so this cannot deadlock
                    continue
                t = threading.Thread(target=body, args=(check,), name=f"check-{check.id}", daemon=True)
                threads.append(t)
                t.start()
            if len(results) == len(checks):
                break
            left = ctx.remaining()
            if left <= 0:
                break
            done.wait(timeout=min(left, 0.5))

        total = ctx.deadline - min(started_at.values(), default=time.monotonic())
        overdue = [c for c in checks if c.id not in results]
        for check in overdue:
            t0 = started_at.get(check.id)
            if t0 is None:
                res = result_of(check, Status.ERROR, "did not start before the deadline (a check it waits for overran)")
            else:
                res = replace(
                    result_of(check, Status.ERROR, f"timed out after {max(total, 0):.0f} s"),
                    duration_ms=int((time.monotonic() - t0) * 1000),
                )
            results[check.id] = res
            ctx.results[check.id] = res
    for check in overdue:
        obs.finished(results[check.id])
    return sorted((results[c.id] for c in checks), key=lambda r: (r.stage, r.id))
