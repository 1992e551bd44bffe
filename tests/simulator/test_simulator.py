"""The provider simulator as a real server on loopback: routes, scenario shapes, streams, transport tricks.

Every test talks to a running `Simulator` over 127.0.0.1 with httpx or a raw socket and asserts on status
codes, headers and body shapes as a client would see them. Nothing here is mocked.
"""

from __future__ import annotations

import ast
import json
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from capdoctor.errors import UsageError
from capdoctor.simulator import payloads
from capdoctor.simulator.routes import PREFIXES, PROVIDER_SHAPE, fill
from capdoctor.simulator.scenarios import CAUSES, SCENARIOS
from capdoctor.simulator.server import Simulator, serve

SHAPES = payloads.SHAPES
PRIMARY = {shape: payloads.CATALOG[shape][0] for shape in SHAPES}
ALT = {shape: payloads.CATALOG[shape][1][0] for shape in SHAPES}
KEY = "sk-test-fake-0000000000000000"
TLS = ssl.create_default_context()  # built once: a fresh httpx client would build one each time (~25 ms)


def client(timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(timeout=timeout, trust_env=False, verify=TLS)


def generate(
    sim: Simulator,
    shape: str,
    model: str,
    *,
    stream: bool = False,
    route: str = "chat",
    c: httpx.Client | None = None,
    keyless: bool = False,
) -> httpx.Response:
    """One generation request in `shape`'s own wire format (stream bodies are read fully); `keyless`: no key."""
    c = c or client()
    headers = {"authorization": f"Bearer {KEY}"}
    if shape == "openai" and route == "responses":
        url, body = sim.base_url("openai") + "/responses", {"model": model, "input": "ping", "max_output_tokens": 16}
    elif shape in ("openai", "compat", "openrouter"):
        provider = {"openai": "openai", "compat": "openai-compatible", "openrouter": "openrouter"}[shape]
        url = sim.base_url(provider) + "/chat/completions"
        body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    elif shape == "anthropic":
        url = sim.base_url("anthropic") + "/v1/messages"
        body = {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}
        headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    elif shape == "gemini":
        verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
        url = sim.base_url("gemini") + f"/v1beta/models/{model}:{verb}"
        body = {"contents": [{"parts": [{"text": "ping"}]}], "generationConfig": {"maxOutputTokens": 1}}
        headers = {"x-goog-api-key": KEY}
    else:
        url = sim.base_url("ollama") + "/api/" + ("generate" if route == "generate" else "chat")
        body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "prompt": "ping"}
    if keyless:
        headers = {k: v for k, v in headers.items() if k not in ("authorization", "x-api-key", "x-goog-api-key")}
    if shape != "gemini":
        body["stream"] = stream
    return c.post(url, json=body, headers=headers)


def parse_sse(text: str) -> list[tuple[str | None, Any]]:
    """SSE frames -> (event name, decoded data); `[DONE]` stays a string."""
    events: list[tuple[str | None, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].strip())
        payload = "\n".join(data)
        events.append((name, payload if payload == "[DONE]" else json.loads(payload)))
    return events


def assert_filled(text: str) -> None:
    for token in ("{model}", "{request_id}", "{reset_epoch}", "{reset_rfc3339}", "{now_epoch}"):
        assert token not in text


# ---------------------------------------------------------------------------------------------- basics


def test_index_lists_scenario_and_base_urls(sim: Simulator) -> None:
    body = client().get(sim.url + "/").json()
    assert body["scenario"] == "healthy" and body["expected_cause"] == "none"
    assert body["base_urls"]["openai"] == sim.url + "/v1"
    assert body["base_urls"]["anthropic"] == sim.url + "/anthropic"
    assert body["base_urls"]["openai-compatible"] == sim.url + "/ollama/v1"
    assert body["base_urls"]["openrouter"] == sim.url + "/openrouter/api/v1"
    assert body["status_url"] == sim.status_url == sim.url + "/status"
    assert set(body["scenarios"]) == set(SCENARIOS)
    assert sim.url.startswith("http://127.0.0.1:")


def test_unknown_names_are_one_line_usage_errors(sim: Simulator) -> None:
    with pytest.raises(UsageError, match=r"unknown scenario 'nope'.*capacity"):
        Simulator("nope")
    with pytest.raises(UsageError, match="unknown provider"):
        sim.base_url("azure")
    with pytest.raises(UsageError, match="unknown scenario"):
        sim.set_scenario("nope")
    assert sim.scenario.name == "healthy"


def test_busy_port_is_a_usage_error(sim: Simulator) -> None:
    with pytest.raises(UsageError, match=r"cannot listen on 127\.0\.0\.1"):
        Simulator(host="127.0.0.1", port=sim.port).start()


