"""The models check's judgement (`checks.models_rules`) on hand-built runs: no server, no clock.

Each case builds the `Evidence` a probe would have gathered — exchanges shaped like real provider answers,
classified by the real signature table — and pins the status, the (cause, strength) pairs that must and
must not appear, and a piece of the summary. Contradictory and edge cases are in the table too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from capdoctor.checks.models import classify_exchange
from capdoctor.checks.models_rules import (
    Evidence,
    attempt_cause,
    attempt_label,
    exchange_label,
    judge,
    key_level,
    request_ids,
)
from capdoctor.model import Cause, Finding, Status, Strength
from capdoctor.probes.http_call import Exchange
from capdoctor.probes.http_probe import Attempt, ModelRun
from capdoctor.providers.base import ErrorInfo
from capdoctor.providers.catalog import adapter_for
from capdoctor.run.context import Target

OPENAI = "https://api.openai.com/v1"
RELAY = "https://relay.example.net/v1"
LOOPBACK = "http://127.0.0.1:9"

Err = tuple[int, str | None, str | None, str]
OVERLOADED: Err = (
    503,
    "server_is_overloaded",
    "service_unavailable_error",
    "Our servers are currently overloaded. Please try again later.",
)
QUOTA: Err = (
    429,
    "insufficient_quota",
    "insufficient_quota",
    "You exceeded your current quota, please check your plan and billing details.",
)
AUTH: Err = (401, "invalid_api_key", "invalid_request_error", "Incorrect API key provided")
NOT_FOUND: Err = (
    404,
    "model_not_found",
    "invalid_request_error",
    "The model `gpt-5.5` does not exist or you do not have access to it.",
)
BARE_500: Err = (500, None, None, "boom")

# ------------------------------------------------------------------ building what a probe would have seen


def ok(latency_ms: int = 250) -> Exchange:
    """A decisive success."""
    return Exchange(
        "responses", f"{OPENAI}/responses", "ok", 200, {"x-request-id": "req_ok"}, "", latency_ms=latency_ms
    )


def http(err: Err, *, kind: str = "http_error", headers: dict[str, str] | None = None, rid: str = "req_1") -> Exchange:
    """A provider error: the OpenAI error object for `err`, with request ids in the headers."""
    status, code, type_, message = err
    body = json.dumps({"error": {"message": message, "type": type_, "code": code}})
    hdrs = {"x-request-id": rid, "cf-ray": "8f00-LAX", **(headers or {})}
    return Exchange(
        "responses", f"{OPENAI}/responses", kind, status, hdrs, body, ErrorInfo(code, type_, message), f"HTTP {status}"
    )


def stream_error(err: Err) -> Exchange:
    """The same error arriving inside an HTTP 200 stream."""
    ex = http(err, kind="stream_error")
    return Exchange(ex.route, ex.url, ex.kind, 200, ex.headers, ex.body, ex.error, "failure event")


def conn(kind: str, base: str = OPENAI) -> Exchange:
    """No HTTP answer at all (refused, timeout, reset, tls, connect)."""
    return Exchange("responses", f"{base}/responses", kind, detail=f"ConnectError: {kind}")


def html(status: int = 403, route: str = "responses") -> Exchange:
    """A block page where JSON was expected."""
    return Exchange(
        route,
        f"{OPENAI}/{route}",
        "html",
        status,
        {"content-type": "text/html"},
        "<!DOCTYPE html><html><title>Attention Required! | Cloudflare</title></html>",
        detail=f"HTML where JSON was expected (HTTP {status})",
    )


def cut() -> Exchange:
    """A stream that broke after its first output."""
    return Exchange("responses", f"{OPENAI}/responses", "cut", 200, {}, "", detail="stream cut")


def undecided() -> Exchange:
    """A 2xx that never showed output within the bounds (no cause of its own)."""
    return Exchange("responses", f"{OPENAI}/responses", "undecided", 200, {}, "", detail="HTTP 200 without output")


def listing_ok(*models: str) -> Exchange:
    """The model list answered."""
    return Exchange("models", f"{OPENAI}/models", "ok", 200, {}, "", json_body={"data": [{"id": m} for m in models]})


def listing_err(err: Err) -> Exchange:
    """The model list refused."""
    ex = http(err)
    return Exchange("models", f"{OPENAI}/models", ex.kind, ex.status, ex.headers, ex.body, ex.error, ex.detail)


def listing_raw(kind: str, status: int | None, body: str = "") -> Exchange:
    """The model list with any kind, status and body (unreadable, HTML, missing)."""
    return Exchange("models", f"{OPENAI}/models", kind, status, {}, body, detail=f"HTTP {status}")


def run(model: str, *exchanges: Exchange, role: str = "alternative", stop: str = "") -> ModelRun:
    """A model's attempts, each classified by the real signature table as the probe does."""
    return ModelRun(model, role, [Attempt(ex, None if ex.ok else classify_exchange(ex)) for ex in exchanges], stop)


