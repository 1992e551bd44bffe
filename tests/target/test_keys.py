"""The key first: its variable, whether it is set, where its name came from and its shape, never its value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capdoctor.checks.models import classify_exchange
from capdoctor.checks.models_rules import Evidence, judge
from capdoctor.model import Cause, Strength
from capdoctor.probes.http_call import Exchange
from capdoctor.probes.http_probe import Attempt, ModelRun
from capdoctor.providers.base import ErrorInfo
from capdoctor.providers.catalog import adapter_for
from capdoctor.run.context import Target
from capdoctor.target.discovery import DiscoveryFlags, describe, discover
from capdoctor.target.keys import describe_key, problem_text, shape_text
from tests.conftest import run_cli

OPENAI = "https://api.openai.com/v1"
ANTHROPIC_KEY = "sk-ant-api03-" + "Q" * 40
OPENAI_KEY = "sk-proj-" + "Z" * 40


def target(
    provider: str = "openai",
    base_url: str = OPENAI,
    key: str | None = None,
    env: str | None = None,
    sources: dict[str, str] | None = None,
) -> Target:
    return Target(provider=provider, base_url=base_url, model="m", api_key=key, api_key_env=env, sources=sources or {})


def test_a_named_variable_that_is_not_set() -> None:
    facts = describe_key(target(env="MY_KEY", sources={"api_key_env": "flag --api-key-env"}), {})
    assert (facts.variable, facts.state, facts.problem, facts.explicit) == ("MY_KEY", "unset", "unset", True)
    assert facts.name_source == "flag --api-key-env"
    text = problem_text(facts)
    assert "MY_KEY" in text and "flag --api-key-env" in text and "OPENAI_API_KEY" not in text


def test_nothing_named_and_nothing_set_names_the_providers_variables() -> None:
    facts = describe_key(target("anthropic", "https://api.anthropic.com"), {})
    assert facts.variable is None and facts.problem == "unset" and not facts.explicit
    assert facts.names() == "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"


@pytest.mark.parametrize(
    ("value", "state", "problem"),
    [
        ("", "empty", "empty"),
        ("   ", "whitespace", "whitespace"),
        (OPENAI_KEY + "\n", "set", "whitespace"),
        ("https://api.openai.com/v1", "set", "template"),
        ("${OPENAI_KEY}", "set", "template"),
    ],
)
def test_empty_blank_and_templated_values(value: str, state: str, problem: str) -> None:
    t = target(key=value or None, env="OPENAI_API_KEY")
    facts = describe_key(t, {"OPENAI_API_KEY": value})
    assert (facts.state, facts.problem) == (state, problem)


def test_an_empty_default_variable_is_named() -> None:
    facts = describe_key(target(), {"OPENAI_API_KEY": ""})
    assert (facts.variable, facts.state, facts.length) == ("OPENAI_API_KEY", "empty", 0)


def test_shape_is_length_and_prefix_family_never_the_value() -> None:
    facts = describe_key(target(key=OPENAI_KEY, env="OPENAI_API_KEY"), {"OPENAI_API_KEY": OPENAI_KEY})
    assert facts.problem is None and facts.present
    assert (facts.length, facts.family, facts.prefix) == (len(OPENAI_KEY), "openai", "sk-proj-")
    assert shape_text(facts) == f"{len(OPENAI_KEY)} characters, openai prefix sk-proj-"
    assert "Z" * 8 not in json.dumps(facts.to_dict())


def test_another_providers_key_at_the_providers_own_host_is_foreign() -> None:
    facts = describe_key(target(key=ANTHROPIC_KEY, env="OPENAI_API_KEY"), {"OPENAI_API_KEY": ANTHROPIC_KEY})
    assert (facts.problem, facts.family, facts.prefix) == ("foreign", "anthropic", "sk-ant-")
    assert "anthropic key" in problem_text(facts) and "sk-ant-…" in problem_text(facts)
    relayed = describe_key(target(base_url="https://relay.example/v1", key=ANTHROPIC_KEY, env="OPENAI_API_KEY"), {})
    assert relayed.problem is None  # a relay may take any key: its shape is not judged there
    assert describe_key(target("openai-compatible", "http://127.0.0.1:8000/v1", key=ANTHROPIC_KEY), {}).problem is None


# ------------------------------------------------------------------ the key wins over the 401 it causes


def _refused(status: int = 401) -> Exchange:
    body = json.dumps(
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}
    )
    return Exchange(
        "models",
        f"{OPENAI}/models",
        "http_error",
        status,
        {},
        body,
        ErrorInfo("invalid_api_key", "invalid_request_error", "Incorrect API key provided"),
        "HTTP 401",
    )


def _evidence(
    key_target: Target, env: dict[str, str], listing: Exchange, runs: list[ModelRun] | None = None
) -> Evidence:
    return Evidence(
        key_target,
        adapter_for(key_target.provider),
        listing,
        None,
        runs or [],
        [listing],
        False,
        False,
        classify_exchange(listing),
        describe_key(key_target, env),
    )


def test_a_refused_foreign_key_is_a_client_finding_and_the_401_is_context() -> None:
    t = target(key=ANTHROPIC_KEY, env="OPENAI_API_KEY")
    gen = _refused()
    run = ModelRun("m", "primary", [Attempt(gen, classify_exchange(gen))])
    _, summary, findings = judge(_evidence(t, {}, _refused(), [run]))
    client = [f for f in findings if f.cause is Cause.CLIENT and f.strength is Strength.STRONG]
    assert client and "anthropic key" in client[0].message and client[0].next_steps[0].command == "capdoctor config"
    assert not [f for f in findings if f.cause is Cause.ACCOUNT and f.strength is not Strength.CONTEXT]
    assert "the key in OPENAI_API_KEY is anthropic's, not openai's" in summary


def test_an_accepted_key_of_unusual_shape_is_not_blamed() -> None:
    ok = Exchange("models", f"{OPENAI}/models", "ok", 200, {}, "", json_body={"data": []})
    _, _, findings = judge(_evidence(target(key=ANTHROPIC_KEY, env="OPENAI_API_KEY"), {}, ok))
    assert not [f for f in findings if f.cause is Cause.CLIENT and f.strength is not Strength.CONTEXT]


def test_a_missing_default_key_is_only_blamed_when_the_provider_refuses() -> None:
    ok = Exchange("models", "http://127.0.0.1:9/v1/models", "ok", 200, {}, "", json_body={"data": []})
    local = target("openai-compatible", "http://127.0.0.1:9/v1")
    _, _, findings = judge(_evidence(local, {}, ok))
    assert not [f for f in findings if f.strength is Strength.STRONG]
    _, _, refused = judge(_evidence(target(), {}, _refused()))
    assert any(
        f.cause is Cause.CLIENT and f.strength is Strength.STRONG and "OPENAI_API_KEY" in f.message for f in refused
    )


# ------------------------------------------------------------------ discovery and `capdoctor config`


def test_describe_names_the_variable_the_flag_named(home: Path) -> None:
    t = discover(DiscoveryFlags(provider="openai", api_key_env="MY_KEY"), {}, home, home, "linux")
    assert t is not None
    info = describe(t, {}, home, home, "linux")
    no_key = next(f for f in info["findings"] if f["kind"] == "no_key")
    assert (
        no_key["variable"] == "MY_KEY" and "MY_KEY" in no_key["message"] and "OPENAI_API_KEY" not in no_key["message"]
    )
    assert info["key"]["name_source"] == "flag --api-key-env" and info["key"]["state"] == "unset"
    assert info["settings"]["key"]["value"] == "unset (MY_KEY)"


def test_config_command_names_the_right_variable_and_never_the_value() -> None:
    proc = run_cli("config", "--json", "--provider", "openai", "--api-key-env", "MY_KEY")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["key"]["variable"] == "MY_KEY" and shown["key"]["state"] == "unset"
    assert any("MY_KEY" in f["message"] for f in shown["findings"])
    proc = run_cli("config", "--json", "--provider", "openai", env={"OPENAI_API_KEY": ANTHROPIC_KEY})
    shown = json.loads(proc.stdout)
    assert ANTHROPIC_KEY not in proc.stdout and "Q" * 12 not in proc.stdout
    assert shown["key"]["family"] == "anthropic" and shown["key"]["problem"] == "foreign"
    assert any(f["kind"] == "key_shape" for f in shown["findings"])
