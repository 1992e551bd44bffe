"""Which client the user runs — hence `capdoctor fallback`'s default format — and the next step that names it.

Contract: `client_in_use(provider, sources)` is a pure function of the target's provider and the sources of its
settings (`Target.sources`, the report's `target.sources`): a setting read from Codex's `config.toml` means
Codex; one read from a Claude Code `settings.json` means Claude Code; a setting from the environment variables
the SDKs read (`OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`…), with nothing from a client's file, means that SDK;
anything else gets LiteLLM, a proxy every client can use. `fallback_step(target)` is the next step the models
rules attach to "the primary is at capacity while an alternative answers": the `capdoctor fallback` command
for that client, with the target flags the user gave. Nothing here reads files or the environment.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING

from capdoctor.model import NextStep

if TYPE_CHECKING:
    from capdoctor.context import Target

FORMATS: tuple[str, ...] = ("litellm", "codex", "claude-code", "openai-python", "anthropic-python", "env")
"""What `capdoctor fallback --format` accepts."""

SDK_FORMAT: Mapping[str, str] = {
    "openai": "openai-python",
    "openai-compatible": "openai-python",
    "openrouter": "openai-python",
    "azure": "openai-python",
    "anthropic": "anthropic-python",
}
"""The SDK snippet for a provider whose settings came from the SDKs' environment variables (no Gemini one)."""

CODEX_FILE = re.compile(r"(?:^|[/\\])config\.toml\b")
CLAUDE_FILE = re.compile(r"(?:^|[/\\])settings(?:\.local)?\.json\b")

TARGET_FLAGS: tuple[tuple[str, str], ...] = (
    ("provider", "--provider"),
    ("base_url", "--base-url"),
    ("model", "--model"),
    ("api_key_env", "--api-key-env"),
)


def client_in_use(provider: str, sources: Mapping[str, str]) -> str:
    """The format for the client the target's settings came from: codex, claude-code, an SDK's, or litellm."""
    values = [str(v) for v in sources.values()]
    if any(CODEX_FILE.search(v) for v in values):
        return "codex"
    if any(CLAUDE_FILE.search(v) and ".gemini" not in v for v in values):
        return "claude-code"
    if any(v.startswith("env ") for v in values) and provider in SDK_FORMAT:
        return SDK_FORMAT[provider]
    return "litellm"


def fallback_command(target: Target) -> str:
    """`capdoctor fallback --format <client in use>` plus the target flags the user passed (so it probes the same)."""
    sources = dict(target.sources)
    parts = ["capdoctor", "fallback", "--format", client_in_use(target.provider, sources)]
    for name, flag in TARGET_FLAGS:
        value = getattr(target, name)
        if value and sources.get(name, "").startswith("flag"):
            parts += [flag, shlex.quote(str(value))]
    if sources.get("alt_models", "").startswith("flag"):
        for alt in target.alt_models:
            parts += ["--alt-model", shlex.quote(alt)]
    return " ".join(parts)


def fallback_step(target: Target) -> NextStep:
    """The next step that turns the verdict into configuration the user's client loads."""
    return NextStep(
        "Generate a fallback pool and retry policy for your client from the models that answered.",
        fallback_command(target),
    )
