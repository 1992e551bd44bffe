"""The Anthropic provider: the Messages API on the SDK-style host (the client appends `/v1/messages`).

Contract: everything capdoctor knows about api.anthropic.com as one adapter class (hosts, `sk-ant-` keys, the
ANTHROPIC_* variables, `anthropic-ratelimit-*` headers, status.claude.com, Claude Code's switch command), and
its request shapes: `x-api-key` (or `Authorization: Bearer` when the key came from ANTHROPIC_AUTH_TOKEN, as
gateways expect), the required `anthropic-version` header and `max_tokens`; stream events `content_block_delta`
(output) and `error` (e.g. `overloaded_error` after a 200). A base URL that already ends in `/v1` is not
doubled. No I/O here; no cause decisions.
"""

from __future__ import annotations

from typing import Any

from capdoctor.probes.sse import Event
from capdoctor.providers.base import (
    FINISHED,
    OK,
    UNDECIDED,
    Adapter,
    ErrorInfo,
    HeaderFamily,
    Outcome,
    ProbeRequest,
    StatusPage,
    error_fields,
    join,
)
from capdoctor.run.context import Target
from capdoctor.target import urls

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_RATELIMIT = HeaderFamily(
    "anthropic",
    "anthropic-ratelimit-{window}-{field}",
    ("requests", "tokens", "input-tokens", "output-tokens"),
    "instant",
)
"""`anthropic-ratelimit-requests-remaining`, with RFC 3339 resets."""


def _root(base_url: str) -> str:
    return urls.root(base_url, ("/v1",))


class AnthropicAdapter(Adapter):
    """api.anthropic.com Messages API."""

    name = "anthropic"
    aliases = ("claude",)
    default_base_url = "https://api.anthropic.com"
    default_model = "claude-sonnet-4-6"
    light_models = ("claude-haiku-4-5",)
    official_hosts = ("api.anthropic.com",)
    url_hosts = ("anthropic.com",)
    key_envs = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    key_prefixes = ("sk-ant-",)
    base_url_envs = ("ANTHROPIC_BASE_URL",)
    model_envs = ("ANTHROPIC_MODEL",)
    model_prefixes = ("claude-",)
    routes = ("messages",)
    ratelimit_headers = (ANTHROPIC_RATELIMIT,)
    status_page = StatusPage(
        "https://status.claude.com",
        "https://status.claude.com/api/v2/summary.json",
        ("claude api", "api.anthropic.com", "claude code", "api"),
    )
    switch_command = "claude --model {model}"
    log_hints = r"anthropic|claude"
    clients = ("claude",)

    def auth_headers(self, target: Target) -> dict[str, str]:
        """`x-api-key`, or Bearer for ANTHROPIC_AUTH_TOKEN-style gateway tokens."""
        if not target.api_key:
            return {}
        if target.api_key_env == "ANTHROPIC_AUTH_TOKEN":
            return {"authorization": f"Bearer {target.api_key}"}
        return {"x-api-key": target.api_key}

    def base_headers(self, target: Target) -> dict[str, str]:
        """Every request carries `anthropic-version`."""
        return {**super().base_headers(target), "anthropic-version": ANTHROPIC_VERSION}

    def list_request(self, target: Target) -> ProbeRequest:
        """GET /v1/models."""
        url = join(_root(target.base_url), "v1/models")
        return ProbeRequest("GET", url, "models", self.base_headers(target))

    def route_order(self, target: Target) -> tuple[str, ...]:
        """Anthropic has one generation route."""
        return self.routes

    def generate_request(self, target: Target, model: str, route: str) -> ProbeRequest:
        """POST /v1/messages with `max_tokens: 1`, streamed."""
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": 1,
            "stream": True,
            "messages": [{"role": "user", "content": "ping"}],
        }
        headers = {**self.base_headers(target), "content-type": "application/json", "accept": "text/event-stream"}
        return ProbeRequest(
            "POST", join(_root(target.base_url), "v1/messages"), "messages", headers, body, stream=True, output_tokens=1
        )

    def read_body(self, route: str, obj: Any) -> Outcome:
        """`{"type":"message"}` is output; `{"type":"error"}` is the failure."""
        err = error_fields(obj)
        if err is not None:
            return Outcome(error=err)
        if isinstance(obj, dict) and obj.get("type") == "message":
            return OK
        return UNDECIDED

    def read_event(self, route: str, event: Event) -> Outcome:
        """`content_block_*`/`message_delta`/`message_stop` mean output; `error` is the failure event."""
        obj = event.json()
        name = event.event or (obj.get("type") if isinstance(obj, dict) else None)
        if name == "error" or (isinstance(obj, dict) and obj.get("type") == "error"):
            return Outcome(error=error_fields(obj) or ErrorInfo(None, "error", event.data[:200]))
        if name == "message_stop":
            return FINISHED
        if name in ("content_block_start", "content_block_delta", "message_delta"):
            return OK
        return UNDECIDED
