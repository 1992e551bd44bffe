"""The Groq provider: GroqCloud's OpenAI-compatible API at `https://api.groq.com/openai/v1`.

Contract: everything capdoctor knows about Groq, as the data of one adapter class: `gsk_` keys in
GROQ_API_KEY, GROQ_BASE_URL, OpenAI's chat completions and model list with `max_completion_tokens`,
OpenAI's `x-ratelimit-*` spelling (requests per day, tokens per minute; `retry-after` on 429s), the
groqstatus.com Statuspage feed, and the words that name it in a log. Capacity shows as 503 "… is currently
over capacity" or, on the flex tier, 498 `capacity_exceeded`; both are read by the signature table. No I/O
here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.providers.base import X_RATELIMIT, Adapter, StatusPage


class GroqAdapter(Adapter):
    """api.groq.com/openai/v1: Bearer `gsk_` key, chat completions only."""

    name = "groq"
    aliases = ("groqcloud",)
    default_base_url = "https://api.groq.com/openai/v1"
    default_model = "llama-3.3-70b-versatile"
    light_models = ("llama-3.1-8b-instant",)
    official_hosts = ("api.groq.com",)
    url_hosts = ("groq.com",)
    key_envs = ("GROQ_API_KEY",)
    key_prefixes = ("gsk_",)
    base_url_envs = ("GROQ_BASE_URL",)
    routes = ("chat",)
    ratelimit_headers = (X_RATELIMIT,)
    status_page = StatusPage(
        "https://groqstatus.com", "https://groqstatus.com/api/v2/summary.json", ("api", "groqcloud", "chat")
    )
    log_hints = r"groq"