def test_scenarios_are_well_formed() -> None:
    assert len(SCENARIOS) >= 20
    for name, sc in SCENARIOS.items():
        assert sc.name == name
        assert sc.expected_cause in CAUSES, name
        assert sc.provider in PREFIXES, name
        assert sc.alt_models and sc.primary_model not in sc.alt_models, name
        assert sc.fails in ("none", "primary", "all") and sc.transport in ("http", "blackhole", "reset", "captive")
        assert sc.status_page in ("green", "incident", "broken")
        for key in sc.replies:
            assert key.split(":")[0] in SHAPES, (name, key)


def test_simulator_never_imports_a_classifier() -> None:
    package = Path(__file__).resolve().parents[2] / "src" / "capdoctor" / "simulator"
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            assert not any("signatures" in n or "verdict" in n or "logscan" in n for n in names), path.name


def test_fill_replaces_placeholders_and_keeps_integers() -> None:
    out = fill({"a": "model {model}", "b": ["{n}"], "c": "{n}", "d": 3}, {"model": "m1", "n": 7})
    assert out == {"a": "model m1", "b": [7], "c": 7, "d": 3}


# --------------------------------------------------------------------------------------- healthy shapes


@pytest.mark.parametrize("shape", SHAPES)
def test_healthy_generation_has_the_real_success_shape(sim: Simulator, shape: str) -> None:
    r = generate(sim, shape, PRIMARY[shape])
    assert r.status_code == 200, r.text
    body = r.json()
    if shape in ("openai", "compat", "openrouter"):
        assert body["object"] == "chat.completion" and body["model"] == PRIMARY[shape]
        assert body["choices"][0]["message"]["content"] == "pong" and body["usage"]["total_tokens"] == 9
    elif shape == "anthropic":
        assert body["type"] == "message" and body["content"][0]["text"] == "pong"
        assert body["id"].startswith("msg_") and body["usage"]["output_tokens"] == 1
    elif shape == "gemini":
        assert body["candidates"][0]["content"]["parts"][0]["text"] == "pong"
        assert body["candidates"][0]["finishReason"] == "STOP" and body["modelVersion"] == PRIMARY[shape]
    else:
        assert body["done"] is True and body["message"]["content"] == "pong" and body["eval_count"] == 1
    if shape == "openrouter":
        assert body["provider"] == "OpenAI" and body["id"].startswith("gen-")


def test_openai_success_headers(sim: Simulator) -> None:
    r = generate(sim, "openai", PRIMARY["openai"])
    h = r.headers
    assert h["x-request-id"].startswith("req_") and len(h["x-request-id"]) == 36
    ray, colo = h["cf-ray"].split("-")
    assert len(ray) == 16 and int(ray, 16) >= 0 and colo == "SJC"
    assert int(h["openai-processing-ms"]) > 0
    assert h["x-ratelimit-remaining-requests"] == "9999" and h["x-ratelimit-reset-requests"] == "6ms"
    assert h["x-ratelimit-reset-tokens"] == "0s" and h["server"] == "cloudflare"


def test_anthropic_success_headers_use_rfc3339_resets(sim: Simulator) -> None:
    h = generate(sim, "anthropic", PRIMARY["anthropic"]).headers
    assert h["request-id"].startswith("req_011C")
    for kind in ("requests", "tokens", "input-tokens", "output-tokens"):
        assert int(h[f"anthropic-ratelimit-{kind}-limit"]) > 0
        assert int(h[f"anthropic-ratelimit-{kind}-remaining"]) > 0
        reset = h[f"anthropic-ratelimit-{kind}-reset"]
        assert reset.endswith("Z") and reset[4] == "-" and reset[10] == "T"


def test_responses_and_generate_routes(sim: Simulator) -> None:
    body = generate(sim, "openai", PRIMARY["openai"], route="responses").json()
    assert body["object"] == "response" and body["status"] == "completed"
    assert body["output"][0]["content"][0]["text"] == "pong" and body["id"].startswith("resp_")
    gen = generate(sim, "ollama", ALT["ollama"], route="generate").json()
    assert gen["response"] == "pong" and gen["done_reason"] == "stop"


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/v1/models", "data"),
        ("/anthropic/v1/models", "data"),
        ("/gemini/v1beta/models", "models"),
        ("/ollama/api/tags", "models"),
        ("/ollama/v1/models", "data"),
        ("/openrouter/api/v1/models", "data"),
    ],
)
def test_model_lists(sim: Simulator, path: str, key: str) -> None:
    r = client().get(sim.url + path, headers={"anthropic-version": "2023-06-01"})
    assert r.status_code == 200
    items = r.json()[key]
    ids = {m.get("id") or m.get("name") for m in items}
    assert any(str(i).endswith(("gpt-5.4-mini", "claude-haiku-4-5", "gemini-2.5-flash", "llama3.2:3b")) for i in ids), (
        ids
    )


