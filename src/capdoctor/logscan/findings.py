"""From scan statistics to evidence: findings, a `CheckResult`, the verdict, and the logs-v1 JSON document.

Contract: `build_findings` turns per-signature statistics and patterns into `Finding`s with the row's own
strength and the occurrence facts the verdict weighs (`count`, `first`, `last`, `recovered`: how often, over
how long, how recent, how many a completed request followed); a root cause that explains another row's
symptoms (the `explains` column of the table) turns those symptoms into context. Pattern
findings (peak hours, model spread, bursts, retries) are added beside them. `logs_result` wraps them in a
`CheckResult` and `verdict_of` calls the one verdict function. Everything leaving here is redacted
(`capdoctor.redact.redact_text`). Pure apart from that: no I/O, the clock value is passed in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from operator import itemgetter
from pathlib import Path
from typing import Any

from capdoctor.classifier.signatures import STRENGTH_RANK, by_id
from capdoctor.logscan.patterns import Patterns
from capdoctor.logscan.results import ScanResult, SigStat
from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength, Verdict, result_of
from capdoctor.text import stamp

SCHEMA = "capdoctor/logs-v1"
MAX_SIGNATURE_FINDINGS = 12


class LogsStage:
    """The identity the logs results carry (`capdoctor logs` and the `logs` check share it)."""

    id = "logs"
    title = "Logs"
    stage = 8


def _redactor() -> Callable[[str, str | None], str]:
    try:
        from capdoctor.redact import redact_text
    except ImportError:  # pragma: no cover - redact.py is the lead's; guard until it exists everywhere
        return lambda text, home: text

    def _run(text: str, home: str | None) -> str:
        return redact_text(text, home=home)

    return _run


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat().replace("+00:00", "Z") if dt else None


def signature_strength(stat: SigStat, explained: bool) -> Strength:
    """How much one signature's matches weigh: its row's strength, or context where another row's root cause
    explains them. How often and how recently it was seen are facts the verdict weighs (`count`, `first`,
    `last`, `recovered` in the finding's data), not a change of strength here."""
    return Strength.CONTEXT if explained else by_id()[stat.signature].strength


def build_findings(
    result: ScanResult, patterns: Patterns, home: str | None = None, seen_in: str = "in the logs"
) -> list[Finding]:
    """The evidence the logs give, strongest first (signature findings, then pattern findings).

    `seen_in` says where the errors were seen (`capdoctor history` feeds its recorded rounds through here).
    """
    redact = _redactor()
    stats = sorted(result.stats.values(), key=lambda s: (-s.count, s.signature))
    explained = {e for s in stats for e in by_id()[s.signature].explains}
    strengths = {s.signature: signature_strength(s, s.signature in explained) for s in stats}
    recovered = Counter(e[2] for e in result.events if e[5])  # Event.signature of events a completion followed
    rows_speak = any(
        not by_id()[sid].yields and STRENGTH_RANK[st] >= STRENGTH_RANK[Strength.MODERATE]
        for sid, st in strengths.items()
    )
    if rows_speak:  # the words (and other yielding rows) are heard only where rows are silent
        strengths.update({s.signature: Strength.CONTEXT for s in stats if by_id()[s.signature].yields})
    from capdoctor.verdict.weighing import WEIGHTS  # the one table of what a finding of each strength weighs

    # Only the rows kept become findings (a dense log has hundreds, each redacted): the heaviest, the most frequent
    # first among equals (a stable sort of `stats`).
    kept = sorted(stats, key=lambda s: -WEIGHTS[strengths[s.signature]])[:MAX_SIGNATURE_FINDINGS]
    findings: list[Finding] = []
    for stat in kept:
        sig = by_id()[stat.signature]
        strength = strengths[stat.signature]
        when = f", last {stamp(stat.last)}" if stat.last else ""
        model = stat.models.most_common(1)[0][0] if stat.models else None
        status = stat.statuses.most_common(1)[0][0] if stat.statuses else None
        data: dict[str, Any] = {
            "signature": sig.id,
            "title": sig.title,
            "layer": sig.layer.value,
            "count": stat.count,
            "recovered": recovered.get(sig.id, 0),
            "first": _iso(stat.first),
            "last": _iso(stat.last),
            "example": redact(stat.example, home),
            "where": redact(f"{stat.example_path}:{stat.example_line}", home),
            "source": sig.source,
        }
        if sig.family:
            data["family"] = sig.family
        if model:
            data["model"] = model
        if stat.providers:
            data["provider"] = stat.providers.most_common(1)[0][0]
        if status:
            data["status"] = status
        if stat.request_ids:
            data["request_id"] = redact(stat.request_ids[0], home)
            data["request_ids"] = [redact(r, home) for r in stat.request_ids]
        suffix = " (explained by another finding)" if strength is Strength.CONTEXT else ""
        findings.append(
            Finding(
                sig.cause,
                strength,
                f"{sig.title}: seen {stat.count}x {seen_in}{when}{suffix}",
                data,
                (NextStep(sig.remedy),),
            )
        )
    findings += pattern_findings(result, patterns)
    return findings


def _dominant(result: ScanResult, causes: tuple[str, ...]) -> str:
    counts = {c: sum(s.count for s in result.stats.values() if s.cause == c) for c in causes}
    return max(causes, key=lambda c: (counts[c], -causes.index(c)))


def pattern_findings(result: ScanResult, patterns: Patterns) -> list[Finding]:
    """Findings for the time/model patterns: weak evidence at most, context when they only describe."""
    out: list[Finding] = []
    if patterns.peak_hours is not None:
        a, b = patterns.peak_hours
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.WEAK,
                f"{patterns.peak_share:.0%} of dated errors fall between {a:02d}:00 and {b:02d}:00 on several days: "
                "a peak-hour cluster, typical of provider capacity",
                {"pattern": "peak_hours", "from_hour": a, "to_hour": b, "share": round(patterns.peak_share, 3)},
                (NextStep("Move long or batch jobs outside the peak hours."),),
            )
        )
    if patterns.model_spread == "one":
        model = next(iter(patterns.by_model))
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.WEAK,
                f"the errors name one model only ({model}): a model-specific shortage, not your account",
                {"pattern": "one_model", "model": model},
                (NextStep(f"Try another model than {model} for now."),),
            )
        )
    elif patterns.model_spread == "many":
        cause = _dominant(result, ("quota", "account"))
        out.append(
            Finding(
                Cause(cause),
                Strength.WEAK,
                f"the errors hit {len(patterns.by_model)} different models: something account-wide, not one model",
                {"pattern": "many_models", "models": list(patterns.by_model)[:6]},
            )
        )
    if patterns.bursts:
        biggest = max(patterns.bursts, key=lambda b: b.count)
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.CONTEXT,
                f"{len(patterns.bursts)} burst(s) of errors; the largest: {biggest.count} errors from "
                f"{stamp(datetime.fromisoformat(biggest.start))}",
                {"pattern": "bursts", "bursts": len(patterns.bursts), "largest": biggest.count},
            )
        )
    if patterns.retries:
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.CONTEXT,
                f"{patterns.retries} error(s) were retried by the client; {patterns.retries_succeeded} of them "
                "were followed by a completed request",
                {"pattern": "retries", "retries": patterns.retries, "succeeded": patterns.retries_succeeded},
            )
        )
    last = last_error(result)
    if last is not None:
        out.append(
            Finding(
                Cause(last["cause"]),
                Strength.CONTEXT,
                f"last error before the log went quiet: {last['title']}, at "
                + (
                    stamp(datetime.fromisoformat(last["ts"].replace("Z", "+00:00")))
                    if last["ts"]
                    else "an undated line"
                ),
                {"pattern": "last_error_before_quiet", **last},
            )
        )
    return out


