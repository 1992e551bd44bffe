"""The simulator's named scenarios: which requests fail, with which literal responses (`replies.py`).

Contract: this module is data. Each `Scenario` says which requests fail (the primary model, every model, or a
deterministic pattern), with which literal response per wire shape, how the status page looks, and which cause
capdoctor should name (`expected_cause`, used by `capdoctor demo` as a self-test). A shape with no reply behaves
healthily in that scenario. It must not import capdoctor.classifier.signatures or any classifier, and must not
do I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from capdoctor.simulator.replies import (
    ACCOUNT_THROTTLED,
    ANTHROPIC_OVERLOADED,
    AUTH,
    CAPACITY,
    CLIENT_OUTDATED,
    CLOUDFLARE,
    CODEX_USAGE,
    ENGINE_OVERLOADED,
    GEMINI_OVERLOADED,
    LOCAL_OOM,
    MODEL_NOT_FOUND,
    OLLAMA_BUSY_TEXT,
    OOM_PS,
    OPENROUTER_CREDITS,
    OPENROUTER_KEY_EMPTY,
    QUOTA,
    RATE_LIMIT,
    REGION,
    SPEND_LIMIT,
    Reply,
)

CAUSES = ("capacity", "quota", "account", "network", "hardware", "client", "none")


AT_CAPACITY_TEXT = "Selected model is at capacity. Please try a different model."
STREAM_CAPACITY_ERROR = {"code": "server_is_overloaded", "message": AT_CAPACITY_TEXT}
STREAM_ERRORS: Mapping[str, Any] = {
    "openai": STREAM_CAPACITY_ERROR,
    "compat": {
        "message": AT_CAPACITY_TEXT,
        "type": "service_unavailable_error",
        "param": None,
        "code": "server_is_overloaded",
    },
    "openrouter": {
        "message": AT_CAPACITY_TEXT,
        "code": 503,
        "metadata": {"provider_name": "OpenAI", "raw": json.dumps({"error": STREAM_CAPACITY_ERROR})},
    },
    "anthropic": {"type": "overloaded_error", "message": "Overloaded"},
    "gemini": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"},
    "ollama": OLLAMA_BUSY_TEXT,
}
# Non-streamed requests in the stream scenario: the relay pass-through shape, HTTP 200 with the error inside.
STREAM_CAPACITY_PLAIN = {
    "openai:responses": Reply(
        200,
        {
            "id": "resp_68b2f1c0de5a8190a1b2c3d4e5f60718",
            "object": "response",
            "created_at": "{now_epoch}",
            "status": "failed",
            "background": False,
            "error": {"code": "server_is_overloaded", "message": AT_CAPACITY_TEXT},
            "incomplete_details": None,
            "model": "{model}",
            "output": [],
            "usage": None,
            "metadata": {},
        },
    ),
    "openai": Reply(200, {"error": {**STREAM_CAPACITY_ERROR, "type": "service_unavailable_error", "param": None}}),
    "compat": Reply(200, {"error": STREAM_ERRORS["compat"]}),
    "openrouter": Reply(200, {"error": STREAM_ERRORS["openrouter"]}),
    "anthropic": ANTHROPIC_OVERLOADED,
    "gemini": GEMINI_OVERLOADED,
    "ollama": Reply(503, {"error": OLLAMA_BUSY_TEXT}),
}


@dataclass(frozen=True)
class Scenario:
    """A named provider situation the simulator plays on every route.

    `fails`: which generation requests fail — "none", "primary" (any model not in the alternatives) or "all".
    `pattern`: cyclic per failing-model request, True = fail (flaky scenarios); default always.
    `everywhere`: the replies also answer list/key routes (auth, region, blocks), not only generation.
    `stream_errors`: per shape, the error object a *streamed* request gets mid-stream after HTTP 200.
    `stream_cut`: streamed requests lose the connection after the first delta (no terminal event).
    `transport`: "http", "blackhole" (accept, never answer), "reset" (RST after the request), "captive".
    `status_page`: "green", "incident" or "broken" (HTML 500).
    `requires_key`: a request without a key header gets the shape's literal missing-key refusal (`NO_KEY`).
    """

    name: str
    description: str
    expected_cause: str
    provider: str = "openai"
    primary_model: str = "gpt-5.5"
    alt_models: tuple[str, ...] = ("gpt-5.4-mini",)
    replies: Mapping[str, Reply] = field(default_factory=dict)
    fails: str = "none"
    pattern: tuple[bool, ...] = (True,)
    everywhere: bool = False
    stream_errors: Mapping[str, Any] = field(default_factory=dict)
    stream_cut: bool = False
    transport: str = "http"
    status_page: str = "green"
    ollama_ps: tuple[Mapping[str, Any], ...] | None = None
    openrouter_key: Mapping[str, Any] | None = None
    unlisted_primary: bool = False
    requires_key: bool = False


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("healthy", "Everything works: every model answers, the status page is green.", "none"),
        Scenario(
            "capacity",
            "The primary model is overloaded (OpenAI 503 server_is_overloaded, Anthropic 529, "
            "Gemini 503 UNAVAILABLE, Ollama 503 server busy); a lighter model works.",
            "capacity",
            replies=CAPACITY,
            fails="primary",
        ),
        Scenario(
            "flaky-capacity",
            "The primary model fails 2 of every 3 requests with a capacity error; a lighter model works.",
            "capacity",
            replies=CAPACITY,
            fails="primary",
            pattern=(True, True, False),
        ),
        Scenario(
            "intermittent-capacity",
            "The primary model fails 3 of every 5 requests (60 %) with a capacity error, "
            "and its first request succeeds; a lighter model works.",
            "capacity",
            replies=CAPACITY,
            fails="primary",
            pattern=(False, True, True, False, True),
        ),
        Scenario(
            "occasional-capacity",
            "The primary model fails 1 of every 3 requests with a capacity error (a "
            "success comes first); a lighter model works.",
            "capacity",
            replies=CAPACITY,
            fails="primary",
            pattern=(False, True, False),
        ),
        Scenario(
            "quota",
            "The account is out of credit on every model (429 insufficient_quota, Anthropic 400 "
            "credit balance too low, Gemini 429 limit: 0).",
            "quota",
            replies=QUOTA,
            fails="all",
        ),
        Scenario(
            "rate-limit",
            "Every model is rate limited: 429 with retry-after 1 and remaining requests 0.",
            "quota",
            replies=RATE_LIMIT,
            fails="all",
        ),
        Scenario(
            "auth",
            "The key is rejected on every route (401 invalid_api_key, Gemini 400 API_KEY_INVALID).",
            "account",
            replies=AUTH,
            fails="all",
            everywhere=True,
        ),
        Scenario(
            "no-key",
            "The provider refuses every request that carries no key (401 'You didn't provide an API "
            "key', Anthropic 'x-api-key header is required'); with a key everything works.",
            "client",
            requires_key=True,
        ),
        Scenario(
            "region",
            "The request's country is refused (403 unsupported_country_region_territory, Gemini "
            "400 FAILED_PRECONDITION).",
            "account",
            replies=REGION,
            fails="all",
            everywhere=True,
        ),
        Scenario(
            "model-not-found",
            "The primary model does not exist for this key (404 model_not_found); the model list shows what does.",
            "client",
            replies=MODEL_NOT_FOUND,
            fails="primary",
            unlisted_primary=True,
        ),
        Scenario(
            "blackhole", "Connections are accepted but nothing is ever sent back.", "network", transport="blackhole"
        ),
        Scenario("reset", "Connections are reset (RST) right after the request is read.", "network", transport="reset"),
        Scenario(
            "captive-portal",
            "Every URL, status page included, answers HTTP 200 with a captive portal's HTML redirect.",
            "network",
            transport="captive",
        ),
        Scenario(
            "local-oom",
            "The local Ollama model does not fit: /api/ps shows it partly on CPU and generation "
            "fails with 500 'model requires more system memory'.",
            "hardware",
            replies=LOCAL_OOM,
            fails="primary",
            ollama_ps=OOM_PS,
            provider="ollama",
            primary_model="llama3.1:70b",
            alt_models=("llama3.2:3b",),
        ),
        Scenario(
            "stream-capacity",
            "HTTP 200, then the stream fails: response.failed server_is_overloaded 'Selected "
            "model is at capacity'; a lighter model works.",
            "capacity",
            replies=STREAM_CAPACITY_PLAIN,
            fails="primary",
            stream_errors=STREAM_ERRORS,
        ),
        Scenario(
            "stream-cut",
            "Streams stop after the first delta and the connection drops (no "
            "response.completed / [DONE]); plain requests work.",
            "network",
            stream_cut=True,
        ),
        Scenario(
            "status-incident",
            "Capacity errors on the primary model while the status page shows an ongoing incident on the API.",
            "capacity",
            replies=CAPACITY,
            fails="primary",
            status_page="incident",
        ),
        Scenario(
            "status-broken", "The API is healthy but the status page answers HTML 500.", "none", status_page="broken"
        ),
        Scenario(
            "account-throttled",
            "server_is_overloaded on every model while rate-limit headers show plenty "
            "of headroom and the status page is green.",
            "account",
            replies=ACCOUNT_THROTTLED,
            fails="all",
        ),
        Scenario(
            "spend-limit",
            "Anthropic 429 rate_limit_error with error_code enforced_spend_limit_reached and no retry-after.",
            "quota",
            replies=SPEND_LIMIT,
            fails="all",
            provider="anthropic",
            primary_model="claude-opus-4-7",
            alt_models=("claude-haiku-4-5",),
        ),
        Scenario(
            "client-outdated",
            "The primary model needs a newer client ('requires a newer version of "
            "Codex' / claude_code_version_too_old); older models work.",
            "client",
            replies=CLIENT_OUTDATED,
            fails="primary",
        ),
        Scenario(
            "engine-overloaded",
            "Moonshot-style 429 engine_overloaded_error on the primary model; another model works.",
            "capacity",
            primary_model="kimi-k2-0905-preview",
            alt_models=("moonshot-v1-8k",),
            replies=ENGINE_OVERLOADED,
            fails="primary",
        ),
        Scenario(
            "openrouter-credits",
            "OpenRouter 402 'requires more credits'; /key shows limit_remaining 0.",
            "quota",
            provider="openrouter",
            primary_model="openai/gpt-5.5",
            alt_models=("openai/gpt-5.4-mini",),
            replies={**QUOTA, "openrouter": OPENROUTER_CREDITS},
            fails="all",
            openrouter_key=OPENROUTER_KEY_EMPTY,
        ),
        Scenario(
            "cloudflare-block",
            "Every API route answers a Cloudflare 'Just a moment...' challenge page (403 HTML).",
            "network",
            replies=CLOUDFLARE,
            fails="all",
            everywhere=True,
        ),
        Scenario(
            "codex-usage-limit",
            "The ChatGPT-plan usage window is used up: 429 usage_limit_reached with x-codex-primary-used-percent 100.",
            "quota",
            replies=CODEX_USAGE,
            fails="all",
        ),
    )
}
