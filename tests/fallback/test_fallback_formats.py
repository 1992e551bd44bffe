"""Each output format: it parses with the client's own reader, holds the keys the client documents, and no key."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml

from capdoctor.fallback.generate import FORMATS, Unsupported, generate
from capdoctor.fallback.pool import Candidate, Pool
from tests.support.fallback_support import ANTHROPIC, pool


def header(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.startswith("#"))


def test_litellm_config_has_the_pool_fallbacks_retries_and_cooldown() -> None:
    made = generate(pool(), "litellm")
    cfg = yaml.safe_load(made.text)
    assert [m["model_name"] for m in cfg["model_list"]] == ["gpt-5.5", "gpt-5.4-mini", "gpt-5-mini"]
    for entry in cfg["model_list"]:
        params = entry["litellm_params"]
        assert params["model"] == f"openai/{entry['model_name']}"
        assert params["api_key"] == "os.environ/OPENAI_API_KEY" and params["api_base"] == "http://127.0.0.1:9/v1"
    router = cfg["router_settings"]
    assert router["fallbacks"] == [{"gpt-5.5": ["gpt-5.4-mini", "gpt-5-mini"]}]
    assert router["num_retries"] >= 1 and router["allowed_fails"] >= 1 and router["cooldown_time"] > 0
    assert router["retry_policy"]["AuthenticationErrorRetries"] == 0
    assert "capdoctor 0.1.0" in header(made.text) and "2026-11-20T10:00:00+00:00" in header(made.text)
    assert "gpt-5.4-mini 3/3 answered" in header(made.text)


def test_litellm_leaves_the_providers_default_base_to_litellm_and_drops_anthropics_v1() -> None:
    official = yaml.safe_load(generate(pool(base_url="https://api.openai.com/v1"), "litellm").text)
    assert all("api_base" not in m["litellm_params"] for m in official["model_list"])
    anthropic = yaml.safe_load(generate(ANTHROPIC, "litellm").text)
    assert {m["litellm_params"]["api_base"] for m in anthropic["model_list"]} == {"http://127.0.0.1:9/anthropic"}
    assert anthropic["model_list"][0]["litellm_params"]["model"] == "anthropic/claude-opus-4-7"


def test_codex_profile_parses_and_holds_the_keys_codex_documents() -> None:
    made = generate(pool(), "codex")
    doc = tomllib.loads(made.text)
    assert doc["model"] == "gpt-5.4-mini"  # the best alternative
    provider = doc["model_providers"][doc["model_provider"]]
    assert doc["model_provider"] not in ("openai", "ollama", "lmstudio")  # never a built-in id
    assert provider["base_url"] == "http://127.0.0.1:9/v1" and provider["env_key"] == "OPENAI_API_KEY"
    assert provider["wire_api"] == "responses" and provider["name"]
    assert provider["request_max_retries"] >= 1 and provider["stream_max_retries"] >= 1
    assert "codex --profile capdoctor-fallback" in made.text and "codex --profile" in made.load
    assert "gpt-5.4-mini 3/3 answered" in header(made.text)


def test_codex_keeps_openais_builtin_provider_for_the_official_api_and_the_targets_wire_api() -> None:
    official = tomllib.loads(generate(pool(base_url="https://api.openai.com/v1"), "codex").text)
    assert official == {"model": "gpt-5.4-mini", "model_provider": "openai"}
    chat = tomllib.loads(generate(pool("openai-compatible", wire_api="chat"), "codex").text)
    assert chat["model_providers"][chat["model_provider"]]["wire_api"] == "chat"


def test_claude_code_settings_env_block_and_fallback_models() -> None:
    made = generate(ANTHROPIC, "claude-code")
    settings = json.loads(made.text)
    env = settings["env"]
    assert env["ANTHROPIC_MODEL"] == "claude-sonnet-4-6"  # the best alternative
    assert env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == env["ANTHROPIC_SMALL_FAST_MODEL"] == "claude-haiku-4-5"  # fastest
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9/anthropic"
    assert settings["fallbackModel"] == ["claude-haiku-4-5"]
    assert not any("KEY" in name or "TOKEN" in name for name in env)
    notes = "\n".join(made.notes)  # JSON has no comments: the provenance goes to stderr
    assert "capdoctor 0.1.0" in notes and "claude-sonnet-4-6 3/3 answered" in notes
    assert "claude --settings {file}" in made.load
    official = json.loads(
        generate(
            pool("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", alts=ANTHROPIC.alternatives[:1]),
            "claude-code",
        ).text
    )
    assert "ANTHROPIC_BASE_URL" not in official["env"] and "fallbackModel" not in official


@pytest.mark.parametrize(
    ("fmt", "target"),
    [
        ("claude-code", pool()),
        ("anthropic-python", pool()),
        ("codex", ANTHROPIC),
        ("openai-python", ANTHROPIC),
        ("codex", pool("gemini", "http://127.0.0.1:9/gemini", "GEMINI_API_KEY")),
    ],
)
def test_a_format_that_cannot_serve_the_target_says_what_can(fmt: str, target: Pool) -> None:
    with pytest.raises(Unsupported, match="--format"):
        generate(target, fmt)


@pytest.mark.parametrize(("fmt", "target"), [("openai-python", pool()), ("anthropic-python", ANTHROPIC)])
def test_sdk_snippets_compile_and_set_retries_timeout_and_the_pool(fmt: str, target: Pool) -> None:
    made = generate(target, fmt)
    tree = ast.parse(made.text)
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") in ("OpenAI", "Anthropic")
    ]
    assert len(calls) == 1
    kwargs = {k.arg: k.value for k in calls[0].keywords}
    assert ast.literal_eval(kwargs["max_retries"]) == 0 and ast.literal_eval(kwargs["timeout"]) > 0
    models = next(
        n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "MODELS"
    )
    assert ast.literal_eval(models) == target.models
    assert "retry-after" in made.text and "random.uniform(0," in made.text  # Retry-After, full jitter
    assert "capdoctor 0.1.0" in header(made.text)


def test_anthropic_snippet_sends_a_gateway_token_as_auth_token() -> None:
    text = generate(
        pool(
            "anthropic", "https://relay.example/v1", "ANTHROPIC_AUTH_TOKEN", ANTHROPIC.primary, ANTHROPIC.alternatives
        ),
        "anthropic-python",
    ).text
    assert "auth_token=os.environ['ANTHROPIC_AUTH_TOKEN']" in text and "base_url='https://relay.example'" in text


def test_env_lines_for_anthropic_match_the_claude_code_block() -> None:
    text = generate(ANTHROPIC, "env").text
    lines = dict(line.removeprefix("export ").split("=", 1) for line in text.splitlines() if line.startswith("export"))
    ours = {name: lines.pop(name) for name in ("CAPDOCTOR_FALLBACK_MODEL", "CAPDOCTOR_FALLBACK_MODELS")}
    assert lines == json.loads(generate(ANTHROPIC, "claude-code").text)["env"]
    assert ours == {
        "CAPDOCTOR_FALLBACK_MODEL": "claude-sonnet-4-6",
        "CAPDOCTOR_FALLBACK_MODELS": "claude-sonnet-4-6,claude-haiku-4-5",
    }
    assert "The key stays in ANTHROPIC_API_KEY" in header(text)


def test_env_for_openai_sets_the_base_url_and_points_to_the_formats_that_set_the_model() -> None:
    text = generate(pool(), "env").text
    assert "export OPENAI_BASE_URL=http://127.0.0.1:9/v1" in text and "--format codex" in text
    assert (
        "GEMINI_MODEL=gpt-5.4-mini"
        in generate(pool("gemini", "http://127.0.0.1:9/gemini", "GEMINI_API_KEY"), "env").text
    )


@pytest.mark.skipif(sys.platform == "win32" or shutil.which("sh") is None, reason="needs a POSIX shell")
def test_env_values_are_shell_quoted() -> None:
    odd = Candidate("claude-x'; echo pwned #", "anthropic", "alternative", "ok", 1, 1, 10)
    text = generate(
        pool("anthropic", "http://127.0.0.1:9/anthropic", "ANTHROPIC_API_KEY", ANTHROPIC.primary, (odd,)), "env"
    ).text
    shown = subprocess.run(
        ["sh", "-c", text + 'printf %s "$ANTHROPIC_MODEL"'], capture_output=True, text=True, check=True, timeout=10
    )
    assert shown.stdout == odd.model


def test_odd_model_names_stay_data_in_every_format() -> None:
    odd = Candidate("we\"ird'model: #x", "openai", "alternative", "ok", 1, 1, 10)
    target = pool(alts=(odd,))
    assert yaml.safe_load(generate(target, "litellm").text)["model_list"][1]["model_name"] == odd.model
    assert tomllib.loads(generate(target, "codex").text)["model"] == odd.model
    tree = ast.parse(generate(target, "openai-python").text)
    assert any(isinstance(n, ast.Constant) and n.value == odd.model for n in ast.walk(tree))


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_no_format_holds_more_than_the_keys_variable_name(fmt: str) -> None:
    target = ANTHROPIC if fmt in ("claude-code", "anthropic-python") else pool()
    made = generate(target, fmt)
    assert made.text.strip() and made.syntax in ("yaml", "toml", "json", "env", "python")
    assert "sk-" not in made.text and "Bearer" not in made.text
