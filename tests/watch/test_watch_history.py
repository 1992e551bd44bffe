"""The history's analysis: rates by local hour and by model, streaks, and a verdict that comes from the log
scanner's pattern and finding rules and the one `verdict.decide` — checked against `capdoctor logs` itself."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from capdoctor.watch import history
from capdoctor.watch.records import WATCH, AttemptRecord, RoundRecord
from tests.conftest import run_cli

PLUS2 = timezone(timedelta(hours=2))
DAY0 = datetime(2026, 11, 2, tzinfo=PLUS2)


def _attempt(
    at: float,
    model: str,
    ok: bool,
    cause: str = "capacity",
    role: str = "primary",
    signature: str = "openai.server_is_overloaded",
    status: int = 503,
) -> AttemptRecord:
    return AttemptRecord(
        at=at,
        model=model,
        role=role,
        ok=ok,
        status=200 if ok else status,
        kind="ok" if ok else "http_error",
        signature=None if ok else signature,
        cause=None if ok else cause,
        latency_ms=50,
        request_id="req_abc",
    )


def _round(when: datetime, attempts: list[tuple[str, bool]], **kw: str) -> RoundRecord:
    t = when.timestamp()
    rows = tuple(
        _attempt(t, m, ok, role="primary" if i == 0 or m == attempts[0][0] else "alternative", **kw)
        for i, (m, ok) in enumerate(attempts)
    )
    return RoundRecord(t, t + 3, WATCH, "openai", attempts[0][0], "capacity", 0.8, "", rows)


def peak_hour_rounds() -> list[RoundRecord]:
    """Three days of hourly rounds: the primary fails 2 of 3 attempts between 14:00 and 17:59 (UTC+2) and
    answers at once at every other hour; the lighter model always answers."""
    rounds = []
    for day in range(3):
        for hour in range(24):
            when = DAY0 + timedelta(days=day, hours=hour)
            if 14 <= hour < 18:
                rounds.append(
                    _round(when, [("gpt-5.5", False), ("gpt-5.5", False), ("gpt-5.5", True), ("gpt-5.4-mini", True)])
                )
            else:
                rounds.append(_round(when, [("gpt-5.5", True)]))
    return rounds


def test_rates_by_local_hour_and_by_model() -> None:
    rounds = peak_hour_rounds()
    hours = history.by_hour(rounds, PLUS2)
    assert hours["15"] == {"attempts": 12, "errors": 6, "error_rate": 0.5, "log_errors": 0}
    assert hours["03"] == {"attempts": 3, "errors": 0, "error_rate": 0.0, "log_errors": 0}
    utc = history.by_hour(rounds, timezone.utc)  # the same instants two hours earlier on a UTC clock
    assert utc["13"] == hours["15"]
    models = history.by_model(rounds)
    assert models["gpt-5.5"]["attempts"] == 20 * 3 + 4 * 3 * 3
    assert models["gpt-5.5"]["errors"] == 4 * 3 * 2
    assert models["gpt-5.5"]["causes"] == {"capacity": 24}
    assert models["gpt-5.4-mini"]["error_rate"] == 0.0


def test_peak_hours_argue_capacity_through_the_shared_rules() -> None:
    rounds = peak_hour_rounds()
    analysis = history.analyse(rounds, PLUS2)
    assert analysis.patterns.peak_hours == (14, 18)
    assert analysis.patterns.model_spread == "one"
    assert analysis.patterns.retries == 12 and analysis.patterns.retries_succeeded == 12
    assert analysis.verdict.cause == "capacity"
    kinds = {f.data.get("pattern") for f in analysis.check.findings}
    assert {"peak_hours", "one_model"} <= kinds
    assert any("seen 24x in the history" in f.message for f in analysis.check.findings)
    assert analysis.outage is None  # the primary answered (on its third attempt) in every round


def test_every_model_failing_argues_quota_and_the_streak_is_measured() -> None:
    rounds = []
    for i in range(12):
        when = DAY0 + timedelta(minutes=5 * i)
        failing = 3 <= i < 9
        pair = [("gpt-5.5", not failing), ("gpt-5.4-mini", not failing)] if failing else [("gpt-5.5", True)]
        rounds.append(_round(when, pair, cause="quota", signature="openai.insufficient_quota", status=429))
    analysis = history.analyse(rounds, PLUS2)
    assert analysis.patterns.model_spread == "many"
    assert analysis.verdict.cause == "quota"
    assert analysis.outage is not None and analysis.outage.rounds == 6
    assert analysis.outage.started == rounds[3].started and analysis.outage.ended == rounds[8].finished
    doc = history.document(rounds, analysis, version="t", since=None, now=DAY0.timestamp(), tz=PLUS2)
    assert doc["schema"] == "capdoctor/history-v1"
    assert doc["timezone"] == "+02:00"
    assert doc["summary"]["longest_outage"]["rounds"] == 6
    assert doc["summary"]["causes"] == {"quota": 12}
    assert doc["summary"]["error_rate"] == round(12 / 18, 4)
    assert doc["verdict"]["cause"] == "quota"
    json.dumps(doc)  # serialisable as is


def test_nothing_recorded_is_not_a_verdict() -> None:
    analysis = history.analyse([])
    assert analysis.verdict.cause == "inconclusive"
    healthy = [_round(DAY0 + timedelta(hours=h), [("gpt-5.5", True)]) for h in range(5)]
    assert history.analyse(healthy).verdict.cause == "none"


LOG_LINE = (
    '{ts} ERROR stream error: {{"error":{{"message":"Our servers are currently overloaded. Please try '
    'again later.","type":"service_unavailable_error","code":"server_is_overloaded"}}}} model=gpt-5.5\n'
)


def test_logs_into_history_gives_the_logs_verdict(tmp_path: Path) -> None:
    """The same errors, read from a log by `capdoctor logs` and from the history by `capdoctor history`,
    weigh the same: one rule set."""
    log = tmp_path / "codex.log"
    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=2)
    lines = [
        LOG_LINE.format(ts=(start + timedelta(hours=h, minutes=m)).isoformat().replace("+00:00", "Z"))
        for h in (0, 24)
        for m in range(0, 60, 6)
    ]
    log.write_text("".join(lines), encoding="utf-8")
    db = tmp_path / "h.db"
    logs = run_cli("logs", str(log), "--json", "--into", str(db), "--since", "30d")
    assert logs.returncode == 3, logs.stderr  # capacity, from the logs alone
    assert f"{len(lines)} error line(s) added" in logs.stderr
    again = run_cli("logs", str(log), "--into", str(db), "--since", "30d")
    assert "0 error line(s) added" in again.stderr and f"{len(lines)} already there" in again.stderr
    hist = run_cli("history", "--db", str(db), "--json")
    doc = json.loads(hist.stdout)
    logs_doc = json.loads(logs.stdout)
    assert doc["verdict"]["cause"] == logs_doc["verdict"]["cause"]
    assert hist.returncode == logs.returncode
    assert doc["summary"]["log_errors"] == len(lines)
    assert doc["summary"]["rounds"] == 0 and doc["summary"]["log_imports"] == 1
    assert sum(row["log_errors"] for row in doc["by_hour"].values()) == len(lines)
    assert doc["by_model"]["gpt-5.5"]["log_errors"] == len(lines)
    text = run_cli("history", "--db", str(db))
    assert "Errors from logs by hour of day" in text.stdout


def test_chart_reads_without_colour_and_in_ascii() -> None:
    from capdoctor.render.history import hour_chart

    rows = {f"{h:02d}": {"attempts": 4, "errors": 0, "error_rate": 0.0, "log_errors": 0} for h in range(24)}
    rows["14"] = {"attempts": 4, "errors": 4, "error_rate": 1.0, "log_errors": 0}
    rows["15"] = {"attempts": 4, "errors": 2, "error_rate": 0.5, "log_errors": 0}
    rows["03"] = {"attempts": 0, "errors": 0, "error_rate": None, "log_errors": 0}
    lines = hour_chart(rows, ascii_only=True)
    assert all(line.isascii() for line in lines)
    col = lambda h: 8 + 3 * h  # noqa: E731 - label width 5, " | ", 3 characters per hour
    bars = lines[1:5]  # 100 %, 75 %, 50 %, 25 %
    assert [row[col(14) : col(14) + 2] for row in bars] == ["##"] * 4
    assert [row[col(15) : col(15) + 2].strip() for row in bars] == ["", "", "##", "##"]
    assert lines[-1].strip() == "no rounds at 03"
    assert "██" in "\n".join(hour_chart(rows))