def primary(model: str, *exchanges: Exchange, stop: str = "") -> ModelRun:
    """The primary model's run."""
    return run(model, *exchanges, role="primary", stop=stop)


def evidence(
    *runs: ModelRun,
    listing: Exchange | None = None,
    listed: list[str] | None = None,
    base_url: str = OPENAI,
    provider: str = "openai",
    model: str | None = None,
    headroom: bool = False,
    no_inference: bool = False,
    source: str = "flag --base-url",
    listing_match: Any = "classify",
) -> Evidence:
    """The Evidence the check would hand to `judge` (exchanges in the order the prober records them)."""
    target = Target(
        provider=provider,
        base_url=base_url,
        model=model or (runs[0].model if runs else "gpt-5.5"),
        sources={"base_url": source},
    )
    exchanges = ([listing] if listing is not None else []) + [a.exchange for r in runs for a in r.attempts]
    if listing_match == "classify":
        listing_match = classify_exchange(listing) if listing is not None and not listing.ok else None
    return Evidence(
        target, adapter_for(provider), listing, listed, list(runs), exchanges, no_inference, headroom, listing_match
    )


LIST = ["gpt-5.5", "gpt-5.4-mini", "gpt-5-mini"]

# ------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Case:
    """One judgement: the evidence, the status, pairs that must / must not appear, and a summary piece."""

    id: str
    ev: Callable[[], Evidence]
    status: Status
    has: tuple[tuple[Cause, Strength], ...] = ()
    lacks: tuple[tuple[Cause, Strength], ...] = ()
    summary: str = ""
    extra: Callable[[list[Finding]], None] | None = field(default=None, compare=False)


C, S = Cause, Strength
CAP_STRONG, CAP_MOD, CAP_WEAK, CAP_AGAINST = (
    (C.CAPACITY, S.STRONG),
    (C.CAPACITY, S.MODERATE),
    (C.CAPACITY, S.WEAK),
    (C.CAPACITY, S.AGAINST),
)
ACC_STRONG, ACC_MOD, ACC_WEAK = (C.ACCOUNT, S.STRONG), (C.ACCOUNT, S.MODERATE), (C.ACCOUNT, S.WEAK)
NET_STRONG, NET_MOD = (C.NETWORK, S.STRONG), (C.NETWORK, S.MODERATE)
CLI_STRONG, CLI_MOD, CLI_CONTEXT = (C.CLIENT, S.STRONG), (C.CLIENT, S.MODERATE), (C.CLIENT, S.CONTEXT)
QUOTA_STRONG = (C.QUOTA, S.STRONG)


def _switch_step(findings: list[Finding]) -> None:
    strong = next(f for f in findings if f.strength is S.STRONG)
    assert strong.data["alternative"] == "gpt-5.4-mini"
    assert strong.data["request_id"] == "req_1" and strong.data["cf_ray"] == "8f00-LAX"
    assert strong.next_steps[0].command == "codex --model gpt-5.4-mini"


def _alt_model_step(findings: list[Finding]) -> None:
    cap = next(f for f in findings if (f.cause, f.strength) == CAP_MOD)
    assert "no alternative model could be compared" in cap.message
    assert "--alt-model" in cap.next_steps[0].text


