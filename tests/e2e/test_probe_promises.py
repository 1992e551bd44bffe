"""What issue #12 promises, run end to end against the simulator: intermittent capacity is caught, a missing key
is named, `--no-inference` never says "no problem", a resetting target is answered quickly, and a diagnosis
never sends more than 12 requests nor asks more than 200 output tokens of the provider (counted at the
simulator, and by the run's budget)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from capdoctor.cli.demo import client_target, demo_key
from capdoctor.probes.http_budget import requested_output_tokens
from capdoctor.simulator import scenarios
from capdoctor.simulator.replies import CAPACITY
from capdoctor.simulator.scenarios import SCENARIOS, Scenario
from capdoctor.simulator.server import Simulator
from tests.conftest import run_cli

RUN_CAP = 12
"""Requests one diagnosis may send to the provider, every check together (`run.max_provider_requests`)."""
TOKEN_CAP = 200
"""Output tokens its generations may ask for, together (`run.max_output_tokens`)."""


def _diagnose(
    sim: Simulator, *extra: str, keyed: bool = True, only: str = "models,status,quota", cwd: Path | None = None
) -> tuple[int, dict[str, Any]]:
    """`capdoctor diagnose --json` against the simulator's OpenAI shape (gpt-5.5, alternative gpt-5.4-mini);
    `keyed`: OPENAI_API_KEY holds a (fake) key of OpenAI's shape, as a configured user's would."""
    provider, base_url = client_target(sim, "openai")
    args = ["diagnose", "--json", "--timeout", "30", "--provider", provider, "--base-url", base_url]
    args += ["--model", "gpt-5.5", "--alt-model", "gpt-5.4-mini", "--only", only, *extra]
    proc = run_cli(*args, env={"OPENAI_API_KEY": demo_key("openai")} if keyed else None, cwd=cwd, timeout=90)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return proc.returncode, json.loads(proc.stdout)


def _check(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["id"] == check_id)


@pytest.fixture
def status_config(tmp_path: Path) -> Any:
    """A project dir whose capdoctor.toml points the status check at the simulator's page."""

    def make(sim: Simulator) -> Path:
        (tmp_path / "capdoctor.toml").write_text(f'[options]\nstatus_url = "{sim.status_url}"\n', encoding="utf-8")
        return tmp_path

    return make


# ------------------------------------------------------------------ intermittent overload at 50-70 %

