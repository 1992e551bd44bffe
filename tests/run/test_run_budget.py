"""The run's request budget (`capdoctor.run.budget`): the caps hold whatever the checks do, the models check is
served first, what was not sent is said, and requests through a real proxy are counted like direct ones."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from capdoctor.checks.paths import PathsCheck
from capdoctor.cli.demo import client_target, demo_key
from capdoctor.probes.http_budget import BudgetSpent, requested_output_tokens
from capdoctor.run.budget import PRIORITY_CHECK, UNPLANNED, RunBudget, origin_of
from capdoctor.run.context import Context, Target
from capdoctor.simulator.server import Simulator
from capdoctor.target.options import OptionError, from_mapping
from tests.support.netfixtures import running_proxy

ORIGIN = ("https", "api.example.com", 443)

# ------------------------------------------------------------------ the budget object


def test_origin_fills_in_the_default_port_and_lower_cases_the_host() -> None:
    assert origin_of("https://API.Example.com/v1") == ORIGIN
    assert origin_of("http://127.0.0.1:8080/v1") == ("http", "127.0.0.1", 8080)
    assert origin_of("ftp://x/") is None and origin_of("http://[::1") is None


def test_what_counts_is_the_targets_origin_less_the_status_page_and_reference() -> None:
    b = RunBudget(origin=ORIGIN, exempt=("https://api.example.com/status",))
    assert b.is_provider("https://api.example.com/v1/models")
    assert b.is_provider("https://api.example.com:443/cdn-cgi/trace")
    assert not b.is_provider("https://api.example.com/status/api/v2/summary.json")
    assert not b.is_provider("http://api.example.com/v1/models")  # another port, another origin
    assert not b.is_provider("https://status.example.com/api/v2/summary.json")
    assert not RunBudget().is_provider("https://api.example.com/v1/models")  # no target: nothing counts


def test_take_stops_at_the_request_cap_and_at_the_token_cap() -> None:
    b = RunBudget(3, 40, ORIGIN)
    assert [b.take("models", 16) for _ in range(3)] == [True, True, False]  # 48 tokens would pass 40
    assert b.take("models") is True and b.take("models") is False  # a spend-nothing call fits; then 3 of 3
    assert (b.sent, b.output_tokens, b.refused) == (3, 32, {"models": 2})
    assert b.spent_text("models", 2) == "request budget spent: 3 of 3; 2 planned attempts not sent"


def test_the_models_check_is_served_first_until_it_releases_its_reserve() -> None:
    b = RunBudget(5, 200, ORIGIN)
    b.reserve(PRIORITY_CHECK, 3)
    assert [b.take("paths") for _ in range(3)] == [True, True, False]  # 5 - 3 held for the models check
    assert "held for the models check" in b.spent_text("paths")
    assert [b.take("models") for _ in range(4)] == [True, True, True, False]
    b = RunBudget(5, 200, ORIGIN)
    b.reserve(PRIORITY_CHECK, 3)
    assert b.take("models") and b.take("paths") and b.take("paths") and not b.take("paths")
    b.release(PRIORITY_CHECK)  # the models check finished having used 1: the rest is everyone's
    assert b.take("quota") and b.take("quota") and not b.take("quota")
    assert b.by_check == {"models": 1, "paths": 2, "quota": 2}


def test_a_request_sent_without_asking_is_counted_by_the_hook_and_refused_once_spent() -> None:
    b = RunBudget(2, 200, ORIGIN)
    assert b.on_send("https://status.other.com/x")  # not the provider: never counted
    assert b.take("models") and b.on_send("https://api.example.com/v1/models")  # the ticket taken
    assert b.on_send("https://api.example.com/v1/models")  # no ticket: counted at the lowest priority
    assert not b.on_send("https://api.example.com/v1/models")
    assert (b.sent, b.by_check, b.refused) == (2, {"models": 1, UNPLANNED: 1}, {UNPLANNED: 1})


def test_concurrent_takers_never_pass_the_cap() -> None:
    b = RunBudget(12, 200, ORIGIN)
    b.reserve(PRIORITY_CHECK, 7)
    got: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker(check: str) -> None:
        start.wait()
        for _ in range(50):
            ok = b.take(check, 1)
            with lock:
                got.append(ok)

    threads = [threading.Thread(target=worker, args=(c,)) for c in ("models", "paths", "hardware", "quota") * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got.count(True) == b.sent == 12 and b.output_tokens == 12
    assert b.by_check["models"] >= 7  # the reserve held whatever order the threads ran in


def test_requested_output_tokens_reads_every_providers_spelling() -> None:
    assert requested_output_tokens({"max_completion_tokens": 16}) == 16
    assert requested_output_tokens({"max_tokens": 1}) == 1
    assert requested_output_tokens({"max_output_tokens": 16}) == 16
    assert requested_output_tokens({"generationConfig": {"maxOutputTokens": 16}}) == 16
    assert requested_output_tokens({"options": {"num_predict": 8}}) == 8
    assert requested_output_tokens({"max_tokens": True, "messages": []}) == 0
    assert requested_output_tokens(None) == 0


# ------------------------------------------------------------------ the options


def test_the_options_are_declared_checked_and_defaulted() -> None:
    opts = from_mapping({}, "test")
    assert (opts["run.max_provider_requests"], opts["run.max_output_tokens"]) == (12, 200)
    assert from_mapping({"run.max_provider_requests": 3}, "test")["run.max_provider_requests"] == 3
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(OptionError, match=r"run\.max_provider_requests"):
            from_mapping({"run.max_provider_requests": bad}, "test")
    with pytest.raises(OptionError, match=r"run\.max_output_tokens"):
        from_mapping({"run.max_output_tokens": 0}, "test")


def test_the_context_builds_one_budget_from_the_options_and_its_copies_share_it(home: Path) -> None:
    from dataclasses import replace

    ctx = Context(
        env={},
        home=home,
        cwd=home,
        target=Target("openai", "https://api.example.com/v1", "m"),
        options={"run.max_provider_requests": 4, "run.max_output_tokens": 50},
    )
    b = ctx.provider_budget
    assert (b.max_requests, b.max_output_tokens, b.origin) == (4, 50, ORIGIN)
    assert replace(ctx, deadline=time.monotonic() + 1).provider_budget is b  # the runner's per-check copies


# ------------------------------------------------------------------ end to end: a budget of 3


def _diagnose(sim: Simulator, home: Path, cwd: Path, options: dict[str, Any]) -> Any:
    from capdoctor.run.diagnosis import RunRequest, diagnose

    provider, base_url = client_target(sim, "openai")
    target = Target(provider, base_url, "gpt-5.5", ("gpt-5.4-mini",), "CAPDOCTOR_TEST_KEY", demo_key(provider))
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "SYSTEMROOT")}
    env["CAPDOCTOR_NO_NETWORK_LOOKUPS"] = "1"
    opts = {"status_url": sim.status_url, "discover_logs": False, "models.backoff_s": 0.01, **options}
    return diagnose(RunRequest(target, env, home, cwd, timeout=10.0, options=opts))


def test_a_budget_of_3_holds_and_the_report_says_what_was_not_sent(home: Path, tmp_path: Path) -> None:
    with Simulator("capacity") as sim:
        outcome = _diagnose(sim, home, tmp_path, {"run.max_provider_requests": 3})
        sent = [r for r in sim.requests if not r["path"].startswith("/status")]
    assert len(sent) <= 3, [r["path"] for r in sent]
    budget = outcome.report["budget"]
    assert budget["max_provider_requests"] == 3 and budget["provider_requests"] == len(sent)
    models = next(r for r in outcome.results if r.id == "models")
    assert models.data["requests"] >= 2  # the reserve: the models check was served before the others
    assert "request budget spent: 3 of 3" in models.summary, models.summary
    assert "planned attempt" in models.summary and models.data["budget"]["not_sent"] >= 1
    assert models.data["budget"]["refused"] in models.summary


def test_a_token_budget_of_40_allows_two_generations_of_16(home: Path, tmp_path: Path) -> None:
    with Simulator("capacity") as sim:
        outcome = _diagnose(sim, home, tmp_path, {"run.max_output_tokens": 40})
        asked = sum(requested_output_tokens(r["json"]) for r in sim.requests)
    assert asked == outcome.report["budget"]["output_tokens"] == 32
    models = next(r for r in outcome.results if r.id == "models")
    assert "output-token budget spent: 32 of 40" in models.summary, models.summary


# ------------------------------------------------------------------ through a real proxy


def test_requests_through_a_real_proxy_are_counted(sim: Any, home: Path) -> None:
    """The paths check's client path goes through a real forwarding proxy: what reaches the provider that way
    is counted like the direct path's requests, every one of them."""
    target = Target("openai", sim.base_url("openai"), "gpt-5.5")
    with running_proxy("ok") as proxy:
        ctx = Context(
            env={"CAPDOCTOR_NO_NETWORK_LOOKUPS": "1", "HTTP_PROXY": proxy.url},
            home=home,
            cwd=home,
            target=target,
            deadline=time.monotonic() + 15,
            platform="linux",
        )
        r = PathsCheck().run(ctx)
        through_proxy = [t for _, t in proxy.requests]
    assert any("/v1/models" in t for t in through_proxy), through_proxy
    assert [row["name"] for row in r.data["paths"]] == ["env proxy (HTTP_PROXY)", "direct"]
    budget = ctx.provider_budget
    assert budget.sent == len(sim.requests) >= 3 and budget.by_check == {"paths": budget.sent}


