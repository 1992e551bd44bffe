"""The clients' config files: pure parsers (text → values with their source), readers, and the errors they raise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capdoctor.errors import ConfigError
from capdoctor.target.client_settings import (
    ClientConfigError,
    claude_dir,
    codex_config_path,
    codex_env_path,
    parse_claude_settings,
    parse_codex_config,
    parse_dotenv,
    parse_gemini_settings,
    read_claude_settings,
    read_codex_config,
    read_dotenv,
    read_text,
)

CODEX = "~/.codex/config.toml"
CLAUDE = "~/.claude/settings.json"


def test_codex_custom_provider_values_carry_their_source() -> None:
    cfg = parse_codex_config(
        'model = "gpt-5.5"\nmodel_provider = "relay"\n\n[model_providers.relay]\nbase_url = "https://r.example/v1"\n'
        'env_key = "RELAY_KEY"\nwire_api = "responses"\nquery_params = { "api-version" = "2025-04-01" }\n',
        CODEX,
    )
    assert cfg.provider_id == "relay" and cfg.model is not None and cfg.model.value == "gpt-5.5"
    assert cfg.model.source == CODEX and cfg.model.line == 1
    p = cfg.provider
    assert p is not None and p.base_url is not None and p.env_key is not None and p.wire_api is not None
    assert (p.base_url.value, p.env_key.value, p.wire_api.value) == ("https://r.example/v1", "RELAY_KEY", "responses")
    assert p.base_url.source == f"{CODEX} [model_providers.relay]"
    assert p.env_key.source == f"{CODEX} [model_providers.relay] env_key"
    assert p.api_version is not None and p.api_version.value == "2025-04-01"
    assert p.api_version.source == f"{CODEX} [model_providers.relay] query_params"
    assert cfg.problems == {}


def test_codex_builtin_openai_ignores_a_table_reusing_its_id() -> None:
    cfg = parse_codex_config(
        'model = "o4"\nopenai_base_url = "https://gw.example/v1"\n[model_providers.openai]\nbase_url = "http://x"\n',
        CODEX,
    )
    assert cfg.provider_id == "openai" and cfg.provider is None
    assert cfg.openai_base_url is not None and cfg.openai_base_url.source == f"{CODEX} openai_base_url"


def test_codex_wrong_types_are_problems_raised_only_on_demand() -> None:
    cfg = parse_codex_config('model = 5\nmodel_provider = "x"\nmodel_providers = "nope"\n', CODEX)
    assert cfg.model is None and cfg.provider is None
    assert cfg.problems["model"] == f"{CODEX}:1: 'model' must be a string, not int"
    assert cfg.problems["model_providers"] == f"{CODEX}: [model_providers] must be a table"
    cfg.raise_problems("openai_base_url")  # not a problem here: no error
    with pytest.raises(ConfigError, match=r"config.toml:1: 'model' must be a string"):
        cfg.raise_problems("model", "model_providers")


def test_codex_invalid_toml_names_file_and_keeps_the_parser_detail() -> None:
    with pytest.raises(ClientConfigError) as info:
        parse_codex_config("model = 'x'\n[model_providers\n", CODEX)
    err = info.value
    assert str(err).startswith(f"{CODEX}: invalid TOML:") and "line 2" in str(err)
    assert err.kind == "parse" and err.file == CODEX and "line 2" in err.detail
    assert isinstance(err, ConfigError)


def test_claude_env_block_keeps_scalars_in_order_and_hides_values_from_repr() -> None:
    s = parse_claude_settings(
        json.dumps(
            {
                "model": "opus",
                "env": {
                    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787",
                    "ANTHROPIC_AUTH_TOKEN": "sk-ant-test-fake-token-9",
                    "MAX_TOKENS": 8000,
                    "DEBUG": True,
                    "NESTED": {"a": 1},
                    "NULL": None,
                },
            }
        ),
        CLAUDE,
    )
    assert [e.name for e in s.env] == ["ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "MAX_TOKENS", "DEBUG"]
    env = s.env_map()
    assert env["MAX_TOKENS"].value == "8000" and env["DEBUG"].value == "True"
    assert env["ANTHROPIC_BASE_URL"].source == f"{CLAUDE} env" and env["ANTHROPIC_BASE_URL"].file == CLAUDE
    assert s.model is not None and s.model.value == "opus"
    assert "sk-ant-test-fake-token-9" not in repr(s)


def _json_error(text: str) -> json.JSONDecodeError:
    """Where this Python's json module places the error in `text` (3.13 moved it: a trailing comma is now
    blamed on the comma itself), so that tests pin capdoctor's wording around it, never the interpreter's."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError(f"{text!r} parses")


