"""Rate-limit header and retry-hint parsing: every reset format the providers use (pure functions)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capdoctor.probes.ratelimit import (
    parse_duration,
    parse_google_quota,
    parse_headers,
    parse_instant,
    parse_retry_after,
    retry_hint_in_body,
)

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("6m0s", 360.0),
        ("12ms", 0.012),
        ("1s", 1.0),
        ("0s", 0.0),
        ("1h2m3.5s", 3723.5),
        ("20", 20.0),
        ("1.204566179s", 1.204566179),
        ("59s", 59.0),
        ("250us", 0.00025),
        (" 2m ", 120.0),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "6x", "m5", "1s2", "-"])
def test_unreadable_durations_are_none(text: str) -> None:
    assert parse_duration(text) is None


@given(h=st.integers(0, 48), m=st.integers(0, 59), s=st.integers(0, 59), ms=st.integers(0, 999))
def test_duration_composition(h: int, m: int, s: int, ms: int) -> None:
    text = "".join(f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s"), (ms, "ms")) if v) or "0s"
    assert parse_duration(text) == pytest.approx(h * 3600 + m * 60 + s + ms / 1000)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2026-11-30T12:00:30Z", 30.0),  # Anthropic RFC 3339
        ("2026-11-30T13:00:30+01:00", 30.0),  # with an offset
        ("2026-11-30T12:00:30.500Z", 30.5),
        (str(int(NOW.timestamp()) + 3600), 3600.0),  # Codex reset-at: unix seconds
        (str(int(NOW.timestamp() * 1000) + 5000), 5.0),  # OpenRouter X-RateLimit-Reset: epoch ms
        ("Mon, 30 Nov 2026 12:01:00 GMT", 60.0),  # HTTP-date
        ("2026-11-30T11:00:00Z", 0.0),  # already passed: clamped
    ],
)
def test_instants(text: str, seconds: float) -> None:
    assert parse_instant(text, NOW) == pytest.approx(seconds)


def test_unreadable_instant_is_none() -> None:
    assert parse_instant("next tuesday", NOW) is None


def test_retry_after_precedence_and_forms() -> None:
    assert parse_retry_after({"Retry-After-Ms": "1500", "retry-after": "9"}, NOW) == pytest.approx(1.5)
    assert parse_retry_after({"retry-after": "2.5"}, NOW) == pytest.approx(2.5)
    later = (NOW + timedelta(seconds=90)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after({"Retry-After": later}, NOW) == pytest.approx(90)
    assert parse_retry_after({}, NOW) is None


def test_retry_hint_in_gemini_bodies() -> None:
    assert retry_hint_in_body('{"@type": "x.RetryInfo", "retryDelay": "26s"}') == pytest.approx(26)
    assert retry_hint_in_body("limit: 0, model: gemini-2.5-pro\nPlease retry in 20.04466179s.") == pytest.approx(
        20.04466179
    )
    assert retry_hint_in_body("nothing here") is None


def test_openai_headers_headroom() -> None:
    rl = parse_headers(
        {
            "x-ratelimit-limit-requests": "10000",
            "x-ratelimit-remaining-requests": "9999",
            "x-ratelimit-reset-requests": "6ms",
            "x-ratelimit-limit-tokens": "30000000",
            "x-ratelimit-remaining-tokens": "29999988",
            "x-ratelimit-reset-tokens": "6m0s",
        },
        NOW,
    )
    by = {(w.family, w.name): w for w in rl.windows}
    assert by[("openai", "requests")].remaining == 9999
    assert by[("openai", "tokens")].reset_s == pytest.approx(360)
    assert rl.headroom and not rl.exhausted


def test_openai_exhausted_with_retry_after() -> None:
    rl = parse_headers(
        {
            "retry-after": "1",
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "1s",
        },
        NOW,
    )
    assert [w.name for w in rl.exhausted] == ["requests"]
    assert rl.retry_after_s == 1.0
    assert not rl.headroom


def test_anthropic_rfc3339_resets() -> None:
    rl = parse_headers(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "2026-11-30T12:00:01Z",
            "anthropic-ratelimit-output-tokens-limit": "400000",
            "anthropic-ratelimit-output-tokens-remaining": "400000",
        },
        NOW,
    )
    by = {w.name: w for w in rl.windows}
    assert by["requests"].exhausted and by["requests"].reset_s == pytest.approx(1)
    assert by["output-tokens"].has_headroom


def test_codex_used_percent() -> None:
    reset = str(int(NOW.timestamp()) + 7200)
    rl = parse_headers(
        {
            "x-codex-primary-used-percent": "100",
            "x-codex-primary-reset-at": reset,
            "x-codex-secondary-used-percent": "38",
        },
        NOW,
    )
    by = {w.name: w for w in rl.windows}
    assert by["primary"].exhausted and by["primary"].reset_s == pytest.approx(7200)
    assert not by["secondary"].exhausted


def test_azure_placeholders_are_unknown_not_exhausted() -> None:
    rl = parse_headers(
        {"x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "-1", "x-ratelimit-reset-tokens": "0"}, NOW
    )
    assert rl.unknown_only and not rl.exhausted and not rl.headroom


def test_openrouter_generic_headers_and_unified_status() -> None:
    rl = parse_headers(
        {"X-RateLimit-Limit": "50", "X-RateLimit-Remaining": "0", "anthropic-ratelimit-unified-status": "Rejected"}, NOW
    )
    assert rl.exhausted and rl.unified_status == "rejected"


def test_no_headers_no_windows() -> None:
    rl = parse_headers({"content-type": "application/json"}, NOW)
    assert rl.windows == () and rl.retry_after_s is None and not rl.headroom


def test_google_quota_failure() -> None:
    import json

    from capdoctor.simulator.replies import GEMINI_QUOTA, GEMINI_RATE

    zero, delay = parse_google_quota(json.dumps(GEMINI_QUOTA.body))
    assert zero[0].value == 0 and zero[0].quota_id.endswith("FreeTier") and delay == 20
    five, delay = parse_google_quota(json.dumps(GEMINI_RATE.body))
    assert five[0].value == 5 and delay == 1
    assert parse_google_quota("<html>") == ([], None)
    assert parse_google_quota('{"error": {"code": 429}}') == ([], None)