def test_single_model_route_and_unknown_model(sim: Simulator) -> None:
    c = client()
    assert c.get(sim.url + "/v1/models/gpt-5.5").json()["id"] == "gpt-5.5"
    r = c.get(sim.url + "/v1/models/gpt-9")
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(
    ("shape", "needle"),
    [
        ("openai", '"code":"model_not_found"'),
        ("anthropic", '"type":"not_found_error"'),
        ("gemini", '"status":"NOT_FOUND"'),
        ("ollama", "not found, try pulling it first"),
        ("compat", "not found, try pulling it first"),
        ("openrouter", "No endpoints found for gpt-4.5-preview."),
    ],
)
def test_a_model_the_provider_does_not_have_is_a_404(sim: Simulator, shape: str, needle: str) -> None:
    r = generate(sim, shape, "gpt-4.5-preview")
    assert r.status_code == 404 and needle in r.text
    assert_filled(r.text)


def test_anthropic_requires_version_header(sim: Simulator) -> None:
    r = client().post(
        sim.url + "/anthropic/v1/messages",
        headers={"x-api-key": KEY},
        json={"model": PRIMARY["anthropic"], "max_tokens": 1, "messages": []},
    )
    assert r.status_code == 400
    assert r.json()["error"] == {"type": "invalid_request_error", "message": "anthropic-version: header is required"}
    assert r.json()["request_id"] == r.headers["request-id"]