def _unset_step(findings: list[Finding]) -> None:
    from capdoctor.verdict.weighing import refused_locally

    (local,) = [f for f in findings if (f.cause, f.strength) == NET_STRONG]
    assert refused_locally(local)  # the verdict's `local_refused` reading, as the paths check's (#34)
    assert "env ANTHROPIC_BASE_URL" in local.message
    assert local.next_steps[-1].command == "unset ANTHROPIC_BASE_URL"


def _close_match(findings: list[Finding]) -> None:
    client = next(f for f in findings if f.cause is C.CLIENT and f.strength in (S.STRONG, S.MODERATE))
    assert "gpt-5.5" in client.next_steps[0].text  # difflib's close match for the typo


def _one_finding_per_signature(findings: list[Finding]) -> None:
    quota = [f for f in findings if f.cause is C.QUOTA]
    assert len(quota) == 1 and "gpt-5.4-mini, gpt-5.5" in quota[0].message  # both models, one finding


CASES = [
    # --- the switch-the-model rule
    Case(
        "primary capacity, alternative answers → capacity strong",
        lambda: evidence(
            primary("gpt-5.5", http(OVERLOADED), http(OVERLOADED), http(OVERLOADED)),
            run("gpt-5.4-mini", ok()),
            listing=listing_ok(*LIST),
            listed=LIST,
        ),
        Status.FAIL,
        has=(CAP_STRONG,),
        lacks=(ACC_STRONG, ACC_WEAK),
        summary="gpt-5.5 fails (HTTP 503 server_is_overloaded ×3); gpt-5.4-mini answers",
        extra=_switch_step,
    ),
    Case(
        "capacity inside a 200 stream counts the same",
        lambda: evidence(primary("gpt-5.5", stream_error(OVERLOADED)), run("gpt-5.4-mini", ok())),
        Status.FAIL,
        has=(CAP_STRONG,),
        summary="HTTP 200 stream server_is_overloaded",
    ),
    Case(
        "alternative only flaky still counts as working",
        lambda: evidence(primary("gpt-5.5", http(OVERLOADED)), run("gpt-5.4-mini", http(OVERLOADED), ok())),
        Status.FAIL,
        has=(CAP_STRONG,),
        summary="gpt-5.4-mini is intermittent: 1 of 2 attempts overloaded",
    ),
    # --- intermittent
    Case(
        "intermittent with a capacity signature → capacity moderate",
        lambda: evidence(primary("gpt-5.5", http(OVERLOADED), ok())),
        Status.WARN,
        has=(CAP_MOD,),
        lacks=(CAP_STRONG, CAP_AGAINST),
        summary="gpt-5.5 is intermittent: 1 of 2 attempts overloaded",
    ),
    Case(
        "one capacity failure among sampled successes → intermittent capacity (moderate), peak-hour advice",
        lambda: evidence(primary("gpt-5.5", ok(), http(OVERLOADED), ok()), run("gpt-5.4-mini", ok())),
        Status.WARN,
        has=(CAP_MOD,),
        lacks=(CAP_STRONG, CAP_AGAINST),
        summary="gpt-5.5 is intermittent: 1 of 3 attempts overloaded",
        extra=lambda fs: _peak_hours(fs, "1 of 3 attempts overloaded"),
    ),
    Case(
        "most sampled attempts at capacity while the alternative answers → strong and intermittent",
        lambda: evidence(primary("gpt-5.5", ok(), http(OVERLOADED), http(OVERLOADED)), run("gpt-5.4-mini", ok())),
        Status.FAIL,
        has=(CAP_STRONG, CAP_MOD),
        lacks=(CAP_AGAINST,),
        summary="gpt-5.5 is intermittent: 2 of 3 attempts overloaded",
        extra=lambda fs: _peak_hours(fs, "2 of 3 attempts overloaded"),
    ),
    Case(
        "intermittent without a capacity cause → capacity weak only",
        lambda: evidence(primary("gpt-5.5", undecided(), ok())),
        Status.WARN,
        has=(CAP_WEAK,),
        lacks=(CAP_MOD, CAP_STRONG),
    ),
    Case(
        "contradictory: primary flaky, alternative fails with capacity → intermittent, not every-model",
        lambda: evidence(primary("gpt-5.5", http(OVERLOADED), ok()), run("gpt-5.4-mini", http(OVERLOADED))),
        Status.WARN,
        has=(CAP_MOD,),
        lacks=(ACC_STRONG, ACC_WEAK, CAP_STRONG),
    ),
    # --- every model at capacity
    Case(
        "every model capacity, healthy path, headroom → account strong, capacity weak",
        lambda: evidence(
            primary("gpt-5.5", http(OVERLOADED)),
            run("gpt-5.4-mini", http(OVERLOADED)),
            run("gpt-5-mini", http(OVERLOADED)),
            headroom=True,
        ),
        Status.FAIL,
        has=(ACC_STRONG, CAP_WEAK),
        lacks=(CAP_STRONG, CAP_MOD),
    ),
    Case(
        "every model capacity without headroom → capacity moderate, account weak",
        lambda: evidence(primary("gpt-5.5", http(OVERLOADED)), run("gpt-5.4-mini", http(OVERLOADED))),
        Status.FAIL,
        has=(CAP_MOD, ACC_WEAK),
        lacks=(ACC_STRONG, CAP_STRONG),
    ),
    Case(
        "contradictory: headroom but a cut stream on the path → not the account's strong case",
        lambda: evidence(
            primary("gpt-5.5", http(OVERLOADED), cut()), run("gpt-5.4-mini", http(OVERLOADED)), headroom=True
        ),
        Status.FAIL,
        has=(CAP_MOD, ACC_WEAK, NET_MOD),
        lacks=(ACC_STRONG,),
    ),
    Case(
        "Retry-After longer than the deadline: one attempt each is still a steady failure, not flaky",
        lambda: evidence(
            primary(
                "gpt-5.5",
                http(OVERLOADED, headers={"retry-after": "3600"}),
                stop="Retry-After 3600 s is longer than the time left",
            ),
            run(
                "gpt-5.4-mini",
                http(OVERLOADED, headers={"retry-after": "3600"}),
                stop="Retry-After 3600 s is longer than the time left",
            ),
        ),
        Status.FAIL,
        has=(CAP_MOD, ACC_WEAK),
        lacks=(CAP_STRONG, CAP_WEAK),
        summary="gpt-5.5 fails (HTTP 503 server_is_overloaded); gpt-5.4-mini fails",
    ),
    Case(
        "Retry-After cut the primary short and no alternative was sent → no comparison",
        lambda: evidence(
            primary(
                "gpt-5.5",
                http(OVERLOADED, headers={"retry-after": "3600"}),
                stop="Retry-After 3600 s is longer than the time left",
            ),
            run("gpt-5.4-mini", stop="request cap or deadline reached"),
        ),
        Status.FAIL,
        has=(CAP_MOD,),
        lacks=(ACC_WEAK, ACC_STRONG),
        extra=_alt_model_step,
    ),
    # --- no usable comparison
    Case(
        "no alternative given → capacity moderate, asks for --alt-model",
        lambda: evidence(primary("gpt-5.5", http(OVERLOADED), http(OVERLOADED))),
        Status.FAIL,
        has=(CAP_MOD,),
        lacks=(CAP_STRONG, ACC_WEAK),
        extra=_alt_model_step,
    ),
    Case(
        "contradictory: alternative fails with another cause (quota) → no comparison, quota reported too",
        lambda: evidence(primary("gpt-5.5", http(OVERLOADED)), run("gpt-5.4-mini", http(QUOTA))),
        Status.FAIL,
        has=(CAP_MOD, QUOTA_STRONG),
        lacks=(CAP_STRONG, ACC_WEAK, ACC_STRONG),
        extra=_alt_model_step,
    ),
    Case(
        "contradictory: one alternative at capacity, the other refused by the key → no every-model rule",
        lambda: evidence(
            primary("gpt-5.5", http(OVERLOADED)),
            run("gpt-5.4-mini", http(OVERLOADED)),
            run("gpt-5-mini", http(AUTH)),
            headroom=True,
        ),
        Status.FAIL,
        has=(CAP_MOD, (C.ACCOUNT, S.MODERATE)),
        lacks=(ACC_STRONG, CAP_STRONG),
    ),
    Case(
        "bare 5xx without a known code is weak capacity by status",
        lambda: evidence(primary("gpt-5.5", http(BARE_500)), run("gpt-5.4-mini", ok())),
        Status.FAIL,
        has=(CAP_STRONG,),
        summary="HTTP 500",
    ),
    # --- everything fails otherwise: not capacity
    Case(
        "everything fails with quota → quota strong, capacity not weighed",
        lambda: evidence(primary("gpt-5.5", http(QUOTA)), run("gpt-5.4-mini", http(QUOTA))),
        Status.FAIL,
        has=(QUOTA_STRONG,),
        lacks=(CAP_STRONG, CAP_MOD, CAP_WEAK, CAP_AGAINST),
        extra=_one_finding_per_signature,
    ),
    Case(
        "invalid key on every model → account, not capacity",
        lambda: evidence(primary("gpt-5.5", http(AUTH)), run("gpt-5.4-mini", http(AUTH))),
        Status.FAIL,
        has=(ACC_MOD,),
        lacks=(CAP_STRONG, CAP_MOD, CAP_WEAK),
    ),
    # --- the model list: client vs account
    Case(
        "model not in the list and refused → client strong with a close match",
        lambda: evidence(
            primary("gpt-5.5-typo", http(NOT_FOUND)), run("gpt-5.4-mini", ok()), listing=listing_ok(*LIST), listed=LIST
        ),
        Status.FAIL,
        has=(CLI_STRONG,),
        lacks=(ACC_MOD, CAP_STRONG, CAP_MOD),
        extra=_close_match,
    ),
    Case(
        "model in the list but refused → account moderate (entitlement), not client",
        lambda: evidence(
            primary("gpt-5.5", http(NOT_FOUND)), run("gpt-5.4-mini", ok()), listing=listing_ok(*LIST), listed=LIST
        ),
        Status.FAIL,
        has=(ACC_MOD,),
        lacks=(CLI_STRONG, CAP_STRONG),
    ),
    Case(
        "list endpoint unreadable (200, nothing parsed) → the 404 is read by its signature alone",
        lambda: evidence(
            primary("gpt-5.5", http(NOT_FOUND)),
            run("gpt-5.4-mini", ok()),
            listing=listing_raw("ok", 200, "not json"),
            listed=None,
        ),
        Status.FAIL,
        has=(CLI_MOD,),
        lacks=(CLI_STRONG, ACC_MOD),
    ),
    Case(
        "--no-inference: listed model → pass with context",
        lambda: evidence(listing=listing_ok(*LIST), listed=LIST, model="gpt-5.5", no_inference=True),
        Status.PASS,
        has=(CLI_CONTEXT,),
        lacks=(CAP_AGAINST,),
        summary="gpt-5.5 is listed (3 models)",
    ),
    Case(
        "--no-inference: unlisted model → client moderate with a close match",
        lambda: evidence(listing=listing_ok(*LIST), listed=LIST, model="gpt-5.5-typo", no_inference=True),
        Status.WARN,
        has=(CLI_MOD,),
        summary="gpt-5.5-typo is NOT listed",
        extra=_close_match,
    ),
    Case(
        "--no-inference: list refused with an auth error → the list's own signature",
        lambda: evidence(listing=listing_err(AUTH), model="gpt-5.5", no_inference=True),
        Status.WARN,
        has=(ACC_MOD,),
        summary="model list: HTTP 401; generation not probed",
    ),
    Case(
        "--no-inference: list endpoint unreadable (500, no error object) → weak capacity only",
        lambda: evidence(listing=listing_raw("http_error", 500, "oops"), model="gpt-5.5", no_inference=True),
        Status.WARN,
        has=(CAP_WEAK,),
        lacks=(CAP_MOD, CAP_STRONG),
        summary="model list: HTTP 500",
    ),
    Case(
        "the rules read the list's match and never classify: without one, no cause is invented",
        lambda: evidence(listing=listing_err(AUTH), model="gpt-5.5", no_inference=True, listing_match=None),
        Status.PASS,
        lacks=(ACC_WEAK, ACC_MOD),
    ),
    Case(
        "--no-inference: list endpoint missing (404) → nothing to say",
        lambda: evidence(listing=listing_raw("http_error", 404, "{}"), model="gpt-5.5", no_inference=True),
        Status.PASS,
        summary="model list: HTTP 404; generation not probed",
    ),
    Case(
        "--no-inference: list answered 200 but unreadable → nothing to say",
        lambda: evidence(listing=listing_raw("ok", 200, "[]"), model="gpt-5.5", no_inference=True),
        Status.PASS,
        summary="model list: HTTP 200; generation not probed",
    ),
    Case(
        "list came back as HTML → network strong",
        lambda: evidence(listing=listing_raw("html", 403, "<html>"), model="gpt-5.5", no_inference=True),
        Status.FAIL,
        has=(NET_STRONG,),
    ),
    # --- connection failures
    Case(
        "refused at a loopback base URL from the env → network strong (a local refusal), unset the variable",
        lambda: evidence(
            primary("claude-opus-4-7", conn("refused", LOOPBACK)),
            base_url=LOOPBACK,
            provider="anthropic",
            source="env ANTHROPIC_BASE_URL",
        ),
        Status.FAIL,
        has=(NET_STRONG, CLI_CONTEXT),
        lacks=(CLI_STRONG, CAP_MOD),
        summary="fails (refused)",
        extra=_unset_step,
    ),
    Case(
        "refused at the provider's host → network strong",
        lambda: evidence(primary("gpt-5.5", conn("refused"))),
        Status.FAIL,
        has=(NET_STRONG,),
        lacks=(CLI_STRONG,),
    ),
    Case(
        "the list answered, then generation timed out → network moderate",
        lambda: evidence(primary("gpt-5.5", conn("timeout")), listing=listing_ok(*LIST), listed=LIST),
        Status.FAIL,
        has=(NET_MOD,),
        lacks=(NET_STRONG,),
    ),
    Case(
        "nothing answered the list and nothing more was sent",
        lambda: evidence(listing=conn("tls"), model="gpt-5.5"),
        Status.FAIL,
        has=(NET_STRONG,),
        summary="no answer from https://api.openai.com/v1: the TLS handshake",
    ),
    Case(
        "HTML block page on generation → network strong, not capacity",
        lambda: evidence(primary("gpt-5.5", html())),
        Status.FAIL,
        has=(NET_STRONG,),
        lacks=(CAP_STRONG, CAP_MOD),
    ),
    Case(
        "every stream cut → network strong",
        lambda: evidence(primary("gpt-5.5", cut(), cut())),
        Status.FAIL,
        has=(NET_STRONG,),
    ),
    # --- healthy and context
    Case(
        "healthy primary → pass, against capacity",
        lambda: evidence(primary("gpt-5.5", ok(412)), listing=listing_ok(*LIST), listed=LIST),
        Status.PASS,
        has=(CAP_AGAINST,),
        lacks=(CLI_CONTEXT,),
        summary="gpt-5.5 answers",
    ),
    Case(
        "healthy through a relay → pass, the relay named as context",
        lambda: evidence(primary("gpt-5.5", ok()), base_url=RELAY),
        Status.PASS,
        has=(CAP_AGAINST, CLI_CONTEXT),
    ),
    Case(
        "nothing probed at all (no time left)",
        lambda: evidence(model="gpt-5.5"),
        Status.PASS,
        summary="nothing was probed (no time left)",
    ),
]