def test_a_client_made_by_the_context_cannot_pass_the_budget_even_through_a_proxy(sim: Any, home: Path) -> None:
    target = Target("openai", sim.base_url("openai"), "gpt-5.5")
    ctx = Context(
        env={},
        home=home,
        cwd=home,
        target=target,
        deadline=time.monotonic() + 15,
        options={"run.max_provider_requests": 1, "status_url": sim.status_url},
    )
    with running_proxy("ok") as proxy, ctx.http_client(timeout=5.0, proxy=proxy.url) as client:
        assert client.get(sim.base_url("openai") + "/models").status_code == 200  # counted by the hook
        with pytest.raises(BudgetSpent, match="request budget spent: 1 of 1"):
            client.get(sim.base_url("openai") + "/models")
        status = client.get(sim.status_url + "/api/v2/summary.json")  # the status page is not the provider
        forwarded = [t for _, t in proxy.requests if "/models" in t]
    assert status.status_code == 200 and len(forwarded) == 1 and ctx.provider_budget.sent == 1
    assert isinstance(BudgetSpent("x"), httpx.RequestError)  # callers' ordinary error handling reports it


def test_a_path_the_budget_refuses_is_named_not_measured(sim: Any, home: Path) -> None:
    target = Target("openai", sim.base_url("openai"), "gpt-5.5")
    ctx = Context(
        env={"CAPDOCTOR_NO_NETWORK_LOOKUPS": "1"},
        home=home,
        cwd=home,
        target=target,
        deadline=time.monotonic() + 15,
        platform="linux",
        options={"run.max_provider_requests": 4},
    )
    ctx.provider_budget.reserve(PRIORITY_CHECK, 4)  # the models check holds it all
    r = PathsCheck().run(ctx)
    assert sim.requests == [] and r.status.value == "skip"
    assert r.data["not_measured"] == ["direct"]
    assert "no path measured: request budget: 0 of 4 sent, the rest held for the models check" in r.summary
    assert "1 planned path request not sent" in r.summary
