"""The fallback pool: the user's models that answered, ranked, read from one capdoctor report.

Contract: `pool_from_report(report)` reads a `capdoctor/report-v1` dict and returns a `Pool`: the target (with
the *name* of the key's variable), the primary, the alternatives that answered ranked by `rank`, the ones that
did not, and when the diagnosis ran. The live run and `--from-report` both go through here, so the same report
always gives the same pool. It raises `ReportError` (a usage error) for a document that is not such a report and
`NoFallback` when nothing answered to build from. Pure; the report is already redacted.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from capdoctor.errors import CapdoctorError, UsageError

SCHEMA = "capdoctor/report-v1"


class ReportError(UsageError):
    """The document is not a capdoctor report (or not one this version reads)."""


class NoFallback(CapdoctorError):
    """The report holds nothing to build a fallback pool from; the message says what and why."""


@dataclass(frozen=True)
class Candidate:
    """One probed model: how many attempts it answered, how fast, and how it failed otherwise."""

    model: str
    provider: str
    role: str
    outcome: str
    answered: int
    attempts: int
    latency_ms: int | None = None  # median of the answered attempts
    failure: str | None = None  # the last failure, e.g. "HTTP 503 server_is_overloaded"

    @property
    def success(self) -> float:
        """The share of attempts that answered (0 when none was sent)."""
        return self.answered / self.attempts if self.attempts else 0.0

    def summary(self) -> str:
        """`gpt-5.4-mini 3/3 answered, 212 ms` or `gpt-5.5 0/3 answered (HTTP 503 server_is_overloaded)`."""
        text = f"{self.model} {self.answered}/{self.attempts} answered"
        if self.latency_ms is not None:
            text += f", {self.latency_ms} ms"
        if self.failure and self.answered < self.attempts:
            text += f" ({self.failure})"
        return text


@dataclass(frozen=True)
class Pool:
    """What a fallback configuration is built from: the target, the primary, the ranked alternatives."""

    provider: str
    base_url: str
    key_env: str
    primary: Candidate
    alternatives: tuple[Candidate, ...]
    failed: tuple[Candidate, ...] = ()
    created: str = ""
    version: str = ""
    verdict: str = ""
    wire_api: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def best(self) -> Candidate:
        """The best alternative (what to switch to now)."""
        return self.alternatives[0]

    @property
    def fastest(self) -> Candidate:
        """The alternative with the lowest latency (the small/fast model)."""
        return min(self.alternatives, key=lambda c: (c.latency_ms if c.latency_ms is not None else 1 << 30, c.model))

    @property
    def models(self) -> list[str]:
        """The primary first, then the alternatives, best first: the pool's order."""
        return [self.primary.model, *(c.model for c in self.alternatives)]


def rank(candidates: Sequence[Candidate], provider: str) -> list[Candidate]:
    """The candidates best first: more attempts answered, then the primary's provider, then lower latency.

    Why this order: success is what a fallback is for; a model of another provider needs another key and
    behaves differently, so it comes after the same provider's at equal success; latency from one-token probes
    differs by milliseconds of noise, so it only breaks the remaining ties (then the name, for a stable order).
    """
    return sorted(
        candidates,
        key=lambda c: (
            -c.success,
            c.provider != provider,
            c.latency_ms if c.latency_ms is not None else 1 << 30,
            c.model,
        ),
    )


def default_key_env(provider: str) -> str:
    """The variable the provider's own clients read the key from (when the report names none)."""
    from capdoctor.providers.catalog import adapter_for

    return adapter_for(provider).key_envs[0]


# ------------------------------------------------------------------ reading the report


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ReportError(f"{what} is not an object")
    return value


def _candidate(row: Any, provider: str) -> Candidate:
    row = _mapping(row, "a models.data.models entry")
    model = row.get("model")
    if not isinstance(model, str) or not model:
        raise ReportError("a models.data.models entry has no model name")
    attempts = [a for a in (row.get("attempts") or []) if isinstance(a, Mapping)]
    answered = [a for a in attempts if a.get("kind") == "ok"]
    latencies = [a["latency_ms"] for a in answered if isinstance(a.get("latency_ms"), (int, float))]
    failures = [a for a in attempts if a.get("kind") != "ok"]
    failure = None
    if failures:
        last = failures[-1]
        status = f"HTTP {last['status']}" if last.get("status") is not None else str(last.get("kind") or "failed")
        failure = " ".join(str(p) for p in (status, last.get("signature")) if p)
    return Candidate(
        model=model,
        provider=str(row.get("provider") or provider),
        role=str(row.get("role") or ""),
        outcome=str(row.get("outcome") or ""),
        answered=len(answered),
        attempts=len(attempts),
        latency_ms=round(statistics.median(latencies)) if latencies else None,
        failure=failure,
    )


