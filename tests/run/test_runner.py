"""The runner: concurrency under one deadline, crash containment, dependencies, skips, progress events."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from capdoctor.checks.base import Need
from capdoctor.model import CheckResult, Status, result_of
from capdoctor.run.context import Context, Target
from capdoctor.run.runner import run_checks


class Fake:
    def __init__(
        self,
        cid: str,
        stage: int = 1,
        sleep: float = 0.0,
        crash: bool = False,
        needs: frozenset[Need] = frozenset(),
        after: tuple[str, ...] = (),
    ) -> None:
        self.id, self.title, self.stage, self.description = cid, cid.title(), stage, "fake"
        self.needs, self.after = needs, after
        self.sleep, self.crash = sleep, crash
        self.saw: dict[str, CheckResult] = {}

    def run(self, ctx: Context) -> CheckResult:
        time.sleep(self.sleep)
        if self.crash:
            raise RuntimeError("boom")
        self.saw = dict(ctx.results)
        return result_of(self, Status.PASS, "fine")


def ctx(timeout: float = 5.0, target: Target | None = None) -> Context:
    return Context(env={}, home=Path("/nonexistent"), cwd=Path("."), target=target, deadline=time.monotonic() + timeout)


class Meeting(Fake):
    """A check that passes only if the other checks of its stage are running at the same moment."""

    def __init__(self, cid: str, barrier: threading.Barrier) -> None:
        super().__init__(cid)
        self.barrier = barrier

    def run(self, ctx: Context) -> CheckResult:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            return result_of(self, Status.FAIL, "ran alone")
        return result_of(self, Status.PASS, "met the others")


def test_checks_of_a_stage_run_concurrently() -> None:
    barrier = threading.Barrier(4, timeout=4.0)  # run one after another, the first would wait alone and fail
    results = run_checks([Meeting(f"c{i}", barrier) for i in range(4)], ctx())
    assert [r.status for r in results] == [Status.PASS] * 4


def test_overrun_is_an_error_and_the_run_still_ends() -> None:
    hang = Fake("hang", sleep=30)
    fast = Fake("fast")
    t0 = time.monotonic()
    results = {r.id: r for r in run_checks([hang, fast], ctx(timeout=0.5))}
    assert time.monotonic() - t0 < 2.0
    assert results["hang"].status is Status.ERROR
    assert results["hang"].summary.startswith("timed out after")
    assert results["fast"].status is Status.PASS


def test_crash_is_contained() -> None:
    results = {r.id: r for r in run_checks([Fake("bad", crash=True), Fake("good")], ctx())}
    assert results["bad"].status is Status.ERROR
    assert "crashed" in results["bad"].summary and "RuntimeError: boom" in results["bad"].summary
    assert results["good"].status is Status.PASS


def test_after_waits_for_dependencies() -> None:
    first = Fake("first", sleep=0.2)
    second = Fake("second", stage=5, after=("first",))
    run_checks([second, first], ctx())
    assert "first" in second.saw


def test_unselected_dependency_does_not_block() -> None:
    lonely = Fake("quota", after=("models",))
    assert run_checks([lonely], ctx())[0].status is Status.PASS


def test_unmet_needs_are_skipped_with_reason() -> None:
    needs_target = Fake("models", needs=frozenset({Need.TARGET}))
    needs_tokens = Fake("gen", needs=frozenset({Need.INFERENCE}))
    c = ctx()
    c.no_inference = True
    results = {r.id: r for r in run_checks([needs_target, needs_tokens], c)}
    assert results["models"].status is Status.SKIP and "no target" in results["models"].summary
    assert results["gen"].status is Status.SKIP and "--no-inference" in results["gen"].summary


def test_results_come_back_in_stage_order_and_observer_sees_all() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    class Obs:
        def started(self, check: object) -> None:
            pass

        def finished(self, result: CheckResult) -> None:
            with lock:
                seen.append(result.id)

    checks = [Fake("z", stage=3), Fake("a", stage=1, sleep=0.1), Fake("m", stage=2, crash=True)]
    results = run_checks(checks, ctx(), Obs())
    assert [r.id for r in results] == ["a", "m", "z"]
    assert sorted(seen) == ["a", "m", "z"]


class Overrunning(Fake):
    """A check that sees its own (share) deadline and ignores it by `extra` seconds."""

    def __init__(self, cid: str, extra: float) -> None:
        super().__init__(cid)
        self.extra = extra
        self.own_deadline = 0.0

    def run(self, ctx: Context) -> CheckResult:
        self.own_deadline = ctx.deadline
        time.sleep(max(0.0, ctx.remaining()) + self.extra)
        return result_of(self, Status.PASS, "late")


def test_a_waited_for_check_gets_a_share_and_its_dependants_still_run() -> None:
    slow = Overrunning("models", extra=1.0)
    after = Fake("client", stage=6, after=("models",))
    c = ctx(timeout=4.0)
    results = {r.id: r for r in run_checks([slow, after], c)}
    assert slow.own_deadline < c.deadline - 1.0  # its context ends at its share, not at the run's end
    assert results["client"].status is Status.PASS and "models" not in after.saw
    assert results["models"].status is Status.PASS  # it finished before the run's deadline: its result counts
    assert any("overran its share" in d for d in results["models"].details)


def test_a_well_behaved_waited_for_check_is_waited_for() -> None:
    first = Fake("models", sleep=0.2)
    second = Fake("quota", stage=5, after=("models",))
    results = {r.id: r for r in run_checks([first, second], ctx(timeout=5.0))}
    assert "models" in second.saw and not results["models"].details