PATTERNS = {
    "50% success first": (False, True),
    "50% failure first": (True, False),
    "60% success first": (False, True, True, False, True),
    "70% success first": (False, True, True, True, False, True, True, False, True, True),
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_intermittent_overload_is_capacity(
    name: str, monkeypatch: pytest.MonkeyPatch, status_config: Any, home: Path
) -> None:
    key = "intermittent-" + name.replace(" ", "-").replace("%", "pct")
    monkeypatch.setitem(
        scenarios.SCENARIOS,
        key,
        Scenario(key, name, "capacity", replies=CAPACITY, fails="primary", pattern=PATTERNS[name]),
    )
    with Simulator(key) as sim:
        code, report = _diagnose(sim, cwd=status_config(sim))
    verdict, primary = report["verdict"], _check(report, "models")["data"]["models"][0]
    assert (verdict["cause"], code) == ("capacity", 3), verdict
    assert primary["attempted"] == 3 and primary["failed"] >= 1
    assert primary["failure_rate"] == f"{primary['failed']} of 3 attempts overloaded"
    assert primary["signatures"]
    if primary["failed"] == 1:  # one capacity failure among successes: intermittent capacity, said so
        assert verdict["confidence"] >= 0.4, verdict
        assert any("1 of 3" in e for e in verdict["evidence"]), verdict["evidence"]
        assert any("off-peak" in s["text"] for s in verdict["next_steps"])


# ------------------------------------------------------------------ the key first


def test_an_unset_key_variable_is_client_naming_the_variable(status_config: Any, home: Path) -> None:
    with Simulator("no-key") as sim:
        code, report = _diagnose(sim, "--api-key-env", "MY_UNSET_KEY", keyed=False, cwd=status_config(sim))
        generations = [r for r in sim.requests if r["method"] == "POST"]
    verdict = report["verdict"]
    assert (verdict["cause"], code) == ("client", 8), verdict
    assert "MY_UNSET_KEY" in verdict["evidence"][0] and "flag --api-key-env" in verdict["evidence"][0]
    assert {r["cause"]: r["score"] for r in verdict["ranking"]}["account"] == 0  # the 401 is the key's doing
    assert generations == []  # nothing was spent once the key was known to be missing
    key = _check(report, "models")["data"]["key"]
    assert (key["variable"], key["state"], key["name_source"]) == ("MY_UNSET_KEY", "unset", "flag --api-key-env")


# ------------------------------------------------------------------ --no-inference


def test_no_inference_against_a_failing_model_is_not_none(status_config: Any, home: Path) -> None:
    with Simulator("capacity") as sim:
        code, report = _diagnose(sim, "--no-inference", cwd=status_config(sim))
        assert not [r for r in sim.requests if r["method"] == "POST"]  # spent nothing
    verdict = report["verdict"]
    assert verdict["cause"] != "none" and code != 0, verdict
    assert verdict["cause"] == "inconclusive" and "capacity" in verdict["summary"]
    assert "--no-inference" in verdict["summary"]


def test_an_unreadable_status_page_is_named_and_lowers_no_problem(status_config: Any, home: Path) -> None:
    with Simulator("status-broken") as sim:
        code, report = _diagnose(sim, cwd=status_config(sim))
    verdict = report["verdict"]
    assert (verdict["cause"], code) == ("none", 0)
    assert verdict["confidence"] <= 0.7 and "the status page (could not be read: HTTP 500)" in verdict["summary"]
    with Simulator("healthy") as sim:
        _, full = _diagnose(sim, cwd=status_config(sim))
    assert full["verdict"]["cause"] == "none" and full["verdict"]["confidence"] >= 0.85


# ------------------------------------------------------------------ a target that resets every request


def test_a_target_that_resets_every_request_is_answered_quickly(home: Path) -> None:
    with Simulator("reset") as sim:
        code, report = _diagnose(sim, only="models,paths")
    assert (report["verdict"]["cause"], code) == ("network", 6)
    models = _check(report, "models")
    assert models["data"]["requests"] == 2 and "connection failures in a row" in models["data"]["stopped"]


# ------------------------------------------------------------------ the whole run's request budget


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_diagnosis_sends_at_most_12_requests_to_the_provider(name: str, home: Path, tmp_path: Path) -> None:
    """Every check together, counted at the simulator (the status page is another host and is not counted)."""
    from capdoctor.run.context import Target
    from capdoctor.run.diagnosis import RunRequest, diagnose

    sc = SCENARIOS[name]
    with Simulator(name) as sim:
        provider, base_url = client_target(sim, sc.provider)
        key = None if sc.requires_key else demo_key(provider)
        target = Target(
            provider,
            base_url,
            sc.primary_model,
            tuple(sc.alt_models),
            "CAPDOCTOR_TEST_KEY",
            key,
            sources={"api_key_env": "test"},
        )
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "SYSTEMROOT")}
        env["CAPDOCTOR_NO_NETWORK_LOOKUPS"] = "1"
        options = {"status_url": sim.status_url, "discover_logs": False}
        if sc.provider == "ollama":
            options["ollama_url"] = sim.base_url("ollama")
        outcome = diagnose(RunRequest(target, env, home, tmp_path, timeout=8.0, options=options))
        seen = [r for r in sim.requests if not r["path"].startswith("/status")]
    sent = [r["path"] for r in seen]
    asked = sum(requested_output_tokens(r["json"]) for r in seen)  # the max_tokens the simulator received
    assert len(sent) <= RUN_CAP, (name, sent)
    assert asked <= TOKEN_CAP, (name, asked)
    budget = outcome.report["budget"]  # the run's own count agrees with what the simulator saw
    assert (budget["provider_requests"], budget["output_tokens"]) == (len(sent), asked), (name, budget, sent)
