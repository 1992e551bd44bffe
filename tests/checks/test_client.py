"""The `client` check and its probes, driven for real: fake client executables on a temporary PATH run
through the real subprocess path, and latest-version lookups go to a loopback server shaped like the npm
registry and PyPI."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from capdoctor.checks.client import ClientCheck
from capdoctor.checks.client_config import assess_configs, config_data
from capdoctor.model import Cause, CheckResult, Finding, Status, Strength
from capdoctor.probes.local_clients import CLIENTS, ClientConfig, client_config, parse_sdk_probe
from capdoctor.probes.local_commands import find_all, run_command
from capdoctor.probes.local_os import OsFacts, remember_os
from capdoctor.probes.local_processes import count_sessions, group_sessions, match_client
from capdoctor.probes.local_registry import latest_versions, npm_url, parse_npm_latest, parse_pypi_latest
from capdoctor.probes.local_versions import Version, far_behind, lag, parse_version
from capdoctor.run.context import Context, Target
from tests.conftest import free_port
from tests.setups.local import FAKEBIN, JsonServer, registry_routes

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="fake executables are POSIX shell scripts")

LATEST_NPM = {"@openai/codex": "0.169.0", "@anthropic-ai/claude-code": "2.1.328"}
LATEST_PYPI = {"openai": "3.51.0", "anthropic": "2.10.0", "google-genai": "3.3.0"}


def make_ctx(
    home: Path,
    path_dirs: list[Path],
    *,
    options: dict[str, Any] | None = None,
    extra_env: dict[str, str] | None = None,
    target: Target | None = None,
    results: dict[str, CheckResult] | None = None,
) -> Context:
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = os.pathsep.join(str(d) for d in path_dirs)
    env.update(extra_env or {})
    return Context(
        env=env,
        home=home,
        cwd=home,
        target=target,
        options=dict(options or {}),
        results=dict(results or {}),
        deadline=time.monotonic() + 30,
    )


@pytest.fixture
def registry() -> Any:
    with JsonServer(registry_routes(LATEST_NPM, LATEST_PYPI)) as server:
        yield server


def reg_options(server: JsonServer) -> dict[str, Any]:
    return {"npm_registry": server.url, "pypi_url": server.url, "client_version_timeout": 5.0}


def by_client(result: CheckResult) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in result.data["clients"]}


# -- pure parts -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("codex-cli 0.155.1", Version(0, 155, 1)),
        ("2.1.278 (Claude Code)", Version(2, 1, 278)),
        ("v22.11.0\n", Version(22, 11, 0)),
        ("aider 0.86.2", Version(0, 86, 2)),
        ("gemini 0.40", Version(0, 40, 0)),
        ("1.2.0-beta.1", Version(1, 2, 0, is_release=False, tag="beta.1")),
        ("0.1.0rc1", Version(0, 1, 0, is_release=False, tag="rc1")),
        ("3.0.0+build.7", Version(3, 0, 0)),
    ],
)
def test_parse_version_tolerates_drift(text: str, expected: Version) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "Welcome to the new experience!", "\xff\xfe press any key", "v.", "1."])
def test_parse_version_garbage_is_none(text: str) -> None:
    assert parse_version(text) is None


def test_prerelease_sorts_before_release_and_lag_levels() -> None:
    assert Version(1, 2, 0, is_release=False, tag="rc1") < Version(1, 2, 0)
    assert lag(Version(0, 150, 0), Version(0, 169, 0)).level == "minor"
    assert lag(Version(0, 150, 0), Version(0, 169, 0)).distance == 19
    assert lag(Version(1, 9, 9), Version(2, 0, 0)).level == "major"
    assert lag(Version(2, 1, 328), Version(2, 1, 328)).level == "current"
    assert lag(Version(2, 2, 0), Version(2, 1, 328)).level == "ahead"
    assert far_behind(lag(Version(0, 150, 0), Version(0, 169, 0)), {"minor": 10})
    assert not far_behind(lag(Version(0, 165, 0), Version(0, 169, 0)), {"minor": 10})


def test_registry_answer_parsers() -> None:
    assert parse_npm_latest({"dist-tags": {"latest": "0.169.0", "next": "0.170.0-alpha.1"}}) == "0.169.0"
    assert parse_npm_latest({"error": "Not found"}) is None
    assert parse_npm_latest(["nope"]) is None
    assert parse_pypi_latest({"info": {"version": "3.51.0"}}) == "3.51.0"
    assert parse_pypi_latest({"info": None}) is None
    assert npm_url("https://registry.npmjs.org/", "@openai/codex") == "https://registry.npmjs.org/@openai%2Fcodex"


def test_config_parsers_read_model_base_url_and_key_variable_but_never_secrets() -> None:
    codex = client_config(
        "codex",
        'model = "gpt-5.5"\nmodel_provider = "relay"\n[model_providers.relay]\n'
        'base_url = "http://127.0.0.1:3000/v1"\nenv_key = "RELAY_KEY"\n',
        "~/.codex/config.toml",
    )
    assert (codex.model, codex.provider, codex.base_url, codex.key_env) == (
        "gpt-5.5",
        "relay",
        "http://127.0.0.1:3000/v1",
        "RELAY_KEY",
    )
    builtin = client_config("codex", 'model = "o4"\n[model_providers.openai]\nbase_url = "http://x"\n', "c")
    assert builtin.base_url is None  # re-using the built-in id does not override it (Codex docs)
    assert client_config("codex", "model = [", "c").error is not None
    claude = client_config(
        "claude",
        json.dumps(
            {
                "env": {
                    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787",
                    "ANTHROPIC_API_KEY": "sk-ant-test-fake-secret",
                    "ANTHROPIC_MODEL": "claude-opus-4-7",
                }
            }
        ),
        "~/.claude/settings.json",
    )
    assert claude.base_url == "http://127.0.0.1:8787" and claude.model == "claude-opus-4-7"
    assert "sk-ant-test-fake-secret" not in json.dumps(claude.env_overrides)
    assert claude.env_overrides["_secret_vars_set"] == "ANTHROPIC_API_KEY"
    assert client_config("gemini", '{"model": {"name": "gemini-3-pro"}}', "g").model == "gemini-3-pro"
    assert client_config("gemini", '{"model": "gemini-2.5-flash"}', "g").model == "gemini-2.5-flash"
    assert parse_sdk_probe('noise\n{"openai": "2.0.0", "bad": 3}') == {"openai": "2.0.0"}
    assert parse_sdk_probe("Traceback (most recent call last)") == {}


def test_config_findings_are_pure_given_a_port_probe() -> None:
    relay = ClientConfig(
        "codex",
        "~/.codex/config.toml",
        provider="relay",
        model="gpt-5.5",
        base_url="http://127.0.0.1:3000/v1",
        key_env="RELAY_KEY",
    )
    asked: list[tuple[str, int]] = []

    def port_open(host: str, port: int) -> bool:
        asked.append((host, port))
        return False

    env = {"OPENAI_BASE_URL": "https://gw.example/v1"}
    findings, details = assess_configs([relay], env, None, None, port_open)
    assert asked == [("127.0.0.1", 3000)]
    assert details == ["~/.codex/config.toml: model gpt-5.5, base URL http://127.0.0.1:3000/v1, provider relay"]
    by_variable = {f.data.get("variable"): f for f in findings}
    assert "$RELAY_KEY, but that variable is not set" in by_variable["RELAY_KEY"].message
    assert by_variable["OPENAI_BASE_URL"].strength is Strength.CONTEXT  # Codex ignores it: own provider
    dead = [f for f in findings if "nothing listens" in f.message]
    assert dead and dead[0].strength is Strength.MODERATE
    assert dead[0].cause is Cause.NETWORK  # the paths check's and the verdict's reading (issue #34)
    broken = ClientConfig("gemini", "~/.gemini/settings.json", error="cannot parse ~/.gemini/settings.json: x")
    target = Target(provider="openai", base_url="https://api.openai.com/v1", model="gpt-5.5")
    (only,), _ = assess_configs([broken], {}, target, ["gpt-5.5"], port_open)
    assert only.strength is Strength.CONTEXT and "not the endpoint being diagnosed" in only.message
    assert config_data(broken)["error"] == broken.error


def test_match_client_and_session_grouping() -> None:
    assert match_client("codex", ["/usr/bin/codex"], CLIENTS) == "codex"
    assert match_client("node", ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"], CLIENTS) == "codex"
    assert match_client("node", ["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"], CLIENTS) == "claude"
    assert match_client("claude", ["claude", "--version"], CLIENTS) is None
    assert match_client("node", ["node", "server.js"], CLIENTS) is None
    # a node shim and the native binary it started are one session
    grouped = group_sessions({10: ("codex", 1), 11: ("codex", 10), 20: ("codex", 1), 30: ("claude", 1)})
    assert grouped == {"codex": [10, 20], "claude": [30]}


# -- the real subprocess path -----------------------------------------------------------------------------


@posix_only
def test_find_all_lists_each_distinct_install_in_path_order(tmp_path: Path) -> None:
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "codex").symlink_to(FAKEBIN / "old" / "codex")
    env = {"PATH": os.pathsep.join([str(FAKEBIN / "old"), str(link_dir), str(FAKEBIN / "current")])}
    found = find_all("codex", env)
    assert found == [FAKEBIN / "old" / "codex", FAKEBIN / "current" / "codex"]
    assert find_all("no-such-client", env) == []


@posix_only
def test_hanging_client_is_killed_with_its_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    out = run_command(
        [str(FAKEBIN / "hang" / "codex"), "--version"],
        {"PATH": "/usr/bin:/bin", "FAKE_PIDFILE": str(pidfile)},
        timeout=1.5,
    )
    assert out.error is not None and "timed out" in out.error
    assert not out.ok
    child = int(pidfile.read_text().strip())
    for _ in range(100):  # the killed child is reaped by init; wait until it is gone
        if not _alive(child):
            break
        time.sleep(0.05)
    assert not _alive(child), "the grandchild holding stdout survived"


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@posix_only
def test_prompting_client_gets_no_stdin_and_returns() -> None:
    out = run_command([str(FAKEBIN / "prompt" / "claude"), "--version"], {"PATH": "/usr/bin:/bin"}, timeout=5)
    assert out.error is None and out.returncode == 1
    assert "aborted: no terminal" in out.text


def test_missing_executable_is_an_error_not_an_exception(tmp_path: Path) -> None:
    out = run_command([str(tmp_path / "nope")], {}, timeout=1)
    assert out.error is not None and out.error.startswith("cannot execute")


# -- latest-version lookups against a registry-shaped loopback server -------------------------------------


def test_latest_versions_from_registries_then_from_the_cache(tmp_path: Path, registry: JsonServer) -> None:
    import httpx

    keys = ["npm:@openai/codex", "pypi:openai", "npm:@nobody/missing"]
    kw: dict[str, Any] = {
        "npm_registry": registry.url,
        "pypi_url": registry.url,
        "cache_dir": tmp_path,
        "client_factory": lambda: httpx.Client(timeout=5),
        "now": 1_000_000.0,
    }
    first = latest_versions(keys, allow_network=True, **kw)
    assert first == {"npm:@openai/codex": "0.169.0", "pypi:openai": "3.51.0", "npm:@nobody/missing": None}
    assert ("GET", "/@openai%2Fcodex") in registry.seen
    assert ("GET", "/pypi/openai/json") in registry.seen
    asked = len(registry.seen)
    again = latest_versions(keys[:2], allow_network=True, **{**kw, "now": 1_000_000.0 + 3600})
    assert again == {"npm:@openai/codex": "0.169.0", "pypi:openai": "3.51.0"}
    assert len(registry.seen) == asked  # answered from the cache, no request
    stale = latest_versions(keys[:1], allow_network=False, **{**kw, "now": 1_000_000.0 + 2 * 86400})
    assert stale == {"npm:@openai/codex": None}  # a day-old entry is not used; offline says "unknown"


def test_latest_unknown_when_the_registry_is_unreachable(tmp_path: Path) -> None:
    import httpx

    dead = f"http://127.0.0.1:{free_port()}"
    got = latest_versions(
        ["npm:@openai/codex"],
        npm_registry=dead,
        pypi_url=dead,
        cache_dir=tmp_path,
        allow_network=True,
        client_factory=lambda: httpx.Client(timeout=2),
    )
    assert got == {"npm:@openai/codex": None}


# -- the check ---------------------------------------------------------------------------------------------


@posix_only
def test_old_client_far_behind_latest_gets_the_update_command(home: Path, registry: JsonServer) -> None:
    ctx = make_ctx(home, [FAKEBIN / "old"], options=reg_options(registry))
    result = ClientCheck().run(ctx)
    clients = by_client(result)
    assert clients["codex"]["version"] == "0.150.0" and clients["codex"]["latest"] == "0.169.0"
    assert clients["claude"]["version"] == "2.1.224" and clients["claude"]["latest"] == "2.1.328"
    behind = [f for f in result.findings if "far behind" in f.message]
    assert {f.data["client"] for f in behind} == {"codex", "claude"}
    commands = {s.command for f in behind for s in f.next_steps}
    assert "npm install -g @openai/codex@latest" in commands and "claude update" in commands
    node = [f for f in result.findings if f.data.get("node") == "16.20.2"]
    assert node and all(f.cause is Cause.CLIENT for f in node)
    assert result.status is Status.WARN


@posix_only
def test_current_clients_pass(home: Path, registry: JsonServer) -> None:
    ctx = make_ctx(home, [FAKEBIN / "current"], options=reg_options(registry))
    result = ClientCheck().run(ctx)
    assert result.status is Status.PASS, result.findings
    assert by_client(result)["codex"]["lag"] == "current"
    assert "Codex CLI 0.169.0" in result.summary


@posix_only
def test_offline_says_latest_unknown_instead_of_guessing(home: Path) -> None:
    ctx = make_ctx(home, [FAKEBIN / "old"], options={"client_version_timeout": 5.0})
    assert ctx.env["CAPDOCTOR_NO_NETWORK_LOOKUPS"] == "1"
    result = ClientCheck().run(ctx)
    assert by_client(result)["codex"]["latest"] is None
    assert any("Codex CLI 0.150.0" in d and "latest unknown" in d for d in result.details)
    assert not [f for f in result.findings if "far behind" in f.message]


@posix_only
def test_hanging_and_garbage_clients_do_not_break_the_check(home: Path, tmp_path: Path) -> None:
    ctx = make_ctx(
        home,
        [FAKEBIN / "hang"],
        options={"client_version_timeout": 0.5},
        extra_env={"FAKE_PIDFILE": str(tmp_path / "pid")},
    )
    result = ClientCheck().run(ctx)
    assert by_client(result)["codex"]["error"].startswith("timed out")
    slow = [f for f in result.findings if f.data.get("slow")]
    assert slow and slow[0].strength is Strength.CONTEXT and "was slow" in slow[0].message  # never "broken"
    assert not any("broken" in f.message for f in result.findings)

    garbage = ClientCheck().run(make_ctx(home, [FAKEBIN / "garbage"]))
    row = by_client(garbage)["codex"]
    assert row["version"] is None and "Welcome" in row["version_output"]
    assert any("unrecognised version output" in d for d in garbage.details)
    assert garbage.status is Status.PASS


@posix_only
def test_two_different_installs_on_path_are_a_conflict(home: Path) -> None:
    ctx = make_ctx(home, [FAKEBIN / "current", FAKEBIN / "old"])
    result = ClientCheck().run(ctx)
    conflict = [f for f in result.findings if "installs on PATH" in f.message]
    assert len(conflict) == 2  # codex and claude are both installed twice
    codex = next(f for f in conflict if f.data["client"] == "codex")
    assert codex.data["paths"][0] == str(FAKEBIN / "current" / "codex")
    assert "0.169.0" in codex.message and "0.150.0" in codex.message


@posix_only
def test_sdks_come_from_the_users_python_and_compare_with_pypi(home: Path, registry: JsonServer) -> None:
    ctx = make_ctx(home, [FAKEBIN / "sdk"], options=reg_options(registry))
    result = ClientCheck().run(ctx)
    assert result.data["sdks"]["openai"] == {"version": "2.9.0", "latest": "3.51.0"}
    assert result.data["http_stack"] == {"httpx": "0.28.1", "httpx2": "2.16.2"}
    sdk = [f for f in result.findings if f.data.get("package") == "openai"]
    assert sdk and sdk[0].strength is Strength.CONTEXT
    assert sdk[0].next_steps[0].command == "python -m pip install -U openai"


def test_real_python_sdk_probe_runs(home: Path) -> None:
    ctx = make_ctx(home, [Path(sys.executable).parent])
    result = ClientCheck().run(ctx)
    assert "httpx" in result.data["http_stack"]  # capdoctor's own venv has httpx


def models_result(available: list[str], findings: tuple[Finding, ...] = ()) -> CheckResult:
    return CheckResult(
        "models",
        "Models",
        1,
        Status.FAIL if findings else Status.PASS,
        "x",
        findings=findings,
        data={"available_models": available},
    )


def test_config_model_the_provider_does_not_offer(home: Path) -> None:
    base = "http://127.0.0.1:9/v1"
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'model = "gpt-4.5-preview"\nmodel_provider = "relay"\n[model_providers.relay]\nbase_url = "{base}"\n'
        'env_key = "RELAY_TEST_KEY"\n',
        encoding="utf-8",
    )
    target = Target(provider="openai-compatible", base_url="http://127.0.0.1:9", model="gpt-5.5")
    ctx = make_ctx(
        home,
        [],
        target=target,
        results={"models": models_result(["gpt-5.5", "gpt-5.4-mini"])},
        extra_env={"RELAY_TEST_KEY": "sk-test-fake-1"},
    )
    result = ClientCheck().run(ctx)
    missing = [f for f in result.findings if f.data.get("model") == "gpt-4.5-preview"]
    assert len(missing) == 1 and missing[0].strength is Strength.MODERATE and missing[0].cause is Cause.CLIENT
    assert "'gpt-5.5'" in missing[0].next_steps[0].text
    assert result.status is Status.FAIL
    # the same config pointed at another provider is not compared with this provider's list
    other = Target(provider="openai-compatible", base_url="http://127.0.0.1:10", model="gpt-5.5")
    ctx2 = make_ctx(
        home,
        [],
        target=other,
        results={"models": models_result(["gpt-5.5"])},
        extra_env={"RELAY_TEST_KEY": "sk-test-fake-1"},
    )
    assert not [f for f in ClientCheck().run(ctx2).findings if f.data.get("model") == "gpt-4.5-preview"]


def test_key_variable_named_in_config_but_unset(home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        'model_provider = "relay"\n[model_providers.relay]\nbase_url = "https://relay.example.test/v1"\n'
        'env_key = "RELAY_TEST_KEY"\n',
        encoding="utf-8",
    )
    result = ClientCheck().run(make_ctx(home, []))
    unset = [f for f in result.findings if f.data.get("variable") == "RELAY_TEST_KEY"]
    assert unset and unset[0].strength is Strength.MODERATE
    assert "not set" in unset[0].message


def test_dead_local_base_url_and_a_live_one(home: Path) -> None:
    dead_port = free_port()
    live = socket.socket()
    live.bind(("127.0.0.1", 0))
    live.listen()
    try:
        live_port = live.getsockname()[1]
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(
            json.dumps(
                {
                    "env": {
                        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{dead_port}",
                        "ANTHROPIC_AUTH_TOKEN": "sk-ant-test-fake-token-123",
                    }
                }
            ),
            encoding="utf-8",
        )
        ctx = make_ctx(home, [], extra_env={"OPENAI_BASE_URL": f"http://localhost:{live_port}/v1"})
        result = ClientCheck().run(ctx)
    finally:
        live.close()
    dead = [f for f in result.findings if "nothing listens" in f.message]
    assert len(dead) == 1 and f"127.0.0.1:{dead_port}" in dead[0].message
    assert dead[0].data["path"] == "~/.claude/settings.json (claude)"
    assert "sk-ant-test-fake-token-123" not in json.dumps(result.to_dict())


def test_shell_and_settings_disagree(home: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_MODEL": "claude-opus-4-7"}}), encoding="utf-8"
    )
    result = ClientCheck().run(make_ctx(home, [], extra_env={"ANTHROPIC_MODEL": "claude-sonnet-4-6"}))
    clash = [f for f in result.findings if f.data.get("variable") == "ANTHROPIC_MODEL"]
    assert clash and clash[0].strength is Strength.WEAK
    assert "claude-sonnet-4-6" in clash[0].message and "claude-opus-4-7" in clash[0].message


def test_malformed_config_is_a_finding_not_a_crash(home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5\n', encoding="utf-8")
    result = ClientCheck().run(make_ctx(home, []))
    assert any("cannot parse ~/.codex/config.toml" in f.message for f in result.findings)
    assert result.status is Status.FAIL


@posix_only
def test_requires_newer_version_from_models_names_the_installed_client(home: Path, registry: JsonServer) -> None:
    asked = Finding(
        Cause.CLIENT,
        Strength.STRONG,
        "The 'gpt-5.5' model requires a newer version of Codex. Please upgrade to the latest app or CLI",
        data={"signature": "client.version_too_old", "status": 400},
    )
    target = Target(provider="openai", base_url="https://api.openai.com/v1", model="gpt-5.5")
    ctx = make_ctx(
        home,
        [FAKEBIN / "old"],
        options=reg_options(registry),
        target=target,
        results={"models": models_result(["gpt-5.5"], (asked,))},
    )
    result = ClientCheck().run(ctx)
    newer = [f for f in result.findings if f.message.startswith("the provider asks for a newer client")]
    assert [f.data["client"] for f in newer] == ["codex"]  # the openai target's client, not Claude Code
    assert newer[0].strength is Strength.MODERATE
    assert newer[0].next_steps[0].command == "npm install -g @openai/codex@latest"
    assert result.status is Status.FAIL
    # with the current client installed, the request is not about it
    current = ClientCheck().run(
        make_ctx(
            home,
            [FAKEBIN / "current"],
            options=reg_options(registry),
            target=target,
            results={"models": models_result(["gpt-5.5"], (asked,))},
        )
    )
    assert not [f for f in current.findings if "asks for a newer client" in f.message]


def test_os_change_since_last_run_is_noted(home: Path) -> None:
    from datetime import datetime, timezone

    data_dir = home / "data"
    when = datetime(2026, 11, 1, tzinfo=timezone.utc)
    old = OsFacts("Darwin", "macOS 15.6", "24.6.0", "arm64")
    new = OsFacts("Darwin", "macOS 26.1", "25.1.0", "arm64")
    assert remember_os(data_dir, old, when) is None  # first run: nothing to compare
    assert remember_os(data_dir, old, when) is None  # same OS
    change = remember_os(data_dir, new, when)
    assert change is not None and change.before.version == "macOS 15.6"
    ctx = make_ctx(home, [])
    first = ClientCheck().run(ctx)
    assert not [f for f in first.findings if "OS changed" in f.message]
    state = ctx.data_dir / "last-seen-os.json"
    saved = json.loads(state.read_text())
    saved["facts"]["version"] = "Some Older OS 1.0"
    state.write_text(json.dumps(saved))
    second = ClientCheck().run(ctx)
    noted = [f for f in second.findings if "OS changed" in f.message]
    assert noted and noted[0].strength is Strength.CONTEXT and "Some Older OS 1.0" in noted[0].message
    assert second.data["os"]["changed_from"]["version"] == "Some Older OS 1.0"


@posix_only
def test_concurrent_sessions_are_counted_from_the_process_table(tmp_path: Path) -> None:
    fake = tmp_path / "codex"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", fake)
    procs = [subprocess.Popen([str(fake), "30"]) for _ in range(3)]
    try:
        sessions = count_sessions(CLIENTS)
        assert set(p.pid for p in procs) <= set(sessions.get("codex", []))
        result = ClientCheck().run(make_ctx(tmp_path, []))
        quota = [f for f in result.findings if f.cause is Cause.QUOTA]
        assert quota and quota[0].strength is Strength.WEAK and quota[0].data["sessions"] >= 3
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_config_without_base_url_matches_by_provider_only_weakly(home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5-codex-max"\n', encoding="utf-8")
    target = Target(provider="openai", base_url="https://api.openai.com/v1", model="gpt-5.5")
    result = ClientCheck().run(make_ctx(home, [], target=target, results={"models": models_result(["gpt-5.5"])}))
    missing = [f for f in result.findings if f.data.get("model") == "gpt-5.5-codex-max"]
    assert len(missing) == 1 and missing[0].strength is Strength.WEAK
    # a model the provider lists (or a dated variant of it) is not reported
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n', encoding="utf-8")
    ok = ClientCheck().run(make_ctx(home, [], target=target, results={"models": models_result(["gpt-5.5-2026-08-01"])}))
    assert not [f for f in ok.findings if f.data.get("model") == "gpt-5.5"]


def test_setup_problems_of_another_provider_are_context_only(home: Path) -> None:
    dead_port = free_port()
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{dead_port}"}}), encoding="utf-8"
    )
    openai = Target(provider="openai", base_url="https://api.openai.com/v1", model="gpt-5.5")
    off = ClientCheck().run(make_ctx(home, [], target=openai))
    dead = [f for f in off.findings if "nothing listens" in f.message]
    assert dead and dead[0].strength is Strength.CONTEXT and "not the endpoint being diagnosed" in dead[0].message
    assert off.status is Status.PASS
    anthropic = Target(provider="anthropic", base_url="https://api.anthropic.com", model="claude-opus-4-7")
    on = ClientCheck().run(make_ctx(home, [], target=anthropic))
    assert [f.strength for f in on.findings if "nothing listens" in f.message] == [Strength.MODERATE]
    assert on.status is Status.FAIL


@posix_only
def test_a_client_running_from_outside_path_is_not_called_absent(tmp_path: Path) -> None:
    """Issue 35.9: the summary said "no known AI client on PATH" while its details counted running sessions."""
    fake = tmp_path / "codex"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", fake)
    procs = [subprocess.Popen([str(fake), "30"]) for _ in range(2)]
    try:
        result = ClientCheck().run(make_ctx(tmp_path, []))  # an empty PATH: no client installed on it
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert result.data["sessions"].get("codex", 0) >= 2
    assert "no known AI client" not in result.summary and "Codex CLI running (not from PATH)" in result.summary
    assert any("running session(s) (its executable is not on PATH)" in d for d in result.details)
