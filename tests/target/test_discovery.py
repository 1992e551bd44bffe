"""Target discovery: precedence (flags > capdoctor.toml > env > client configs > defaults), sources, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from capdoctor.errors import ConfigError, UsageError
from capdoctor.run.context import Target
from capdoctor.target.configfile import config_warnings, load_options, read_config_files
from capdoctor.target.discovery import (
    DiscoveryFlags,
    describe,
    discover,
    shell_exports,
)
from tests.conftest import free_port

FAKE = "sk-test-FAKEKEY-discovery-77"


def find(home: Path, cwd: Path, env: dict[str, str] | None = None, **flags: Any) -> Target:
    t = discover(DiscoveryFlags(**flags), env or {}, home, cwd, "linux")
    assert t is not None
    return t


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    d = tmp_path / "project"
    d.mkdir()
    return d


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_nothing_configured_is_none(home: Path, cwd: Path) -> None:
    assert discover(DiscoveryFlags(), {}, home, cwd, "linux") is None


def test_env_key_alone_gives_an_openai_target(home: Path, cwd: Path) -> None:
    t = find(home, cwd, {"OPENAI_API_KEY": FAKE})
    assert t.provider == "openai" and t.base_url == "https://api.openai.com/v1"
    assert t.api_key == FAKE and t.sources["key"] == "env OPENAI_API_KEY"
    assert t.sources["model"] == "default"


def test_precedence_and_sources(home: Path, cwd: Path) -> None:
    write(
        cwd / "capdoctor.toml",
        'provider = "anthropic"\nmodel = "claude-from-project"\nalt_models = ["claude-haiku-4-5"]\n',
    )
    write(home / ".config/capdoctor/capdoctor.toml", 'model = "claude-from-user"\nbase_url = "https://user.example"\n')
    env = {
        "ANTHROPIC_BASE_URL": "https://env.example",
        "ANTHROPIC_MODEL": "claude-from-env",
        "ANTHROPIC_API_KEY": FAKE,
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    t = find(home, cwd, env)
    assert (t.provider, t.model, t.base_url) == ("anthropic", "claude-from-project", "https://user.example")
    assert t.sources["model"] == "./capdoctor.toml" or t.sources["model"].endswith("project/capdoctor.toml")
    assert t.sources["base_url"].endswith(".config/capdoctor/capdoctor.toml")
    assert t.alt_models == ("claude-haiku-4-5",)
    flagged = find(home, cwd, env, model="claude-from-flag", base_url="http://127.0.0.1:8787")
    assert flagged.model == "claude-from-flag" and flagged.sources["model"] == "flag --model"
    assert flagged.sources["base_url"] == "flag --base-url"


def test_env_beats_client_configs(home: Path, cwd: Path) -> None:
    write(
        home / ".claude/settings.json",
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8787", "ANTHROPIC_MODEL": "claude-settings"}}),
    )
    t = find(home, cwd, {"ANTHROPIC_BASE_URL": "https://gateway.example", "ANTHROPIC_API_KEY": FAKE})
    assert t.base_url == "https://gateway.example"
    assert t.model == "claude-settings" and t.sources["model"] == "~/.claude/settings.json env"


def test_claude_settings_alone(home: Path, cwd: Path) -> None:
    write(
        home / ".claude/settings.json",
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8787", "ANTHROPIC_AUTH_TOKEN": FAKE}}),
    )
    t = find(home, cwd)
    assert t.provider == "anthropic" and t.base_url == "http://127.0.0.1:8787"
    assert t.api_key == FAKE and t.api_key_env == "ANTHROPIC_AUTH_TOKEN"
    assert t.sources["key"] == "~/.claude/settings.json env"


def test_claude_config_dir_is_honoured(home: Path, cwd: Path, tmp_path: Path) -> None:
    moved = tmp_path / "claude-elsewhere"
    write(moved / "settings.json", json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8788"}}))
    write(home / ".claude/settings.json", json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9999"}}))
    t = find(home, cwd, env={"CLAUDE_CONFIG_DIR": str(moved)})
    assert t.base_url == "http://127.0.0.1:8788"


def test_codex_custom_provider(home: Path, cwd: Path) -> None:
    write(
        home / "codexhome/config.toml",
        'model = "gpt-5.5"\nmodel_provider = "relay"\n\n'
        '[model_providers.relay]\nname = "Relay"\nbase_url = "https://relay.example/v1"\n'
        'env_key = "RELAY_KEY"\nwire_api = "responses"\n',
    )
    t = find(home, cwd, {"CODEX_HOME": str(home / "codexhome"), "RELAY_KEY": FAKE})
    assert (t.provider, t.base_url, t.model, t.wire_api) == (
        "openai-compatible",
        "https://relay.example/v1",
        "gpt-5.5",
        "responses",
    )
    assert t.api_key == FAKE and t.api_key_env == "RELAY_KEY"
    assert "[model_providers.relay]" in t.sources["base_url"]


def test_codex_custom_provider_keeps_its_url_when_its_key_is_openais_variable(home: Path, cwd: Path) -> None:
    write(
        home / ".codex/config.toml",
        'model = "gpt-5.5"\nmodel_provider = "sim"\n\n[model_providers.sim]\nname = "Local relay"\n'
        'base_url = "http://127.0.0.1:18100/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n',
    )
    t = find(home, cwd, {"OPENAI_API_KEY": FAKE})
    assert (t.base_url, t.model, t.api_key_env) == ("http://127.0.0.1:18100/v1", "gpt-5.5", "OPENAI_API_KEY")
    assert "config.toml" in t.sources["provider"]


def test_codex_builtin_openai_speaks_responses(home: Path, cwd: Path) -> None:
    write(home / ".codex/config.toml", 'model = "gpt-5.5"\n')
    t = find(home, cwd, {"OPENAI_API_KEY": FAKE})
    assert t.provider == "openai" and t.wire_api == "responses" and t.model == "gpt-5.5"
    assert t.sources["model"] == "~/.codex/config.toml"


def test_provider_inferred_from_flags(home: Path, cwd: Path) -> None:
    assert find(home, cwd, model="claude-opus-4-7").provider == "anthropic"
    assert find(home, cwd, base_url="https://generativelanguage.googleapis.com").provider == "gemini"
    assert find(home, cwd, base_url="http://127.0.0.1:11434/v1", model="llama3").provider == "openai-compatible"
    assert find(home, cwd, provider="ollama", model="llama3").provider == "openai-compatible"


def test_api_key_env_names_the_variable(home: Path, cwd: Path) -> None:
    t = find(home, cwd, {"MY_KEY": FAKE}, provider="openai", api_key_env="MY_KEY")
    assert t.api_key == FAKE and t.sources["key"] == "env MY_KEY"
    missing = find(home, cwd, {}, provider="openai", api_key_env="NOT_SET")
    assert missing.api_key is None and "not set" in missing.sources["key"]


def test_malformed_toml_names_file_and_line(home: Path, cwd: Path) -> None:
    write(cwd / "capdoctor.toml", 'provider = "openai"\nmodel = \n')
    with pytest.raises(ConfigError, match=r"capdoctor.toml.*line 2"):
        find(home, cwd)


def broken_files(home: Path, cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return [f for f in describe(None, env or {}, home, cwd, "linux")["findings"] if f["kind"] == "client_config_broken"]


def test_malformed_codex_toml_is_a_finding_not_a_stop(home: Path, cwd: Path) -> None:
    write(home / ".codex/config.toml", "model = 'x'\n[model_providers\n")
    t = find(home, cwd, {"OPENAI_API_KEY": FAKE}, model="gpt-5.5")
    assert (t.provider, t.model, t.sources["model"]) == ("openai", "gpt-5.5", "flag --model")
    [broken] = broken_files(home, cwd)
    assert broken["source"] == "~/.codex/config.toml" and broken["cause"] == "client"
    assert "invalid TOML" in broken["message"] and "line 2" in broken["message"]


def test_codex_wrong_type_is_left_out_and_named_with_its_line(home: Path, cwd: Path) -> None:
    write(home / ".codex/config.toml", 'model_provider = "relay"\nmodel = 5\n')
    t = find(home, cwd, {"OPENAI_API_KEY": FAKE})
    assert t.sources["model"] == "default"
    [broken] = broken_files(home, cwd)
    assert "~/.codex/config.toml:2: 'model' must be a string, not int" in broken["message"]


def test_unusable_base_url_in_a_client_file_is_left_out_and_named(home: Path, cwd: Path) -> None:
    write(
        home / ".codex/config.toml",
        'model_provider = "relay"\n[model_providers.relay]\nbase_url = "http://[::1/v1"\nenv_key = "RELAY_KEY"\n',
    )
    t = find(home, cwd, {"RELAY_KEY": FAKE})
    assert "[::1" not in t.base_url and t.sources["base_url"] == "default"
    [broken] = broken_files(home, cwd)
    assert broken["source"] == "~/.codex/config.toml:3" and "http://[::1/v1" in broken["message"]


def test_claude_project_settings_override_user_settings(home: Path, cwd: Path) -> None:
    write(
        home / ".claude/settings.json",
        json.dumps({"env": {"ANTHROPIC_MODEL": "claude-user", "ANTHROPIC_BASE_URL": "https://user.example"}}),
    )
    write(cwd / ".claude/settings.local.json", json.dumps({"env": {"ANTHROPIC_MODEL": "claude-local"}}))
    t = find(home, cwd)
    assert (t.provider, t.model, t.base_url) == ("anthropic", "claude-local", "https://user.example")
    assert t.sources["model"].endswith("project/.claude/settings.local.json env")
    assert t.sources["base_url"] == "~/.claude/settings.json env"


def test_malformed_claude_json_is_a_finding_with_its_line(home: Path, cwd: Path) -> None:
    text = '{\n  "env": {\n    "ANTHROPIC_MODEL": "x",\n  }\n}\n'
    write(home / ".claude/settings.json", text)
    t = find(home, cwd, {"ANTHROPIC_API_KEY": FAKE})
    assert t.provider == "anthropic" and t.sources["model"] == "default"
    [broken] = broken_files(home, cwd)
    # The line is the one this Python's json module blames (3.13 names the trailing comma's, line 3; before, 4).
    line = re.match(r"~/\.claude/settings\.json:(\d+): invalid JSON: .+ \(line (\d+), column \d+\)", broken["message"])
    assert line is not None and line[1] == line[2] and int(line[1]) in (3, 4), broken["message"]


@pytest.mark.parametrize(
    ("flags", "phrase"),
    [
        ({"base_url": ""}, "--base-url '' (flag --base-url) is empty"),
        ({"model": ""}, "--model '' (flag --model) is empty"),
        ({"model": "  "}, "is empty"),
        ({"provider": ""}, "--provider '' (flag --provider) is empty"),
        ({"alt_models": ("",)}, "--alt-model '' (flag --alt-model) is empty"),
        ({"api_key_env": "MY KEY"}, "contains a blank"),
        ({"base_url": "http://[::1"}, "Invalid IPv6 URL"),
        ({"base_url": "http://h:70000/v1"}, "out of range"),
        ({"base_url": "http://h/v1\r\nX: y"}, "carriage return"),
        ({"model": "gpt\n5"}, "control character"),
    ],
)
def test_empty_or_unusable_flags_are_refused_not_replaced(
    home: Path, cwd: Path, flags: dict[str, Any], phrase: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(phrase)):
        discover(DiscoveryFlags(**flags), {"OPENAI_API_KEY": FAKE}, home, cwd, "linux")


def test_unusable_values_from_capdoctor_toml_and_env_are_refused(home: Path, cwd: Path) -> None:
    write(cwd / "capdoctor.toml", 'provider = "openai"\nbase_url = "http://[::1"\n')
    with pytest.raises(ConfigError, match=re.escape("capdoctor.toml:2: base_url 'http://[::1' is not a valid URL")):
        find(home, cwd)
    write(cwd / "capdoctor.toml", '[target]\nmodel = ""\n')
    with pytest.raises(ConfigError, match=r"capdoctor.toml:2: model '' is empty"):
        find(home, cwd)
    (cwd / "capdoctor.toml").unlink()
    with pytest.raises(UsageError, match=re.escape("(env OPENAI_BASE_URL) has port 0")):
        find(home, cwd, {"OPENAI_API_KEY": FAKE, "OPENAI_BASE_URL": "http://h:0/v1"})


def test_wrong_types_and_values(home: Path, cwd: Path) -> None:
    write(cwd / "capdoctor.toml", 'provider = "openai"\nmodel = 5\n')
    with pytest.raises(ConfigError, match=r"capdoctor.toml:2: 'model' must be a string"):
        find(home, cwd)
    (cwd / "capdoctor.toml").unlink()
    with pytest.raises(UsageError, match="unknown provider 'nope'"):
        find(home, cwd, provider="nope")
    with pytest.raises(UsageError, match="must start with http"):
        find(home, cwd, provider="openai", base_url="api.openai.com/v1")


def test_options(home: Path, cwd: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(home / ".config")}
    write(
        home / ".config/capdoctor/capdoctor.toml",
        '[options]\nstatus_url = "http://user"\nsince = "2h"\nmodels.max_attempts = 2\n',
    )
    write(cwd / "capdoctor.toml", '[options]\nstatus_url = "http://project"\n')
    opts = load_options(read_config_files(cwd, home, env, "linux"), {"since": "3d"}, env)
    assert (opts["status_url"], opts["since"], opts["models.max_attempts"]) == ("http://project", "3d", 2)
    assert opts.source("status_url") == f"{cwd}/capdoctor.toml:2"
    assert opts.source("since") == "flag --since"
    assert opts.source("models.max_attempts") == "~/.config/capdoctor/capdoctor.toml:4"
    assert (opts["timeout"], opts.source("timeout")) == (30.0, "default")


def test_bad_option_values_name_value_file_and_line(home: Path, cwd: Path) -> None:
    write(cwd / "capdoctor.toml", '[options]\n"models.max_attempts" = "three"\n')
    with pytest.raises(
        UsageError,
        match=re.escape(f"option 'models.max_attempts' 'three' ({cwd}/capdoctor.toml:2) must be a whole number"),
    ):
        load_options(read_config_files(cwd, home, {}, "linux"), {}, {})


def test_unknown_tables_and_keys_are_named_with_the_closest_name(home: Path, cwd: Path) -> None:
    write(
        cwd / "capdoctor.toml",
        '[optoins]\nsince = "1d"\n[target]\nmodle = "x"\n[options]\nsince = "2d"\nstatus_ulr = "http://x"\n',
    )
    warnings = config_warnings(read_config_files(cwd, home, {}, "linux"))
    assert warnings == [
        f"{cwd}/capdoctor.toml: unknown table [optoins] (did you mean [options]?)",
        f"{cwd}/capdoctor.toml: unknown key 'modle' in [target] (did you mean 'model'?)",
        f"{cwd}/capdoctor.toml: unknown option 'status_ulr' in [options] (did you mean 'status_url'?)",
    ]


def test_describe_never_contains_the_key_and_flags_dead_loopback(home: Path, cwd: Path) -> None:
    port = free_port()
    write(home / ".zshrc", f"alias ll='ls -l'\nexport ANTHROPIC_BASE_URL=http://127.0.0.1:{port}\n")
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": FAKE}
    t = discover(DiscoveryFlags(), env, home, cwd, "linux")
    info = describe(t, env, home, cwd, "linux")
    text = json.dumps(info)
    assert FAKE not in text
    key = info["key"]
    assert (key["present"], key["env"], key["source"]) == (True, "ANTHROPIC_API_KEY", "env ANTHROPIC_API_KEY")
    assert key["length"] == len(FAKE) and key["state"] == "set"
    assert info["settings"]["base_url"]["source"] == "env ANTHROPIC_BASE_URL"
    assert info["settings"]["key"]["value"].startswith("set (ANTHROPIC_API_KEY, ")
    assert info["settings"]["key"]["source"] == "env ANTHROPIC_API_KEY"
    kinds = {f["kind"] for f in info["findings"]}
    assert {"dead_loopback", "shell_export"} <= kinds
    assert shell_exports(home) == [{"file": "~/.zshrc", "line": 2, "variable": "ANTHROPIC_BASE_URL"}]


def test_describe_relay_and_no_target(home: Path, cwd: Path) -> None:
    t = discover(DiscoveryFlags(provider="openai", base_url="https://relay.example/v1"), {}, home, cwd, "linux")
    info = describe(t, {}, home, cwd, "linux")
    assert {"relay", "no_key"} <= {f["kind"] for f in info["findings"]}
    empty = describe(None, {}, home, cwd, "linux")
    assert empty["target"] is None and empty["findings"][0]["kind"] == "no_target"


def test_claude_settings_model_is_the_target_model(home: Path, cwd: Path) -> None:
    """Claude Code's `model` setting is the model `diagnose` probes (issue #34: it probed its own default)."""
    write(
        home / ".claude/settings.json",
        json.dumps({"model": "claude-opus-4-7", "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8787"}}),
    )
    t = find(home, cwd, {"ANTHROPIC_API_KEY": FAKE})
    assert (t.provider, t.model, t.base_url) == ("anthropic", "claude-opus-4-7", "http://127.0.0.1:8787")
    assert t.sources["model"] == "~/.claude/settings.json model" and t.client == "claude"
    described = describe(t, {"ANTHROPIC_API_KEY": FAKE}, home, cwd, "linux")
    assert described["settings"]["model"] == {"value": "claude-opus-4-7", "source": "~/.claude/settings.json model"}


