"""Groq, the provider added as one module (providers/groq.py), one catalogue row and one simulator row.

Everything else — discovery, key shapes, redaction, rate-limit headers, the status page, log hints, the
simulator's routes — reads those rows; these tests show each of them picking Groq up.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import httpx

from capdoctor.logscan.scanner import find_provider
from capdoctor.probes.ratelimit import parse_headers
from capdoctor.providers.catalog import (
    PROVIDER_NAMES,
    adapter_for,
    canonical,
    env_vars,
    key_family,
    provider_for_host,
)
from capdoctor.redact import redact_text
from capdoctor.run.context import Target
from capdoctor.simulator.server import Simulator
from capdoctor.target.discovery import DiscoveryFlags, discover
from capdoctor.target.keys import describe_key
from tests.conftest import run_cli

KEY = "gsk_" + "F4keGroqKey" * 4
BASE = "https://api.groq.com/openai/v1"


def test_groq_is_in_the_catalogue() -> None:
    assert "groq" in PROVIDER_NAMES and canonical("GroqCloud") == "groq"
    assert provider_for_host("api.groq.com") == "groq"
    assert key_family(KEY) == ("groq", "gsk_")
    assert {"GROQ_API_KEY", "GROQ_BASE_URL"} <= set(env_vars())
    page = adapter_for("groq").status_page
    assert page.feed == "https://groqstatus.com/api/v2/summary.json"


def test_discovery_finds_groq_from_its_key_and_base_url(home: Path) -> None:
    t = discover(DiscoveryFlags(), {"GROQ_API_KEY": KEY}, home, home, "linux")
    assert t is not None and (t.provider, t.base_url, t.api_key_env) == ("groq", BASE, "GROQ_API_KEY")
    assert t.model == "llama-3.3-70b-versatile" and t.sources["provider"] == "env GROQ_API_KEY"
    moved = discover(
        DiscoveryFlags(provider="groq"), {"GROQ_BASE_URL": "https://gw.example/groq/v1"}, home, home, "linux"
    )
    assert moved is not None and (moved.base_url, moved.sources["base_url"]) == (
        "https://gw.example/groq/v1",
        "env GROQ_BASE_URL",
    )
    by_host = discover(DiscoveryFlags(base_url=BASE), {}, home, home, "linux")
    assert by_host is not None and by_host.provider == "groq"


def test_request_shapes() -> None:
    a = adapter_for("groq")
    t = Target("groq", BASE, "llama-3.3-70b-versatile", api_key=KEY)
    lst = a.list_request(t)
    assert (lst.method, lst.url, lst.headers["authorization"]) == ("GET", f"{BASE}/models", f"Bearer {KEY}")
    gen = a.generate_request(t, "llama-3.3-70b-versatile", a.route_order(t)[0])
    assert gen.url == f"{BASE}/chat/completions" and gen.body is not None
    assert gen.body["max_completion_tokens"] == 16 and gen.output_tokens == 16


def test_an_openai_key_in_groq_api_key_is_another_providers_shape() -> None:
    facts = describe_key(Target("groq", BASE, "m", api_key="sk-proj-" + "x" * 40, api_key_env="GROQ_API_KEY"), {})
    assert (facts.problem, facts.family, facts.expected_prefixes) == ("foreign", "openai", ("gsk_",))


def test_groq_keys_are_redacted_by_shape() -> None:
    assert KEY not in redact_text(f"curl -H 'x: {KEY}' https://api.groq.com")


def test_rate_limit_headers_and_log_hints() -> None:
    rl = parse_headers(
        {
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-limit-tokens": "6000",
            "x-ratelimit-reset-tokens": "7.66s",
            "retry-after": "7",
        },
        datetime.now(timezone.utc),
    )
    assert [(w.name, w.remaining, w.reset_s) for w in rl.windows] == [("tokens", 0.0, 7.66)]
    assert rl.exhausted and rl.retry_after_s == 7.0
    assert find_provider("POST https://api.groq.com/openai/v1/chat/completions 503", "capacity.x") == "groq"


def test_the_simulator_plays_every_scenario_in_groqs_own_words() -> None:
    with Simulator("capacity") as sim, httpx.Client(trust_env=False) as c:
        url = sim.base_url("groq")
        listed = c.get(url + "/models").json()
        assert {"llama-3.3-70b-versatile", "llama-3.1-8b-instant"} <= {m["id"] for m in listed["data"]}
        body = {"model": "llama-3.3-70b-versatile", "messages": [{"role": "user", "content": "ping"}]}
        r = c.post(url + "/chat/completions", json=body)
        assert r.status_code == 503 and "is currently over capacity" in r.json()["error"]["message"]
        assert "groqstatus.com" in r.text and r.headers["x-request-id"]
        ok = c.post(url + "/chat/completions", json={**body, "model": "llama-3.1-8b-instant"})
        assert ok.status_code == 200 and ok.headers["x-ratelimit-reset-tokens"] == "7.66s"
    with Simulator("auth") as sim, httpx.Client(trust_env=False) as c:
        r = c.post(sim.base_url("groq") + "/chat/completions", json=body, headers={"authorization": f"Bearer {KEY}"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"


def test_diagnose_names_capacity_on_groq(tmp_path: Path) -> None:
    with Simulator("flaky-capacity") as sim:
        (tmp_path / "capdoctor.toml").write_text(f'[options]\nstatus_url = "{sim.status_url}"\n', encoding="utf-8")
        proc = run_cli(
            "diagnose",
            "--json",
            "--provider",
            "groq",
            "--base-url",
            sim.base_url("groq"),
            "--model",
            "llama-3.3-70b-versatile",
            "--only",
            "models,status,quota",
            env={"GROQ_API_KEY": KEY},
            cwd=tmp_path,
        )
    report = json.loads(proc.stdout)
    assert (report["verdict"]["cause"], proc.returncode) == ("capacity", 3), report["verdict"]
    models = next(c for c in report["checks"] if c["id"] == "models")
    assert models["data"]["models"][0]["failure_rate"] == "2 of 3 attempts overloaded"
    assert models["data"]["models"][1]["model"] == "llama-3.1-8b-instant"  # Groq's own light model
    assert KEY not in proc.stdout
