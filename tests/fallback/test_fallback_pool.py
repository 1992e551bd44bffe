"""The fallback pool from a report: ranking, what counts as answered, and the reports that give no pool."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from capdoctor.fallback.default_format import fallback_command, report_client
from capdoctor.fallback.pool import Candidate, NoFallback, ReportError, pool_from_report, provenance, rank
from capdoctor.target.clientuse import ClientInUse
from tests.support.fallback_support import attempt, model_run, report


def cand(model: str, answered: int, attempts: int, latency: int | None, provider: str = "openai") -> Candidate:
    return Candidate(model, provider, "alternative", "ok", answered, attempts, latency)


def test_rank_orders_by_success_then_same_provider_then_latency() -> None:
    ranked = rank(
        [
            cand("slow-sure", 3, 3, 900),
            cand("fast-sure", 3, 3, 120),
            cand("flaky-fast", 1, 3, 50),
            cand("other-provider-faster", 3, 3, 40, provider="anthropic"),
        ],
        "openai",
    )
    assert [c.model for c in ranked] == ["fast-sure", "slow-sure", "other-provider-faster", "flaky-fast"]


def test_rank_is_stable_on_ties_and_puts_unknown_latency_last() -> None:
    ranked = rank([cand("b", 1, 1, 100), cand("a", 1, 1, 100), cand("c", 1, 1, None)], "openai")
    assert [c.model for c in ranked] == ["a", "b", "c"]


def test_pool_reads_answered_attempts_latency_and_failures() -> None:
    pool = pool_from_report(
        report(
            model_run(
                "gpt-5.5", "primary", attempt(False), attempt(False), attempt(False, status=529, signature="sig.x")
            ),
            model_run("gpt-5.4-mini", "alternative", attempt(True, 300), attempt(True, 100), attempt(True, 200)),
            model_run("gpt-5-mini", "alternative", attempt(True, 50), attempt(False)),
            model_run("gpt-4.1", "alternative", attempt(False)),
        )
    )
    assert pool.primary.model == "gpt-5.5" and pool.primary.answered == 0
    assert pool.primary.failure == "HTTP 529 sig.x"
    assert [c.model for c in pool.alternatives] == ["gpt-5.4-mini", "gpt-5-mini"]  # 3/3 beats 1/2, however fast
    assert pool.alternatives[0].latency_ms == 200  # the median of the answered attempts
    assert [c.model for c in pool.failed] == ["gpt-4.1"]
    assert pool.models == ["gpt-5.5", "gpt-5.4-mini", "gpt-5-mini"]
    assert pool.fastest.model == "gpt-5-mini" and pool.best.model == "gpt-5.4-mini"
    assert pool.key_env == "OPENAI_API_KEY"  # the provider's own variable when the report names none
    assert pool.created == "2026-11-20T10:00:00+00:00"


def test_provenance_says_what_answered_when_and_from_capdoctor() -> None:
    pool = pool_from_report(
        report(
            model_run("gpt-5.5", "primary", attempt(False)), model_run("gpt-5.4-mini", "alternative", attempt(True, 42))
        )
    )
    text = "\n".join(provenance(pool))
    assert "capdoctor 0.1.0" in text and "2026-11-20T10:00:00+00:00" in text and "verdict: capacity" in text
    assert "gpt-5.4-mini 1/1 answered, 42 ms" in text and "gpt-5.5 0/1 answered (HTTP 503" in text


def test_the_key_variable_named_in_the_report_wins() -> None:
    pool = pool_from_report(
        report(
            model_run("claude-opus-4-7", "primary", attempt(False)),
            model_run("claude-haiku-4-5", "alternative", attempt(True)),
            provider="anthropic",
            api_key_env="ANTHROPIC_AUTH_TOKEN",
        )
    )
    assert pool.key_env == "ANTHROPIC_AUTH_TOKEN" and pool.provider == "anthropic"


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        (report(model_run("gpt-5.5", "primary", attempt(True))), "gpt-5.5 answered and no alternative was probed"),
        (report(model_run("gpt-5.5", "primary", attempt(False))), "name one with --alt-model"),
        (
            report(
                model_run("gpt-5.5", "primary", attempt(False)),
                model_run("gpt-5.4-mini", "alternative", attempt(False)),
            ),
            "no alternative answered (gpt-5.4-mini 0/1 answered (HTTP 503",
        ),
        (report(), "nothing was probed"),
        ({**report(), "checks": []}, "no `models` check"),
        ({**report(), "target": None}, "no target"),
    ],
)
def test_reports_without_a_pool_say_why(doc: dict[str, Any], words: str) -> None:
    with pytest.raises(NoFallback) as info:
        pool_from_report(doc)
    assert words in str(info.value)


@pytest.mark.parametrize(
    "doc",
    [
        [],
        "text",
        {"schema": "other/v1"},
        {"schema": "capdoctor/report-v1"},
        {**report(), "target": {"provider": "openai"}},
        {**report(), "checks": [{"id": "models", "data": {"models": [{"attempts": []}]}}]},
    ],
)
def test_documents_that_are_not_reports_are_report_errors(doc: Any) -> None:
    with pytest.raises(ReportError):
        pool_from_report(doc)


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        (ClientInUse("codex", "Codex CLI"), "codex"),
        (ClientInUse("claude", "Claude Code"), "claude-code"),
        (ClientInUse("sdk", "OpenAI Python SDK", package="openai"), "openai-python"),
        (ClientInUse("sdk", "Anthropic Python SDK", package="anthropic"), "anthropic-python"),
        (ClientInUse("sdk", "Google Gen AI SDK", package="google-genai"), "litellm"),  # no Gemini snippet
        (ClientInUse("gemini", "Gemini CLI"), "litellm"),
        (ClientInUse("unknown", "not identified"), "litellm"),
    ],
)
def test_the_default_format_is_the_one_the_client_in_use_loads(client: ClientInUse, expected: str) -> None:
    assert client.fallback_format == expected


def test_a_saved_report_names_its_client_else_its_target_does() -> None:
    saved = {
        "client": {"id": "sdk", "name": "Anthropic Python SDK", "package": "anthropic"},
        "target": {"provider": "anthropic", "client": "claude"},
    }
    assert report_client(saved).fallback_format == "anthropic-python"
    assert report_client({"target": {"provider": "anthropic", "client": "claude"}}).fallback_format == "claude-code"
    assert report_client({"target": {"provider": "openai"}}).fallback_format == "litellm"


def test_fallback_command_repeats_the_target_flags_the_user_gave() -> None:
    from capdoctor.run.context import Target

    target = Target(
        provider="openai",
        base_url="http://127.0.0.1:9/v1",
        model="gpt 5.5",
        alt_models=("gpt-5.4-mini", "gpt-5-mini"),
        api_key_env="OPENAI_API_KEY",
        sources={
            "provider": "flag --provider",
            "base_url": "env OPENAI_BASE_URL",
            "model": "flag --model",
            "alt_models": "flag --alt-model",
            "key": "env OPENAI_API_KEY",
        },
    )
    assert fallback_command(target) == (
        "capdoctor fallback --format litellm --provider openai --model "
        "'gpt 5.5' --alt-model gpt-5.4-mini --alt-model gpt-5-mini"
    )
    codex = replace(target, client="codex", sources={"model": "~/.codex/config.toml"})
    assert fallback_command(codex) == "capdoctor fallback --format codex"