def test_claude_anthropic_model_env_beats_the_model_setting(home: Path, cwd: Path) -> None:
    write(home / ".claude/settings.json", json.dumps({"model": "claude-opus-4-7"}))
    write(cwd / ".claude/settings.json", json.dumps({"env": {"ANTHROPIC_MODEL": "claude-haiku-4-5"}}))
    t = find(home, cwd, {"ANTHROPIC_API_KEY": FAKE})
    assert t.model == "claude-haiku-4-5" and t.sources["model"].endswith("project/.claude/settings.json env")


@pytest.mark.parametrize("alias", ["sonnet", "opusplan", "sonnet[1m]"])
def test_claude_model_alias_leaves_the_default(home: Path, cwd: Path, alias: str) -> None:
    """`sonnet` is resolved by Claude Code itself: the API knows no such model, so it is never probed."""
    write(home / ".claude/settings.json", json.dumps({"model": alias}))
    t = find(home, cwd, {"ANTHROPIC_API_KEY": FAKE})
    assert t.model == "claude-sonnet-4-6" and t.sources["model"] == "default"


def test_claude_model_option_suffix_is_dropped(home: Path, cwd: Path) -> None:
    write(home / ".claude/settings.json", json.dumps({"model": "claude-opus-4-7[1m]"}))
    t = find(home, cwd, {"ANTHROPIC_API_KEY": FAKE})
    assert t.model == "claude-opus-4-7" and t.sources["model"] == "~/.claude/settings.json model"


