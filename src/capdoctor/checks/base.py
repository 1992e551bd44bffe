"""The `Check` protocol: the one shape every diagnostic stage has.

A check is a small object with stable metadata and a synchronous `run(ctx)`. The runner (not the check)
owns timing, the deadline, concurrency, crash containment and progress events; a check only looks and
reports. Checks must import heavy libraries (httpx, psutil, pynvml) *inside* `run`, so that listing
checks or printing the version stays fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from capdoctor.model import Finding, Status, Strength

if TYPE_CHECKING:
    from capdoctor.model import CheckResult
    from capdoctor.run.context import Context


class Need(str, Enum):
    """What a check needs before it can run; the runner skips it, with the reason, when a need is unmet."""

    TARGET = "target"  # a provider target (base URL and model) was given or discovered
    NETWORK = "network"  # it talks to the network (never needed in `--offline`-like settings)
    INFERENCE = "inference"  # it spends tokens (disabled by --no-inference)


@runtime_checkable
class Check(Protocol):
    """One diagnostic stage.

    `id` is stable (the command line's); `stage` orders the report, cheap to expensive; `after` names the
    checks whose results this one reads (the runner starts it once those have finished, or were not selected).
    """

    id: str
    title: str
    stage: int
    description: str
    needs: frozenset[Need]
    after: tuple[str, ...]

    def run(self, ctx: Context) -> CheckResult:
        """Look, and report. May block; must honour `ctx.remaining()` for anything that waits."""
        ...


def status_of(findings: Sequence[Finding]) -> Status:
    """A check's status from its findings: fail on strong evidence, warn on moderate or weak, pass otherwise
    (context and `against` only)."""
    strengths = {f.strength for f in findings}
    if Strength.STRONG in strengths:
        return Status.FAIL
    return Status.WARN if strengths & {Strength.MODERATE, Strength.WEAK} else Status.PASS
