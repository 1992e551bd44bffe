"""Provider adapters: request shapes (URLs, headers, real minimums) and how each provider's errors are read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from capdoctor.probes.hosts import is_loopback
from capdoctor.probes.sse import Event
from capdoctor.providers.base import ErrorInfo, error_fields
from capdoctor.providers.catalog import adapter_for, canonical, is_official
from capdoctor.run.context import Target

KEY = "sk-test-fake-0000"


def target(provider: str, base_url: str, **kw: Any) -> Target:
    return Target(provider=provider, base_url=base_url, model="m", api_key=KEY, **kw)


def test_openai_routes_and_minimums() -> None:
    t = target("openai", "https://api.openai.com/v1/")
    a = adapter_for("openai")
    assert a.route_order(t) == ("responses", "chat")
    lst = a.list_request(t)
    assert (lst.method, lst.url) == ("GET", "https://api.openai.com/v1/models")
    assert lst.headers["authorization"] == f"Bearer {KEY}"
    resp = a.generate_request(t, "gpt-5.5", "responses")
    assert resp.url.endswith("/v1/responses") and resp.stream
    assert resp.body is not None and resp.body["max_output_tokens"] >= 16 and resp.body["stream"] is True
    chat = a.generate_request(t, "gpt-5.5", "chat")
    assert chat.url.endswith("/v1/chat/completions")
    assert chat.body is not None and "max_completion_tokens" in chat.body and "max_tokens" not in chat.body


def test_wire_api_picks_the_route_first() -> None:
    a = adapter_for("openai")
    assert a.route_order(target("openai", "https://x/v1", wire_api="chat")) == ("chat", "responses")
    compat = adapter_for("openai-compatible")
    assert compat.route_order(target("openai-compatible", "http://127.0.0.1:1/v1")) == ("chat", "responses")
    body = compat.generate_request(target("openai-compatible", "http://h/v1"), "llama", "chat").body
    assert body is not None and body["max_tokens"] == 16


def test_anthropic_shape() -> None:
    a = adapter_for("anthropic")
    for base in ("https://api.anthropic.com", "https://api.anthropic.com/v1", "https://api.anthropic.com/"):
        req = a.generate_request(target("anthropic", base), "claude-haiku-4-5", "messages")
        assert req.url == "https://api.anthropic.com/v1/messages"  # never /v1/v1
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["x-api-key"] == KEY and "authorization" not in req.headers
    assert req.body is not None and req.body["max_tokens"] >= 1
    assert a.list_request(target("anthropic", "https://api.anthropic.com")).url.endswith("/v1/models")
    gw = a.generate_request(target("anthropic", "http://gw", api_key_env="ANTHROPIC_AUTH_TOKEN"), "c", "messages")
    assert gw.headers["authorization"] == f"Bearer {KEY}" and "x-api-key" not in gw.headers


def test_gemini_shape_keeps_the_key_out_of_the_url() -> None:
    a = adapter_for("gemini")
    req = a.generate_request(
        target("gemini", "https://generativelanguage.googleapis.com"), "models/gemini-2.5-pro", "generateContent"
    )
    assert req.url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"
    assert req.headers["x-goog-api-key"] == KEY and KEY not in req.url and not req.params
    assert req.body is not None and req.body["generationConfig"]["maxOutputTokens"] >= 1
    assert a.list_request(target("gemini", "https://g.example/v1beta")).url == "https://g.example/v1beta/models"


def test_azure_and_openrouter() -> None:
    az = adapter_for("azure")
    t = target("azure", "https://res.openai.azure.com/openai/v1", extra={"api_version": "2024-10-21"})
    req = az.generate_request(t, "my-deployment", "chat")
    assert req.headers["api-key"] == KEY and "authorization" not in req.headers
    assert req.params == {"api-version": "2024-10-21"}
    assert is_official(az, t.base_url)
    orr = adapter_for("openrouter")
    key = orr.key_request(target("openrouter", "https://openrouter.ai/api/v1"))  # type: ignore[attr-defined]
    assert key.url == "https://openrouter.ai/api/v1/key" and key.method == "GET"


def test_names_and_hosts() -> None:
    assert canonical("Ollama") == "openai-compatible" and canonical("claude") == "anthropic"
    assert canonical("nonsense") is None
    assert is_loopback("http://127.0.0.1:8787") and is_loopback("http://localhost/v1")
    assert not is_loopback("https://api.openai.com/v1")
    assert not is_official(adapter_for("anthropic"), "https://relay.example.com")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {
                "error": {
                    "message": "Our servers are currently overloaded.",
                    "type": "service_unavailable_error",
                    "code": "server_is_overloaded",
                }
            },
            ErrorInfo("server_is_overloaded", "service_unavailable_error", "Our servers are currently overloaded."),
        ),
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_1"},
            ErrorInfo(None, "overloaded_error", "Overloaded"),
        ),
        (
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "spend",
                    "details": {"error_code": "enforced_spend_limit_reached"},
                },
            },
            ErrorInfo("enforced_spend_limit_reached", "rate_limit_error", "spend"),
        ),
        (
            {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
            ErrorInfo("UNAVAILABLE", "UNAVAILABLE", "The model is overloaded."),
        ),
        (
            {
                "type": "response.failed",
                "response": {
                    "status": "failed",
                    "error": {
                        "code": "server_is_overloaded",
                        "message": "Selected model is at capacity. Please try a different model.",
                    },
                },
            },
            ErrorInfo("server_is_overloaded", None, "Selected model is at capacity. Please try a different model."),
        ),
        ({"status": "failed", "error": {"code": "slow_down", "message": "m"}}, ErrorInfo("slow_down", None, "m")),
        (
            {"error": {"message": "Provider returned error", "code": 402}},
            ErrorInfo("402", None, "Provider returned error"),
        ),
        (
            {"error": "model 'x' not found, try pulling it first"},
            ErrorInfo(None, "model 'x' not found, try pulling it first", "model 'x' not found, try pulling it first"),
        ),
        ({"detail": "Unauthorized"}, ErrorInfo(None, None, "Unauthorized")),
        ({"choices": [{"message": {"content": "pong"}}]}, None),
    ],
)
def test_error_fields(body: dict[str, Any], expected: ErrorInfo | None) -> None:
    assert error_fields(body) == expected


def ev(data: Any, event: str | None = None) -> Event:
    return Event(event, data if isinstance(data, str) else json.dumps(data))


def test_openai_stream_events() -> None:
    a = adapter_for("openai")
    failed = a.read_event(
        "responses",
        ev(
            {
                "type": "response.failed",
                "response": {"error": {"code": "server_is_overloaded", "message": "Selected model is at capacity."}},
            },
            "response.failed",
        ),
    )
    assert failed.error is not None and failed.error.code == "server_is_overloaded"
    assert a.read_event("responses", ev({"type": "response.created"}, "response.created")).decisive is False
    assert a.read_event("responses", ev({"type": "response.output_text.delta", "delta": "p"})).ok
    done = a.read_event("responses", ev({"type": "response.completed"}, "response.completed"))
    assert done.ok and done.done
    assert not a.read_event("chat", ev({"choices": [{"delta": {"role": "assistant"}}]})).decisive
    assert a.read_event("chat", ev({"choices": [{"delta": {"content": "po"}}]})).ok
    assert a.read_event("chat", ev({"choices": [{"delta": {}, "finish_reason": "length"}]})).done
    mid = a.read_event("chat", ev({"error": {"message": "Selected model is at capacity.", "code": 503}}))
    assert mid.error is not None and mid.error.message == "Selected model is at capacity."
    assert a.read_event("chat", ev("[DONE]")).done


def test_anthropic_stream_events() -> None:
    a = adapter_for("anthropic")
    err = a.read_event(
        "messages", ev({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")
    )
    assert err.error is not None and err.error.type == "overloaded_error"
    assert not a.read_event("messages", ev({"type": "message_start"}, "message_start")).decisive
    assert a.read_event("messages", ev({"type": "content_block_delta"}, "content_block_delta")).ok
    assert a.read_event("messages", ev({"type": "message_stop"}, "message_stop")).done


def test_bodies() -> None:
    assert adapter_for("gemini").read_body("generateContent", {"candidates": []}).ok
    assert adapter_for("anthropic").read_body("messages", {"type": "message", "content": []}).ok
    failed = adapter_for("openai").read_body("responses", {"status": "failed", "error": {"code": "slow_down"}})
    assert failed.error is not None and failed.error.code == "slow_down"


@pytest.mark.parametrize(
    ("provider", "body", "ids"),
    [
        ("openai", {"data": [{"id": "gpt-5.5"}, {"id": "gpt-5.4-mini"}]}, ["gpt-5.5", "gpt-5.4-mini"]),
        ("gemini", {"models": [{"name": "models/gemini-2.5-pro"}]}, ["gemini-2.5-pro"]),
        ("openai-compatible", {"models": [{"name": "llama3.2:3b", "model": "llama3.2:3b"}]}, ["llama3.2:3b"]),
        ("openai", {"unexpected": True}, None),
    ],
)
def test_model_lists(provider: str, body: Any, ids: list[str] | None) -> None:
    assert adapter_for(provider).parse_models(body) == ids
