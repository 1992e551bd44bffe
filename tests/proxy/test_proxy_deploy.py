"""deploy/ for the proxy: the systemd unit starts a `capdoctor proxy` the CLI accepts (with the token its
environment file holds, since it listens beyond loopback), and the scrape config has a job for the proxies."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from capdoctor.errors import UsageError
from capdoctor.proxy.settings import build

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNIT = DEPLOY / "systemd" / "capdoctor-proxy.service"


def _proxy_args() -> tuple[configparser.SectionProxy, list[str]]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(UNIT, encoding="utf-8")
    line = shlex.split(parser["Service"]["ExecStart"])
    i = next(i for i, a in enumerate(line) if re.search(r"capdoctor$", a))
    assert line[i + 1] == "proxy" and Path(line[0]).is_absolute()
    return parser["Service"], line[i + 2 :]


def test_systemd_unit_runs_an_accepted_proxy() -> None:
    import typer.main

    from capdoctor.cli.commands import app

    service, args = _proxy_args()
    command = typer.main.get_command(app).commands["proxy"]  # type: ignore[attr-defined]
    params = command.make_context("proxy", list(args)).params
    kwargs = {"db": params["db"], "metrics_port": params["metrics_port"], "metrics_host": params["metrics_host"]}
    with pytest.raises(UsageError, match="--token"):  # beyond loopback, no token: refused
        build(params["upstream"], params["provider"], params["listen"], None, {}, **kwargs)
    settings = build(
        params["upstream"], params["provider"], params["listen"], None, {"CAPDOCTOR_PROXY_TOKEN": "x" * 48}, **kwargs
    )
    assert {u.prefix: u.provider for u in settings.upstreams} == {
        "": "openai",
        "/anthropic": "anthropic",
        "/gemini": "gemini",
    }
    assert settings.metrics_port == 9841 and str(settings.db).startswith("%S/capdoctor/")
    assert service["KillSignal"] == "SIGTERM" and "EnvironmentFile" in service and "Environment" not in service
    analyze = shutil.which("systemd-analyze")
    if analyze:
        proc = subprocess.run([analyze, "verify", "--man=no", str(UNIT)], capture_output=True, text=True, check=False)
        complaints = [
            line
            for line in proc.stderr.splitlines()
            if line.strip() and "is not executable" not in line and "/usr/local/bin/capdoctor" not in line
        ]
        assert complaints == []


def test_scrape_config_scrapes_every_proxy_instance() -> None:
    doc = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text(encoding="utf-8"))
    (job,) = [j for j in doc["scrape_configs"] if j["job_name"] == "capdoctor-proxy"]
    targets = [t for group in job["static_configs"] for t in group["targets"]]
    assert len(targets) >= 2 and all(t.endswith(":9841") for t in targets)
