"""The fleet files under deploy/: every service example starts a `capdoctor watch` the CLI accepts, the alerting
rules pass `promtool check rules` and their own `promtool test rules`, the scrape config passes `promtool check
config`, and the Grafana dashboard is well formed, shows the four views, and queries only capdoctor's metrics
with PromQL that promtool parses."""

from __future__ import annotations

import configparser
import json
import plistlib
import re
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from capdoctor.target.options import Given, check
from capdoctor.watch.metrics import Metrics
from capdoctor.watch.records import WATCH, AttemptRecord, RoundRecord

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (Debian: apt-get install prometheus)"
)


def _watch_args(command_line: list[str]) -> list[str]:
    """The arguments after `capdoctor watch` in a service's command line."""
    i = next(i for i, a in enumerate(command_line) if re.search(r"capdoctor(\.exe)?$", a))
    assert command_line[i + 1] == "watch"
    return command_line[i + 2 :]


def _accepted(args: list[str]) -> dict[str, Any]:
    """Parse `args` with the real `watch` command (no run): unknown options or bad values raise."""
    import typer.main

    from capdoctor.cli.commands import app

    group = typer.main.get_command(app)
    command = group.commands["watch"]  # type: ignore[attr-defined]
    ctx = command.make_context("watch", list(args))
    params = dict(ctx.params)
    as_options = {"interval": "watch.interval_s", "retention": "watch.retention_days", "timeout": "timeout"}
    for name, option in as_options.items():
        if params.get(name) is not None:  # options are checked by capdoctor.target.options, as a run does
            params[name] = check(option, Given(params[name], f"flag --{name}", text=True))
    return params


def test_systemd_unit_runs_an_accepted_watch() -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / "systemd" / "capdoctor-watch.service", encoding="utf-8")
    service = parser["Service"]
    line = shlex.split(service["ExecStart"])
    assert Path(line[0]).is_absolute()
    params = _accepted(_watch_args(line))
    assert params["interval"] == 300 and params["metrics_port"] == 9840
    assert str(params["db"]).startswith("%S/capdoctor/")
    assert service["StateDirectory"] == "capdoctor" and service["KillSignal"] == "SIGTERM"
    assert "EnvironmentFile" in service and "Environment" not in service  # the key stays in a root-only file
    assert parser["Install"]["WantedBy"] == "multi-user.target"
    analyze = shutil.which("systemd-analyze")
    if analyze:  # where systemd exists, its own verifier reads the unit too
        proc = subprocess.run(
            [analyze, "verify", "--man=no", str(DEPLOY / "systemd" / "capdoctor-watch.service")],
            capture_output=True,
            text=True,
            check=False,
        )
        complaints = [
            line
            for line in proc.stderr.splitlines()
            if line.strip() and "is not executable" not in line and "/usr/local/bin/capdoctor" not in line
        ]
        assert complaints == []  # (capdoctor need not be installed where the test runs)


def test_launchd_plist_runs_an_accepted_watch() -> None:
    plist = plistlib.loads((DEPLOY / "launchd" / "dev.capdoctor.watch.plist").read_bytes())
    assert plist["Label"] == "dev.capdoctor.watch"
    shell, flag, script = plist["ProgramArguments"]
    assert (shell, flag) == ("/bin/sh", "-c")
    command = shlex.split(script.split("exec ", 1)[1])
    params = _accepted(_watch_args(command))
    assert params["metrics_port"] == 9840 and params["api_key_env"] == "OPENAI_API_KEY"
    assert plist["RunAtLoad"] is True and plist["KeepAlive"] == {"SuccessfulExit": False}
    assert not any("KEY" in k for k in plist.get("EnvironmentVariables", {}))  # the key stays out of the plist


def test_windows_task_runs_an_accepted_watch() -> None:
    ns = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}
    root = ET.parse(DEPLOY / "windows" / "capdoctor-watch.xml").getroot()
    assert root.tag == f"{{{ns['t']}}}Task"
    command = root.findtext("t:Actions/t:Exec/t:Command", namespaces=ns)
    arguments = root.findtext("t:Actions/t:Exec/t:Arguments", namespaces=ns)
    assert command and command.endswith("capdoctor.exe") and arguments
    params = _accepted(_watch_args([command, *shlex.split(arguments)]))
    assert params["interval"] == 300
    assert root.findtext("t:Settings/t:ExecutionTimeLimit", namespaces=ns) == "PT0S"  # runs until stopped
    assert root.find("t:Triggers/t:LogonTrigger", ns) is not None


