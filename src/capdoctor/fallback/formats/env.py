"""`--format env`: the environment variables the user's client reads, as POSIX shell `export` lines.

Contract: the base URL variable of the provider's clients when the target is not the provider's default
(`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, …, as discovery reads them), and the model variables where the
clients have them: for Anthropic the same `env` block as `--format claude-code` (Claude Code reads these
from the environment too), for Gemini `GEMINI_MODEL` (Gemini CLI). OpenAI-style clients take the model per
request or from their own config; the comment says which format to use for them. Values are shell-quoted;
the key is never written, only the name of its variable.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping

from capdoctor.fallback.generate import Generated, comment_block, custom_base_url
from capdoctor.fallback.pool import Pool, provenance


def _anthropic(pool: Pool) -> dict[str, str]:
    from capdoctor.fallback.formats.claude_code import settings

    return dict(settings(pool)["env"])


MODEL_VARS: Mapping[str, Callable[[Pool], dict[str, str]]] = {
    "anthropic": _anthropic,
    "gemini": lambda pool: {"GEMINI_MODEL": pool.best.model},
}
"""The model variables each provider's clients read (provider knowledge kept here for now)."""

AZURE_SUFFIX = "/openai/v1"
POOL_VARS = ("CAPDOCTOR_FALLBACK_MODEL", "CAPDOCTOR_FALLBACK_MODELS")
"""The best alternative and the ranked alternatives, comma-separated: written for every provider, so the output
always names the models that answered (an OpenAI target at its default URL had nothing else to say)."""


def variables(pool: Pool) -> dict[str, str]:
    """The variables and their values, in the order they are printed."""
    from capdoctor.providers.catalog import adapter_for

    out: dict[str, str] = {}
    base = custom_base_url(pool)
    names = adapter_for(pool.provider).base_url_envs
    if base and names:
        out[names[0]] = base[: -len(AZURE_SUFFIX)] if pool.provider == "azure" and base.endswith(AZURE_SUFFIX) else base
    make = MODEL_VARS.get(pool.provider)
    if make is not None:
        out.update(make(pool))
    # every provider: the ranked pool itself, for your own code or scripts (no client reads these by itself)
    out[POOL_VARS[0]] = pool.best.model
    out[POOL_VARS[1]] = ",".join(c.model for c in pool.alternatives)
    return out


def generate(pool: Pool) -> Generated:
    """`export NAME=value` lines under the provenance comment."""
    values = variables(pool)
    header = [*provenance(pool), f"The key stays in {pool.key_env}: capdoctor never writes keys."]
    if pool.provider not in MODEL_VARS:
        header.append(
            f"{pool.provider} clients take the model per request or from their own config: use "
            "--format codex, openai-python or litellm to switch to "
            f"{pool.best.model}."
        )
    body = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in values.items())
    header.append(f"{POOL_VARS[0]} / {POOL_VARS[1]}: the models that answered, best first, for your own code.")
    return Generated(
        comment_block(header) + body,
        "env",
        file="./capdoctor-fallback.env",
        load="Load it into this shell: . {file}",
    )
