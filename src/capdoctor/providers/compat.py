"""Generic OpenAI-compatible servers: vLLM, llama.cpp, LM Studio, Ollama's `/v1`, LiteLLM and similar.

Contract: the OpenAI shapes with the differences that matter for a probe — `max_tokens` instead of
`max_completion_tokens` (older servers reject the new name), chat completions first, no official host,
no key required (local servers run without one), no light model of its own. Hosted providers that speak
this dialect get their own module (openrouter.py, azure.py, …) subclassing `CompatAdapter`.
No I/O here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.providers.base import OUTPUT_TOKENS, X_RATELIMIT, Adapter


class CompatAdapter(Adapter):
    """Any server that speaks OpenAI's chat completions; no official host, no default light model."""

    name = "openai-compatible"
    aliases: tuple[str, ...] = ("compatible", "ollama", "vllm", "llama.cpp", "llamacpp", "lmstudio", "deepseek")
    default_base_url = "http://127.0.0.1:11434/v1"
    default_model = "llama3.2"
    light_models: tuple[str, ...] = ()
    official_hosts: tuple[str, ...] = ()
    key_envs = ("OPENAI_API_KEY",)
    key_required = False
    base_url_envs = ("OPENAI_BASE_URL",)
    claims_env = False  # OPENAI_* variables imply OpenAI itself
    routes: tuple[str, ...] = ("chat", "responses")
    ratelimit_headers = (X_RATELIMIT,)  # LiteLLM and other gateways copy OpenAI's spelling

    def token_limit(self, model: str) -> dict[str, int]:
        """`max_tokens`: what every compatible server understands."""
        return {"max_tokens": OUTPUT_TOKENS}
