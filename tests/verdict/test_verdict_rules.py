"""The verdict's rules as tables: each rule's factor on hand-made facts, and the advice walked over every
cause x fact combination so that no next step contradicts what was measured."""

from __future__ import annotations

import itertools
import math
import re
from datetime import datetime, timedelta, timezone

import pytest

from capdoctor.model import Cause, CheckResult, Finding, Status, Strength
from capdoctor.verdict.advice import FACTS, measured
from capdoctor.verdict.decision import decide
from capdoctor.verdict.weighing import CAUSE_RULES, CauseFacts, Scene

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=timezone.utc)


def facts(cause: str, **kw: object) -> CauseFacts:
    c = CauseFacts(cause, base=3.0, strongest=3.0)
    for k, v in kw.items():
        setattr(c, k, v)
    return c


def scene(*causes: CauseFacts) -> Scene:
    by = {c.value: CauseFacts(c.value) for c in Cause}
    by.update({c.cause: c for c in causes})
    newest = max((c.last for c in causes if c.last), default=None)
    return Scene(newest, by)


RULE = {r.name: r for r in CAUSE_RULES}
RULE_CASES = [
    # (rule, the cause's facts, the others beside it, expected factor)
    ("repeated", facts("capacity", weighed_count=1), (), 1.0),
    ("repeated", facts("quota", weighed_count=12), (), 1 + math.log(12)),
    ("repeated", facts("quota", count=30, weighed_count=0), (), 1.0),  # the words layer's readings only
    ("past", facts("capacity", last=T0 - timedelta(hours=7)), (facts("account", last=T0),), 0.5),
    ("past", facts("capacity", last=T0 - timedelta(hours=5)), (facts("account", last=T0),), 1.0),
    ("past", facts("capacity", last=T0 - timedelta(hours=7)), (facts("account", last=T0 - timedelta(hours=8)),), 1.0),
    ("holds now", facts("account", holds_now=True), (facts("capacity"),), 1.5),
    ("holds now", facts("network", holds_now=True), (facts("capacity"),), 1.25),
    ("holds now", facts("quota", holds_now=True), (), 1.0),  # alone, the end of the evidence tells nothing apart
    ("holds now", facts("capacity", holds_now=True, strongest=1.0), (facts("account"),), 1.0),  # a weak hint
]


@pytest.mark.parametrize(("name", "cause", "others", "factor"), RULE_CASES)
def test_each_rule_scales_what_it_says(
    name: str, cause: CauseFacts, others: tuple[CauseFacts, ...], factor: float
) -> None:
    rule = RULE[name]
    assert rule.reason
    got = rule.factor(cause, scene(cause, *others))
    assert got == pytest.approx(factor)


def finding(cause: Cause, strength: Strength, message: str = "seen", **data: object) -> Finding:
    return Finding(cause, strength, message, data)


FACT_FINDINGS: dict[str, Finding] = {
    "proxy_or_tun": finding(Cause.NETWORK, Strength.CONTEXT, "a TUN", interface="utun3", egress_interface="en0"),
    "proxy_env": finding(Cause.NETWORK, Strength.CONTEXT, "a proxy", variable="HTTPS_PROXY", proxy="http://p:8"),
    "reset_read": finding(Cause.QUOTA, Strength.CONTEXT, "resets in 30 s", reset_s=30),
    "client_behind": finding(Cause.CLIENT, Strength.CONTEXT, "behind", installed="0.1.0", latest="0.9.0"),
    "key_refused": finding(Cause.ACCOUNT, Strength.MODERATE, "invalid key", signature="openai.invalid_api_key"),
    "risk_control": finding(Cause.ACCOUNT, Strength.MODERATE, "suspended", family="suspended"),
    "local_refused": finding(
        Cause.NETWORK, Strength.MODERATE, "refused", example="connect ECONNREFUSED 127.0.0.1:11434"
    ),
    "config_unreadable": finding(Cause.CLIENT, Strength.MODERATE, "cannot parse", unreadable=True),
}

FORBIDDEN_WITHOUT: dict[str, str] = {
    "proxy_or_tun": r"\bTUN\b|\bsystem-proxy\b|\bexit node\b",
    "proxy_env": r"\bstale proxy variables\b",
    "reset_read": r"\breset time shown\b",
    "client_behind": r"\bUpgrade the client\b",
    "risk_control": r"\bSign out of every\b|\bStop sharing the account\b",
}
"""What a step may say only where the fact was measured."""

FORBIDDEN_WITH: dict[str, str] = {
    "local_refused": r"\bTUN\b|\bexit node\b|\bphone hotspot\b|\bCompare paths\b|\bstale proxy\b",
}
"""What a step must not say where the fact was measured."""


def test_every_fact_has_a_finding_here() -> None:
    assert set(FACT_FINDINGS) == set(FACTS)


@pytest.mark.parametrize("cause", list(Cause), ids=[c.value for c in Cause])
def test_no_step_contradicts_a_measured_fact(cause: Cause) -> None:
    names = sorted(FACTS)
    for n in range(len(names) + 1):
        for chosen in itertools.combinations(names, n):
            results = [
                CheckResult("models", "Models", 1, Status.FAIL, "x", (finding(cause, Strength.STRONG),)),
                CheckResult("other", "Other", 2, Status.WARN, "y", tuple(FACT_FINDINGS[f] for f in chosen)),
            ]
            got = measured(results)
            verdict = decide(results)
            steps = [s.text for s in verdict.next_steps] + [s.text for a in verdict.also for s in a.next_steps]
            for fact, rx in FORBIDDEN_WITHOUT.items():
                if fact not in got:
                    assert not any(re.search(rx, t) for t in steps), (cause, chosen, fact, steps)
            for fact, rx in FORBIDDEN_WITH.items():
                if fact in got:
                    assert not any(re.search(rx, t) for t in steps), (cause, chosen, fact, steps)
            if verdict.cause == "network" and "local_refused" in got:
                assert any(t.startswith("Start the local model server") for t in steps), steps
            if verdict.cause == "account" and "key_refused" in got:
                assert any(re.search(r"\b(new|fresh) key\b|\breplace\b", t, re.I) for t in steps), steps


def test_each_fact_is_read_from_its_finding() -> None:
    for fact, f in FACT_FINDINGS.items():
        results = [CheckResult("c", "C", 1, Status.WARN, "x", (f,))]
        assert fact in measured(results), fact
