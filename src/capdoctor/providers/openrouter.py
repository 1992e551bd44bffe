"""The OpenRouter provider: openrouter.ai/api/v1, OpenAI-compatible chat with its own key endpoint.

Contract: everything capdoctor knows about OpenRouter as one adapter class: `sk-or-` keys in
OPENROUTER_API_KEY, errors that can arrive inside a 200 stream, the generic `X-RateLimit-*` headers with
epoch-millisecond resets, its status page, and `GET /key` (limit and remaining credit, spends nothing).
No I/O here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.providers.base import HeaderFamily, ProbeRequest, StatusPage, join
from capdoctor.providers.compat import CompatAdapter
from capdoctor.run.context import Target

OPENROUTER_RATELIMIT = HeaderFamily("generic", "x-ratelimit-{field}", ("requests",), "instant")
"""`X-RateLimit-Limit`, `-Remaining`, `-Reset` (epoch milliseconds): one window."""


class OpenRouterAdapter(CompatAdapter):
    """openrouter.ai/api/v1: errors can arrive inside a 200 stream; `GET /key` shows credit left."""

    name = "openrouter"
    aliases = ()
    default_base_url = "https://openrouter.ai/api/v1"
    default_model = "openai/gpt-5.5"
    light_models = ("openai/gpt-5.4-mini", "openai/gpt-5-mini")
    official_hosts = ("openrouter.ai",)
    key_envs = ("OPENROUTER_API_KEY",)
    key_prefixes = ("sk-or-",)
    key_required = True
    base_url_envs = ("OPENROUTER_BASE_URL",)
    claims_env = True
    routes = ("chat",)
    ratelimit_headers = (OPENROUTER_RATELIMIT,)
    status_page = StatusPage(
        "https://status.openrouter.ai", "https://status.openrouter.ai/api/v2/summary.json", ("api", "openrouter")
    )
    log_hints = r"openrouter"

    def key_request(self, target: Target) -> ProbeRequest | None:
        """GET /key: the key's limit, usage and remaining credit."""
        return ProbeRequest("GET", join(target.base_url, "key"), "key", self.base_headers(target))