def test_claude_errors_name_file_and_line() -> None:
    broken = '{\n  "env": {\n    "A": "x",\n  }\n}\n'
    at = _json_error(broken)
    with pytest.raises(ClientConfigError) as info:
        parse_claude_settings(broken, CLAUDE)
    assert str(info.value) == f"{CLAUDE}:{at.lineno}: invalid JSON: {at.msg} (line {at.lineno}, column {at.colno})"
    assert info.value.line == at.lineno and at.lineno in (3, 4)
    with pytest.raises(ClientConfigError, match=rf"^{CLAUDE}:1: expected a JSON object") as info:
        parse_claude_settings("[1, 2]", CLAUDE)
    assert info.value.detail == "not a JSON object"
    bad_env = parse_claude_settings('{"env": ["A=1"]}', CLAUDE)
    assert bad_env.env == () and bad_env.problems == {"env": f"{CLAUDE}: 'env' must be an object"}
    with pytest.raises(ConfigError, match="'env' must be an object"):
        bad_env.raise_problems()


def test_gemini_model_nested_or_legacy() -> None:
    nested = parse_gemini_settings('{"model": {"name": "gemini-3-pro"}}', "g").model
    assert nested is not None and (nested.value, nested.where) == ("gemini-3-pro", "model.name")
    legacy = parse_gemini_settings('{"model": "gemini-2.5-flash"}', "g").model
    assert legacy is not None and legacy.value == "gemini-2.5-flash"
    assert parse_gemini_settings('{"model": 3}', "g").model is None


def test_dotenv_lines() -> None:
    got = parse_dotenv("# comment\nexport https_proxy='http://u:p@h:1'\n\nNO_PROXY = localhost\nbroken\nA=\n", ".env")
    assert [(s.name, s.value, s.line) for s in got] == [
        ("https_proxy", "http://u:p@h:1", 2),
        ("NO_PROXY", "localhost", 4),
        ("A", "", 6),
    ]
    assert got[0].source == ".env"


def test_readers_paths_and_missing_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    assert read_codex_config(codex_config_path({}, home), home) is None
    assert codex_config_path({"CODEX_HOME": str(tmp_path / "ch")}, home) == tmp_path / "ch" / "config.toml"
    assert codex_env_path({}, home) == home / ".codex" / ".env"
    assert claude_dir({"CLAUDE_CONFIG_DIR": str(tmp_path / "cc")}, home) == tmp_path / "cc"
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n', encoding="utf-8")
    cfg = read_codex_config(codex_config_path({}, home), home)
    assert cfg is not None and cfg.file == "~/.codex/config.toml"
    (home / ".codex" / ".env").write_text("HTTPS_PROXY=http://127.0.0.1:7890\n", encoding="utf-8")
    (entry,) = read_dotenv(home / ".codex" / ".env", home, label="$CODEX_HOME/.env") or ()
    assert entry.file == "$CODEX_HOME/.env"
    assert read_text(home / "nope.toml", home) is None


def test_readers_strict_and_lenient_decoding(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"env": {"HTTPS_PROXY": "http://127.0.0.1:1\xff"}}')
    with pytest.raises(ClientConfigError, match="cannot read") as info:
        read_claude_settings(path, tmp_path)
    assert info.value.kind == "read"
    lenient = read_claude_settings(path, tmp_path, strict=False)
    assert lenient is not None and lenient.env[0].value.startswith("http://127.0.0.1:1")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ClientConfigError, match="cannot read"):
        read_claude_settings(tmp_path / "dir.json", tmp_path)