def test_claude_model_setting_alone_names_the_provider(home: Path, cwd: Path) -> None:
    write(home / ".claude/settings.json", json.dumps({"model": "claude-opus-4-7"}))
    t = find(home, cwd)
    assert (t.provider, t.model) == ("anthropic", "claude-opus-4-7")


@pytest.mark.parametrize(
    ("doc", "where"),
    [({"model": {"name": "gemini-2.5-flash"}}, "model.name"), ({"model": "gemini-2.5-flash"}, "model")],
)
def test_gemini_settings_model_is_the_target_model(home: Path, cwd: Path, doc: dict[str, Any], where: str) -> None:
    """Gemini CLI's settings model is the target's, with its source (nested `model.name` or a legacy string)."""
    write(home / ".gemini/settings.json", json.dumps(doc))
    env = {"GEMINI_API_KEY": FAKE, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8790"}
    t = find(home, cwd, env)
    assert (t.provider, t.model, t.base_url) == ("gemini", "gemini-2.5-flash", "http://127.0.0.1:8790")
    assert t.sources["model"] == f"~/.gemini/settings.json {where}" and t.client == "gemini"
    assert t.api_key == FAKE and t.api_key_env == "GEMINI_API_KEY"
    described = describe(t, env, home, cwd, "linux")
    assert described["settings"]["model"]["source"] == f"~/.gemini/settings.json {where}"
    assert any(f["kind"] == "gemini-cli" and f["exists"] for f in described["files"])


def test_gemini_settings_alone_name_the_provider(home: Path, cwd: Path) -> None:
    write(home / ".gemini/settings.json", json.dumps({"model": {"name": "gemini-2.5-pro"}}))
    assert find(home, cwd).provider == "gemini"


def test_gemini_model_is_not_taken_for_another_provider(home: Path, cwd: Path) -> None:
    write(home / ".gemini/settings.json", json.dumps({"model": {"name": "gemini-2.5-flash"}}))
    t = find(home, cwd, {"ANTHROPIC_API_KEY": FAKE})
    assert t.provider == "anthropic" and t.model == "claude-sonnet-4-6"


def test_gemini_dotenv_key_and_base_url(home: Path, cwd: Path) -> None:
    """The `.gemini/.env` Gemini CLI loads gives the key and base URL; a variable set in the shell wins."""
    write(home / ".gemini/settings.json", json.dumps({"model": {"name": "gemini-2.5-flash"}}))
    write(home / ".gemini/.env", f"GEMINI_API_KEY={FAKE}\nGOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8791\n")
    t = find(home, cwd)
    assert (t.provider, t.model, t.base_url) == ("gemini", "gemini-2.5-flash", "http://127.0.0.1:8791")
    assert t.api_key == FAKE and t.api_key_env == "GEMINI_API_KEY" and t.sources["key"] == "~/.gemini/.env"
    assert t.sources["base_url"] == "~/.gemini/.env" and t.client == "gemini"
    described = describe(t, {}, home, cwd, "linux")
    assert FAKE not in json.dumps(described) and described["key"]["present"]
    shell = find(home, cwd, {"GOOGLE_GEMINI_BASE_URL": "https://gw.example", "GEMINI_API_KEY": "shell-key"})
    assert shell.base_url == "https://gw.example" and shell.api_key == "shell-key"
    write(cwd / ".gemini/.env", "GEMINI_API_KEY=project-key\n")  # the project's file is loaded instead
    assert find(home, cwd).api_key == "project-key"
