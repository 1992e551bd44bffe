"""`--format claude-code`: the Claude Code `settings.json` keys that switch to the models that answered.

Contract: JSON with the `env` block Claude Code reads — `ANTHROPIC_MODEL` (the best alternative),
`ANTHROPIC_DEFAULT_HAIKU_MODEL` and its predecessor `ANTHROPIC_SMALL_FAST_MODEL` (the fastest model that
answered, for background tasks), `ANTHROPIC_BASE_URL` when the target is not Anthropic's own API — and, when
more than one alternative answered, `fallbackModel`: the next ones, which Claude Code (2.1.166 and later) tries
in order when a model is overloaded. No key is written (Claude Code reads `ANTHROPIC_API_KEY` or
`ANTHROPIC_AUTH_TOKEN` itself). JSON has no comments and Claude Code validates its settings, so the
provenance goes to stderr as notes, not into a key. Only Anthropic targets: Claude Code speaks the Messages API.
"""

from __future__ import annotations

import json
from typing import Any

from capdoctor.fallback.generate import Generated, Unsupported, custom_base_url
from capdoctor.fallback.pool import Pool, provenance

MAX_FALLBACK_MODELS = 3
"""Claude Code tries at most three fallback models."""


def refusal(provider: str) -> str | None:
    """Why this format cannot serve a `provider` target, or None (asked before anything is probed)."""
    if provider != "anthropic":
        return (
            f"Claude Code speaks the Anthropic Messages API and the target is {provider}: use "
            "--format litellm, or the format of the client you run"
        )
    return None


def settings(pool: Pool) -> dict[str, Any]:
    """The settings object: the `env` block, and `fallbackModel` when there is more than one alternative."""
    why = refusal(pool.provider)
    if why:
        raise Unsupported(why)
    env: dict[str, str] = {}
    base = custom_base_url(pool)
    if base:
        env["ANTHROPIC_BASE_URL"] = base
    fast = pool.fastest.model
    env.update(
        {"ANTHROPIC_MODEL": pool.best.model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": fast, "ANTHROPIC_SMALL_FAST_MODEL": fast}
    )
    out: dict[str, Any] = {"env": env}
    rest = [c.model for c in pool.alternatives[1:]][:MAX_FALLBACK_MODELS]
    if rest:
        out["fallbackModel"] = rest
    return out


def generate(pool: Pool) -> Generated:
    """The JSON, with the provenance and how to load it as notes."""
    text = json.dumps(settings(pool), indent=2) + "\n"
    notes = (*provenance(pool), f"Remove ANTHROPIC_MODEL again once {pool.primary.model} answers.")
    load = (
        "Load it for one session with `claude --settings {file}`, or merge it into ~/.claude/settings.json "
        "with --write ~/.claude/settings.json --merge."
    )
    return Generated(text, "json", notes, file="capdoctor-fallback.json", load=load)
