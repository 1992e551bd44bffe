"""The Gemini provider: `generateContent` on the Generative Language API host (`/v1beta/models/{m}:…`).

Contract: everything capdoctor knows about generativelanguage.googleapis.com as one adapter class (`AIza` keys,
GEMINI_API_KEY/GOOGLE_API_KEY, the AI Studio status page, which publishes no JSON feed, Gemini CLI's switch
command), and its request shapes: key in the `x-goog-api-key` header (never in the URL query, which would leak
into logs), a one-word prompt with a small `maxOutputTokens`, and the model list at `/v1beta/models`. Errors use
`{"error":{code,message,status,details}}` with quota facts in `details` (read by the quota check). No I/O here;
no cause decisions.
"""

from __future__ import annotations

from typing import Any

from capdoctor.providers.base import (
    OK,
    OUTPUT_TOKENS,
    UNDECIDED,
    Adapter,
    Outcome,
    ProbeRequest,
    StatusPage,
    error_fields,
    join,
)
from capdoctor.run.context import Target
from capdoctor.target import urls


def _root(base_url: str) -> str:
    return urls.root(base_url, ("/v1beta", "/v1"))


class GeminiAdapter(Adapter):
    """generativelanguage.googleapis.com."""

    name = "gemini"
    aliases = ("google",)
    default_base_url = "https://generativelanguage.googleapis.com"
    default_model = "gemini-2.5-pro"
    light_models = ("gemini-2.5-flash", "gemini-2.5-flash-lite")
    official_hosts = ("generativelanguage.googleapis.com",)
    url_hosts = ("googleapis.com",)
    key_envs = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    key_prefixes = ("AIza",)
    base_url_envs = ("GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL")
    model_prefixes = ("gemini-",)
    routes = ("generateContent",)
    status_page = StatusPage("https://aistudio.google.com/status", "", ("gemini", "generative language", "vertex"))
    switch_command = "gemini --model {model}"
    log_hints = r"googleapis\.com|gemini|vertex"
    clients = ("gemini",)

    def auth_headers(self, target: Target) -> dict[str, str]:
        """`x-goog-api-key`."""
        return {"x-goog-api-key": target.api_key} if target.api_key else {}

    def list_request(self, target: Target) -> ProbeRequest:
        """GET /v1beta/models."""
        return ProbeRequest("GET", join(_root(target.base_url), "v1beta/models"), "models", self.base_headers(target))

    def route_order(self, target: Target) -> tuple[str, ...]:
        """One route."""
        return self.routes

    def generate_request(self, target: Target, model: str, route: str) -> ProbeRequest:
        """POST /v1beta/models/{model}:generateContent with a tiny output budget."""
        name = model.removeprefix("models/")
        body: dict[str, Any] = {
            "contents": [{"parts": [{"text": "ping"}]}],
            "generationConfig": {"maxOutputTokens": OUTPUT_TOKENS},
        }
        headers = {**self.base_headers(target), "content-type": "application/json"}
        return ProbeRequest(
            "POST",
            join(_root(target.base_url), f"v1beta/models/{name}:generateContent"),
            route,
            headers,
            body,
            output_tokens=OUTPUT_TOKENS,
        )

    def read_body(self, route: str, obj: Any) -> Outcome:
        """`candidates` is output; `error` is the failure."""
        err = error_fields(obj)
        if err is not None:
            return Outcome(error=err)
        if isinstance(obj, dict) and ("candidates" in obj or "usageMetadata" in obj):
            return OK
        return UNDECIDED
