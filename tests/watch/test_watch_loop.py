"""The watch loop against the simulator: rounds recorded as the simulator served them, the round budget on
the wire, clean stops on SIGINT/SIGTERM, SIGKILL mid-round, and bad input refused before any request."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from capdoctor.errors import UsageError
from capdoctor.run.context import Target
from capdoctor.run.diagnosis import RunRequest
from capdoctor.watch.command import WatchSettings, history_command, watch_command
from capdoctor.watch.rounds import ROUND_MAX_REQUESTS
from capdoctor.watch.store import Store
from tests.conftest import free_port

GENERATION_PATHS = ("/chat/completions", "/responses")
PRIMARY, ALT = "gpt-5.5", "gpt-5.4-mini"


def _request(sim: Any, home: Path, cwd: Path, timeout: float = 20.0) -> RunRequest:
    target = Target(
        provider="openai",
        base_url=sim.base_url("openai"),
        model=PRIMARY,
        alt_models=(ALT,),
        api_key="sk-test-" + "k" * 24,
        api_key_env="OPENAI_API_KEY",
    )
    options = {"status_url": sim.status_url, "reference_url": sim.url + "/cdn-cgi/trace", "models.backoff_s": 0.01}
    return RunRequest(target=target, env=dict(os.environ), home=home, cwd=cwd, timeout=timeout, options=options)


def _served(sim: Any, log: list[str]) -> list[tuple[float, str, str | None, int]]:
    """(time, path, model, status) of every request the simulator answered, in order.

    The request log has the bodies, the log callback the statuses; both are appended in arrival order and the
    models check sends one request at a time, so the generation requests pair up one to one."""
    gens = [r for r in sim.requests if r["path"].endswith(GENERATION_PATHS)]
    statuses = [int(line.split()[-1]) for line in log if line.split()[1].endswith(GENERATION_PATHS)]
    assert len(gens) == len(statuses)
    return [(r["t"], r["path"], (r["json"] or {}).get("model"), s) for r, s in zip(gens, statuses, strict=True)]


@pytest.mark.scenario("flaky-capacity")
def test_watch_records_what_the_simulator_served(sim: Any, home: Path, tmp_path: Path) -> None:
    log: list[str] = []
    sim.log = log.append
    db = tmp_path / "h.db"
    out, err = io.StringIO(), io.StringIO()
    rounds = 4
    code = watch_command(_request(sim, home, tmp_path), WatchSettings(interval_s=1.0, count=rounds, db=db), out, err)
    assert code == 0, err.getvalue()
    assert "--interval 1 s" in err.getvalue()  # below a minute: the quota warning
    assert len(out.getvalue().splitlines()) == rounds

    served = _served(sim, log)
    per_model = Counter(m for _, _, m, _ in served)
    failed = Counter(m for _, _, m, s in served if s != 200)
    pattern = sim.scenario.pattern  # the primary fails where the scenario's cycle says True
    assert failed[PRIMARY] == sum(pattern[i % len(pattern)] for i in range(per_model[PRIMARY])) > 0
    assert failed[ALT] == 0

    hist_out = io.StringIO()
    verdict_code = history_command(db, None, True, hist_out)
    doc = json.loads(hist_out.getvalue())
    assert doc["schema"] == "capdoctor/history-v1"
    assert doc["summary"]["rounds"] == rounds == len(doc["rounds"])
    for model in (PRIMARY, ALT):
        assert doc["by_model"][model]["attempts"] == per_model[model]
        assert doc["by_model"][model]["errors"] == failed[model]
    assert doc["by_model"][PRIMARY]["error_rate"] == round(failed[PRIMARY] / per_model[PRIMARY], 4)
    assert doc["summary"]["errors"] == sum(failed.values())
    assert doc["summary"]["causes"] == {"capacity": failed[PRIMARY]}
    assert sum(h["attempts"] for h in doc["by_hour"].values()) == len(served)
    assert doc["verdict"]["cause"] == "capacity" and verdict_code == 3
    ids = [a["request_id"] for r in doc["rounds"] for a in r["attempts"]]
    assert all(i and i.startswith("req_") for i in ids) and len(set(ids)) == len(ids)
    assert "sk-test-" not in hist_out.getvalue()

    # the round budget, measured on the wire: requests to the provider and output tokens asked for
    provider_requests = [r for r in sim.requests if r["path"].startswith("/v1/")]
    with Store.open(db) as store:
        recorded = [r.record for r in store.rounds()]
    assert len(recorded) == rounds
    for rnd in recorded:  # the stored times are exact: each round's requests fall between its start and end
        mine = [r for r in provider_requests if rnd.started <= r["t"] <= rnd.finished]
        assert 0 < len(mine) <= ROUND_MAX_REQUESTS
        assert sum(_output_cap(r["json"]) for r in mine) <= 200
    assert sum(1 for r in provider_requests if any(x.started <= r["t"] <= x.finished for x in recorded)) == len(
        provider_requests
    )


def _output_cap(body: Any) -> int:
    if not isinstance(body, dict):
        return 0
    for key in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        if key in body:
            return int(body[key])
    return 0


def test_round_budget_caps_a_generous_option(sim: Any, home: Path, tmp_path: Path) -> None:
    from capdoctor.watch.rounds import round_request

    req = _request(sim, home, tmp_path)
    req.options["models.max_requests"] = 50
    narrowed = round_request(req)
    assert narrowed.options["models.max_requests"] == ROUND_MAX_REQUESTS
    assert [c.id for c in narrowed.checks or []] == ["models", "status", "paths", "quota"]


def test_arguments_are_checked_before_any_request(sim: Any, home: Path, tmp_path: Path) -> None:
    req = _request(sim, home, tmp_path)
    bad_db = tmp_path / "bad.db"
    bad_db.write_bytes(b"garbage" * 500)
    with pytest.raises(UsageError, match="corrupt"):
        watch_command(req, WatchSettings(count=1, db=bad_db), io.StringIO(), io.StringIO())
    with pytest.raises(UsageError, match="does not exist"):
        watch_command(
            req,
            WatchSettings(count=1, db=tmp_path / "h.db", textfile=tmp_path / "no" / "m.prom"),
            io.StringIO(),
            io.StringIO(),
        )
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(UsageError, match="cannot serve metrics"):
            watch_command(
                req, WatchSettings(count=1, db=tmp_path / "h.db", metrics_port=port), io.StringIO(), io.StringIO()
            )
    no_target = RunRequest(target=None, env={}, home=home, cwd=tmp_path)
    with pytest.raises(UsageError, match="no provider target"):
        watch_command(no_target, WatchSettings(count=1, db=tmp_path / "h.db"), io.StringIO(), io.StringIO())
    assert sim.requests == []


def test_widening_the_metrics_host_and_odd_textfile_names_warn(home: Path, tmp_path: Path) -> None:
    from capdoctor.watch.command import _validate

    err = io.StringIO()
    req = RunRequest(target=Target("openai", "http://127.0.0.1:1/v1", "gpt-5.5"), env={}, home=home, cwd=tmp_path)
    _validate(
        req, WatchSettings(metrics_port=9, metrics_host="192.0.2.10", textfile=tmp_path / "m.txt"), err, lambda s: s
    )
    text = err.getvalue()
    assert "--metrics-host 192.0.2.10" in text and "reachable from other machines" in text
    assert "only files ending in .prom" in text
    err = io.StringIO()
    _validate(req, WatchSettings(metrics_port=9, metrics_host="::1", interval_s=300), err, lambda s: s)
    assert err.getvalue() == ""


# -- the CLI as a process: signals


def _config(sim: Any, cwd: Path) -> None:
    (cwd / "capdoctor.toml").write_text(
        f'[options]\nstatus_url = "{sim.status_url}"\nreference_url = "{sim.url}/cdn-cgi/trace"\n'
        '"models.backoff_s" = 0.01\n',
        encoding="utf-8",
    )


def _spawn(sim: Any, cwd: Path, db: Path, *extra: str) -> subprocess.Popen[str]:
    env = dict(os.environ, OPENAI_API_KEY="sk-test-" + "w" * 24)
    args = [
        sys.executable,
        "-m",
        "capdoctor",
        "watch",
        "--provider",
        "openai",
        "--base-url",
        sim.base_url("openai"),
        "--model",
        PRIMARY,
        "--alt-model",
        ALT,
        "--db",
        str(db),
        *extra,
    ]
    return subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(predicate: Any, timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _rounds_in(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_between_rounds_stops_cleanly(sim: Any, tmp_path: Path) -> None:
    _config(sim, tmp_path)
    db = tmp_path / "h.db"
    proc = _spawn(sim, tmp_path, db, "--interval", "600")
    try:
        _wait_for(lambda: _rounds_in(db) == 1, what="the first round")
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert len(out.splitlines()) == 1
    assert "1 round(s) recorded" in err and "Traceback" not in err
    assert "sk-test-" not in out + err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.scenario("blackhole")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_during_a_round_abandons_it(sim: Any, tmp_path: Path, signum: int) -> None:
    _config(sim, tmp_path)
    db = tmp_path / "h.db"
    proc = _spawn(sim, tmp_path, db, "--timeout", "120")
    try:
        _wait_for(lambda: any(r["path"].startswith("/v1/") for r in sim.requests), what="the round's first request")
        t0 = time.monotonic()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert took < 30  # far below the round's 120 s deadline: the round was abandoned, not waited for
    assert "0 round(s) recorded" in err and "Traceback" not in err
    with Store.open(db) as store:
        assert store.integrity() == "ok" and store.rounds() == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_mid_round_leaves_the_history_intact(sim: Any, tmp_path: Path) -> None:
    _config(sim, tmp_path)
    db = tmp_path / "h.db"
    proc = _spawn(sim, tmp_path, db, "--interval", "1", "--timeout", "120")
    try:
        _wait_for(lambda: _rounds_in(db) >= 2, what="two rounds")
        sim.set_scenario("blackhole")
        seen = len(sim.requests)
        _wait_for(lambda: any(r["path"].startswith("/v1/") for r in sim.requests[seen:]), what="a hanging round")
        time.sleep(0.2)
        before = _rounds_in(db)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    with Store.open(db) as store:
        assert store.integrity() == "ok"
        rounds = store.rounds()
    assert len(rounds) == before >= 2
    assert all(r.record.attempts and r.record.verdict for r in rounds)


def test_history_of_a_missing_database_is_a_usage_error(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("history", "--db", str(tmp_path / "none.db"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no history database" in proc.stderr


def test_history_text_view(sim: Any, home: Path, tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    watch_command(
        _request(sim, home, tmp_path), WatchSettings(interval_s=1, count=2, db=db), io.StringIO(), io.StringIO()
    )
    out = io.StringIO()
    code = history_command(db, "1d", False, out, ascii_only=True)
    text = out.getvalue()
    assert code == 0
    assert "capdoctor history: 2 round(s)" in text
    assert "Error rate by hour of day" in text and "By model" in text and "Verdict from the history: none" in text
    assert text.isascii()


def test_metrics_port_serves_during_watch(sim: Any, home: Path, tmp_path: Path) -> None:
    import urllib.request

    port = free_port()
    stop = threading.Event()
    result: dict[str, int] = {}

    def run() -> None:
        result["code"] = watch_command(
            _request(sim, home, tmp_path),
            WatchSettings(
                interval_s=600, db=tmp_path / "h.db", metrics_port=port, textfile=tmp_path / "capdoctor.prom"
            ),
            io.StringIO(),
            io.StringIO(),
            stop=stop,
        )

    t = threading.Thread(target=run)
    t.start()
    try:
        _wait_for(
            lambda: (
                (tmp_path / "capdoctor.prom").exists()
                and b"capdoctor_round_timestamp_seconds " in (tmp_path / "capdoctor.prom").read_bytes()
            ),
            what="the first round's textfile",
        )
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            body = resp.read().decode()
    finally:
        stop.set()
        t.join(timeout=60)
    assert result["code"] == 0
    from tests.watch.test_watch_metrics import samples

    got = samples(body)
    served = sum(1 for r in sim.requests if r["path"].endswith(GENERATION_PATHS) and r["json"]["model"] == PRIMARY)
    labels = (("cause", "none"), ("model", PRIMARY), ("outcome", "ok"), ("provider", "openai"))
    assert got[("capdoctor_probe_requests_total", labels)] == served > 0  # healthy: every probe answered
    assert got[("capdoctor_verdict", (("cause", "none"),))] == 1
