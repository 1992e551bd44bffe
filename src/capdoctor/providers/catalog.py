"""The provider catalogue: every provider capdoctor knows, and the tables other modules derive from them.

Contract: `ADAPTERS` lists one adapter class per provider (see `capdoctor.providers.base`); adding a provider
means writing its module and adding its row here. The functions below answer the cross-provider questions (which
provider does this host, model, variable or key prefix point at) so that no other module keeps a per-provider
table. Cheap to import (no httpx), no I/O. Not the package's `__init__`: checks import these names lazily from
worker threads, and an `__init__` that imports its own submodules can deadlock two threads importing at once.
"""

from __future__ import annotations

from functools import cache

from capdoctor.providers.anthropic import AnthropicAdapter
from capdoctor.providers.azure import AzureAdapter
from capdoctor.providers.base import Adapter, HeaderFamily, host_of
from capdoctor.providers.compat import CompatAdapter
from capdoctor.providers.gemini import GeminiAdapter
from capdoctor.providers.groq import GroqAdapter
from capdoctor.providers.openai import OpenAIAdapter
from capdoctor.providers.openrouter import OpenRouterAdapter

ADAPTERS: dict[str, type[Adapter]] = {
    cls.name: cls
    for cls in (
        OpenAIAdapter,
        AnthropicAdapter,
        GeminiAdapter,
        CompatAdapter,
        OpenRouterAdapter,
        AzureAdapter,
        GroqAdapter,
    )
}
"""Every provider, in the order discovery tries them when only the environment names one."""
PROVIDER_NAMES: tuple[str, ...] = tuple(ADAPTERS)


@cache
def adapters() -> tuple[Adapter, ...]:
    """One instance of every provider's adapter, in catalogue order (they are stateless, so shared)."""
    return tuple(cls() for cls in ADAPTERS.values())


def canonical(name: str) -> str | None:
    """The provider name for a user's spelling (its name or one of its aliases), or None when unknown."""
    low = name.strip().lower()
    if low in ADAPTERS:
        return low
    return next((a.name for a in adapters() if low in a.aliases), None)


def adapter_for(name: str) -> Adapter:
    """A fresh adapter for provider `name` (unknown names get the generic OpenAI-compatible adapter)."""
    return ADAPTERS.get(canonical(name) or "", CompatAdapter)()


def is_official(adapter: Adapter, base_url: str) -> bool:
    """True when `base_url` points at the provider's own host (anything else is a relay or local server)."""
    host = host_of(base_url)
    return any(host == h or (h.startswith(".") and host.endswith(h)) for h in adapter.official_hosts)


def provider_for_host(host: str) -> str | None:
    """The provider whose hosts name `host` (a suffix match: `api.anthropic.com` → anthropic), or None."""
    host = host.lower()
    for a in adapters():
        for h in a.url_hosts or tuple(h.lstrip(".") for h in a.official_hosts):
            if host == h or host.endswith("." + h) or host.endswith(h):
                return a.name
    return None


def provider_for_model(model: str) -> str | None:
    """The provider a model name implies (`claude-…` → anthropic), or None."""
    low = model.lower()
    return next((a.name for a in adapters() for p in a.model_prefixes if low.startswith(p)), None)


def env_markers() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(provider, its variables) for the providers whose variables alone imply them, in catalogue order."""
    return tuple((a.name, a.env_vars()) for a in adapters() if a.claims_env)


def key_family(key: str) -> tuple[str, str] | None:
    """(provider, prefix) of the longest known key prefix `key` starts with, or None (never stores the key)."""
    best: tuple[str, str] | None = None
    for a in adapters():
        for prefix in a.key_prefixes:
            if key.startswith(prefix) and (best is None or len(prefix) > len(best[1])):
                best = (a.name, prefix)
    return best


def header_families() -> tuple[HeaderFamily, ...]:
    """Every rate-limit header spelling any provider uses, without repeats, in catalogue order."""
    return tuple(dict.fromkeys(f for a in adapters() for f in a.ratelimit_headers))


def env_vars() -> tuple[str, ...]:
    """Every variable any provider reads (keys, base URLs, models, API versions), without repeats."""
    return tuple(dict.fromkeys(v for a in adapters() for v in a.env_vars()))


__all__ = [
    "ADAPTERS",
    "PROVIDER_NAMES",
    "Adapter",
    "adapter_for",
    "adapters",
    "canonical",
    "env_markers",
    "env_vars",
    "header_families",
    "is_official",
    "key_family",
    "provider_for_host",
    "provider_for_model",
]
