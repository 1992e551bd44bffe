"""The staged runner: runs checks concurrently under one deadline, contains crashes, reports progress.

Ordering by stage, waiting for the checks a check reads (`after`), unmet needs, timing, the deadline, and
turning crashes and overruns into `error` results live here and nowhere else. Each check runs in a daemon
thread, so one that hangs is reported at the deadline as "timed out after N s" and abandoned.

A check that others wait for sees a deadline of its share of the time left (`DEPENDED_SHARE`); its dependants
start when it finishes or its share (plus `SHARE_GRACE_S`) is spent, so one slow check never keeps the later
ones from running. Progress goes to an observer; the runner never prints.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import Protocol

from capdoctor.checks.base import Check, Need
from capdoctor.model import CheckResult, Status, result_of
from capdoctor.run.context import Context

DEPENDED_SHARE = 0.6
"""The share of the time left that a check other checks wait for may use."""

SHARE_GRACE_S = 0.25
"""How long past its share a waited-for check may take to hand over its result before the others go ahead."""

HANDOVER_S = 0.25
"""Checks see the run's deadline this much early: one that sizes its last request by the time left still
hands its result over before the runner stops waiting for it."""


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


class _Run:
    """One run's shared state. `done` guards it; each check's thread notifies it when the check finishes."""

    def __init__(self, checks: Sequence[Check], ctx: Context, obs: Observer) -> None:
        self.checks, self.ctx, self.obs = checks, ctx, obs
        self.selected = {c.id for c in checks}
        self.waited_for = {d for c in checks for d in c.after if d in self.selected}
        self.done = threading.Condition(threading.Lock())
        self.pending = list(checks)
        self.results: dict[str, CheckResult] = {}
        self.started_at: dict[str, float] = {}
        self.due: dict[str, float] = {}  # check id -> end of its share (waited-for checks only)
        self.went_ahead: set[str] = set()  # waited-for checks whose dependants started without their result

    def record(self, check: Check, result: CheckResult) -> None:
        """Keep `check`'s result for the caller and for the checks that read it (the lock held)."""
        self.results[check.id] = result
        self.ctx.results[check.id] = result

    def finish(self, check: Check, result: CheckResult, t0: float) -> None:
        """A check's thread hands its result over, timed, unless it was already reported as timed out."""
        now = time.monotonic()
        timed = replace(result, duration_ms=int((now - t0) * 1000))
        with self.done:
            if check.id in self.results:  # already reported as timed out
                return
            if check.id in self.went_ahead:
                note = (
                    f"overran its share of the run ({now - t0:.1f} s of {self.due[check.id] - t0:.1f} s): the "
                    "checks that read it went ahead without it"
                )
                timed = replace(timed, details=(*timed.details, note))
            self.record(check, timed)
            self.ctx.provider_budget.release(check.id)  # its reserve of the request budget goes back to everyone
            self.done.notify_all()
        self.obs.finished(timed)

    def body(self, check: Check, check_ctx: Context, t0: float) -> None:
        """What a check's thread runs: the check, a crash turned into its `error` result."""
        self.obs.started(check)
        try:
            result = check.run(check_ctx)
        except BaseException as exc:
            result = _crash_result(check, exc)
        self.finish(check, result, t0)

    def ready(self, dep: str, now: float) -> bool:
        """`dep`'s result is in, or its share is spent (then the dependants go ahead without it)."""
        if dep in self.results:
            return True
        if dep in self.due and now >= self.due[dep] + SHARE_GRACE_S:
            self.went_ahead.add(dep)
            return True
        return False

    def start_ready(self, now: float) -> None:
        """Start every pending check whose `after` checks are ready: skip it when a need is unmet, else run it
        in a daemon thread under the run's deadline (a waited-for check under its share of the time left)."""
        for check in list(self.pending):
            if not all(self.ready(d, now) for d in check.after if d in self.selected):
                continue
            self.pending.remove(check)
            reason = unmet_need(check, self.ctx)
            if reason is not None:
                skip = result_of(check, Status.SKIP, reason)
                self.record(check, skip)
                self.ctx.provider_budget.release(check.id)
                self.obs.finished(skip)  # observers never take the runner's lock, so this cannot deadlock
                continue
            end = self.ctx.deadline - HANDOVER_S
            if check.id in self.waited_for:
                end = self.due[check.id] = now + DEPENDED_SHARE * max(0.0, end - now)
            self.started_at[check.id] = now
            threading.Thread(
                target=self.body,
                args=(check, replace(self.ctx, deadline=end), now),
                name=f"check-{check.id}",
                daemon=True,
            ).start()

    def give_up(self) -> list[Check]:
        """At the deadline: an `error` result for every check without one (never started, or timed out)."""
        overdue = [c for c in self.checks if c.id not in self.results]
        for check in overdue:
            t0 = self.started_at.get(check.id)
            if t0 is None:
                res = result_of(check, Status.ERROR, "did not start before the deadline (a check it waits for overran)")
            else:
                res = replace(
                    result_of(check, Status.ERROR, f"timed out after {max(self.ctx.deadline - t0, 0):.0f} s"),
                    duration_ms=int((time.monotonic() - t0) * 1000),
                )
            self.record(check, res)
        return overdue


def run_checks(
    checks: Sequence[Check],
    ctx: Context,
    observer: Observer | None = None,
) -> list[CheckResult]:
    """Run `checks` concurrently under `ctx.deadline` and return one result per check, in stage order.

    A check starts once every check of this run named in its `after` has finished; results go into
    `ctx.results` as they arrive.
    """
    run = _Run(checks, ctx, observer or NullObserver())
    with run.done:
        while True:
            now = time.monotonic()
            run.start_ready(now)
            if len(run.results) == len(checks):
                break
            left = ctx.remaining()
            if left <= 0:
                break
            wake = [d + SHARE_GRACE_S - now for k, d in run.due.items() if k not in run.results]
            run.done.wait(timeout=max(0.01, min([left, 0.5, *wake])))
        overdue = run.give_up()
    for check in overdue:
        run.obs.finished(run.results[check.id])
    return sorted((run.results[c.id] for c in checks), key=lambda r: (r.stage, r.id))
