"""The OpenAI adapter: chat completions and the Responses API (what Codex speaks) on `…/v1` base URLs.

Contract: request shapes and the model list for api.openai.com and anything that copies it exactly. The
Responses route comes first because "Selected model is at capacity" is a Responses-backend error and its
failures arrive inside an HTTP 200 stream (`response.failed`). No I/O here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.providers.base import Adapter


class OpenAIAdapter(Adapter):
    """api.openai.com: Bearer key, `max_completion_tokens` on chat, `max_output_tokens >= 16` on responses."""

    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-5.5"
    light_models = ("gpt-5.4-mini", "gpt-5-mini")
    official_hosts = ("api.openai.com", "chatgpt.com")
    key_envs = ("OPENAI_API_KEY",)
    routes = ("responses", "chat")