def last_error(result: ScanResult) -> dict[str, Any] | None:
    """The newest error event if nothing completed after it in its file (the log 'went quiet' on it)."""
    if not result.events:
        return None
    newest = itemgetter(0)  # Event.ts: read by index, once per event of a dense log
    last = max((e for e in result.events if e[0] is not None), key=newest, default=result.events[-1])
    if result.last_success.get(last.path, -1) > last.offset:
        return None
    row = by_id().get(last.signature)  # history's failures with no wording (a reset, a refusal) have no row
    return {
        "signature": last.signature,
        "title": row.title if row else f"{last.cause} failure ({last.signature or 'no error text'})",
        "cause": last.cause,
        "ts": _iso(last.ts),
        "model": last.model,
    }


def logs_result(result: ScanResult, patterns: Patterns, home: str | None = None, stage: Any = None) -> CheckResult:
    """The logs stage as a `CheckResult`: skip when nothing was readable, warn when errors were found."""
    stage = stage or LogsStage()
    read = [f for f in result.files if f.skipped is None]
    details = tuple(f"skipped {f.path}: {f.skipped}" for f in result.files if f.skipped)
    data = {
        "files": len(result.files),
        "read": len(read),
        "engine": result.engine,
        "by_cause": by_cause(result),
        "by_hour": patterns.by_hour,
        "by_model": patterns.by_model,
        "bursts": [b.to_dict() for b in patterns.bursts[:20]],
    }
    if not read:
        reason = (
            "no readable logs"
            + (f" ({len(result.files)} skipped)" if result.files else " found")
            + "; files older than --since are left out (try --since all)"
        )
        return result_of(stage, Status.SKIP, reason, details=details, data=data)
    findings = build_findings(result, patterns, home)
    total = sum(s.count for s in result.stats.values())
    if not total:
        if result.unplaced:  # an error all the same, that no row placed: `none` would say there is none
            data["unplaced"] = result.unplaced
            return result_of(
                stage,
                Status.WARN,
                f"no known error signature in {len(read)} log file(s), but they hold {result.unplaced} "
                "that capdoctor cannot place",
                details=details,
                data=data,
            )
        return result_of(
            stage, Status.PASS, f"no known error signatures in {len(read)} log file(s)", details=details, data=data
        )
    top = max(result.stats.values(), key=lambda s: s.count)
    summary = (
        f"{total} error line(s) in {len(read)} file(s); most frequent: {by_id()[top.signature].title} ({top.count}x)"
    )
    return result_of(stage, Status.WARN, summary, findings=findings, details=details, data=data)


