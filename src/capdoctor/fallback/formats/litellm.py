"""`--format litellm`: a LiteLLM router/proxy config — the primary, the alternatives that answered, fallbacks.

Contract: YAML (pyyaml) that `litellm --config FILE` loads as a proxy and that `Router(model_list=...,
**router_settings)` takes in Python: one `model_list` entry per model (named as the model itself, so clients
keep asking for the primary), `api_key: os.environ/VAR` (LiteLLM reads the variable at start; no key is ever
written), the target's base URL as `api_base` unless it is the provider's default, and `router_settings` with
`fallbacks` from the primary to the alternatives in rank order, `num_retries` and a per-error `retry_policy`
(LiteLLM backs off between retries and honours Retry-After), `allowed_fails` and `cooldown_time` (a model
that keeps failing rests, and requests go straight to its fallbacks). The policy values are data below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capdoctor.fallback.generate import Generated, comment_block, custom_base_url
from capdoctor.fallback.pool import Pool, provenance

LITELLM_PREFIX: Mapping[str, str] = {
    "openai": "openai",
    "openai-compatible": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "openrouter": "openrouter",
    "azure": "azure",
}
"""LiteLLM's provider prefix for each capdoctor provider (`openai/` also serves any OpenAI-compatible server).
Provider knowledge kept here until the per-provider modules hold it."""

RETRY_POLICY: Mapping[str, int] = {
    "ServiceUnavailableErrorRetries": 1,  # 503 overloaded: one retry, then the fallback (switching is the fix)
    "InternalServerErrorRetries": 1,  # 500/529: the same
    "RateLimitErrorRetries": 2,  # 429: waiting out Retry-After often works
    "TimeoutErrorRetries": 1,
    "AuthenticationErrorRetries": 0,  # a bad key does not get better
    "BadRequestErrorRetries": 0,
    "ContentPolicyViolationErrorRetries": 0,
}
ROUTER_SETTINGS: Mapping[str, int] = {
    "num_retries": 2,  # for errors the retry_policy does not name
    "allowed_fails": 2,  # failures within a minute before a model rests...
    "cooldown_time": 60,  # ...this many seconds, its requests going straight to the fallbacks
}


def config(pool: Pool) -> dict[str, Any]:
    """The config as data: `model_list` and `router_settings`."""
    base = custom_base_url(pool)
    prefix = LITELLM_PREFIX.get(pool.provider, "openai")
    deployments = []
    for model in pool.models:
        params: dict[str, Any] = {"model": f"{prefix}/{model}"}
        if base:
            params["api_base"] = base
        params["api_key"] = f"os.environ/{pool.key_env}"
        deployments.append({"model_name": model, "litellm_params": params})
    settings: dict[str, Any] = {
        "fallbacks": [{pool.primary.model: [c.model for c in pool.alternatives]}],
        **ROUTER_SETTINGS,
        "retry_policy": dict(RETRY_POLICY),
    }
    return {"model_list": deployments, "router_settings": settings}


def generate(pool: Pool) -> Generated:
    """The commented YAML."""
    import yaml

    alts = ", ".join(c.model for c in pool.alternatives)
    header = [
        *provenance(pool),
        f"Use: `litellm --config capdoctor-litellm.yaml` (pip install 'litellm[proxy]'), then point your client at "
        f"http://localhost:4000 and keep asking for {pool.primary.model}; in Python: "
        "Router(model_list=cfg['model_list'], **cfg['router_settings']).",
        f"When {pool.primary.model} fails, LiteLLM retries it (backoff, Retry-After honoured), then falls back to "
        f"{alts} in this order; a model that failed {ROUTER_SETTINGS['allowed_fails']} times rests "
        f"{ROUTER_SETTINGS['cooldown_time']} s.",
        f"No key is stored here: LiteLLM reads {pool.key_env} from the environment (os.environ/{pool.key_env}).",
    ]
    body = yaml.safe_dump(config(pool), sort_keys=False, default_flow_style=False, allow_unicode=True)
    return Generated(
        comment_block(header) + body,
        "yaml",
        file="capdoctor-litellm.yaml",
        load="Run it: litellm --config {file}",
    )
