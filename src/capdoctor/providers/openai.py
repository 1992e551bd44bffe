"""The OpenAI provider: chat completions and the Responses API (what Codex speaks) on `…/v1` base URLs.

Contract: everything capdoctor knows about api.openai.com (and chatgpt.com's Codex backend), as the data of
one adapter class: request shapes and the model list, the key and base-URL variables, `sk-` keys, the
`x-ratelimit-*` and `x-codex-*` header spellings, the status page, Codex's switch command. The Responses
route comes first because "Selected model is at capacity" is a Responses-backend error and its failures
arrive inside an HTTP 200 stream (`response.failed`). No I/O here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.providers.base import X_RATELIMIT, Adapter, HeaderFamily, StatusPage

CODEX_USAGE = HeaderFamily(
    "codex",
    "x-codex-{window}-{field}",
    ("primary", "secondary"),
    "instant",
    (("used_percent", "used-percent"), ("reset", "reset-at"), ("reset_after", "reset-after-seconds")),
)
"""The ChatGPT-plan usage windows Codex's backend reports (used percent, unix-second resets)."""


class OpenAIAdapter(Adapter):
    """api.openai.com: Bearer key, `max_completion_tokens` on chat, `max_output_tokens >= 16` on responses."""

    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-5.5"
    light_models = ("gpt-5.4-mini", "gpt-5-mini")
    official_hosts = ("api.openai.com", "chatgpt.com")
    key_envs = ("OPENAI_API_KEY",)
    key_prefixes = ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-")
    base_url_envs = ("OPENAI_BASE_URL",)
    client_base_url_envs = ("OPENAI_API_BASE", "AIDER_OPENAI_API_BASE")
    model_prefixes = ("gpt-", "o1", "o3", "o4", "codex-")
    routes = ("responses", "chat")
    ratelimit_headers = (X_RATELIMIT, CODEX_USAGE)
    status_page = StatusPage(
        "https://status.openai.com",
        "https://status.openai.com/api/v2/summary.json",
        ("api", "responses", "codex", "chat completions", "gpt"),
    )
    switch_command = "codex --model {model}"
    log_hints = r"api\.openai\.com|chatgpt\.com|openai"
    clients = ("codex", "aider", "copilot")