def pool_from_report(report: Any) -> Pool:
    """The fallback pool a report supports; `ReportError` for a bad document, `NoFallback` for nothing to use."""
    doc = _mapping(report, "the document")
    if doc.get("schema") != SCHEMA:
        raise ReportError(f"not a capdoctor report (schema {doc.get('schema')!r}, expected {SCHEMA!r})")
    checks = doc.get("checks")
    if not isinstance(checks, list):
        raise ReportError("the report has no checks list")
    target = doc.get("target")
    if target is None:
        raise NoFallback("the report has no target (nothing was probed): name one with --provider/--model")
    target = _mapping(target, "target")
    provider = str(target.get("provider") or "")
    base_url = str(target.get("base_url") or "")
    if not provider or not base_url:
        raise ReportError("the report's target has no provider or base URL")
    models_check = next((c for c in checks if isinstance(c, Mapping) and c.get("id") == "models"), None)
    if models_check is None:
        raise NoFallback("the report has no `models` check, so no model was probed (--only/--skip left it out)")
    data = models_check.get("data") if isinstance(models_check.get("data"), Mapping) else {}
    rows = data.get("models") if isinstance(data, Mapping) else None
    runs = [_candidate(r, provider) for r in (rows if isinstance(rows, list) else [])]
    runs = [c for c in runs if c.attempts]
    if not runs:
        why = f"the models check says: {models_check.get('summary')}" if models_check.get("summary") else ""
        raise NoFallback(
            "nothing was probed, so nothing is known to answer (--no-inference, no time left, or the "
            f"check was skipped){'; ' + why if why else ''}"
        )
    primary = next((c for c in runs if c.role == "primary"), runs[0])
    others = [c for c in runs if c is not primary]
    working = rank([c for c in others if c.answered], provider)
    failed = tuple(c for c in others if not c.answered)
    verdict = doc.get("verdict")
    cause = str(verdict.get("cause") or "") if isinstance(verdict, Mapping) else ""
    if not working:
        if not others and primary.answered:
            raise NoFallback(
                f"{primary.model} answered and no alternative was probed (alternatives are probed "
                "only when the primary fails): there is nothing to fall back to"
            )
        if not others:
            raise NoFallback(
                f"{primary.model} failed and no alternative was probed (none named, or no time "
                "left): name one with --alt-model MODEL"
            )
        raise NoFallback(
            "no alternative answered (" + "; ".join(c.summary() for c in failed) + "): a pool of "
            "models that fail too would not help"
        )
    sources = target.get("sources")
    return Pool(
        provider=provider,
        base_url=base_url,
        key_env=str(target.get("api_key_env") or default_key_env(provider)),
        primary=primary,
        alternatives=tuple(working),
        failed=failed,
        created=str(doc.get("created") or ""),
        version=str(doc.get("version") or ""),
        verdict=cause,
        wire_api=str(target["wire_api"]) if target.get("wire_api") else None,
        sources={str(k): str(v) for k, v in sources.items()} if isinstance(sources, Mapping) else {},
    )


def provenance(pool: Pool) -> list[str]:
    """The lines every format carries (as comments, or on stderr): what answered, when, from capdoctor."""
    when = pool.created or "an unknown time"
    lines = [
        f"Generated by capdoctor {pool.version} (`capdoctor fallback`) from the diagnosis of {when}"
        + (f" (verdict: {pool.verdict})." if pool.verdict else "."),
        "Answered: " + "; ".join(c.summary() for c in pool.alternatives) + ".",
        f"Primary: {pool.primary.summary()}.",
    ]
    if pool.failed:
        lines.append("Did not answer: " + "; ".join(c.summary() for c in pool.failed) + ".")
    return lines