def test_bad_json_and_unknown_routes_answer_in_shape(sim: Simulator) -> None:
    c = client()
    r = c.post(sim.url + "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    r = c.post(sim.url + "/v1/chat/completions", json={"messages": []})
    assert r.status_code == 400 and "model" in r.json()["error"]["message"]
    assert c.get(sim.url + "/v1/nothing").status_code == 404
    r = c.get(sim.url + "/ollama/api/nothing")
    assert r.status_code == 404 and r.text == "404 page not found"
    assert c.head(sim.url + "/v1/models").status_code == 200


def test_ollama_version_and_ps(sim: Simulator) -> None:
    c = client()
    assert c.get(sim.url + "/ollama/api/version").json()["version"].count(".") == 2
    ps = c.get(sim.url + "/ollama/api/ps").json()["models"]
    assert ps and all(m["size"] == m["size_vram"] for m in ps)
    assert {"name", "model", "size", "size_vram", "expires_at", "details", "context_length"} <= set(ps[0])


def test_openrouter_key_and_trace(sim: Simulator) -> None:
    c = client()
    data = c.get(sim.url + "/openrouter/api/v1/key", headers={"authorization": f"Bearer {KEY}"}).json()["data"]
    assert {"label", "limit", "usage", "limit_remaining", "is_free_tier"} <= set(data)
    assert data["limit_remaining"] is None and data["is_free_tier"] is False
    assert c.get(sim.url + "/openrouter/api/v1/auth/key").json()["data"]["label"] == data["label"]
    r = c.get(sim.url + "/cdn-cgi/trace", headers={"user-agent": "capdoctor-test/1"})
    trace = dict(line.split("=", 1) for line in r.text.strip().splitlines())
    assert r.headers["content-type"].startswith("text/plain")
    assert trace["ip"] == "127.0.0.1" and trace["colo"] == "SIN" and trace["loc"] == "SG"
    assert trace["uag"] == "capdoctor-test/1" and trace["visit_scheme"] == "http" and float(trace["ts"]) > 0


# ---------------------------------------------------------------------------------------------- streams


def test_openai_chat_stream_frames(sim: Simulator) -> None:
    r = generate(sim, "openai", PRIMARY["openai"], stream=True)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(r.text)
    assert events[-1] == (None, "[DONE]")
    chunks = [e[1] for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "pong"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_responses_stream_events(sim: Simulator) -> None:
    r = generate(sim, "openai", PRIMARY["openai"], stream=True, route="responses")
    events = parse_sse(r.text)
    names = [n for n, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert all(n == d["type"] for n, d in events)
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    assert "".join(d["delta"] for n, d in events if n == "response.output_text.delta") == "pong"
    assert events[-1][1]["response"]["usage"]["total_tokens"] == 9


def test_anthropic_stream_events(sim: Simulator) -> None:
    events = parse_sse(generate(sim, "anthropic", PRIMARY["anthropic"], stream=True).text)
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    assert "content_block_delta" in names and "error" not in names
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    assert text == "pong"


def test_gemini_streams_sse_and_json_array(sim: Simulator) -> None:
    events = parse_sse(generate(sim, "gemini", PRIMARY["gemini"], stream=True).text)
    assert "".join(e[1]["candidates"][0]["content"]["parts"][0]["text"] for e in events) == "pong"
    r = client().post(
        sim.url + f"/gemini/v1beta/models/{PRIMARY['gemini']}:streamGenerateContent",
        json={"contents": [{"parts": [{"text": "ping"}]}]},
    )
    array = r.json()
    assert isinstance(array, list) and array[-1]["candidates"][0]["finishReason"] == "STOP"


def test_ollama_native_stream_is_ndjson(sim: Simulator) -> None:
    r = generate(sim, "ollama", PRIMARY["ollama"], stream=True)
    assert r.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert [ln["done"] for ln in lines] == [False, True]
    assert "".join(ln["message"]["content"] for ln in lines) == "pong"


# -------------------------------------------------------------------------------------- failure shapes

# (scenario, shape) -> (status, text in body) for the primary model.
FAILURES: dict[tuple[str, str], tuple[int, str]] = {
    ("capacity", "openai"): (503, '"code":"server_is_overloaded"'),
    ("capacity", "anthropic"): (529, '"type":"overloaded_error"'),
    ("capacity", "gemini"): (503, "The model is overloaded. Please try again later."),
    ("capacity", "ollama"): (503, "server busy"),
    ("capacity", "compat"): (503, "server busy"),
    ("capacity", "openrouter"): (502, "Provider returned error"),
    ("quota", "openai"): (429, '"code":"insufficient_quota"'),
    ("quota", "anthropic"): (400, "Your credit balance is too low"),
    ("quota", "gemini"): (429, "limit: 0, model: gemini-2.5-pro"),
    ("quota", "openrouter"): (402, "requires more credits"),
    ("quota", "ollama"): (429, "You exceeded your current quota"),
    ("rate-limit", "openai"): (429, '"code":"rate_limit_exceeded"'),
    ("rate-limit", "anthropic"): (429, '"type":"rate_limit_error"'),
    ("rate-limit", "gemini"): (429, '"retryDelay":"1s"'),
    ("rate-limit", "openrouter"): (429, "free-models-per-day"),
    ("auth", "openai"): (401, '"code":"invalid_api_key"'),
    ("auth", "anthropic"): (401, '"type":"authentication_error"'),
    ("auth", "gemini"): (400, '"reason":"API_KEY_INVALID"'),
    ("auth", "openrouter"): (401, "User not found."),
    ("region", "openai"): (403, '"code":"unsupported_country_region_territory"'),
    ("region", "gemini"): (400, "User location is not supported for the API use."),
    ("region", "anthropic"): (403, "Request not allowed"),
    ("model-not-found", "openai"): (404, "The model `gpt-5.5` does not exist or you do not have access to it."),
    ("model-not-found", "anthropic"): (404, '"message":"model: claude-opus-4-7"'),
    ("model-not-found", "gemini"): (404, '"status":"NOT_FOUND"'),
    ("model-not-found", "ollama"): (404, "model 'llama3.1:70b' not found, try pulling it first"),
    ("model-not-found", "compat"): (404, '"type":"not_found_error"'),
    ("local-oom", "ollama"): (500, "model requires more system memory (39.4 GiB) than is available (30.0 GiB)"),
    ("local-oom", "compat"): (500, "model requires more system memory"),
    ("client-outdated", "openai"): (400, "requires a newer version of Codex"),
    ("client-outdated", "anthropic"): (400, '"error_code":"claude_code_version_too_old"'),
    ("spend-limit", "anthropic"): (429, '"error_code":"enforced_spend_limit_reached"'),
    ("spend-limit", "openai"): (429, "organization_spend_limit_exceeded"),
    ("openrouter-credits", "openrouter"): (402, '"limit_source":"openrouter_credits"'),
    ("account-throttled", "openai"): (503, '"code":"server_is_overloaded"'),
    ("account-throttled", "anthropic"): (529, "overloaded_error"),
    ("codex-usage-limit", "openai"): (429, '"type":"usage_limit_reached"'),
    ("codex-usage-limit", "anthropic"): (429, "exceed your account's rate limit"),
    ("status-incident", "openai"): (503, "server_is_overloaded"),
}


@pytest.mark.parametrize(("scenario", "shape"), sorted(FAILURES))
def test_failure_shapes(scenario: str, shape: str) -> None:
    status, needle = FAILURES[(scenario, shape)]
    with Simulator(scenario) as sim:
        r = generate(sim, shape, PRIMARY[shape])
        assert r.status_code == status, r.text
        assert needle in r.text
        assert_filled(r.text)
        if r.headers["content-type"].startswith("application/json"):
            r.json()
        if shape == "anthropic":
            assert r.json()["type"] == "error" and r.json()["request_id"] == r.headers["request-id"]
        alt = generate(sim, shape, ALT[shape])
        expect_alt_ok = SCENARIOS[scenario].fails == "primary"
        assert (alt.status_code == 200) is expect_alt_ok, alt.text


def test_rate_limit_headers() -> None:
    with Simulator("rate-limit") as sim:
        h = generate(sim, "openai", PRIMARY["openai"]).headers
        assert h["retry-after"] == "1" and h["x-ratelimit-remaining-requests"] == "0"
        assert h["x-ratelimit-reset-requests"] == "1s" and h["x-request-id"].startswith("req_")
        a = generate(sim, "anthropic", PRIMARY["anthropic"]).headers
        assert a["retry-after"] == "1" and a["anthropic-ratelimit-requests-remaining"] == "0"
        assert a["anthropic-ratelimit-requests-reset"].endswith("Z")


def test_overload_529_says_retry_and_spend_limit_does_not() -> None:
    with Simulator("capacity") as sim:
        assert generate(sim, "anthropic", PRIMARY["anthropic"]).headers["x-should-retry"] == "true"
    with Simulator("spend-limit") as sim:
        r = generate(sim, "anthropic", "claude-opus-4-7")
        assert "retry-after" not in r.headers and r.json()["error"]["type"] == "rate_limit_error"


def test_account_throttled_shows_headroom_on_every_model() -> None:
    with Simulator("account-throttled") as sim:
        for model in (PRIMARY["openai"], ALT["openai"]):
            r = generate(sim, "openai", model)
            assert r.status_code == 503
            assert int(r.headers["x-ratelimit-remaining-requests"]) > 1000
            assert int(r.headers["x-ratelimit-remaining-tokens"]) > 1_000_000
        summary = client().get(sim.status_url + "/api/v2/summary.json").json()
        assert summary["status"]["indicator"] == "none" and summary["incidents"] == []


def test_codex_usage_headers_and_integer_reset() -> None:
    with Simulator("codex-usage-limit") as sim:
        r = generate(sim, "openai", PRIMARY["openai"], route="responses")
        assert r.headers["x-codex-primary-used-percent"] == "100"
        assert int(r.headers["x-codex-primary-reset-at"]) == r.json()["error"]["resets_at"]
        assert r.json()["error"]["plan_type"] == "plus"


def test_gemini_quota_details_carry_limit_zero() -> None:
    with Simulator("quota") as sim:
        err = generate(sim, "gemini", ALT["gemini"]).json()["error"]
        assert err["status"] == "RESOURCE_EXHAUSTED" and err["code"] == 429
        quota = next(d for d in err["details"] if d["@type"].endswith("QuotaFailure"))
        assert quota["violations"][0]["quotaValue"] == "0"
        assert quota["violations"][0]["quotaDimensions"]["model"] == ALT["gemini"]


def test_auth_and_region_also_refuse_model_lists() -> None:
    for scenario, status in (("auth", 401), ("region", 403)):
        with Simulator(scenario) as sim:
            assert client().get(sim.url + "/v1/models").status_code == status
            assert client().get(sim.url + "/openrouter/api/v1/key").status_code in (401, 403)


def test_model_not_found_lists_the_alternatives_only() -> None:
    with Simulator("model-not-found") as sim:
        ids = [m["id"] for m in client().get(sim.url + "/v1/models").json()["data"]]
        assert "gpt-5.4-mini" in ids and "gpt-5.5" not in ids


def test_engine_overloaded_is_moonshot_shaped() -> None:
    with Simulator("engine-overloaded") as sim:
        sc = sim.scenario
        r = generate(sim, "openai", sc.primary_model)
        assert r.status_code == 429
        assert r.json() == {
            "error": {
                "message": "The engine is currently overloaded, please try again later",
                "type": "engine_overloaded_error",
            }
        }
        assert generate(sim, "openai", sc.alt_models[0]).status_code == 200
        ids = [m["id"] for m in client().get(sim.url + "/v1/models").json()["data"]]
        assert sc.primary_model in ids and sc.alt_models[0] in ids


def test_openrouter_credits_key_shows_nothing_left() -> None:
    with Simulator("openrouter-credits") as sim:
        data = client().get(sim.base_url("openrouter") + "/key").json()["data"]
        assert data["limit_remaining"] == 0 and data["limit"] > 0


def test_local_oom_ps_shows_model_partly_on_cpu() -> None:
    with Simulator("local-oom") as sim:
        ps = client().get(sim.base_url("ollama") + "/api/ps").json()["models"]
        big = next(m for m in ps if m["name"] == sim.scenario.primary_model)
        assert big["size"] > big["size_vram"] > 0
        assert generate(sim, "openai", PRIMARY["openai"]).status_code == 200  # cloud shapes unaffected


def test_cloudflare_block_is_html_on_every_api_route() -> None:
    with Simulator("cloudflare-block") as sim:
        c = client()
        for r in (
            generate(sim, "openai", ALT["openai"], c=c),
            generate(sim, "anthropic", ALT["anthropic"], c=c),
            c.get(sim.url + "/v1/models"),
        ):
            assert r.status_code == 403 and r.headers["content-type"].startswith("text/html")
            assert "<title>Just a moment...</title>" in r.text and r.headers["cf-mitigated"] == "challenge"
            assert "-" in r.headers["cf-ray"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("intermittent-capacity", [200, 503, 503, 200, 503, 200]),
        ("occasional-capacity", [200, 503, 200, 200]),
    ],
)
def test_intermittent_scenarios_start_with_a_success(name: str, expected: list[int]) -> None:
    with Simulator(name) as sim:
        got = [generate(sim, "openai", PRIMARY["openai"]).status_code for _ in expected]
        assert got == expected
        assert generate(sim, "openai", ALT["openai"]).status_code == 200  # the lighter model is fine


@pytest.mark.parametrize(
    ("shape", "status", "needle"),
    [
        ("openai", 401, "You didn't provide an API key"),
        ("anthropic", 401, "x-api-key header is required"),
        ("gemini", 403, "unregistered callers"),
        ("openrouter", 401, "No auth credentials found"),
        ("compat", 401, "Unauthorized"),
    ],
)
def test_no_key_scenario_refuses_only_requests_without_a_key(shape: str, status: int, needle: str) -> None:
    with Simulator("no-key") as sim:
        refused = generate(sim, shape, PRIMARY[shape], keyless=True)
        assert refused.status_code == status and needle in refused.text
        assert generate(sim, shape, PRIMARY[shape]).status_code == 200


def test_flaky_capacity_follows_its_pattern_and_restarts_on_switch() -> None:
    with Simulator("flaky-capacity") as sim:
        c = client()
        seen = [generate(sim, "openai", PRIMARY["openai"], c=c).status_code for _ in range(6)]
        assert seen == [503, 503, 200, 503, 503, 200]
        assert all(generate(sim, "openai", ALT["openai"], c=c).status_code == 200 for _ in range(3))
        sim.set_scenario("flaky-capacity")
        assert generate(sim, "openai", PRIMARY["openai"], c=c).status_code == 503


def test_set_scenario_switches_at_runtime(sim: Simulator) -> None:
    assert generate(sim, "openai", PRIMARY["openai"]).status_code == 200
    sim.set_scenario("capacity")
    assert generate(sim, "openai", PRIMARY["openai"]).status_code == 503
    assert client().get(sim.url + "/").json()["scenario"] == "capacity"


@pytest.mark.scenario("capacity")
def test_sim_fixture_honours_scenario_marker(sim: Simulator) -> None:
    assert sim.scenario.name == "capacity"
    assert generate(sim, "gemini", PRIMARY["gemini"]).json()["error"]["status"] == "UNAVAILABLE"


def test_every_scenario_fails_its_own_target_iff_something_is_wrong() -> None:
    """The demo's self-test relies on this: the default provider/model fails unless expected_cause is none."""
    shape_of = PROVIDER_SHAPE
    for name, sc in SCENARIOS.items():
        if sc.transport != "http" or sc.stream_cut:
            continue
        with Simulator(name) as sim:
            # the demo's target carries no key
            answers = [
                generate(sim, shape_of[sc.provider], sc.primary_model, c=client(), keyless=True) for _ in sc.pattern
            ]
            failed = any(r.status_code >= 400 or "error" in r.json() for r in answers)  # one period of the pattern
            assert failed is (sc.expected_cause != "none"), name
            if sc.fails == "primary":
                assert generate(sim, shape_of[sc.provider], sc.alt_models[0]).status_code == 200, name


# ------------------------------------------------------------------------------------------ stream failures


def test_stream_capacity_fails_after_http_200() -> None:
    with Simulator("stream-capacity") as sim:
        r = generate(sim, "openai", PRIMARY["openai"], stream=True, route="responses")
        assert r.status_code == 200
        events = parse_sse(r.text)
        names = [n for n, _ in events]
        assert names[0] == "response.created" and names[-1] == "response.failed"
        assert "response.completed" not in names
        error = events[-1][1]["response"]["error"]
        assert error == {
            "code": "server_is_overloaded",
            "message": "Selected model is at capacity. Please try a different model.",
        }
        ok = parse_sse(generate(sim, "openai", ALT["openai"], stream=True, route="responses").text)
        assert ok[-1][0] == "response.completed"

        chat = parse_sse(generate(sim, "openai", PRIMARY["openai"], stream=True).text)
        assert chat[0][1]["object"] == "chat.completion.chunk"
        assert chat[-1][1]["error"]["code"] == "server_is_overloaded" and (None, "[DONE]") not in chat

        plain = generate(sim, "openai", PRIMARY["openai"], route="responses")
        assert plain.status_code == 200 and plain.json()["status"] == "failed"
        assert plain.json()["error"]["code"] == "server_is_overloaded"


def test_stream_capacity_in_other_shapes() -> None:
    with Simulator("stream-capacity") as sim:
        events = parse_sse(generate(sim, "anthropic", PRIMARY["anthropic"], stream=True).text)
        assert events[0][0] == "message_start" and events[-1][0] == "error"
        assert events[-1][1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        gem = generate(sim, "gemini", PRIMARY["gemini"], stream=True)  # Google's bare error object, not SSE
        assert gem.status_code == 200 and json.loads(gem.text)["error"]["status"] == "UNAVAILABLE"
        lines = generate(sim, "ollama", PRIMARY["ollama"], stream=True).text.splitlines()
        assert json.loads(lines[-1])["error"].startswith("server busy")


def test_stream_cut_truncates_the_body_but_plain_requests_work() -> None:
    with Simulator("stream-cut") as sim:
        c = client()
        assert generate(sim, "openai", PRIMARY["openai"], c=c).status_code == 200
        received = b""
        with (
            pytest.raises(httpx.RemoteProtocolError),
            c.stream(
                "POST",
                sim.base_url("openai") + "/responses",
                json={"model": PRIMARY["openai"], "input": "ping", "stream": True},
            ) as r,
        ):
            assert r.status_code == 200
            for chunk in r.iter_raw():
                received += chunk
        names = [n for n, _ in parse_sse(received.decode())]
        assert "response.output_text.delta" in names and "response.completed" not in names


# ---------------------------------------------------------------------------------------- status pages


def test_status_page_green(sim: Simulator) -> None:
    c = client()
    summary = c.get(sim.status_url + "/api/v2/summary.json").json()
    assert summary["status"] == {"indicator": "none", "description": "All Systems Operational"}
    names = {comp["name"] for comp in summary["components"]}
    assert {"API", "Codex", "ChatGPT", "Claude API"} <= names
    assert all(comp["status"] == "operational" for comp in summary["components"])
    assert summary["incidents"] == [] and summary["page"]["url"] == sim.status_url
    assert c.get(sim.status_url + "/api/v2/status.json").json()["status"]["indicator"] == "none"
    assert c.get(sim.status_url + "/proxy/status").json()["summary"]["ongoing_incidents"] == []


def test_status_page_incident() -> None:
    with Simulator("status-incident") as sim:
        c = client()
        summary = c.get(sim.status_url + "/api/v2/summary.json").json()
        assert summary["status"]["indicator"] == "major"
        comps = {comp["name"]: comp["status"] for comp in summary["components"]}
        assert comps["API"] == "partial_outage" and comps["ChatGPT"] == "operational"
        incident = summary["incidents"][0]
        assert incident["status"] == "investigating" and incident["impact"] == "major"
        assert incident["incident_updates"][0]["body"]
        assert c.get(sim.status_url + "/api/v2/incidents/unresolved.json").json()["incidents"]
        feed = c.get(sim.status_url + "/proxy/status").json()["summary"]
        assert feed["ongoing_incidents"][0]["current_worst_impact"] == "partial_outage"


def test_status_page_broken_is_html_500() -> None:
    with Simulator("status-broken") as sim:
        r = client().get(sim.status_url + "/api/v2/summary.json")
        assert r.status_code == 500 and r.headers["content-type"] == "text/html"
        with pytest.raises(json.JSONDecodeError):
            json.loads(r.text)
        assert generate(sim, "openai", PRIMARY["openai"]).status_code == 200


# ------------------------------------------------------------------------------------ transport tricks


def test_captive_portal_answers_every_path_with_a_redirect_page() -> None:
    with Simulator("captive-portal") as sim:
        c = client()
        responses = [
            c.get(sim.url + "/"),
            c.get(sim.url + "/v1/models"),
            c.get(sim.status_url + "/api/v2/summary.json"),
            generate(sim, "openai", PRIMARY["openai"], c=c),
            generate(sim, "anthropic", PRIMARY["anthropic"], c=c),
        ]
        for r in responses:
            assert r.status_code == 200 and r.headers["content-type"] == "text/html"
            assert '<meta http-equiv="refresh" content="0; url=http://10.0.0.1/login?dst=' in r.text
            assert "x-request-id" not in r.headers and "cf-ray" not in r.headers
        assert "dst=http%3A%2F%2F127.0.0.1" in responses[1].text


def test_blackhole_times_out_on_the_client_and_is_logged() -> None:
    with Simulator("blackhole") as sim:
        with pytest.raises(httpx.ReadTimeout):
            client(timeout=0.3).get(sim.url + "/v1/models")
        assert [r["path"] for r in sim.requests] == ["/v1/models"]


def test_reset_raises_a_connection_error() -> None:
    with Simulator("reset") as sim:
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            generate(sim, "openai", PRIMARY["openai"])
        with socket.create_connection(("127.0.0.1", sim.port), timeout=5) as s:
            s.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
            with pytest.raises(ConnectionResetError):
                s.recv(1024)
        assert len(sim.requests) == 2


def test_stop_returns_promptly_with_hanging_clients() -> None:
    sim = Simulator("blackhole").start()
    silent = socket.create_connection(("127.0.0.1", sim.port))  # connects, never sends a request
    hung = socket.create_connection(("127.0.0.1", sim.port))  # sends a request the blackhole never answers
    hung.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
    for _ in range(200):  # wait (bounded) until the server has read the request
        if sim.requests:
            break
        threading.Event().wait(0.01)
    assert sim.requests
    stopper = threading.Thread(target=sim.stop)
    stopper.start()
    stopper.join(timeout=1.0)
    try:
        assert not stopper.is_alive(), "stop() did not return within 1 s"
        hung.settimeout(5)
        assert hung.recv(1024) == b""  # the server closed the hanging connection, without a byte
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", sim.port), timeout=1).close()
    finally:
        silent.close()
        hung.close()
        sim.stop()  # idempotent


# -------------------------------------------------------------------------------------------- the log


def test_request_log_records_requests(sim: Simulator) -> None:
    c = client()
    generate(sim, "openai", PRIMARY["openai"], c=c)
    c.get(sim.url + f"/gemini/v1beta/models?key={KEY}")
    first, second = sim.requests[-2:]
    assert first["method"] == "POST" and first["path"] == "/v1/chat/completions"
    assert first["json"]["model"] == PRIMARY["openai"] and '"ping"' in first["body"]
    assert first["headers"]["authorization"] == f"Bearer {KEY}" and first["t"] > 0
    assert second["path"] == "/gemini/v1beta/models" and second["query"] == {"key": KEY}
    assert second["t"] >= first["t"]


def test_concurrent_requests_are_all_logged(sim: Simulator) -> None:
    def worker() -> None:
        with client() as c:
            for _ in range(5):
                c.get(sim.url + "/v1/models")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len([r for r in sim.requests if r["path"] == "/v1/models"]) == 20


def test_serve_prints_base_urls_and_one_line_per_request_without_secrets() -> None:
    lines: list[str] = []
    until = threading.Event()
    runner = threading.Thread(
        target=serve, kwargs={"scenario": "capacity", "port": 0, "out": lines.append, "until": until}
    )
    runner.start()
    try:
        for _ in range(500):
            if any("Ctrl+C" in ln for ln in lines):
                break
            threading.Event().wait(0.01)
        url_line = next(ln for ln in lines if ln.strip().startswith("openai ") and "http://" in ln)
        base = url_line.split()[-1]
        assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
        assert any("anthropic" in ln and base[:-3] + "/anthropic" in ln for ln in lines)
        assert any("expected cause: capacity" in ln for ln in lines)
        client().post(
            base + "/chat/completions?key=" + KEY, json={"model": "gpt-5.5"}, headers={"authorization": f"Bearer {KEY}"}
        )
    finally:
        until.set()
        runner.join(timeout=10)
    assert not runner.is_alive()
    assert "POST /v1/chat/completions 503" in lines
    assert not any(KEY in ln for ln in lines)


@pytest.mark.scenario("capacity")
def test_every_printed_diagnose_line_reaches_the_scenarios_verdict(sim: Any, tmp_path: Path) -> None:
    """Issue 35.4: the printed base URLs, followed, led to wrong verdicts (`--base-url …/v1` alone probes a
    local default model; the anthropic default model was unknown; the ollama root 404'd). Each printed line,
    run word for word, must reach the scenario's verdict."""
    import shlex
    import threading

    from capdoctor.simulator.routes import PREFIXES
    from capdoctor.simulator.server import diagnose_command, serve
    from tests.conftest import run_cli

    printed: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=("capacity", "127.0.0.1", 0, printed.append, stop), daemon=True)
    thread.start()
    while not any(line.startswith("Press Ctrl+C") for line in printed):
        thread.join(0.05)
    stop.set()
    thread.join()
    assert sum("capdoctor diagnose --provider" in line for line in printed) == len(PREFIXES)
    for provider in PREFIXES:
        words = shlex.split(diagnose_command(sim, provider))
        start = words.index("capdoctor")
        env = dict(w.split("=", 1) for w in words[:start])  # the line's `NAME=value` prefix
        proc = run_cli(*words[start + 1 :], "--json", env=env, cwd=tmp_path)
        verdict = json.loads(proc.stdout)["verdict"]["cause"]
        assert verdict == "capacity", (provider, verdict, proc.stderr[-300:])


def test_the_simulator_serves_the_models_diagnose_picks_by_default() -> None:
    from capdoctor.providers.catalog import adapter_for
    from capdoctor.simulator.payloads import ALSO_SERVED, CATALOG

    for shape in ("anthropic", "gemini"):
        served = (CATALOG[shape][0], *ALSO_SERVED.get(shape, ()), *CATALOG[shape][1])
        assert adapter_for(shape).default_model in served, shape