def _peak_hours(findings: list[Finding], rate: str) -> None:
    moderate = next(f for f in findings if f.cause is Cause.CAPACITY and f.strength is Strength.MODERATE)
    assert rate in moderate.message and moderate.data["failure_rate"] == rate
    assert any("off-peak" in s.text for s in moderate.next_steps)
    assert moderate.data["signatures"]  # the signatures seen, with their counts


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_judge(case: Case) -> None:
    status, summary, findings = judge(case.ev())
    pairs = {(f.cause, f.strength) for f in findings}
    assert status is case.status, findings
    assert set(case.has) <= pairs, findings
    assert not set(case.lacks) & pairs, findings
    assert case.summary in summary
    if case.extra is not None:
        case.extra(findings)


def test_judge_is_pure_and_repeatable() -> None:
    ev = evidence(primary("gpt-5.5", http(OVERLOADED)), run("gpt-5.4-mini", ok()))
    assert judge(ev) == judge(ev)


# ------------------------------------------------------------------ reading one attempt


@pytest.mark.parametrize(
    ("ex", "cause"),
    [
        (http(OVERLOADED), Cause.CAPACITY),
        (http(QUOTA), Cause.QUOTA),
        (http(AUTH), Cause.ACCOUNT),
        (http(NOT_FOUND), Cause.CLIENT),
    ],
)
def test_attempt_cause_is_the_signatures(ex: Exchange, cause: Cause) -> None:
    assert attempt_cause(Attempt(ex, classify_exchange(ex))) is cause


