"""Bad input, end to end: one stderr line naming the value and its source, exit 2, before any request.

And the other side of the rule: what is not the user's own capdoctor input (a client's broken config file)
never stops a run; it becomes a finding. Every test runs the real CLI as a subprocess against a real
simulator whose request log proves that nothing was sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    d = tmp_path / "project"
    d.mkdir()
    return d


def target_args(sim: Any) -> list[str]:
    return ["--provider", "openai", "--base-url", sim.base_url("openai"), "--model", "gpt-5.5"]


def one_error_line(proc: Any) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("capdoctor: error:") and "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--timeout", "nan"], "--timeout 'nan' (flag --timeout) must be a finite number"),
        (["--timeout", "-5"], "--timeout '-5' (flag --timeout) must be at least 1"),
        (["--timeout", "inf"], "must be a finite number"),
        (["--timeout", "3s"], "--timeout '3s' (flag --timeout) must be a number"),
        (["--since", "yesterday"], "--since 'yesterday' (flag --since) must be a duration"),
        (["--since", "99999999999d"], "--since '99999999999d' (flag --since) reaches back further than dates go"),
        (["--reference-url", "http://h:70000/"], "--reference-url 'http://h:70000/' (flag --reference-url)"),
        (["--model", ""], "--model '' (flag --model) is empty"),
        (["--alt-model", ""], "--alt-model '' (flag --alt-model) is empty"),
        (["--report", "no/such/folder/out.md"], "the folder no/such/folder does not exist"),
    ],
)
def test_bad_flags_stop_before_any_request(sim: Any, project: Path, args: list[str], named: str) -> None:
    proc = run_cli("diagnose", "--json", *target_args(sim), *args, cwd=project)
    assert named in one_error_line(proc)
    assert sim.requests == []


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("http://[::1", "--base-url 'http://[::1' (flag --base-url) is not a valid URL"),
        ("http://127.0.0.1:99999/v1", "Port out of range"),
        ("http://127.0.0.1:8080/v1\r\nX-Evil: 1", "contains a carriage return"),
        ("", "--base-url '' (flag --base-url) is empty"),
    ],
)
def test_bad_base_urls_are_refused_not_replaced(project: Path, value: str, named: str) -> None:
    proc = run_cli("diagnose", "--provider", "openai", "--base-url", value, cwd=project)
    assert named in one_error_line(proc)


@pytest.mark.parametrize(
    ("toml", "named"),
    [
        (
            '[options]\n"models.max_attempts" = "three"\n',
            "option 'models.max_attempts' 'three' ({file}:2) must be a whole number",
        ),
        ("[options]\ntimeout = -1\n", "option 'timeout' -1 ({file}:2) must be at least 1"),
        ("[options]\ntimeout = nan\n", "option 'timeout' nan ({file}:2) must be a finite number"),
        ('[options]\nsince = "soon"\n', "option 'since' 'soon' ({file}:2) must be a duration"),
        ('[options]\nstatus_url = "http://[::1"\n', "option 'status_url' 'http://[::1' ({file}:2) is not a valid URL"),
        ("[options]\nmodels.max_requests = 0\n", "option 'models.max_requests' 0 ({file}:2) must be at least 1"),
        (
            "[options]\nrun.max_provider_requests = 0\n",
            "option 'run.max_provider_requests' 0 ({file}:2) must be at least 1",
        ),
        (
            '[options]\n"run.max_provider_requests" = 2.5\n',
            "option 'run.max_provider_requests' 2.5 ({file}:2) must be a whole number",
        ),
        (
            "[options]\nrun.max_output_tokens = -16\n",
            "option 'run.max_output_tokens' -16 ({file}:2) must be at least 1",
        ),
        (
            '[options]\nrun.max_output_tokens = "lots"\n',
            "option 'run.max_output_tokens' 'lots' ({file}:2) must be a whole number",
        ),
        (
            "[options]\nrun.max_output_tokens = true\n",
            "option 'run.max_output_tokens' True ({file}:2) must be a whole number, not a boolean",
        ),
        ('[target]\nbase_url = ""\n', "{file}:2: base_url '' is empty"),
        ('model = "x"\n[target\n', "{file}: invalid TOML"),
    ],
)
def test_bad_capdoctor_toml_stops_before_any_request(sim: Any, project: Path, toml: str, named: str) -> None:
    (project / "capdoctor.toml").write_text(toml, encoding="utf-8")
    proc = run_cli("diagnose", "--json", *target_args(sim), cwd=project)
    assert named.format(file=project / "capdoctor.toml") in one_error_line(proc)
    assert sim.requests == []


def test_bad_watch_options_stop_before_any_round(sim: Any, project: Path) -> None:
    for flag, value in (("--interval", "nan"), ("--retention", "0"), ("--timeout", "-1")):
        line = one_error_line(
            run_cli("watch", *target_args(sim), "--db", str(project / "h.db"), flag, value, cwd=project)
        )
        assert f"{flag} '{value}' (flag {flag})" in line
    assert sim.requests == [] and not (project / "h.db").exists()


def test_bad_since_is_exit_2_for_every_command(project: Path) -> None:
    for command in (["logs", str(project)], ["diagnose", "--only", "logs"], ["check", "logs"], ["history"]):
        line = one_error_line(run_cli(*command, "--since", "yesterday", cwd=project))
        assert "--since 'yesterday' (flag --since)" in line


def test_unknown_config_keys_are_a_warning_and_the_run_goes_on(sim: Any, project: Path) -> None:
    (project / "capdoctor.toml").write_text(
        '[optoins]\nsince = "1d"\n[options]\nstatus_ulr = "http://x"\n', encoding="utf-8"
    )
    proc = run_cli("diagnose", "--json", "--only", "models", *target_args(sim), "--timeout", "20", cwd=project)
    assert json.loads(proc.stdout)["checks"][0]["id"] == "models"
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("capdoctor: warning:")]
    assert len(warnings) == 2, proc.stderr
    assert "unknown table [optoins] (did you mean [options]?)" in warnings[0]
    assert "unknown option 'status_ulr' in [options] (did you mean 'status_url'?)" in warnings[1]


def test_broken_client_files_are_findings_not_a_stop(sim: Any, project: Path, home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5\n', encoding="utf-8")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"env": {"ANTHROPIC_MODEL": "x",}}', encoding="utf-8")
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_bytes(b"\xff\xfe{")
    proc = run_cli("diagnose", "--json", "--only", "models,client", *target_args(sim), "--timeout", "25", cwd=project)
    assert proc.returncode != 2, proc.stderr
    report = json.loads(proc.stdout)
    client = next(c for c in report["checks"] if c["id"] == "client")
    said = " ".join(f["message"] for f in client["findings"])
    assert "~/.codex/config.toml" in said and "~/.claude/settings.json" in said
    assert sim.requests, "the models check ran against the flags' target"

    shown = run_cli("config", "--json", cwd=project)
    assert shown.returncode == 0, shown.stderr
    broken = [f for f in json.loads(shown.stdout)["findings"] if f["kind"] == "client_config_broken"]
    assert {f["source"] for f in broken} == {
        "~/.codex/config.toml",
        "~/.claude/settings.json",
        "~/.gemini/settings.json",
    }
    assert any("line 1, column" in f["message"] for f in broken)


def test_config_shows_every_option_with_its_source(project: Path, home: Path) -> None:
    (project / "capdoctor.toml").write_text('[options]\n"models.max_attempts" = 2\n', encoding="utf-8")
    user = home / ".config" / "capdoctor"
    user.mkdir(parents=True)
    (user / "capdoctor.toml").write_text("[options]\nmodels.max_attempts = 5\nstatus.cache_s = 60\n", encoding="utf-8")
    proc = run_cli("config", "--json", cwd=project, env={"CAPDOCTOR_NO_NETWORK_LOOKUPS": "yes"})
    assert proc.returncode == 0, proc.stderr
    options = json.loads(proc.stdout)["options"]
    assert options["models.max_attempts"] == {"value": 2, "source": f"{project}/capdoctor.toml:2"}
    assert options["status.cache_s"] == {"value": 60, "source": "~/.config/capdoctor/capdoctor.toml:3"}
    assert options["no_network_lookups"] == {"value": True, "source": "env CAPDOCTOR_NO_NETWORK_LOOKUPS"}
    assert options["timeout"] == {"value": 30.0, "source": "default"}
    assert "demo" not in options  # set by capdoctor itself, not an option a user sets

    table = run_cli("config", cwd=project, env={"COLUMNS": "400"})
    assert "models.max_attempts" in table.stdout and "capdoctor.toml:2" in table.stdout


def test_a_missing_log_path_is_the_same_usage_error_for_every_command(sim: Any, project: Path) -> None:
    """Issue 35.2: `diagnose --log`, `check logs --log`, capdoctor.toml's `logs` and `logs PATH` name a path
    that is not there: one rule for all of them, exit 2 with one line before any request."""
    missing = str(project / "nonexistent.log")
    lines = [
        one_error_line(run_cli("diagnose", *target_args(sim), "--log", missing, cwd=project)),
        one_error_line(run_cli("check", "logs", *target_args(sim), "--log", missing, cwd=project)),
        one_error_line(run_cli("logs", missing, cwd=project)),
    ]
    assert f"--log {missing!r} (flag --log) does not exist" in lines[0] and lines[1] == lines[0]
    assert f"{missing!r} (argument PATH) does not exist" in lines[2]
    (project / "capdoctor.toml").write_text('[options]\nlogs = ["gone.log"]\n', encoding="utf-8")
    line = one_error_line(run_cli("diagnose", *target_args(sim), cwd=project))
    assert f"option 'logs' 'gone.log' ({project / 'capdoctor.toml'}:2) does not exist" in line
    assert sim.requests == []