@needs_promtool
def test_alert_rules_and_scrape_config_pass_promtool() -> None:
    assert PROMTOOL is not None
    for args in (
        ["check", "rules", "capdoctor-alerts.yml"],
        ["test", "rules", "capdoctor-alerts.test.yml"],
        ["check", "config", "prometheus.yml"],
    ):
        proc = subprocess.run(
            [PROMTOOL, *args], cwd=DEPLOY / "prometheus", capture_output=True, text=True, check=False, timeout=60
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "SUCCESS" in proc.stdout + proc.stderr


def _dashboard() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DEPLOY / "grafana" / "capdoctor-dashboard.json").read_text(encoding="utf-8"))
    return doc


def dashboard_queries(window: str = "15m") -> list[tuple[str, str]]:
    """(panel title, PromQL with the dashboard's variables filled in) for every target."""
    return [
        (p["title"], t["expr"].replace("$instance", ".*").replace("$window", window))
        for p in _dashboard()["panels"]
        for t in p["targets"]
    ]


def _exported_names() -> set[str]:
    m = Metrics()
    m.observe(
        RoundRecord(
            1.0,
            2.0,
            WATCH,
            "openai",
            "m",
            "capacity",
            0.9,
            "",
            (AttemptRecord(1.0, "m", "primary", False, 503, "http_error", "x", "capacity", 10),),
            {"openai_requests": 1.0},
        )
    )
    return {
        line.split("{")[0].split(" ")[0]
        for line in m.exposition().decode().splitlines()
        if line and not line.startswith("#")
    }


def test_dashboard_is_well_formed_and_shows_the_four_views() -> None:
    doc = _dashboard()
    assert isinstance(doc["schemaVersion"], int) and doc["uid"] and doc["title"]
    panels = doc["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for p in panels:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24 and g["h"] > 0
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, f"panel {p['title']!r} overlaps another"
        cells |= mine
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert p["targets"] and all(t["refId"] and t["expr"] for t in p["targets"])
    variables = {v["name"] for v in doc["templating"]["list"]}
    used = {m for p in panels for t in p["targets"] for m in re.findall(r"\$(\w+)", t["expr"])}
    assert used <= variables
    titles = " | ".join(p["title"].lower() for p in panels)
    for view in ("error rate by model", "by hour of day", "verdicts over time", "latency"):
        assert view in titles
    names = _exported_names()
    for _, expr in dashboard_queries():
        for metric in re.findall(r"\bcapdoctor_\w+", expr):
            assert metric in names, f"{metric} is not a metric capdoctor exports"


@needs_promtool
def test_dashboard_queries_are_valid_promql(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"capdoctor_dashboard:panel_{i}", "expr": expr}
                    for i, (_, expr) in enumerate(dashboard_queries())
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(json.dumps(rules), encoding="utf-8")  # JSON is YAML
    proc = subprocess.run(
        [PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_promtool
def test_hour_of_day_panel_finds_the_hour_errors_bunch_in(tmp_path: Path) -> None:
    """Two days of data where probes fail only between 14:00 and 15:00 UTC: the panel's query (as a recording
    rule under `promtool test rules`) puts only hour 14 above 40 %."""
    assert PROMTOOL is not None
    [expr] = [e for title, e in dashboard_queries() if "hour of day" in title]
    minutes = 2 * 24 * 60
    errors, n = [], 0
    for m in range(minutes + 1):
        n += int((m // 60) % 24 == 14 and m % 60 != 0)
        errors.append(n)
    (tmp_path / "rules.yml").write_text(
        json.dumps(
            {"groups": [{"name": "panel", "rules": [{"record": "capdoctor_dashboard:hour_of_day", "expr": expr}]}]}
        ),
        encoding="utf-8",
    )
    (tmp_path / "test.yml").write_text(
        json.dumps(
            {
                "rule_files": ["rules.yml"],
                "evaluation_interval": "1m",
                "tests": [
                    {
                        "interval": "1m",
                        "input_series": [
                            {
                                "series": 'capdoctor_probe_requests_total{instance="a", outcome="error"}',
                                "values": " ".join(map(str, errors)),
                            },
                            {
                                "series": 'capdoctor_probe_requests_total{instance="a", outcome="ok"}',
                                "values": f"0+1x{minutes}",
                            },
                        ],
                        "promql_expr_test": [
                            {
                                "expr": "sgn(capdoctor_dashboard:hour_of_day > 0.4)",
                                "eval_time": "47h",
                                "exp_samples": [{"labels": '{hour="14"}', "value": 1}],
                            }
                        ],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    proc = subprocess.run(
        [PROMTOOL, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
