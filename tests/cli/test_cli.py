"""The command-line contract: names, exit codes, one-line errors, JSON-only stdout, the demo self-test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from capdoctor import __version__
from capdoctor.cli.exitcodes import ExitCode, for_verdict

ROOT = Path(__file__).resolve().parents[2]
STAGE_ORDER = ["models", "status", "paths", "proxy", "quota", "client", "hardware", "logs"]


def test_exit_codes_are_pinned() -> None:
    assert {e.name: int(e) for e in ExitCode} == {
        "OK": 0,
        "INTERNAL": 1,
        "USAGE": 2,
        "CAPACITY": 3,
        "QUOTA": 4,
        "ACCOUNT": 5,
        "NETWORK": 6,
        "HARDWARE": 7,
        "CLIENT": 8,
        "INCONCLUSIVE": 9,
        "NO_FALLBACK": 10,
    }
    assert for_verdict("none") == 0 and for_verdict("inconclusive") == 9 and for_verdict("capacity") == 3


def test_readme_documents_every_exit_code() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for code in ExitCode:
        assert re.search(rf"\|\s*{int(code)}\s*\|", readme), f"exit code {int(code)} missing from README"


def test_ci_runs_the_readme_test_command() -> None:
    """`.ci/run` runs exactly the README's test command on this machine, and `.ci/roots` (the other Pythons)
    reads it from under the same heading of the README, so neither can drift from what the README says."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    [command] = re.findall(r"^Run the tests:\n\n```sh\n(.*?)\n```", readme, re.M | re.S)
    assert command.startswith("python3 -m venv .venv && ") and command in ci
    roots = subprocess.run(
        ["bash", "-c", 'eval "$(grep "^TEST_COMMAND=" .ci/roots)" && printf %s "$TEST_COMMAND"'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert roots.stdout == command
    assert ".ci/roots test trixie" in ci and ".ci/roots test sid" in ci


def test_version(cli: Any) -> None:
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"capdoctor {__version__}"


def test_version_verbose_names_python_platform_and_the_accelerators_in_use(cli: Any) -> None:
    """What a bug report needs: the Python `pipx`/`uv tool` picked, the platform, and which optional engines
    the commands would use here, the same answers the log scanner and the hardware check get."""
    import platform

    from capdoctor.logscan.prefilter import HyperscanPrefilter, build_prefilter
    from capdoctor.probes.local_nvml import load_nvml, read_gpus

    for args in (("--version", "-v"), ("-v", "--version"), ("--version", "--verbose")):
        proc = cli(*args)
        assert proc.returncode == 0, proc.stderr
        head, python, where, prefilter, nvml = proc.stdout.splitlines()
        assert head == f"capdoctor {__version__}"
        assert python.startswith(f"python: {platform.python_implementation()} {platform.python_version()} (")
        assert where.startswith("platform: ") and f"({sys.platform}, " in where
        hyperscan = isinstance(build_prefilter(["capacity"]), HyperscanPrefilter)
        assert prefilter.startswith("log prefilter: Hyperscan" if hyperscan else "log prefilter: pure-Python")
        found = read_gpus(load_nvml()).available
        assert nvml.startswith("NVML: found, driver" if found else "NVML: not found: ")


def test_without_hyperscan_the_version_names_the_pure_python_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    from capdoctor.cli import about

    monkeypatch.setitem(sys.modules, "hyperscan", None)  # what an import finds where no wheel was installed
    assert about.prefilter() == "pure-Python prefilter (hyperscan is not installed)"


def test_a_root_verbose_flag_without_version_is_a_usage_error(cli: Any) -> None:
    proc = cli("-v", "checks")
    assert proc.returncode == ExitCode.USAGE and proc.stdout == ""
    assert "-v before a command goes only with --version" in proc.stderr


def test_checks_lists_every_stage_in_order(cli: Any) -> None:
    proc = cli("checks")
    assert proc.returncode == 0
    ids = [line.split()[1] for line in proc.stdout.splitlines() if line.strip()]
    assert ids == STAGE_ORDER


@pytest.mark.parametrize(
    "args",
    [
        ["check", "nope"],
        ["diagnose", "--only", "models,bogus"],
        ["diagnose", "--bogus-flag"],
        ["diagnose", "--timeout", "abc"],
        ["demo", "--scenario", "no-such-scenario"],
        ["diagnose", "--report", "out.txt", "--only", "proxy"],
        ["diagnose", "--report", "no/such/dir/out.md", "--only", "proxy"],
        ["logs", "/no/such/log/file.log"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli: Any, args: list[str], tmp_path: Path) -> None:
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and lines[0].startswith("capdoctor: error:")


def test_json_mode_prints_only_json(cli: Any, tmp_path: Path) -> None:
    proc = cli("diagnose", "--json", "--only", "proxy", cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert report["schema"] == "capdoctor/report-v1"
    assert [c["id"] for c in report["checks"]] == ["proxy"]
    assert proc.returncode == for_verdict(report["verdict"]["cause"])


def test_report_file_is_written(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "ticket.md"
    proc = cli("diagnose", "--only", "proxy", "--report", str(out), cwd=tmp_path)
    assert proc.returncode in (0, 6, 9), proc.stderr
    assert out.read_text(encoding="utf-8").startswith("# capdoctor report")


def test_demo_default_is_capacity_and_self_checks(cli: Any, tmp_path: Path) -> None:
    proc = cli("demo", cwd=tmp_path, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Verdict: CAPACITY" in proc.stdout
    assert "matches the scenario" in proc.stdout


@pytest.mark.parametrize("scenario", ["quota", "auth", "healthy"])
def test_demo_other_scenarios(cli: Any, tmp_path: Path, scenario: str) -> None:
    proc = cli("demo", "--scenario", scenario, "--json", cwd=tmp_path, timeout=90)
    report = json.loads(proc.stdout)
    broken = [(c["id"], c["status"], c["summary"]) for c in report["checks"] if c["status"] in ("fail", "error")]
    assert proc.returncode == 0, (report["verdict"]["cause"], broken, proc.stderr)


def test_fake_key_never_printed(cli: Any, tmp_path: Path) -> None:
    key = "sk-test-FAKEKEYabcdefghij0123456789"
    proc = cli("demo", "--scenario", "auth", "-v", env={"OPENAI_API_KEY": key}, cwd=tmp_path, timeout=90)
    assert key not in proc.stdout + proc.stderr
    proc = cli("config", "--json", env={"OPENAI_API_KEY": key}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert key not in proc.stdout + proc.stderr


def test_credentials_in_a_base_url_are_never_shown(cli: Any, tmp_path: Path) -> None:
    secret = "s3cr3t-test-pass"
    url = f"https://user:{secret}@127.0.0.1:9/v1?key=AIzaFAKEtest0123456789abcdefghijk"
    proc = cli("diagnose", "--only", "proxy", "--provider", "openai", "--model", "m", "--base-url", url, cwd=tmp_path)
    assert secret not in proc.stdout + proc.stderr
    assert "AIzaFAKEtest0123456789abcdefghijk" not in proc.stdout + proc.stderr
    assert "capdoctor" in proc.stdout


def test_a_run_builds_only_the_command_it_names() -> None:
    """Start-up: Typer builds a click command per registered command; a run builds just the one it names."""
    from capdoctor.cli import commands as cli

    assert [c.name for c in cli._app_for(["logs", "-"]).registered_commands] == ["logs"]
    assert [c.name for c in cli._app_for(["--version"]).registered_commands] == ["checks"]
    assert cli._app_for(["--help"]) is cli.app and cli._app_for([]) is cli.app
    assert cli._app_for(["diagnos"]) is cli.app  # a typo gets the whole app, which suggests the right name
    assert len(cli.app.registered_commands) > 10  # the narrowed copy left the app itself whole


def test_history_describes_its_own_since() -> None:
    """Issue 35.9: `history --help` described `--since` in the logs command's words (discovered logs, logs you
    name); it filters recorded rounds."""
    from tests.conftest import run_cli

    help_text = " ".join(run_cli("history", "--help", env={"COLUMNS": "400"}).stdout.split())
    assert "Only the rounds recorded after this" in help_text
    assert "logs you name" not in help_text and "discovered logs" not in help_text
