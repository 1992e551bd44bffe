"""The client in use, and next steps fitted to it and deduplicated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength
from capdoctor.target.clientuse import ClientInUse, client_in_use, switched_model
from capdoctor.target.discovery import DiscoveryFlags, discover
from capdoctor.verdict.advice import CAUSE_TEXT, fit_step
from capdoctor.verdict.decision import decide

CODEX = {"id": "codex", "name": "Codex CLI", "version": "0.55.0", "path": "/usr/bin/codex"}
CLAUDE = {"id": "claude", "name": "Claude Code", "version": "2.0.1", "path": "/usr/bin/claude"}
AIDER = {"id": "aider", "name": "Aider", "version": "0.86.0", "path": "/usr/bin/aider"}


@pytest.mark.parametrize(
    ("target", "data", "expected", "basis"),
    [
        ({"provider": "openai", "client": "codex"}, {"clients": [CODEX]}, ("codex", "0.55.0"), "settings"),
        ({"provider": "openai", "client": "codex"}, None, ("codex", None), "settings"),  # check not run: still known
        ({"provider": "openai"}, {"clients": [CODEX, AIDER], "sessions": {"codex": 2}}, ("codex", "0.55.0"), "running"),
        ({"provider": "openai"}, {"clients": [CODEX, CLAUDE]}, ("codex", "0.55.0"), "only installed client"),
        ({"provider": "anthropic"}, {"clients": [CODEX, CLAUDE]}, ("claude", "2.0.1"), "only installed client"),
        ({"provider": "openai"}, {"clients": [], "sdks": {"openai": {"version": "2.8.0"}}}, ("sdk", "2.8.0"), "openai"),
        (
            {"provider": "openai"},
            {"clients": [CLAUDE], "sdks": {"openai": {"version": "2.8.0"}}},
            ("sdk", "2.8.0"),
            "no command-line client",
        ),
        ({"provider": "openai"}, {"clients": [CODEX, AIDER]}, ("unknown", None), "several clients"),
        ({"provider": "openai"}, {"clients": []}, ("unknown", None), "no AI client"),
        ({"provider": "openai"}, None, ("unknown", None), "did not run"),
        (None, None, ("unknown", None), "did not run"),
    ],
)
def test_client_in_use(
    target: dict[str, Any] | None, data: dict[str, Any] | None, expected: tuple[str, str | None], basis: str
) -> None:
    client = client_in_use(target, data)
    assert (client.id, client.version) == expected
    assert basis in client.basis
    assert client.to_dict()["id"] == client.id


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_discovery_names_the_client_whose_settings_it_read(home: Path, tmp_path: Path) -> None:
    write(home / ".codex/config.toml", 'model = "gpt-5.5"\n')
    target = discover(DiscoveryFlags(), {}, home, tmp_path, "linux")
    assert target is not None and target.client == "codex" and target.to_dict()["client"] == "codex"
    flags = discover(
        DiscoveryFlags(
            provider="openai",
            model="gpt-5.5",
            base_url="https://api.openai.com/v1",
            api_key_env="OPENAI_API_KEY",
            wire_api="chat",
        ),
        {},
        home,
        tmp_path,
        "linux",
    )
    assert flags is not None and flags.client is None  # every value came from flags: no client's settings
    write(home / ".claude/settings.json", '{"env": {"ANTHROPIC_BASE_URL": "https://relay.example/v1"}}')
    claude = discover(DiscoveryFlags(provider="anthropic"), {}, home, tmp_path, "linux")
    assert claude is not None and claude.client == "claude"


def test_switched_model_reads_every_clients_command() -> None:
    assert switched_model("codex --model gpt-5.4-mini") == "gpt-5.4-mini"
    assert switched_model("claude --model claude-haiku-4-5") == "claude-haiku-4-5"
    assert switched_model("capdoctor check paths") is None and switched_model("codex update") is None


SWITCH = NextStep("Switch to gpt-5.4-mini for now and back to gpt-5.5 later.", "codex --model gpt-5.4-mini")


@pytest.mark.parametrize(
    ("client", "command", "text_has"),
    [
        (ClientInUse("codex", "Codex CLI"), "codex --model gpt-5.4-mini", None),
        (ClientInUse("aider", "Aider"), "aider --model gpt-5.4-mini", None),
        (ClientInUse("sdk", "OpenAI Python SDK", package="openai"), None, 'model="gpt-5.4-mini"'),
        (ClientInUse("unknown", "not identified"), None, None),
    ],
)
def test_switch_step_fits_the_client(client: ClientInUse, command: str | None, text_has: str | None) -> None:
    step = fit_step(SWITCH, client)
    assert step.command == command
    assert step.text.startswith("Switch to gpt-5.4-mini")
    if text_has:
        assert text_has in step.text
    assert fit_step(SWITCH, None) == SWITCH  # nobody asked: the finding's own words
    other = NextStep("Compare the direct path with your proxy path.", "capdoctor check paths")
    assert fit_step(other, client) == other


def _result(cause: Cause, steps: tuple[NextStep, ...], check: str = "models") -> CheckResult:
    return CheckResult(check, check, 1, Status.FAIL, "x", (Finding(cause, Strength.STRONG, "seen", {}, steps),))


def test_capacity_steps_say_each_thing_once_and_fit_an_sdk_user() -> None:
    verdict = decide(
        [_result(Cause.CAPACITY, (SWITCH,))], ClientInUse("sdk", "OpenAI Python SDK", "2.8.0", package="openai")
    )
    texts = [s.text for s in verdict.next_steps]
    assert texts[0].startswith("Switch to gpt-5.4-mini") and 'model="gpt-5.4-mini"' in texts[0]
    assert not any(s.command and s.command.startswith("codex") for s in verdict.next_steps)
    generic_switch = CAUSE_TEXT[Cause.CAPACITY.value].steps[0].text
    assert generic_switch not in texts  # the finding's concrete switch covers the generic one
    assert any("backoff" in t for t in texts) and any("fallback" in t for t in texts)  # other advice stays


def test_network_steps_show_a_command_once() -> None:
    steps = (
        NextStep("Compare the direct path with your proxy path.", "capdoctor check paths"),
        NextStep("Check the connection itself: another network (phone hotspot), VPN/proxy on or off."),
    )
    verdict = decide([_result(Cause.NETWORK, steps, "paths")])
    commands = [s.command for s in verdict.next_steps if s.command]
    assert commands.count("capdoctor check paths") == 1 and len(commands) == len(set(commands))
    texts = [s.text for s in verdict.next_steps]
    assert len(texts) == len(set(texts)) and texts[:2] == [s.text for s in steps]
    assert "capdoctor check proxy" in commands  # generic advice on another topic is kept
    assert not any("TUN" in t or "exit node" in t for t in texts)  # no proxy or TUN was seen


def test_quota_steps_drop_generic_advice_a_finding_already_gave() -> None:
    steps = (
        NextStep("Add credits or raise the plan's limit in the provider's billing console; retrying will not help."),
    )
    verdict = decide([_result(Cause.QUOTA, steps)])
    texts = [s.text for s in verdict.next_steps]
    assert texts[0] == steps[0].text
    assert not any(t.startswith("Check usage and billing") for t in texts)
    assert any(t.startswith("Lower the request rate") for t in texts)


FAKEBIN = Path(__file__).resolve().parents[1] / "fakebin"


def _diagnose(cli: Any, home: Path, path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    import json
    import os

    env = {**(env or {}), "PATH": os.pathsep.join([str(path), os.environ.get("PATH", "")])}
    proc = cli("diagnose", "--only", "models,client", "--json", *args, env=env, cwd=home, timeout=120)
    report: dict[str, Any] = json.loads(proc.stdout)
    assert report["verdict"]["cause"] == "capacity", report["verdict"]
    return report


@pytest.mark.scenario("capacity")
def test_a_codex_user_gets_the_codex_command(cli: Any, sim: Any, home: Path) -> None:
    write(home / ".codex/config.toml", f'model = "gpt-5.5"\nopenai_base_url = "{sim.base_url("openai")}"\n')
    report = _diagnose(cli, home, FAKEBIN / "current")
    assert report["target"]["client"] == "codex"
    assert (report["client"]["id"], report["client"]["version"]) == ("codex", "0.169.0")
    assert report["verdict"]["next_steps"][0]["command"] == "codex --model gpt-5.4-mini"


@pytest.mark.scenario("capacity")
def test_claude_codes_configured_model_is_the_one_probed(cli: Any, sim: Any, home: Path) -> None:
    """Claude Code's `model` setting is probed, not capdoctor's default (#34: its 529 became "switch model")."""
    import json

    settings = {
        "model": "claude-opus-4-7",
        "env": {"ANTHROPIC_BASE_URL": sim.base_url("anthropic"), "ANTHROPIC_API_KEY": "sk-ant-api03-FAKE-0123456789"},
    }
    write(home / ".claude/settings.json", json.dumps(settings))
    report = _diagnose(cli, home, FAKEBIN / "sdk")
    assert report["target"]["model"] == "claude-opus-4-7"
    assert report["target"]["sources"]["model"] == "~/.claude/settings.json model"
    assert report["target"]["client"] == "claude"


@pytest.mark.scenario("capacity")
def test_gemini_clis_configured_model_is_the_one_probed(cli: Any, sim: Any, home: Path) -> None:
    write(home / ".gemini/settings.json", '{"model": {"name": "gemini-2.5-pro"}}')
    env = {"GEMINI_API_KEY": "AIza-FAKE-0123456789abcdef", "GOOGLE_GEMINI_BASE_URL": sim.base_url("gemini")}
    report = _diagnose(cli, home, FAKEBIN / "sdk", env=env)
    assert report["target"]["model"] == "gemini-2.5-pro"
    assert report["target"]["sources"]["model"] == "~/.gemini/settings.json model.name"
    assert report["target"]["client"] == "gemini" and report["client"]["id"] == "gemini"


@pytest.mark.scenario("capacity")
def test_an_sdk_user_gets_the_model_parameter_not_codex(cli: Any, sim: Any, home: Path) -> None:
    report = _diagnose(
        cli,
        home,
        FAKEBIN / "sdk",
        "--provider",
        "openai",
        "--base-url",
        sim.base_url("openai"),
        "--model",
        "gpt-5.5",
        "--alt-model",
        "gpt-5.4-mini",
    )
    assert report["target"]["client"] is None and report["client"]["id"] == "sdk"
    steps = report["verdict"]["next_steps"]
    assert 'model="gpt-5.4-mini"' in steps[0]["text"]
    assert not any(s.get("command", "").startswith("codex") for s in steps)


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        (ClientInUse("codex", "Codex CLI"), "capdoctor fallback --format codex --model gpt-5.5"),
        (
            ClientInUse("sdk", "OpenAI Python SDK", package="openai"),
            "capdoctor fallback --format openai-python --model gpt-5.5",
        ),
        (ClientInUse("unknown", "not identified"), "capdoctor fallback --format litellm --model gpt-5.5"),
        (None, "capdoctor fallback --format litellm --model gpt-5.5"),
    ],
)
def test_the_fallback_step_names_the_format_the_client_in_use_loads(client: ClientInUse | None, expected: str) -> None:
    step = NextStep("Generate a fallback pool.", "capdoctor fallback --format litellm --model gpt-5.5")
    verdict = decide([_result(Cause.CAPACITY, (step,))], client)
    assert expected in [s.command for s in verdict.next_steps]
