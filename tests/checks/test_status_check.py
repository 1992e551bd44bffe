"""The status check against the simulator's status page: incident, green, broken, skipped, cached."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from capdoctor.checks.status import StatusCheck
from capdoctor.model import Cause, Status, Strength
from capdoctor.run.context import Context, Target


def ctx(home: Path, env: dict[str, str], options: dict[str, Any], base_url: str = "http://127.0.0.1:9/v1") -> Context:
    target = Target(provider="openai", base_url=base_url, model="gpt-5.5")
    return Context(env=env, home=home, cwd=home, target=target, deadline=time.monotonic() + 10, options=options)


@pytest.mark.scenario("status-incident")
def test_incident_is_capacity_evidence(sim: Any, home: Path) -> None:
    result = StatusCheck().run(ctx(home, {}, {"status_url": sim.status_url}))
    assert result.status is Status.WARN
    assert any(f.cause is Cause.CAPACITY and f.strength is Strength.STRONG for f in result.findings)
    assert result.data["indicator"] == "major" and result.data["incidents"]


@pytest.mark.scenario("healthy")
def test_green_page_and_cache(sim: Any, home: Path) -> None:
    first = StatusCheck().run(ctx(home, {}, {"status_url": sim.status_url}))
    assert first.status is Status.PASS and first.data["cached"] is False
    sim.stop()  # the second read must come from the cache, not the (now gone) server
    second = StatusCheck().run(ctx(home, {}, {"status_url": sim.status_url}))
    assert second.status is Status.PASS and second.data["cached"] is True


@pytest.mark.scenario("status-broken")
def test_broken_page_is_unknown_not_degraded(sim: Any, home: Path) -> None:
    result = StatusCheck().run(ctx(home, {}, {"status_url": sim.status_url}))
    assert result.status is Status.WARN and "unknown" in result.summary
    assert result.data["indicator"] == "unknown"
    assert not [f for f in result.findings if f.strength is not Strength.CONTEXT]


def test_no_lookups_without_explicit_url(home: Path) -> None:
    result = StatusCheck().run(ctx(home, {"CAPDOCTOR_NO_NETWORK_LOOKUPS": "1"}, {}))
    assert result.status is Status.SKIP and "CAPDOCTOR_NO_NETWORK_LOOKUPS" in result.summary


def test_provider_without_a_public_feed_skips(home: Path) -> None:
    c = ctx(home, {}, {})
    c.target = Target(provider="gemini", base_url="https://generativelanguage.googleapis.com", model="g")
    result = StatusCheck().run(c)
    assert result.status is Status.SKIP and "gemini" in result.summary
