"""The data every part of capdoctor exchanges: causes, statuses, findings, check results, verdicts, reports.

Everything here is a frozen dataclass or a `str` enum, so results can be shared between threads, compared in
tests and serialised without surprises. This module does no I/O and imports nothing heavy; checks,
the verdict and the renderers all depend on it, and it depends on nothing of theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Cause(str, Enum):
    """The root causes capdoctor can name. `value` is the stable JSON spelling."""

    CAPACITY = "capacity"
    QUOTA = "quota"
    ACCOUNT = "account"
    NETWORK = "network"
    HARDWARE = "hardware"
    CLIENT = "client"


class Status(str, Enum):
    """How one check ended. `skip` means it could not run (and says why); `error` means it broke or overran."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"


class Strength(str, Enum):
    """How much a finding weighs for (or against) its cause.

    `context` is shown but weighs nothing (local GPU facts when the target is a cloud API); `against` argues that
    the cause is *not* the one (healthy quota headroom against quota). The weights are `verdict/weighing.py`'s.
    """

    STRONG = "strong"
    MODERATE = "moderate"
    WEAK = "weak"
    CONTEXT = "context"
    AGAINST = "against"


@dataclass(frozen=True)
class NextStep:
    """One concrete thing to do: prose, and optionally a command that is safe to copy and run."""

    text: str
    command: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: `{text, command}` (command omitted when there is none)."""
        out: dict[str, Any] = {"text": self.text}
        if self.command:
            out["command"] = self.command
        return out


@dataclass(frozen=True)
class Finding:
    """One piece of evidence for (or against) a cause.

    `data` holds structured facts (`status`, `signature`, `request_id`, `model`, `retry_after_s`…) so that
    reports and the verdict need not parse `message`. `next_steps` are remedies specific to this finding
    ("unset ALL_PROXY"); the verdict puts them before the generic steps for the winning cause.
    """

    cause: Cause
    strength: Strength
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)
    next_steps: tuple[NextStep, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: `{cause, strength, message, data, next_steps}`."""
        return {
            "cause": self.cause.value,
            "strength": self.strength.value,
            "message": self.message,
            "data": dict(self.data),
            "next_steps": [s.to_dict() for s in self.next_steps],
        }


@dataclass(frozen=True)
class CheckResult:
    """What one check found. The runner fills `duration_ms`; checks fill the rest.

    `details` are human lines shown under the check with `-v`; `data` is structured output a renderer may
    present (per-model probe rows, per-path timings…) without computing anything from it.
    """

    id: str
    title: str
    stage: int
    status: Status
    summary: str
    findings: tuple[Finding, ...] = ()
    details: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    duration_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one entry of `checks` in the report."""
        return {
            "id": self.id,
            "title": self.title,
            "stage": self.stage,
            "status": self.status.value,
            "summary": self.summary,
            "duration_ms": self.duration_ms,
            "findings": [f.to_dict() for f in self.findings],
            "details": list(self.details),
            "data": dict(self.data),
        }


VerdictCause = str
"""A `Cause` value, or `"none"` (nothing wrong found) or `"inconclusive"` (too weak or contradictory)."""

NONE = "none"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Contributing:
    """A cause the evidence supports beside the primary one (`Verdict.also`): how sure, how often, when.

    `count` is how many times it was seen (0 where the evidence was measured once, not counted); `first` and
    `last` are ISO-8601 UTC times where the evidence was dated.
    """

    cause: str
    confidence: float
    summary: str
    evidence: tuple[str, ...] = ()
    next_steps: tuple[NextStep, ...] = ()
    count: int = 0
    first: str | None = None
    last: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one `verdict.also[]` entry."""
        return vars(self) | {
            "confidence": round(self.confidence, 3),
            "evidence": list(self.evidence),
            "next_steps": [s.to_dict() for s in self.next_steps],
        }


@dataclass(frozen=True)
class Verdict:
    """The outcome of `verdict.decide`: the primary cause, how sure, why, what to do, and what else is present.

    `also` lists every other cause the evidence supports, strongest first; `inconclusive` is for evidence that
    truly conflicts, not for two causes that are both present.
    """

    cause: VerdictCause
    confidence: float
    summary: str
    ranking: tuple[tuple[str, float], ...] = ()
    evidence: tuple[str, ...] = ()
    next_steps: tuple[NextStep, ...] = ()
    also: tuple[Contributing, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `verdict` in every schema that has one (report, logs, history, explain)."""
        return {
            "cause": self.cause,
            "confidence": round(self.confidence, 3),
            "summary": self.summary,
            "ranking": [{"cause": c, "score": round(s, 3)} for c, s in self.ranking],
            "evidence": list(self.evidence),
            "next_steps": [s.to_dict() for s in self.next_steps],
            "also": [a.to_dict() for a in self.also],
        }


def result_of(
    check: Any,
    status: Status,
    summary: str,
    findings: Sequence[Finding] = (),
    details: Sequence[str] = (),
    data: Mapping[str, Any] | None = None,
) -> CheckResult:
    """Build a `CheckResult` for `check` (anything with `id`, `title`, `stage`): the usual way checks return."""
    return CheckResult(
        id=check.id,
        title=check.title,
        stage=check.stage,
        status=status,
        summary=summary,
        findings=tuple(findings),
        details=tuple(details),
        data=dict(data or {}),
    )


def skipped(check: Any, reason: str) -> CheckResult:
    """A `skip` result: the check could not run here, and `reason` says why in one line."""
    return result_of(check, Status.SKIP, reason)
