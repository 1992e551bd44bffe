"""The output formats as data, and `generate(pool, name)`: the one way any format is produced.

Contract: `FORMATS` maps each `--format` name to the function (`module:function` under `formats/`, imported
only when used) that turns a `Pool` into a `Generated`: the text for stdout or the file, its syntax (how
`merge` reads and writes it) and notes for stderr (how to load it; for JSON, which
has no comments, the provenance). A format that cannot serve the target (Claude Code for an OpenAI target)
raises `Unsupported`, a usage error naming what to use instead. Formats only present: they never probe, read
the environment or hold a key — keys appear as the *name* of their variable.
"""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from capdoctor.errors import UsageError

if TYPE_CHECKING:
    from capdoctor.fallback.pool import Pool

FORMATS: Mapping[str, str] = {
    "litellm": "capdoctor.fallback.formats.litellm:generate",
    "codex": "capdoctor.fallback.formats.codex:generate",
    "claude-code": "capdoctor.fallback.formats.claude_code:generate",
    "openai-python": "capdoctor.fallback.formats.sdk:openai_python",
    "anthropic-python": "capdoctor.fallback.formats.sdk:anthropic_python",
    "env": "capdoctor.fallback.formats.env:generate",
}
"""Every output format, in the order the help lists them."""

REFUSALS: Mapping[str, str] = {
    "codex": "capdoctor.fallback.formats.codex:refusal",
    "claude-code": "capdoctor.fallback.formats.claude_code:refusal",
    "openai-python": "capdoctor.fallback.formats.sdk:openai_refusal",
    "anthropic-python": "capdoctor.fallback.formats.sdk:anthropic_refusal",
}
"""The formats that serve only some providers: `provider -> why not, or None`, the rule their generator applies."""

OPENAI_SHAPED = frozenset({"openai", "openai-compatible", "openrouter", "azure"})
"""Providers reached through the OpenAI wire API (what Codex and the openai SDK speak)."""


class Unsupported(UsageError):
    """The format cannot serve this target; the message says which format can."""


@dataclass(frozen=True)
class Generated:
    """A generated configuration: text, syntax (`yaml`, `toml`, `json`, `env`, `python`), notes for stderr.

    `load` says how the client loads it, `{file}` standing for the file it is in: the `--write` file when one
    was written, else `file`, the name the format suggests (the command then says to save the output there).
    """

    text: str
    syntax: str
    notes: tuple[str, ...] = ()
    file: str = ""
    load: str = ""


def comment_block(lines: Iterable[str], prefix: str = "# ", width: int = 110) -> str:
    """`lines` wrapped to `width` and prefixed as comments, one blank-free block ending in a newline."""
    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, width - len(prefix), break_long_words=False, break_on_hyphens=False) or [""]
    return "".join(f"{prefix}{line}".rstrip() + "\n" for line in out)


def check_format(name: str) -> str:
    """`name` when it is a format, else a usage error listing the formats."""
    if name not in FORMATS:
        raise UsageError(f"unknown format {name!r} (--format); known: {', '.join(FORMATS)}")
    return name


def check_fits(name: str, provider: str) -> None:
    """`Unsupported` when format `name` cannot serve a `provider` target: said before anything is sent."""
    where = REFUSALS.get(check_format(name))
    if where is None:
        return
    module, _, attr = where.partition(":")
    refusal: Callable[[str], str | None] = getattr(importlib.import_module(module), attr)
    why = refusal(provider)
    if why:
        raise Unsupported(why)


def generate(pool: Pool, name: str) -> Generated:
    """The configuration of format `name` for `pool` (`UsageError` for an unknown name, `Unsupported`)."""
    module, _, attr = FORMATS[check_format(name)].partition(":")
    make: Callable[[Pool], Generated] = getattr(importlib.import_module(module), attr)
    return make(pool)


def custom_base_url(pool: Pool) -> str | None:
    """The target's base URL as the provider's clients take it, or None when it is the provider's default.

    Anthropic clients append `/v1/messages` themselves, so a trailing `/v1` is dropped (as capdoctor's own
    adapter does).
    """
    from capdoctor.providers.catalog import adapter_for

    base = pool.base_url.rstrip("/")
    if base == adapter_for(pool.provider).default_base_url.rstrip("/"):
        return None
    if pool.provider == "anthropic" and base.endswith("/v1"):
        base = base[: -len("/v1")]
    return base
