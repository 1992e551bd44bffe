"""The provider catalogue: maps a provider name (or a user's spelling of it) to its adapter.

Contract: `adapter_for(name)` returns a fresh adapter (they are stateless); `PROVIDER_NAMES` lists what
`--provider` accepts. Importing this module is cheap (no httpx). It must not do I/O.
It lives in its own module rather than in the package's `__init__`: checks import these names lazily from
worker threads, and a package `__init__` that imports its own submodules turns two threads importing the
package and a submodule at once into an import deadlock.
"""


from __future__ import annotations

from capdoctor.providers.anthropic import AnthropicAdapter
from capdoctor.providers.base import Adapter, host_of
from capdoctor.providers.compat import AzureAdapter, CompatAdapter, OpenRouterAdapter
from capdoctor.providers.gemini import GeminiAdapter
from capdoctor.providers.openai import OpenAIAdapter

ADAPTERS: dict[str, type[Adapter]] = {
    "openai": OpenAIAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
    "openai-compatible": CompatAdapter,
    "openrouter": OpenRouterAdapter,
    "azure": AzureAdapter,
}
PROVIDER_NAMES: tuple[str, ...] = tuple(ADAPTERS)

ALIASES: dict[str, str] = {
    "compatible": "openai-compatible", "ollama": "openai-compatible", "vllm": "openai-compatible",
    "llama.cpp": "openai-compatible", "llamacpp": "openai-compatible", "lmstudio": "openai-compatible",
    "deepseek": "openai-compatible", "claude": "anthropic", "google": "gemini", "azure-openai": "azure",
}
"""Other spellings users type for `--provider`."""


def canonical(name: str) -> str | None:
    """The adapter name for a user's spelling, or None when unknown."""
    low = name.strip().lower()
    return low if low in ADAPTERS else ALIASES.get(low)


def adapter_for(name: str) -> Adapter:
    """A fresh adapter for provider `name` (unknown names get the generic OpenAI-compatible adapter)."""
    return ADAPTERS.get(canonical(name) or "", CompatAdapter)()


def is_official(adapter: Adapter, base_url: str) -> bool:
    """True when `base_url` points at the provider's own host (anything else is a relay or local server)."""
    host = host_of(base_url)
    return any(host == h or (h.startswith(".") and host.endswith(h)) for h in adapter.official_hosts)



__all__ = ["ADAPTERS", "PROVIDER_NAMES", "Adapter", "adapter_for", "canonical", "is_official"]
