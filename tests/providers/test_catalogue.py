"""The provider catalogue: every per-provider fact lives in the provider's adapter and is read from there."""

from __future__ import annotations

import ast
from datetime import datetime, timezone
from pathlib import Path

import pytest

from capdoctor.probes.ratelimit import parse_headers
from capdoctor.providers.catalog import (
    PROVIDER_NAMES,
    adapter_for,
    adapters,
    canonical,
    env_markers,
    env_vars,
    header_families,
    key_family,
    provider_for_host,
    provider_for_model,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "capdoctor"
NOW = datetime(2026, 5, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("host", "provider"),
    [
        ("api.openai.com", "openai"),
        ("chatgpt.com", "openai"),
        ("api.anthropic.com", "anthropic"),
        ("generativelanguage.googleapis.com", "gemini"),
        ("openrouter.ai", "openrouter"),
        ("myres.openai.azure.com", "azure"),
        ("relay.example.com", None),
    ],
)
def test_hosts_name_their_provider(host: str, provider: str | None) -> None:
    assert provider_for_host(host) == provider


def test_model_prefixes_and_aliases() -> None:
    assert provider_for_model("claude-haiku-4-5") == "anthropic"
    assert provider_for_model("gpt-5.5") == "openai"
    assert provider_for_model("llama3.2") is None
    assert canonical("Claude") == "anthropic" and canonical("ollama") == "openai-compatible"
    assert canonical("azure-openai") == "azure" and canonical("nope") is None


@pytest.mark.parametrize(
    ("key", "family"),
    [
        ("sk-ant-api03-" + "x" * 20, ("anthropic", "sk-ant-")),
        ("sk-or-v1-" + "x" * 20, ("openrouter", "sk-or-")),
        ("sk-proj-" + "x" * 20, ("openai", "sk-proj-")),
        ("sk-" + "x" * 20, ("openai", "sk-")),
        ("AIza" + "x" * 35, ("gemini", "AIza")),
        ("0123456789abcdef" * 2, None),
    ],
)
def test_key_family_is_the_longest_known_prefix(key: str, family: tuple[str, str] | None) -> None:
    assert key_family(key) == family


def test_environment_markers_follow_the_catalogue_and_skip_the_generic_server() -> None:
    names = [name for name, _ in env_markers()]
    assert names[:3] == ["openai", "anthropic", "gemini"] and "openai-compatible" not in names
    assert "ANTHROPIC_AUTH_TOKEN" in dict(env_markers())["anthropic"]
    assert {"OPENAI_API_KEY", "OPENROUTER_API_KEY", "AZURE_OPENAI_ENDPOINT"} <= set(env_vars())


def test_rate_limit_spellings_come_from_the_providers() -> None:
    spelled = {f.name for f in header_families()}
    assert {"openai", "anthropic", "codex", "generic"} <= spelled
    rl = parse_headers({"x-codex-primary-used-percent": "100", "x-codex-primary-reset-after-seconds": "60"}, NOW)
    assert [(w.family, w.name, w.used_percent, w.reset_s) for w in rl.windows] == [("codex", "primary", 100.0, 60.0)]


def test_every_provider_states_its_facts() -> None:
    for a in adapters():
        assert a.name in PROVIDER_NAMES and type(a) is type(adapter_for(a.name))
        if a.key_required:
            assert a.key_envs, a.name
        if a.status_page.feed:
            assert a.status_page.feed.startswith("https://") and a.status_page.human.startswith("https://")


PER_PROVIDER_TABLE_NAMES = {
    "STATUS_PAGES",
    "STATUS_PAGE_HUMAN",
    "COMPONENT_KEYWORDS",
    "SWITCH_COMMANDS",
    "PROVIDER_HINTS",
    "KEY_ENV",
    "BASE_URL_ENV_BY_PROVIDER",
    "HOST_PROVIDER",
    "MODEL_PREFIX_PROVIDER",
    "ENV_PROVIDER_ORDER",
    "MODEL_ENV",
    "FAMILIES",
}


def test_no_module_outside_providers_keeps_a_per_provider_table() -> None:
    """The tables that used to repeat provider facts in six modules are gone; only the catalogue answers."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if "providers" in path.parts or "simulator" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for t in targets:
                if isinstance(t, ast.Name) and t.id in PER_PROVIDER_TABLE_NAMES:
                    offenders.append(f"{path.relative_to(SRC)}:{t.id}")
    assert offenders == []


def test_a_host_names_its_provider_before_any_product_word() -> None:
    from capdoctor.logscan.scanner import find_provider

    assert find_provider("POST https://myres.openai.azure.com/openai/v1/chat/completions 429", "x.y") == "azure"
    assert find_provider("openai.APIStatusError from https://openrouter.ai/api/v1", "x.y") == "openrouter"
    assert find_provider("Claude Code: overloaded", "x.y") == "anthropic"
