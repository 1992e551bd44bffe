"""A real Prometheus scrapes a real `capdoctor proxy`: the series it stores count what the simulator answered
through the proxy, by status and cause. Skips with the reason where the `prometheus` binary is absent (CI
installs Debian's package)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import free_port
from tests.support.prometheus_support import ready, real_prometheus
from tests.support.proxy_support import running_proxy
from tests.watch.test_watch_prometheus import PROMETHEUS, _query, _wait

CHAT = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.skipif(
    PROMETHEUS is None, reason="the prometheus binary is not installed (Debian: apt-get install prometheus)"
)
@pytest.mark.scenario("flaky-capacity")
def test_real_prometheus_scrapes_capdoctor_proxy(sim: Any, tmp_path: Path) -> None:
    assert PROMETHEUS is not None
    metrics_port = free_port()
    with real_prometheus(PROMETHEUS, tmp_path, "capdoctor-proxy", f"127.0.0.1:{metrics_port}") as base:
        with running_proxy([sim.url], tmp_path / "h.sqlite3", provider="openai", metrics_port=metrics_port) as proxy:
            statuses = []
            with httpx.Client() as client:
                for model in ("gpt-5.5", "gpt-5.5", "gpt-5.5", "gpt-5.4-mini"):
                    r = client.post(
                        proxy.url + "/v1/chat/completions",
                        json={**CHAT, "model": model},
                        headers={"authorization": "Bearer sk-test-" + "p" * 24},
                    )
                    statuses.append((model, str(r.status_code)))
            _wait(lambda: ready(base), 60, "prometheus ready")

            def scraped() -> dict[tuple[str, str], float]:
                res = _query(base, "capdoctor_proxy_exchanges_total")["data"]["result"]
                got = {(s["metric"]["model"], s["metric"]["status"]): float(s["value"][1]) for s in res}
                return got if sum(got.values()) == len(statuses) else {}

            stored = _wait(scraped, 60, "capdoctor_proxy_exchanges_total in Prometheus")
            causes = {s["metric"]["cause"] for s in _query(base, "capdoctor_proxy_exchanges_total")["data"]["result"]}
            proxy.close()
        expected: dict[tuple[str, str], float] = {}
        for key in statuses:
            expected[key] = expected.get(key, 0) + 1
        assert stored == expected
        assert causes <= {"capacity", "none"} and "capacity" in causes
