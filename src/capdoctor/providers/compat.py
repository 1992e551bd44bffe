"""OpenAI-compatible servers: generic (vLLM, llama.cpp, LM Studio, Ollama `/v1`, DeepSeek), OpenRouter, Azure.

Contract: the OpenAI shapes with the differences that matter for a probe — `max_tokens` instead of
`max_completion_tokens` (older servers reject the new name), chat completions first, OpenRouter's
`GET /key` (limit and remaining credit, spends nothing), Azure's `api-key` header and `api-version`.
No I/O here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.context import Target
from capdoctor.providers.base import Adapter, ProbeRequest, join


class CompatAdapter(Adapter):
    """Any server that speaks OpenAI's chat completions; no official host, no default light model."""

    name = "openai-compatible"
    default_base_url = "http://127.0.0.1:11434/v1"
    default_model = "llama3.2"
    light_models: tuple[str, ...] = ()
    official_hosts: tuple[str, ...] = ()
    key_envs = ("OPENAI_API_KEY",)
    routes: tuple[str, ...] = ("chat", "responses")

    def token_limit(self, model: str) -> dict[str, int]:
        """`max_tokens`: what every compatible server understands."""
        return {"max_tokens": 16}


class OpenRouterAdapter(CompatAdapter):
    """openrouter.ai/api/v1: errors can arrive inside a 200 stream; `GET /key` shows credit left."""

    name = "openrouter"
    default_base_url = "https://openrouter.ai/api/v1"
    default_model = "openai/gpt-5.5"
    light_models = ("openai/gpt-5.4-mini", "openai/gpt-5-mini")
    official_hosts = ("openrouter.ai",)
    key_envs = ("OPENROUTER_API_KEY",)
    routes = ("chat",)

    def key_request(self, target: Target) -> ProbeRequest:
        """GET /key: the key's limit, usage and remaining credit."""
        return ProbeRequest("GET", join(target.base_url, "key"), "key", self.base_headers(target))


class AzureAdapter(CompatAdapter):
    """Azure OpenAI (`https://<res>.openai.azure.com/openai/v1` or with `api-version`): `api-key` header."""

    name = "azure"
    default_base_url = ""
    default_model = ""
    official_hosts = (".openai.azure.com", ".cognitiveservices.azure.com")
    key_envs = ("AZURE_OPENAI_API_KEY",)
    routes: tuple[str, ...] = ("chat", "responses")

    def auth_headers(self, target: Target) -> dict[str, str]:
        """Azure keys go in `api-key`."""
        return {"api-key": target.api_key} if target.api_key else {}

    def query(self, target: Target) -> dict[str, str]:
        """`api-version` when one was configured (the v1 API needs none)."""
        version = target.extra.get("api_version") if target.extra else None
        return {"api-version": str(version)} if version else {}

    def token_limit(self, model: str) -> dict[str, int]:
        """Azure follows OpenAI: reasoning deployments need `max_completion_tokens`."""
        return {"max_completion_tokens": 16}
