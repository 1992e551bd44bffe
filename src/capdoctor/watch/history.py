"""What the recorded rounds show over time: error rates by hour of day and by model, streaks, and a verdict.

Contract: `analyse(rounds)` turns stored rounds (live and imported alike) into the scanner's own shapes (an
`Event` per failed attempt, per-signature `SigStat`s) and hands them to the log scanner's pattern analysis and
finding rules, then to the one `verdict.decide`: no second rule set, so the same errors weigh the same read from
a log or seen live. Hours of day are local time (`tz`, else the machine's). `document(...)` lays the result out
as `capdoctor/history-v1`. Pure; redaction is the caller's, at the boundary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from statistics import median
from typing import Any

from capdoctor.logscan.patterns import Patterns
from capdoctor.logscan.scanner import Event, ScanResult, SigStat
from capdoctor.model import CheckResult, Status, Verdict, result_of
from capdoctor.watch.records import LOGS, WATCH, AttemptRecord, RoundRecord

SCHEMA = "capdoctor/history-v1"
UNKNOWN_MODEL = "unknown"


class HistoryStage:
    """The identity the history's evidence carries in the verdict (like the logs stage's)."""

    id = "history"
    title = "History"
    stage = 9


@dataclass(frozen=True)
class Outage:
    """The longest run of consecutive watch rounds in which the primary model never answered."""

    started: float
    ended: float
    rounds: int


@dataclass(frozen=True)
class Analysis:
    """The patterns, the evidence and the verdict of a history."""

    patterns: Patterns
    check: CheckResult
    verdict: Verdict
    outage: Outage | None


def _local(at: float, tz: tzinfo | None) -> datetime:
    return datetime.fromtimestamp(at, tz) if tz is not None else datetime.fromtimestamp(at).astimezone()


def _iso(at: float | None) -> str | None:
    if at is None:
        return None
    return datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _ordered(rounds: Sequence[RoundRecord]) -> list[tuple[RoundRecord, int, AttemptRecord]]:
    return sorted(
        ((r, i, a) for r in rounds for i, a in enumerate(r.attempts)),
        key=lambda row: (row[2].at, row[0].started, row[1]),
    )


def scan_of(rounds: Sequence[RoundRecord], tz: tzinfo | None = None) -> ScanResult:
    """The failed attempts as the log scanner would have produced them: events and per-signature stats.

    A live attempt after an earlier one of the same model in the same round is a retry, and it "succeeded"
    when a later attempt of that model in the round answered — the retry facts the scanner reads from logs.
    `last_success` holds the index of the last answered attempt, so "went quiet on its last error" works too.
    """
    from capdoctor.classifier.signatures import by_id

    table = by_id()

    result = ScanResult(engine="history")
    for index, (rnd, seq, a) in enumerate(_ordered(rounds)):
        path = rnd.source
        if a.ok:
            result.last_success[path] = index
            continue
        if not a.cause:
            continue
        live = rnd.source == WATCH
        ts = _local(a.at, tz)
        result.events.append(
            Event(
                ts=ts,
                cause=a.cause,
                signature=a.signature or "",
                model=a.model or None,
                retry=live and any(b.model == a.model for b in rnd.attempts[:seq]),
                succeeded=live and any(b.ok and b.model == a.model for b in rnd.attempts[seq + 1 :]),
                path=path,
                line=seq,
                offset=index,
            )
        )
        if a.signature is None or a.signature not in table:
            continue  # counted in the rates and patterns; only rows the table knows become findings
        stat = result.stats.setdefault(a.signature, SigStat(a.signature, table[a.signature].cause.value))
        stat.count += 1
        stat.first = ts if stat.first is None else min(stat.first, ts)
        stat.last = ts if stat.last is None else max(stat.last, ts)
        if not stat.example:
            stat.example = " ".join(p for p in (f"HTTP {a.status}" if a.status else a.kind, a.signature, a.model) if p)
            stat.example_path, stat.example_line = path, seq
        if a.model:
            stat.models[a.model] += 1
        if rnd.provider:
            stat.providers[rnd.provider] += 1
        if a.status:
            stat.statuses[a.status] += 1
        if a.request_id:
            stat.keep_ids((a.request_id,))
    for path in {r.source for r in rounds}:
        result.last_success.setdefault(path, -1)
    return result


def longest_outage(rounds: Sequence[RoundRecord]) -> Outage | None:
    """The longest streak of watch rounds whose primary model never answered (rounds without a primary
    attempt neither extend nor break a streak)."""
    best: Outage | None = None
    run: list[RoundRecord] = []
    for rnd in sorted((r for r in rounds if r.source == WATCH), key=lambda r: r.started):
        failed = rnd.failed
        if failed is None:
            continue
        if failed:
            run.append(rnd)
            if best is None or len(run) > best.rounds:
                best = Outage(run[0].started, run[-1].finished, len(run))
        else:
            run = []
    return best


def analyse(rounds: Sequence[RoundRecord], tz: tzinfo | None = None) -> Analysis:
    """Patterns, findings and the verdict of `rounds` through the log scanner's rules and `verdict.decide`."""
    from capdoctor.logscan import findings, patterns
    from capdoctor.verdict.decision import decide

    scan = scan_of(rounds, tz)
    pats = patterns.analyse(scan.events)
    live = [a for r in rounds if r.source == WATCH for a in r.attempts]
    errors = sum(1 for a in live if not a.ok)
    logged = sum(1 for r in rounds if r.source == LOGS for _ in r.attempts)
    watch_rounds = sum(1 for r in rounds if r.source == WATCH)
    if not live and not logged:
        check = result_of(HistoryStage, Status.SKIP, "no attempts recorded in this period")
    else:
        parts = []
        if live:
            parts.append(
                f"{errors} of {len(live)} attempt(s) failed ({errors / len(live):.0%}) over {watch_rounds} round(s)"
            )
        if logged:
            parts.append(f"{logged} error(s) imported from logs")
        found = findings.build_findings(scan, pats, seen_in="in the history")
        status = Status.WARN if scan.events else Status.PASS
        check = result_of(
            HistoryStage,
            status,
            "; ".join(parts),
            findings=found if scan.events else (),
            data={"bursts": [b.to_dict() for b in pats.bursts[:20]]},
        )
    return Analysis(pats, check, decide([check]), longest_outage(rounds))


