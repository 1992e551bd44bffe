"""The proxy's side of the history: schema 2 migrates a watch history in place, a history that cannot be written
costs one warning and no forwarding, a burst of failures takes one network snapshot, and what is judged of an
exchange follows the one engine."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from capdoctor.proxy.burst import Bursts
from capdoctor.proxy.exchange import Observed, client_of, model_of
from capdoctor.proxy.recording import Recorder, judge
from capdoctor.watch.records import PROBE, PROXY, WATCH, AttemptRecord, RoundRecord
from capdoctor.watch.store import MIGRATIONS, Store
from tests.support.proxy_support import WAIT_S, running_proxy

FAILED_EVENT = (
    '{"type":"response.failed","response":{"error":{"code":"server_is_overloaded",'
    '"message":"Selected model is at capacity. Please try a different model."}}}'
)


def _obs(**kw: Any) -> Observed:
    base: dict[str, Any] = {
        "started": 1_700_000_000.0,
        "method": "POST",
        "path": "/v1/chat/completions",
        "prefix": "",
        "upstream": "https://api.openai.com",
        "provider": "openai",
        "local": False,
        "client": "codex",
        "client_version": "0.50.0",
        "model": "gpt-5.5",
        "status": 200,
        "stream": False,
        "outcome": "completed",
        "bytes": 10,
        "ttfb_ms": 5.0,
        "total_ms": 9.0,
    }
    base.update(kw)
    return Observed(**base)


def test_a_schema_1_history_is_migrated_and_its_rounds_read_as_probes(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    with Store.open(db, migrations=MIGRATIONS[:1]) as old:  # what a capdoctor of schema 1 wrote
        assert old.version == 1
        old.conn.execute(
            "INSERT INTO rounds (started, finished, source, provider, model, verdict, confidence) "
            "VALUES (1, 2, 'watch', 'openai', 'gpt-5.5', 'none', 0.9)"
        )
        old.conn.execute(
            "INSERT INTO attempts (round_id, seq, at, model, role, ok) VALUES (1, 0, 1.5, 'gpt-5.5', 'primary', 1)"
        )
    with Store.open(db) as store:
        assert store.version == len(MIGRATIONS) == 2
        (stored,) = store.rounds()
        assert stored.record.kind == PROBE and stored.record.attempts[0].role == "primary"
        store.record(
            judge(
                _obs(
                    status=529,
                    error_body='{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                    provider="anthropic",
                )
            ),
            None,
        )
        ((rnd, ex),) = store.exchanges()
    assert rnd.kind == PROXY and rnd.attempts[0].cause == "capacity" and ex.client == "codex"


@pytest.mark.parametrize(
    ("kw", "ok", "cause", "kind"),
    [
        ({}, True, None, "ok"),
        (
            {"status": 503, "error_body": '{"error":{"message":"Selected model is at capacity"}}'},
            False,
            "capacity",
            "http_error",
        ),
        (
            {
                "status": 429,
                "error_body": '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}',
            },
            False,
            "quota",
            "http_error",
        ),
        (
            {
                "stream": True,
                "outcome": "error_event",
                "error_event": FAILED_EVENT,
            },
            False,
            "capacity",
            "stream_error",
        ),
        ({"stream": True, "outcome": "cut"}, False, "network", "cut"),
        (
            {"status": None, "outcome": "upstream_failed", "failure_kind": "refused", "ttfb_ms": None},
            False,
            "network",
            "refused",
        ),
        ({"stream": True, "outcome": "cancelled"}, True, None, "cancelled"),
        ({"status": None, "outcome": "cancelled", "ttfb_ms": None}, False, None, "cancelled"),
    ],
)
def test_judge_reads_each_outcome(kw: dict[str, Any], ok: bool, cause: Any, kind: str) -> None:
    a = judge(_obs(**kw)).attempts[0]
    assert (a.ok, a.cause, a.kind) == (ok, cause, kind)


def test_error_text_is_redacted_and_bounded() -> None:
    key = "sk-proj-" + "s" * 40
    body = '{"error":{"message":"Incorrect API key provided: ' + key + " " + "x" * 2000 + '","code":"invalid_api_key"}}'
    ex = judge(_obs(status=401, error_body=body, secrets=(key,))).exchange
    assert ex is not None and ex.error_text is not None
    assert key not in ex.error_text and len(ex.error_text) <= 500 and "invalid_api_key" in ex.error_text


@pytest.mark.parametrize(
    ("ua", "client"),
    [
        ("claude-cli/2.0.14 (external, cli)", ("claude-code", "2.0.14")),
        ("codex_cli_rs/0.50.0 (Ubuntu 24.4.0; x86_64) xterm", ("codex", "0.50.0")),
        ("GeminiCLI/0.9.0 (linux; x64)", ("gemini-cli", "0.9.0")),
        ("OpenAI/Python 1.99.1", ("openai-python", "1.99.1")),
        ("Anthropic/Python 0.69.0", ("anthropic-python", "0.69.0")),
        ("curl/8.5.0", ("curl", "8.5.0")),
        (None, (None, None)),
    ],
)
def test_client_and_version_come_from_the_user_agent(ua: Any, client: Any) -> None:
    assert client_of(ua) == client


def test_model_comes_from_the_body_or_the_path() -> None:
    assert model_of("/v1/chat/completions", b'{"messages":[],"model":"gpt-5.5"}', "application/json") == "gpt-5.5"
    assert (
        model_of("/v1beta/models/gemini-2.5-pro:streamGenerateContent", b"{}", "application/json") == "gemini-2.5-pro"
    )
    assert model_of("/openai/deployments/my-gpt/chat/completions", b"", None) == "my-gpt"
    assert model_of("/v1/chat/completions", b"not json", "text/plain") is None


def test_an_unwritable_history_warns_once_and_forwarding_goes_on(tmp_path: Path) -> None:
    warnings: list[str] = []
    folder = tmp_path / "is-a-folder"
    folder.mkdir()
    rec = Recorder(folder, 30.0, None, None, lambda line: None, warnings.append)
    for status in (200, 503, 503):
        rec.submit(_obs(status=status, error_body='{"error":{"message":"overloaded"}}' if status != 200 else None))
    rec.flush()
    rec.close()
    assert rec.exchanges == 3 and rec.recorded == 0
    assert len(warnings) == 1 and "forwarding goes on" in warnings[0]


def _failed(at: float) -> RoundRecord:
    return RoundRecord(
        at,
        at,
        WATCH,
        "openai",
        "m",
        "capacity",
        1.0,
        attempts=(AttemptRecord(at, "m", "proxy", False, cause="capacity"),),
    )


def _ok(at: float) -> RoundRecord:
    return RoundRecord(at, at, WATCH, "openai", "m", "none", 1.0, attempts=(AttemptRecord(at, "m", "proxy", True),))


def test_one_burst_gives_one_snapshot() -> None:
    taken: list[float] = []
    bursts = Bursts(3, 60.0, lambda rnd: taken.append(rnd.started) or ..., lambda snap: None, lambda line: None)  # type: ignore[func-returns-value,arg-type,return-value]
    fired = [bursts.observe(r) for r in (_failed(0), _failed(10), _failed(20), _failed(30), _ok(31), _failed(40))]
    assert fired == [False, False, True, False, False, False]
    spread = Bursts(3, 60.0, lambda rnd: ..., lambda snap: None, lambda line: None)  # type: ignore[arg-type,return-value]
    assert not any(spread.observe(_failed(t)) for t in (0, 100, 200, 300))  # never 3 within 60 s
    for t in bursts.threads:
        t.join(WAIT_S)
    assert taken == [20]


@pytest.mark.scenario("capacity")
def test_a_burst_records_how_the_network_looked(sim: Any, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    chat = {"model": "gpt-5.5", "messages": []}
    with running_proxy([sim.url], db, provider="openai", network_checks=True, burst_failures=2) as proxy:
        with httpx.Client() as client:
            for _ in range(2):
                client.post(
                    proxy.url + "/v1/chat/completions",
                    json=chat,
                    headers={"authorization": "Bearer sk-test-" + "z" * 30},
                )
        deadline = time.monotonic() + 60
        snaps: list[Any] = []
        while time.monotonic() < deadline and not snaps:
            time.sleep(0.25)
            with Store.open(db) as store:
                snaps = store.snapshots()
        proxy.close()
    assert snaps, "no network snapshot was recorded"
    (snap,) = snaps
    assert snap.reason == "burst" and {c["id"] for c in snap.data["checks"]} == {"proxy", "paths"}
    with sqlite3.connect(db) as conn:
        assert "sk-test-" not in str(conn.execute("SELECT data FROM snapshots").fetchall())


@pytest.mark.parametrize("scenario", ["capacity", "quota", "auth", "region", "engine-overloaded", "codex-usage-limit"])
def test_the_proxy_names_the_cause_explain_names(sim: Any, tmp_path: Path, scenario: str) -> None:
    from capdoctor.logscan.explain import explain

    sim.set_scenario(scenario)
    db = tmp_path / "h.sqlite3"
    with running_proxy([sim.url], db, provider="openai") as proxy:
        got = httpx.post(
            proxy.url + "/v1/chat/completions",
            json={"model": "gpt-5.5", "messages": []},
            headers={"authorization": "Bearer sk-test-" + "e" * 30},
        )
        proxy.close()
    with Store.open(db) as store:
        ((rnd, _),) = store.exchanges()
    assert got.status_code >= 400
    assert (
        rnd.attempts[0].cause
        == explain(f"HTTP {got.status_code} {got.text}").verdict.cause
        == sim.scenario.expected_cause
    )
