"""What `capdoctor fallback` generates, loaded by the real clients against the simulator (real HTTP on loopback).

The LiteLLM config goes into a real `litellm.Router`; the SDK snippets run with the real openai/anthropic SDKs.
Each client runs in a subprocess (tests/support/clientrun.py) that refuses and reports any non-loopback connection,
with LiteLLM told to use its bundled data, and with keys planted in its environment: they must reach the
simulator through the generated `os.environ/VAR` / `os.environ[...]` and appear nowhere generated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capdoctor.fallback.generate import generate
from capdoctor.fallback.pool import pool_from_report
from capdoctor.simulator import scenarios
from capdoctor.simulator.replies import ANTHROPIC_OVERLOADED, OPENAI_OVERLOADED, Reply
from capdoctor.simulator.scenarios import Scenario
from capdoctor.simulator.server import Simulator
from tests.support.fallback_support import PLANTED, SHAPES, ClientRun, live_report

INTERMITTENT = Scenario(
    "test-intermittent-everywhere",
    "Every model fails 2 of every 3 requests with a capacity error and Retry-After: 1.",
    "capacity",
    fails="all",
    pattern=(True, True, False),
    replies={
        "openai": Reply(503, OPENAI_OVERLOADED.body, {"retry-after": "1"}),
        "anthropic": Reply(529, ANTHROPIC_OVERLOADED.body, {**ANTHROPIC_OVERLOADED.headers, "retry-after": "1"}),
    },
)


def posts(sim: Any, since: int) -> list[dict[str, Any]]:
    return [r for r in sim.requests[since:] if r["method"] == "POST"]


def sent_key(request: dict[str, Any]) -> str:
    headers = request["headers"]
    return str(headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer "))


def generated(sim: Any, shape: str, fmt: str, home: Path, path: Path) -> Path:
    text = generate(pool_from_report(live_report(sim, shape, home)), fmt).text
    assert not any(key in text for key in PLANTED.values())
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.timeout(300)
@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_litellm_router_answers_from_the_primary_then_falls_back_when_it_is_overloaded(
    shape: str, home: Path, tmp_path: Path
) -> None:
    primary, alt, key_env = SHAPES[shape]
    with Simulator("capacity") as sim:
        config = generated(sim, shape, "litellm", home, tmp_path / "litellm.yaml")
        client = ClientRun("router", str(config), primary)
        try:
            sim.set_scenario("healthy")
            start = len(sim.requests)
            healthy = client.ask()
            healthy_posts = posts(sim, start)
            sim.set_scenario("capacity")  # the primary answers 503 (OpenAI) / 529 (Anthropic) overloaded
            start = len(sim.requests)
            overloaded = client.ask()
            overloaded_posts = posts(sim, start)
        finally:
            client.close()
    assert healthy["ok"] and healthy["model"] == primary, healthy
    assert [p["json"]["model"] for p in healthy_posts] == [primary]
    assert overloaded["ok"] and overloaded["model"] == alt and overloaded["text"], overloaded
    models = [p["json"]["model"] for p in overloaded_posts]
    assert models[0] == primary and models[-1] == alt and set(models) == {primary, alt}
    assert {sent_key(p) for p in healthy_posts + overloaded_posts} == {PLANTED[key_env]}  # os.environ/VAR resolved
    assert healthy["outside"] == [] and overloaded["outside"] == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_sdk_snippet_recovers_from_intermittent_overload_honouring_retry_after(
    shape: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(scenarios.SCENARIOS, INTERMITTENT.name, INTERMITTENT)
    primary, alt, key_env = SHAPES[shape]
    kwargs = {"max_tokens": 8} if shape == "anthropic" else {}
    with Simulator("capacity") as sim:
        snippet = generated(sim, shape, f"{shape}-python", home, tmp_path / "capdoctor_fallback.py")
        sim.set_scenario(INTERMITTENT.name)
        start = len(sim.requests)
        client = ClientRun("snippet", str(snippet), json.dumps(kwargs))
        try:
            answer = client.ask()
        finally:
            client.close()
        sent = posts(sim, start)
    assert answer["ok"] and answer["model"] == primary, answer
    # every model failed once (no wait between models), then the loop waited out Retry-After and went round again
    assert [p["json"]["model"] for p in sent] == [primary, alt, primary]
    assert sent[1]["t"] - sent[0]["t"] < 0.9 <= sent[2]["t"] - sent[1]["t"]
    assert {sent_key(p) for p in sent} == {PLANTED[key_env]}
    assert answer["outside"] == []


@pytest.mark.timeout(120)
def test_sdk_snippet_moves_off_an_intermittent_primary_and_keeps_answering(home: Path, tmp_path: Path) -> None:
    with Simulator("capacity") as sim:
        snippet = generated(sim, "openai", "openai-python", home, tmp_path / "capdoctor_fallback.py")
        sim.set_scenario("flaky-capacity")  # the primary fails 2 of every 3 requests; the alternative works
        start = len(sim.requests)
        client = ClientRun("snippet", str(snippet))
        try:
            answers = [client.ask() for _ in range(3)]
        finally:
            client.close()
        sent = [p["json"]["model"] for p in posts(sim, start)]
    assert all(a["ok"] for a in answers), answers
    assert [a["model"] for a in answers] == ["gpt-5.4-mini"] * 3
    assert sent == ["gpt-5.5", "gpt-5.4-mini", "gpt-5.4-mini", "gpt-5.4-mini"]  # a failed model waits its cooldown
