"""A real Prometheus server scrapes a real watch: the counters it stores are what the simulator served, the
shipped alerting rules load, and every dashboard query runs. Skips with the reason where the `prometheus`
binary is absent (CI installs Debian's package)."""

from __future__ import annotations

import io
import json
import os
import shutil
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from capdoctor.run.context import Target
from capdoctor.run.diagnosis import RunRequest
from capdoctor.watch.command import WatchSettings, watch_command
from tests.conftest import free_port
from tests.support.prometheus_support import ready, real_prometheus
from tests.watch.test_watch_deploy import DEPLOY, dashboard_queries

PROMETHEUS = shutil.which("prometheus")
GENERATION_PATHS = ("/chat/completions", "/responses")


def _get(url: str, timeout: float = 10) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode())


def _query(base: str, expr: str) -> dict[str, Any]:
    doc: dict[str, Any] = _get(f"{base}/api/v1/query?{urllib.parse.urlencode({'query': expr})}")
    return doc


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except (OSError, urllib.error.URLError, ValueError):
            pass
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@pytest.mark.skipif(
    PROMETHEUS is None,
    reason="the prometheus binary is not installed (Debian: apt-get install "
    "prometheus); the exposition is still parsed in test_watch_metrics",
)
@pytest.mark.scenario("flaky-capacity")
def test_real_prometheus_scrapes_capdoctor_watch(sim: Any, home: Path, tmp_path: Path) -> None:
    assert PROMETHEUS is not None
    log: list[str] = []
    sim.log = log.append
    metrics_port = free_port()
    target = Target(
        provider="openai",
        base_url=sim.base_url("openai"),
        model="gpt-5.5",
        alt_models=("gpt-5.4-mini",),
        api_key="sk-test-" + "p" * 24,
    )
    request = RunRequest(
        target=target,
        env=dict(os.environ),
        home=home,
        cwd=tmp_path,
        timeout=20,
        options={"status_url": sim.status_url, "reference_url": sim.url + "/cdn-cgi/trace", "models.backoff_s": 0.01},
    )
    stop = threading.Event()
    rounds_out = io.StringIO()
    watcher = threading.Thread(
        target=watch_command,
        args=(
            request,
            WatchSettings(interval_s=600, db=tmp_path / "h.db", metrics_port=metrics_port),
            rounds_out,
            io.StringIO(),
            stop,
        ),
    )
    prometheus = real_prometheus(
        PROMETHEUS,
        tmp_path,
        "capdoctor",
        f"127.0.0.1:{metrics_port}",
        [str(DEPLOY / "prometheus" / "capdoctor-alerts.yml")],
    )
    watcher.start()
    with prometheus as base:
        try:
            _wait(lambda: rounds_out.getvalue().count("\n") >= 1, 60, "the watch round")
            _wait(lambda: ready(base), 60, "prometheus ready")

            def scraped() -> list[dict[str, Any]]:
                res: list[dict[str, Any]] = _query(base, "capdoctor_probe_requests_total")["data"]["result"]
                return res

            series = _wait(scraped, 60, "capdoctor_probe_requests_total in Prometheus")
            time.sleep(3)  # a few more scrapes, so rate() over the dashboard's windows has two samples
            series = scraped()

            gens = [r for r in sim.requests if r["path"].endswith(GENERATION_PATHS)]
            statuses = [int(x.split()[-1]) for x in log if x.split()[1].endswith(GENERATION_PATHS)]
            served = Counter(
                ((r["json"] or {}).get("model"), "ok" if s == 200 else "error")
                for r, s in zip(gens, statuses, strict=True)
            )
            stored = {(s["metric"]["model"], s["metric"]["outcome"]): float(s["value"][1]) for s in series}
            assert stored == {k: float(v) for k, v in served.items()}
            for s in series:
                labels = s["metric"]
                assert labels["job"] == "capdoctor" and labels["instance"] == f"127.0.0.1:{metrics_port}"
                assert labels["provider"] == "openai"
                assert labels["cause"] == ("none" if labels["outcome"] == "ok" else "capacity")
            verdict = _query(base, "capdoctor_verdict == 1")["data"]["result"]
            assert [v["metric"]["cause"] for v in verdict] == ["capacity"]
            latency = _query(base, "capdoctor_probe_latency_seconds_count")["data"]["result"]
            assert sum(float(v["value"][1]) for v in latency) == sum(served.values())

            rules = _get(f"{base}/api/v1/rules")["data"]["groups"]
            assert sorted(r["name"] for g in rules for r in g["rules"]) == [
                "CapdoctorCapacityErrors",
                "CapdoctorEveryModelFailing",
            ]
            assert all(r["health"] == "ok" for g in rules for r in g["rules"])
            for title, expr in dashboard_queries(window="1m"):
                answer = _query(base, expr)
                assert answer["status"] == "success", (title, answer)
                if "by model" in title or "Since the last round" in title or "machines per verdict" in title:
                    assert answer["data"]["result"], f"{title}: no data"
        finally:
            stop.set()
            watcher.join(timeout=60)
    assert "sk-test-" not in (tmp_path / "prometheus.yml").read_text()