@pytest.mark.parametrize(
    ("ex", "cause"),
    [
        (conn("reset"), Cause.NETWORK),
        (html(), Cause.NETWORK),
        (cut(), Cause.NETWORK),
        (listing_raw("http_error", 418), None),
        (undecided(), None),
    ],
)
def test_attempt_cause_without_a_match(ex: Exchange, cause: Cause | None) -> None:
    assert attempt_cause(Attempt(ex, None)) is cause


@pytest.mark.parametrize(
    ("status", "local", "cause"),
    [
        (502, False, Cause.CAPACITY),
        (503, False, Cause.CAPACITY),
        (500, True, Cause.HARDWARE),  # a local server's 5xx is never the provider's capacity
        (503, True, Cause.HARDWARE),
        (402, False, Cause.QUOTA),
        (429, False, Cause.QUOTA),
        (401, False, Cause.ACCOUNT),
        (403, False, Cause.ACCOUNT),
        (400, False, Cause.CLIENT),
        (404, False, Cause.CLIENT),
        (407, False, Cause.NETWORK),
        (418, False, None),
    ],
)
def test_a_bare_status_is_read_by_the_engine_in_context(status: int, local: bool, cause: Cause | None) -> None:
    ex = listing_raw("http_error", status, "")
    match = classify_exchange(ex, local)
    assert attempt_cause(Attempt(ex, match)) is cause
    if match is not None:
        assert match.layer.value == "status"


def test_key_level() -> None:
    assert key_level(run("m", http(QUOTA), http(AUTH)))
    assert not key_level(run("m", http(QUOTA), http(OVERLOADED)))
    assert not key_level(run("m", ok()))
    assert not key_level(run("m"))


def test_labels_and_request_ids() -> None:
    assert attempt_label(Attempt(http(OVERLOADED))) == "HTTP 503 server_is_overloaded"
    assert attempt_label(Attempt(stream_error(OVERLOADED))) == "HTTP 200 stream server_is_overloaded"
    assert attempt_label(Attempt(conn("timeout"))) == "timeout"
    repeated = http((429, "429", None, "Too many requests"))  # OpenRouter/Gemini repeat the status as the code
    assert attempt_label(Attempt(repeated)) == "HTTP 429"
    assert exchange_label(conn("refused")) == "refused" and exchange_label(listing_ok()) == "HTTP 200"
    assert request_ids(http(OVERLOADED)) == ("req_1", "8f00-LAX")
    anthropic = Exchange("messages", "u", "http_error", 529, {}, json.dumps({"type": "error", "request_id": "req_a"}))
    assert request_ids(anthropic) == ("req_a", None)