def _rate(errors: int, attempts: int) -> float | None:
    return round(errors / attempts, 4) if attempts else None


def by_hour(rounds: Sequence[RoundRecord], tz: tzinfo | None = None) -> dict[str, dict[str, Any]]:
    """Per local hour of day: live attempts, their errors and error rate, and errors imported from logs."""
    rows: dict[str, dict[str, Any]] = {
        f"{h:02d}": {"attempts": 0, "errors": 0, "error_rate": None, "log_errors": 0} for h in range(24)
    }
    for rnd in rounds:
        for a in rnd.attempts:
            row = rows[f"{_local(a.at, tz).hour:02d}"]
            if rnd.source == LOGS:
                row["log_errors"] += 1
            else:
                row["attempts"] += 1
                row["errors"] += int(not a.ok)
    for row in rows.values():
        row["error_rate"] = _rate(row["errors"], row["attempts"])
    return rows


def by_model(rounds: Sequence[RoundRecord]) -> dict[str, dict[str, Any]]:
    """Per model: live attempts, errors, error rate, log errors, causes and median latency."""
    rows: dict[str, dict[str, Any]] = {}
    latencies: dict[str, list[int]] = {}
    for rnd in rounds:
        for a in rnd.attempts:
            name = a.model or UNKNOWN_MODEL
            row = rows.setdefault(
                name,
                {
                    "attempts": 0,
                    "errors": 0,
                    "error_rate": None,
                    "log_errors": 0,
                    "causes": Counter(),
                    "latency_ms_median": None,
                },
            )
            if rnd.source == LOGS:
                row["log_errors"] += 1
            else:
                row["attempts"] += 1
                row["errors"] += int(not a.ok)
                if a.latency_ms is not None:
                    latencies.setdefault(name, []).append(a.latency_ms)
            if not a.ok and a.cause:
                row["causes"][a.cause] += 1
    for name, row in rows.items():
        row["error_rate"] = _rate(row["errors"], row["attempts"])
        row["causes"] = dict(row["causes"].most_common())
        if latencies.get(name):
            row["latency_ms_median"] = int(median(latencies[name]))
    return dict(sorted(rows.items(), key=lambda kv: (-(kv[1]["errors"] + kv[1]["log_errors"]), kv[0])))


def _offset(tz: tzinfo | None, at: float) -> str:
    return _local(at, tz).isoformat()[-6:] if at else "+00:00"


def document(
    rounds: Sequence[RoundRecord],
    analysis: Analysis,
    *,
    version: str,
    since: float | None,
    now: float,
    tz: tzinfo | None = None,
) -> dict[str, Any]:
    """The `capdoctor/history-v1` document (not yet redacted: the caller redacts at the boundary)."""
    live = [a for r in rounds if r.source == WATCH for a in r.attempts]
    errors = sum(1 for a in live if not a.ok)
    failed = [a for r in rounds for a in r.attempts if not a.ok]
    pats, verdict, outage = analysis.patterns, analysis.verdict, analysis.outage
    watch_rounds = [r for r in rounds if r.source == WATCH]
    return {
        "schema": SCHEMA,
        "version": version,
        "since": _iso(since),
        "timezone": _offset(tz, now),
        "rounds": [
            {
                "started": _iso(r.started),
                "finished": _iso(r.finished),
                "source": r.source,
                "kind": r.kind,
                "provider": r.provider,
                "model": r.model,
                "verdict": r.verdict,
                "confidence": r.confidence,
                "attempts": [{**a.to_dict(), "at": _iso(a.at)} for a in r.attempts],
                **({"quota": dict(r.quota)} if r.quota else {}),
            }
            for r in rounds
        ],
        "by_hour": by_hour(rounds, tz),
        "by_model": by_model(rounds),
        "summary": {
            "rounds": len(watch_rounds),
            "log_imports": len(rounds) - len(watch_rounds),
            "attempts": len(live),
            "errors": errors,
            "error_rate": _rate(errors, len(live)),
            "log_errors": sum(1 for r in rounds if r.source == LOGS for _ in r.attempts),
            "first": _iso(min((r.started for r in rounds), default=None)),
            "last": _iso(max((r.finished for r in rounds), default=None)),
            "causes": dict(Counter(a.cause or "unknown" for a in failed).most_common()),
            "verdicts": dict(Counter(r.verdict for r in watch_rounds).most_common()),
            "peak_hours": None
            if pats.peak_hours is None
            else {"from": pats.peak_hours[0], "to": pats.peak_hours[1], "share": round(pats.peak_share, 3)},
            "model_spread": pats.model_spread,
            "retries": pats.retries,
            "retries_succeeded": pats.retries_succeeded,
            "longest_outage": None
            if outage is None
            else {
                "started": _iso(outage.started),
                "ended": _iso(outage.ended),
                "rounds": outage.rounds,
                "seconds": round(outage.ended - outage.started, 1),
            },
        },
        "bursts": [b.to_dict() for b in pats.bursts[:20]],
        "verdict": verdict.to_dict(),
    }
