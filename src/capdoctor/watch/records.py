"""What one watch round (or one log import) leaves behind: attempts, the verdict, quota, as plain records.

Contract: `round_of(results, verdict, ...)` reads a finished run — the models check's per-attempt rows
(`data["models"][*]["attempts"]`) and the quota check's windows — into a `RoundRecord`; `log_round(...)`
turns classified log events into one. Both are pure: no I/O, no clock (times are passed in), nothing heavy
imported. The store writes these records, the metrics count them, history reads them back; none of those
parse check results themselves. Records hold no secret: the check data they are read from is already
redacted, and they keep only ids, codes, model names and numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from capdoctor.model import CheckResult, Verdict

WATCH = "watch"
LOGS = "logs"
"""The two sources of rounds: live traffic (watch's probes, or the user's own through the proxy) and imported
log lines. History weighs every live attempt alike, whoever sent it."""

PROBE = "probe"
PROXY = "proxy"
"""The kinds of a live round: watch's own small probes, or one exchange of the user's traffic that
`capdoctor proxy` carried (`RoundRecord.kind`)."""

_KIND_RE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class AttemptRecord:
    """One request of a round (or one error line of a log): what was asked, what came back, when.

    `at` is Unix seconds: when the provider answered (its Date header) where that lies within the round, else
    the round's start, so a proxy's wrong clock cannot move an attempt to another hour. `origin` identifies an
    imported log line (`path|offset|time|signature`) so that importing the same log twice adds nothing.
    """

    at: float
    model: str
    role: str
    ok: bool
    status: int | None = None
    kind: str | None = None
    signature: str | None = None
    cause: str | None = None
    latency_ms: int | None = None
    request_id: str | None = None
    origin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape in `history --json` (`origin` is bookkeeping and stays out)."""
        return {k: v for k, v in vars(self).items() if k != "origin"}


@dataclass(frozen=True)
class ExchangeRecord:
    """What `capdoctor proxy` keeps of one exchange beyond its attempt: never the prompt or the completion.

    `client`/`client_version` come from the User-Agent; `request_ids` and `ratelimit` hold those headers as
    sent; `outcome` is how the body ended (`completed`, `error_event`, `cut`, `cancelled`, `upstream_failed`);
    `error_text` is the provider's words for a failure, redacted and bounded.
    """

    method: str
    path: str
    upstream: str
    client: str | None = None
    client_version: str | None = None
    stream: bool = False
    outcome: str = "completed"
    bytes: int = 0
    ttfb_ms: float | None = None
    total_ms: float | None = None
    request_ids: Mapping[str, str] = field(default_factory=dict)
    ratelimit: Mapping[str, str] = field(default_factory=dict)
    error_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of an exchange (the store keeps the mappings as JSON text)."""
        return vars(self) | {"request_ids": dict(self.request_ids), "ratelimit": dict(self.ratelimit)}


@dataclass(frozen=True)
class RoundRecord:
    """One round: when, against what, every attempt, the verdict of the round, and quota left per kind."""

    started: float
    finished: float
    source: str
    provider: str | None
    model: str | None
    verdict: str
    confidence: float
    summary: str = ""
    attempts: tuple[AttemptRecord, ...] = ()
    quota: Mapping[str, float] = field(default_factory=dict)
    kind: str = PROBE
    exchange: ExchangeRecord | None = None
    """For a proxy round (`kind` PROXY): what the proxy saw of the exchange besides the attempt."""

    @property
    def failed(self) -> bool | None:
        """Whether the round's primary model never answered (None: the primary was not probed)."""
        primary = [a for a in self.attempts if a.role == "primary"]
        return None if not primary else not any(a.ok for a in primary)


def quota_kind(family: str, name: str) -> str:
    """A quota window's `kind`: lower-case `family_name` with anything else squeezed to `_`."""
    return _KIND_RE.sub("_", f"{family}_{name}".lower()).strip("_")


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


CLOCK_SLACK_S = 300.0
"""How far outside its round a provider's Date header may lie and still be taken as the attempt's time."""


def attempt_time(row: Mapping[str, Any], started: float, finished: float) -> float:
    """When one attempt was answered: its `time` (ISO 8601 UTC) if it falls within the round, else `started`."""
    from datetime import datetime

    text = row.get("time")
    if isinstance(text, str):
        try:
            at = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return started
        if started - CLOCK_SLACK_S <= at <= finished + CLOCK_SLACK_S:
            return at
    return started


def attempts_of(models: CheckResult | None, started: float, finished: float) -> tuple[AttemptRecord, ...]:
    """Every attempt the models check made, in order (empty when it did not run or probed nothing)."""
    runs = models.data.get("models") if models is not None else None
    out: list[AttemptRecord] = []
    for run in runs if isinstance(runs, list) else []:
        if not isinstance(run, Mapping):
            continue
        for row in run.get("attempts") or []:
            if not isinstance(row, Mapping):
                continue
            out.append(
                AttemptRecord(
                    at=attempt_time(row, started, finished),
                    model=str(run.get("model") or ""),
                    role=str(run.get("role") or ""),
                    ok=row.get("kind") == "ok",
                    status=_int(row.get("status")),
                    kind=_str(row.get("kind")),
                    signature=_str(row.get("signature")),
                    cause=_str(row.get("cause")),
                    latency_ms=_int(row.get("latency_ms")),
                    request_id=_str(row.get("request_id")),
                )
            )
    return tuple(out)


def quota_of(quota: CheckResult | None) -> dict[str, float]:
    """Remaining requests/tokens per window kind, from the quota check's windows (known values only)."""
    windows = quota.data.get("windows") if quota is not None else None
    out: dict[str, float] = {}
    for w in windows if isinstance(windows, list) else []:
        if not isinstance(w, Mapping) or w.get("unknown"):
            continue
        remaining = w.get("remaining")
        if isinstance(remaining, (int, float)) and not isinstance(remaining, bool):
            out[quota_kind(str(w.get("family", "")), str(w.get("name", "")))] = float(remaining)
    return out


def round_of(
    results: Sequence[CheckResult],
    verdict: Verdict,
    provider: str | None,
    model: str | None,
    started: float,
    finished: float,
) -> RoundRecord:
    """A live round from the run's results and verdict (`started`/`finished`: Unix seconds)."""
    by_id = {r.id: r for r in results}
    return RoundRecord(
        started,
        finished,
        WATCH,
        provider,
        model,
        verdict.cause,
        round(verdict.confidence, 3),
        verdict.summary,
        attempts_of(by_id.get("models"), started, finished),
        quota_of(by_id.get("quota")),
    )


def log_round(events: Sequence[Any], verdict: Verdict) -> tuple[RoundRecord | None, int]:
    """One `logs` round from scanner events with a time (None when none has one), and how many had none.

    Each dated event becomes a failed attempt keyed by where it was read, so a second import adds nothing.
    """
    dated = [e for e in events if e.ts is not None]
    attempts = tuple(
        AttemptRecord(
            at=e.ts.timestamp(),
            model=e.model or "",
            role="log",
            ok=False,
            kind="log",
            signature=e.signature or None,
            cause=e.cause or None,
            origin=None if e.path == "-" else f"{e.path}|{e.offset}|{e.ts.timestamp():.3f}|{e.signature}",
        )
        for e in dated
    )
    if not attempts:
        return None, len(events) - len(dated)
    times = [a.at for a in attempts]
    return RoundRecord(
        min(times), max(times), LOGS, None, None, verdict.cause, round(verdict.confidence, 3), verdict.summary, attempts
    ), len(events) - len(dated)
