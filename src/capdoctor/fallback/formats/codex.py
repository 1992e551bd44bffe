"""`--format codex`: a Codex profile that uses the best alternative, and the `codex --profile` line to start it.

Contract: TOML (tomlkit) for `$CODEX_HOME/capdoctor-fallback.config.toml` — the profile file Codex 0.134 and
later overlays on config.toml for `codex --profile capdoctor-fallback` (older Codex reads the same keys from a
`[profiles.capdoctor-fallback]` table in config.toml): `model` (the best alternative), `model_provider`, and —
unless the target is OpenAI's own API, whose built-in provider keeps the user's sign-in — a
`[model_providers.capdoctor-<provider>]` table with `base_url`, `env_key` (the key's variable, never the key),
`wire_api` and Codex's retry settings. Codex has no model fallback of its own: the profile is the switch, and
plain `codex` switches back. Codex speaks only the OpenAI wire API, so other providers are `Unsupported`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capdoctor.fallback.generate import OPENAI_SHAPED, Generated, Unsupported, comment_block, custom_base_url
from capdoctor.fallback.pool import Pool, provenance

PROFILE = "capdoctor-fallback"
RETRIES: Mapping[str, int] = {
    "request_max_retries": 4,  # Codex retries a failed request this many times (with backoff)...
    "stream_max_retries": 5,  # ...and reconnects a dropped stream this many times
    "stream_idle_timeout_ms": 300_000,  # a stream silent this long counts as dropped
}


def provider_id(pool: Pool) -> str:
    """The `model_providers` id of the generated table (never a built-in id, which Codex would not override)."""
    return f"capdoctor-{pool.provider}"


def document(pool: Pool) -> Any:
    """The profile as a tomlkit document, provenance and usage as comments."""
    import tomlkit

    why = refusal(pool.provider)
    if why:
        raise Unsupported(why)
    doc = tomlkit.document()
    for line in comment_block(
        [
            *provenance(pool),
            f"Save as $CODEX_HOME/{PROFILE}.config.toml (CODEX_HOME is ~/.codex by default), then run:",
            f"    codex --profile {PROFILE}",
            f"Codex before 0.134 reads these keys from a [profiles.{PROFILE}] table in config.toml instead.",
            f"Plain `codex` goes back to {pool.primary.model} once it answers again.",
        ],
        prefix="",
    ).splitlines():
        doc.add(tomlkit.comment(line))
    doc.add("model", pool.best.model)
    base = custom_base_url(pool)
    if pool.provider == "openai" and base is None:
        doc.add("model_provider", "openai")
        doc["model_provider"].comment("the built-in provider: your ChatGPT sign-in or OPENAI_API_KEY")
        return doc
    pid = provider_id(pool)
    doc.add("model_provider", pid)
    table = tomlkit.table()
    table.add("name", f"{pool.provider} (capdoctor fallback)")
    table.add("base_url", base or pool.base_url)
    table.add("env_key", pool.key_env)
    table["env_key"].comment("the variable Codex reads the key from; no key is stored here")
    table.add("wire_api", pool.wire_api or "responses")
    for key, value in RETRIES.items():
        table.add(key, value)
    providers = tomlkit.table(is_super_table=True)
    providers.add(pid, table)
    doc.add(tomlkit.nl())
    doc.add("model_providers", providers)
    return doc


def refusal(provider: str) -> str | None:
    """Why this format cannot serve a `provider` target, or None (asked before anything is probed)."""
    if provider not in OPENAI_SHAPED:
        return (
            f"Codex speaks the OpenAI wire API and the target is {provider}: use --format "
            "litellm (a LiteLLM proxy can serve Codex) or --format env"
        )
    return None


def generate(pool: Pool) -> Generated:
    """The profile's TOML text and the command that starts Codex with it."""
    import tomlkit

    text = tomlkit.dumps(document(pool))
    return Generated(
        text,
        "toml",
        file=f"~/.codex/{PROFILE}.config.toml",
        load=f"Start Codex with it: codex --profile {PROFILE} (Codex reads that profile from "
        f"~/.codex/{PROFILE}.config.toml).",
    )
