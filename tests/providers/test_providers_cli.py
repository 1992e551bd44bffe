"""End to end through the real CLI: a probe run and `capdoctor config` never print the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port, run_cli

FAKE_KEY = "sk-test-FAKEKEY-cli-0123456789abcdef"


@pytest.mark.parametrize("scenario", ["healthy", "auth", "capacity"])
def test_diagnose_never_prints_the_key(scenario: str, tmp_path: Path) -> None:
    from capdoctor.simulator.server import Simulator

    with Simulator(scenario=scenario) as sim:
        (tmp_path / "capdoctor.toml").write_text(f'[options]\nstatus_url = "{sim.status_url}"\n', encoding="utf-8")
        proc = run_cli(
            "diagnose",
            "--json",
            "--timeout",
            "15",
            "--provider",
            "openai",
            "--base-url",
            sim.base_url("openai"),
            "--model",
            "gpt-5.5",
            "--only",
            "models,status,quota",
            env={"OPENAI_API_KEY": FAKE_KEY},
            cwd=tmp_path,
        )
        sent = [r["headers"].get("authorization", "") for r in sim.requests]
    assert any(FAKE_KEY in h for h in sent), "the probe must really send the key"
    out = proc.stdout + proc.stderr
    assert FAKE_KEY not in out and "FAKEKEY" not in out
    report: dict[str, Any] = json.loads(proc.stdout)
    assert report["target"]["api_key_present"] is True
    models = next(c for c in report["checks"] if c["id"] == "models")
    assert models["data"]["models"], "the models check ran"


def test_config_shows_sources_not_the_key(tmp_path: Path) -> None:
    port = free_port()
    proc = run_cli(
        "config",
        "--json",
        env={"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"},
        cwd=tmp_path,
    )
    out = proc.stdout + proc.stderr
    assert FAKE_KEY not in out and "FAKEKEY" not in out
    assert "ANTHROPIC_BASE_URL" in out and "anthropic" in out


def test_malformed_config_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "capdoctor.toml").write_text('model = "x"\nprovider = \n', encoding="utf-8")
    proc = run_cli("diagnose", "--json", "--only", "models", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "capdoctor.toml" in proc.stderr and "line 2" in proc.stderr
