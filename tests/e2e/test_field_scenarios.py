"""Field scenarios (tests/data/scenarios/*.toml): a reproduced failure and the verdict it must get, run end to end.

Each scenario starts the simulator as a real server, applies an optional named setup (a real proxy, fake
client executables, a fake home…), runs `capdoctor diagnose --json` as a subprocess, and asserts the verdict,
the exit code and, where given, individual check statuses. The scenarios are data: adding one needs no code.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import pkgutil
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from capdoctor.cli.demo import client_target
from tests.conftest import run_cli
from tests.setups import SetupEnv

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_FILES = sorted((ROOT / "tests" / "data" / "scenarios").glob("*.toml"))
RUN_TIMEOUT = 15


def _setups() -> dict[str, Callable[[SetupEnv], Any]]:
    import tests.setups as package

    found: dict[str, Callable[[SetupEnv], Any]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"tests.setups.{info.name}")
        found.update(getattr(module, "SETUPS", {}))
    return found


def _fill(value: str, sim: Any, home: Path, base_url: str) -> str:
    return value.replace("{sim}", sim.url).replace("{home}", str(home)).replace("{base_url}", base_url)


@contextlib.contextmanager
def _applied(name: str, env: SetupEnv) -> Iterator[dict[str, Any]]:
    if not name:
        yield {}
        return
    setups = _setups()
    assert name in setups, f"unknown setup {name!r}; known: {sorted(setups)}"
    with setups[name](env) as extra:
        yield extra or {}


def test_there_are_field_scenarios() -> None:
    assert len(SCENARIO_FILES) >= 10


def run_scenario(spec: dict[str, Any], scenario: Any, tmp_path: Path, home: Path) -> tuple[Any, dict[str, Any], str]:
    """Serve `scenario` on the simulator, apply the spec's setup, run `diagnose --json`: (process, report,
    context for assertion messages)."""
    from capdoctor.simulator.server import Simulator

    with Simulator(scenario=scenario) as sim:
        shape = spec.get("provider", getattr(scenario, "provider", "openai"))
        provider, base_url = client_target(sim, shape)
        model = spec.get("model", scenario.primary_model)
        alts = spec.get("alt_models", list(scenario.alt_models))
        workdir = tmp_path / "project"
        workdir.mkdir()
        (workdir / "capdoctor.toml").write_text(
            "[options]\n"
            f'status_url = "{sim.status_url}"\n'
            f'reference_url = "{sim.url}/cdn-cgi/trace"\n'
            f'ollama_url = "{sim.base_url("ollama")}"\n'
            "discover_logs = false\n",
            encoding="utf-8",
        )
        with _applied(spec.get("setup", ""), SetupEnv(sim=sim, home=home, tmp=tmp_path)) as extra:
            args = [
                "diagnose",
                "--json",
                "--timeout",
                str(spec.get("timeout", RUN_TIMEOUT)),
                "--provider",
                provider,
                "--base-url",
                base_url,
                "--model",
                model,
            ]
            for alt in alts:
                args += ["--alt-model", alt]
            args += [_fill(a, sim, home, base_url) for a in spec.get("args", [])] + list(extra.get("args", []))
            env = {k: _fill(str(v), sim, home, base_url) for k, v in spec.get("env", {}).items()}
            env.update(extra.get("env", {}))
            proc = run_cli(*args, env=env, cwd=workdir, timeout=RUN_TIMEOUT + 30)
    assert proc.stdout.strip(), f"no JSON on stdout; stderr: {proc.stderr[-2000:]}"
    report = json.loads(proc.stdout)
    summary = {c["id"]: (c["status"], c["summary"]) for c in report["checks"]}
    context = (
        f"{spec.get('description', '')}: verdict {report['verdict']}\nchecks {json.dumps(summary, indent=1)}\n"
        f"stderr {proc.stderr[-1500:]}"
    )
    return proc, report, context


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_field_scenario(path: Path, tmp_path: Path, home: Path) -> None:
    from capdoctor.simulator.scenarios import SCENARIOS

    spec = tomllib.loads(path.read_text(encoding="utf-8"))
    proc, report, context = run_scenario(spec, SCENARIOS[spec["scenario"]], tmp_path, home)
    verdict = report["verdict"]
    assert verdict["cause"] == spec["expect_cause"], context
    assert proc.returncode == spec["expect_exit"], context
    assert verdict["confidence"] >= spec.get("min_confidence", 0.0), context
    summary = {c["id"]: c["status"] for c in report["checks"]}
    for check_id, status in spec.get("expect_status", {}).items():
        assert summary[check_id] == status, context