def verdict_of(check: CheckResult) -> Verdict:
    """The verdict from the logs alone: the same pure function `diagnose` uses."""
    from capdoctor.verdict.decision import decide

    return decide([check])


def by_cause(result: ScanResult) -> dict[str, int]:
    """Error records per cause (each record counted once, under its best match)."""
    counts = Counter(map(itemgetter(1), result.events))  # Event.cause; counted in C, in order of first sight
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def to_json(
    result: ScanResult, patterns: Patterns, verdict: Verdict, home: Path | None, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The `capdoctor/logs-v1` document (redacted)."""
    redact = _redactor()
    h = str(home) if home else None
    stats = sorted(result.stats.values(), key=lambda s: (-s.count, s.signature))
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "engine": result.engine,
        "older_than_since": result.too_old,
        "files": [
            {
                "path": redact(f.path, h),
                "bytes": f.bytes,
                "lines": f.lines,
                "skipped": f.skipped,
                **({"note": f.note} if f.note else {}),
            }
            for f in result.files
        ],
        "matches": [
            {
                "signature": s.signature,
                "title": by_id()[s.signature].title,
                "cause": s.cause,
                "count": s.count,
                "first": _iso(s.first),
                "last": _iso(s.last),
                "example": redact(s.example, h),
                "models": dict(s.models.most_common(5)),
                "providers": dict(s.providers.most_common(3)),
                "request_ids": [redact(r, h) for r in s.request_ids],
            }
            for s in stats
        ],
        "by_cause": by_cause(result),
        "by_hour": {f"{k:02d}": v for k, v in patterns.by_hour.items()},
        "by_day": patterns.by_day,
        "by_model": patterns.by_model,
        "patterns": {
            "peak_hours": list(patterns.peak_hours) if patterns.peak_hours else None,
            "peak_share": round(patterns.peak_share, 3),
            "model_spread": patterns.model_spread,
            "bursts": [b.to_dict() for b in patterns.bursts[:20]],
            "retries": patterns.retries,
            "retries_succeeded": patterns.retries_succeeded,
            "last_error_before_quiet": last_error(result),
        },
        "verdict": verdict.to_dict(),
    }
    if extra:
        doc.update(extra)
    return doc
