"""The quota check: headers the probes saw, Gemini quota bodies and OpenRouter's key endpoint."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from capdoctor.checks.models import ModelsCheck
from capdoctor.checks.quota import QuotaCheck, assess, human_duration, openrouter_key
from capdoctor.model import Cause, Status, Strength
from capdoctor.probes.ratelimit import parse_headers
from capdoctor.run.context import Context, Target
from capdoctor.run.runner import run_checks

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def test_exhausted_window_on_a_429_is_strong_quota() -> None:
    rl = parse_headers(
        {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "20s",
            "retry-after": "20",
        },
        NOW,
    )
    status, summary, findings, data = assess([(429, rl)])
    assert status is Status.FAIL and "0/500" in summary and "20 s" in summary
    assert findings[0].cause is Cause.QUOTA and findings[0].strength is Strength.STRONG
    assert data["retry_after_s"] == 20


def test_headroom_argues_against_quota() -> None:
    rl = parse_headers({"x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "29980"}, NOW)
    status, _, findings, _ = assess([(503, rl)])
    assert status is Status.PASS and findings[0].strength is Strength.AGAINST


def test_later_responses_win() -> None:
    early = parse_headers({"x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "0"}, NOW)
    late = parse_headers({"x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "4"}, NOW)
    status, _, _, _ = assess([(429, early), (200, late)])
    assert status is Status.PASS


def test_azure_placeholders_are_unknown() -> None:
    rl = parse_headers({"x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "-1"}, NOW)
    status, summary, findings, _ = assess([(200, rl)])
    assert status is Status.WARN and "unknown" in summary and findings[0].strength is Strength.CONTEXT


def test_no_headers_is_a_skip() -> None:
    status, _, findings, _ = assess([(200, parse_headers({}, NOW))])
    assert status is Status.SKIP and not findings


def test_openrouter_key_bodies() -> None:
    from capdoctor.simulator.replies import OPENROUTER_KEY_EMPTY, OPENROUTER_KEY_OK

    empty, data = openrouter_key({"data": OPENROUTER_KEY_EMPTY})
    assert empty[0].strength is Strength.STRONG and data["limit_remaining"] == 0
    ok, _ = openrouter_key({"data": OPENROUTER_KEY_OK})
    assert ok[0].strength is Strength.CONTEXT
    left, _ = openrouter_key({"data": {**OPENROUTER_KEY_OK, "limit": 10, "limit_remaining": 7}})
    assert left[0].strength is Strength.AGAINST
    assert openrouter_key({"nope": 1}) == ([], {})


@pytest.mark.parametrize(
    ("s", "text"),
    [(0.006, "6 ms"), (1, "1 s"), (360, "6 min"), (7500, "2 h 5 min"), (90000, "1 d 1 h"), (None, "unknown")],
)
def test_human_duration(s: float | None, text: str) -> None:
    assert human_duration(s) == text


def run_pair(base_url: str, provider: str, model: str, home: Path) -> dict[str, Any]:
    target = Target(
        provider=provider,
        base_url=base_url,
        model=model,
        api_key="sk-test-fake-quota",
        api_key_env="OPENROUTER_API_KEY",
    )
    c = Context(
        env={},
        home=home,
        cwd=home,
        target=target,
        deadline=time.monotonic() + 20,
        options={"models.backoff_s": 0.01, "models.max_attempts": 1},
    )
    results = run_checks([ModelsCheck(), QuotaCheck()], c)
    return {r.id: r for r in results}


@pytest.mark.scenario("rate-limit")
def test_reads_the_headers_the_models_probes_saw(sim: Any, home: Path) -> None:
    got = run_pair(sim.base_url("anthropic"), "anthropic", "claude-opus-4-7", home)
    quota = got["quota"]
    assert quota.status is Status.FAIL
    assert any(w["family"] == "anthropic" and w["remaining"] == 0 for w in quota.data["windows"])


@pytest.mark.scenario("quota")
def test_gemini_quota_failure_body(sim: Any, home: Path) -> None:
    got = run_pair(sim.base_url("gemini"), "gemini", "gemini-2.5-pro", home)
    quota = got["quota"]
    assert quota.status is Status.FAIL and "limit 0" in quota.summary
    assert quota.data["google_quota"][0]["limit"] == 0


@pytest.mark.scenario("openrouter-credits")
def test_openrouter_key_endpoint(sim: Any, home: Path) -> None:
    got = run_pair(sim.base_url("openrouter"), "openrouter", "openai/gpt-5.5", home)
    quota = got["quota"]
    assert quota.status is Status.FAIL and quota.data["openrouter_key"]["limit_remaining"] == 0
    assert any(r["path"].endswith("/key") for r in sim.requests)
    assert "sk-test-fake-quota" not in str(quota.to_dict())


def test_skips_without_the_models_check(home: Path) -> None:
    target = Target(provider="openai", base_url="http://127.0.0.1:9/v1", model="m")
    c = Context(env={}, home=home, cwd=home, target=target)
    result = QuotaCheck().run(c)
    assert result.status is Status.SKIP and "models" in result.summary


@pytest.mark.scenario("rate-limit")
@pytest.mark.parametrize("no_inference", [False, True])
def test_run_alone_the_quota_check_sends_the_smallest_probe_it_needs_and_says_so(
    sim: Any, home: Path, no_inference: bool
) -> None:
    """Issue 35.5: `capdoctor check quota` said "no probe responses to read (the models check did not run)".
    Alone, it sends one request of its own (a generation, or the model list under --no-inference)."""
    target = Target("openai", sim.base_url("openai"), "gpt-5.5", api_key="sk-test-quota-alone-0000")
    ctx = Context(env={}, home=home, cwd=home, target=target, no_inference=no_inference, selected=frozenset({"quota"}))
    result = QuotaCheck().run(ctx)
    sent = [r["method"] for r in sim.requests]
    assert sent == (["GET"] if no_inference else ["POST"]), sent
    assert "this check sent itself: the models check did not run" in result.summary
    if not no_inference:
        assert result.status is Status.FAIL and any(f.cause is Cause.QUOTA for f in result.findings)


@pytest.mark.scenario("rate-limit")
def test_in_a_run_with_the_models_check_the_quota_check_sends_nothing_of_its_own(sim: Any, home: Path) -> None:
    target = Target("openai", sim.base_url("openai"), "gpt-5.5", api_key="sk-test-quota-alone-0000")
    ctx = Context(env={}, home=home, cwd=home, target=target, selected=frozenset({"quota", "models"}))
    result = QuotaCheck().run(ctx)  # the models result is not there (overran): nothing is sent in its place
    assert sim.requests == [] and result.status is Status.SKIP
