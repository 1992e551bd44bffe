"""What the verdict advises: each cause's summary and generic steps, filtered and completed by what was measured.

Advice follows from the cause *and* the facts, never from the cause alone: "switch TUN to system-proxy mode" is
said only where a proxy or TUN was seen, "wait for the reset time" only where one was read. `FACTS` names each
fact and how it is read; `TOPIC_NEEDS` says which fact each kind of step needs, `TOPIC_CONTRADICTED` which rules
it out (a local server that is down makes every proxy step wrong); `FACT_STEPS` adds the step a fact calls for.
A finding's own steps are filtered by the same tables. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from capdoctor.model import Cause, CheckResult, Finding, NextStep
from capdoctor.target.clientuse import ClientInUse, switched_model
from capdoctor.verdict.weighing import refused_locally, weight


@dataclass(frozen=True)
class CauseText:
    """What the verdict says for one cause: its plain name, a summary sentence and the generic next steps."""

    name: str
    summary: str
    steps: tuple[NextStep, ...]


CAUSE_TEXT: dict[str, CauseText] = {
    Cause.CAPACITY.value: CauseText(
        "provider capacity",
        "The provider's model is saturated or in an incident: the failure is on their side, not in your setup.",
        (
            NextStep("Switch to a lighter or alternative model for now; switch back later."),
            NextStep("Retry with exponential backoff and jitter, honouring Retry-After; do not hammer the API."),
            NextStep("Configure a fallback pool (primary model plus a backup) so failures degrade instead of stop."),
            NextStep("Move batch and long-running jobs off-peak, and lower your concurrency."),
            NextStep("Watch the provider's status page for the incident to clear."),
        ),
    ),
    Cause.QUOTA.value: CauseText(
        "quota or rate limit",
        "Your account's quota, credits or rate limit is exhausted: the provider is fine, your allowance is not.",
        (
            NextStep("Check usage and billing in the provider's console; add credits or raise the limit."),
            NextStep("Wait for the reset time shown by the quota check before retrying; do not retry in a loop."),
            NextStep("Lower the request rate and concurrency (fewer parallel sessions on one key)."),
        ),
    ),
    Cause.ACCOUNT.value: CauseText(
        "account or key",
        "Your account or key is being refused (invalid key, permission, region, or account-level throttling).",
        (
            NextStep("Verify the key and its project/organisation permissions; create a fresh key if in doubt."),
            NextStep("Sign out of every session and device, wait, then sign in again on one machine only."),
            NextStep("Stop sharing the account across devices, scripts or relays; keep one stable egress location."),
            NextStep("If it persists, contact the provider's support with the request ids from this report."),
        ),
    ),
    Cause.NETWORK.value: CauseText(
        "network path",
        "The path between you and the provider is failing (proxy, TUN, DNS, TLS interception, resets or timeouts).",
        (
            NextStep(
                "Compare paths: run the same request direct and through your proxy (or on a phone hotspot).",
                "capdoctor check paths",
            ),
            NextStep("Fix the proxy mode: switch TUN to system-proxy mode (or back), update the proxy client."),
            NextStep("Remove stale proxy variables from your shell profile and the clients' .env files."),
            NextStep("Pin one stable exit node; avoid switching nodes during long streams."),
            NextStep("See whether a proxy, a tunnel or a fake-IP resolver sits on the path.", "capdoctor check proxy"),
        ),
    ),
    Cause.HARDWARE.value: CauseText(
        "local hardware",
        "The local model does not fit this machine: GPU memory or RAM is exhausted.",
        (
            NextStep("Use a smaller quantization (e.g. Q4 instead of Q8) or a smaller model."),
            NextStep("Shorten the context window and lower the batch size."),
            NextStep("Stop other processes holding GPU memory; for vLLM lower --gpu-memory-utilization."),
        ),
    ),
    Cause.CLIENT.value: CauseText(
        "client setup",
        "The client is outdated or misconfigured (old version, wrong model name, stale base URL).",
        (
            NextStep("Upgrade the client to the latest release."),
            NextStep("Check the model name against the provider's model list; fix typos and retired names."),
            NextStep(
                "Check the base URL and key variable in the client's config and your shell environment.",
                "capdoctor config",
            ),
        ),
    ),
}

FACT_SUMMARY: Mapping[tuple[str, str], str] = {
    (Cause.NETWORK.value, "local_refused"): (
        "Nothing is listening where the client connects on this machine: the local model server is not running, "
        "or the base URL names the wrong port."
    ),
    (Cause.ACCOUNT.value, "key_refused"): (
        "The provider refuses the key itself: it is wrong, revoked or not the one you think the client sends."
    ),
    (Cause.CLIENT.value, "config_unreadable"): (
        "A client cannot read its own settings file: it refuses to start, or ignores the model, base URL and key "
        "set there (the evidence names the file, line and column)."
    ),
    (Cause.ACCOUNT.value, "risk_control"): (
        "The provider has restricted the account (risk control: suspended, flagged or throttled for abuse)."
    ),
}
"""A cause's summary where a measured fact says more precisely what is wrong."""

KEY_FAMILIES = frozenset({"key_refused", "auth_refused"})
KEY_SIGNATURES = frozenset(
    {
        "openai.invalid_api_key",
        "anthropic.auth_error",
        "gemini.api_key_invalid",
        "codex.unauthorized",
        "http.401",
    }
)
RISK_FAMILIES = frozenset({"suspended"})
RISK_SIGNATURES = frozenset({"account.anti_abuse", "openai.account_deactivated", "anthropic.org_disabled"})
"""The error rows that say a key is refused, and those that say the account is under risk control."""

PROXY_KEYS = frozenset({"proxy", "interface", "resolved", "system_proxy", "processes"})
"""Finding data keys the proxy check writes when it saw a proxy, a TUN, fake-IP answers or a proxy client."""


def _any(results: Sequence[CheckResult], test: Callable[[Finding], bool]) -> bool:
    return any(test(f) for r in results for f in r.findings)


def _proxy_or_tun(results: Sequence[CheckResult]) -> bool:
    if any(r.id == "proxy" and r.data.get("proxy_processes") for r in results):
        return True
    return _any(results, lambda f: f.cause is Cause.NETWORK and bool(PROXY_KEYS & set(f.data)))


def _proxy_env(results: Sequence[CheckResult]) -> bool:
    return _any(results, lambda f: str(f.data.get("variable", "")).lower().endswith("_proxy") and "proxy" in f.data)


def _reset_read(results: Sequence[CheckResult]) -> bool:
    return _any(results, lambda f: any(f.data.get(k) is not None for k in ("reset_s", "retry_after_s", "limit_reset")))


def _client_behind(results: Sequence[CheckResult]) -> bool:
    return _any(results, lambda f: f.cause is Cause.CLIENT and "installed" in f.data and "latest" in f.data)


def _row_in(families: frozenset[str], signatures: frozenset[str]) -> Callable[[Finding], bool]:
    return lambda f: weight(f) > 0 and (f.data.get("family") in families or f.data.get("signature") in signatures)


def _key_refused(results: Sequence[CheckResult]) -> bool:
    return _any(
        results,
        lambda f: (
            _row_in(KEY_FAMILIES, KEY_SIGNATURES)(f)
            or (f.cause is Cause.ACCOUNT and weight(f) > 0 and f.data.get("status") == 401)
        ),
    )


FACTS: Mapping[str, Callable[[Sequence[CheckResult]], bool]] = {
    "proxy_or_tun": _proxy_or_tun,
    "proxy_env": _proxy_env,
    "reset_read": _reset_read,
    "client_behind": _client_behind,
    "key_refused": _key_refused,
    "risk_control": lambda rs: _any(rs, _row_in(RISK_FAMILIES, RISK_SIGNATURES)),
    "local_refused": lambda rs: _any(rs, lambda f: refused_locally(f) and weight(f) > 0),
    "config_unreadable": lambda rs: _any(rs, lambda f: f.cause is Cause.CLIENT and bool(f.data.get("unreadable"))),
}
"""Each fact the advice depends on, and how it is read from the check results."""


def measured(results: Sequence[CheckResult]) -> frozenset[str]:
    """The facts (`FACTS` names) the results establish."""
    return frozenset(name for name, test in FACTS.items() if test(results))


STEP_TOPICS: dict[str, re.Pattern[str]] = {
    topic: re.compile(rx, re.IGNORECASE)
    for topic, rx in {
        "switch model": r"\bswitch (to|back)\b|\b(lighter|alternative) model\b",
        "backoff": r"\bbackoff\b|\bjitter\b|\bretry-after\b",
        "wait for reset": r"\bwait\b[^.;]*\breset\b|\breset time\b|ratelimit-reset",
        "reset time shown": r"\breset time shown\b",
        "lower rate": r"\blower (the |your )?(request rate|concurrency)\b|\bfewer parallel\b",
        "off-peak": r"\boff-peak\b",
        "fallback": r"\bfallback\b",
        "status page": r"\bstatus page\b|\bincident\b",
        "billing": r"\bcredits?\b|\bbilling\b|\bspend limit\b|\braise the [\w' ]*limit\b",
        "key": r"\b(verify|check|replace) the key\b|\bfresh key\b|\bnew key\b",
        "sign out": r"\bsign (out|in)\b",
        "sharing": r"\bstop sharing\b|\bone (stable )?(machine|device|egress)\b",
        "support": r"\bcontact\b[^.;]*\bsupport\b",
        "compare paths": r"\bcompare\b[^.;]*\bpaths?\b",
        "other network": r"\bphone hotspot\b|\banother network\b",
        "proxy mode": r"\bTUN\b|\bsystem-proxy\b",
        "stale proxy": r"\bstale proxy variables?\b",
        "exit node": r"\bexit node\b",
        "upgrade client": r"\b(update|upgrade) the client\b",
        "model name": r"\bmodel name\b",
        "local server": r"\blocal model server\b",
        "find proxy": r"\bwhether a proxy\b",
    }.items()
}
"""What a next step advises, by phrase family: a step whose every topic an earlier step already covers says
nothing new (a finding's "Switch to gpt-5.4-mini" makes the generic "Switch to a lighter model" redundant)."""

TOPIC_NEEDS: Mapping[str, frozenset[str]] = {
    "proxy mode": frozenset({"proxy_or_tun"}),
    "exit node": frozenset({"proxy_or_tun"}),
    "stale proxy": frozenset({"proxy_env"}),
    "sign out": frozenset({"risk_control"}),
    "sharing": frozenset({"risk_control"}),
    "reset time shown": frozenset({"reset_read"}),
    "upgrade client": frozenset({"client_behind"}),
}
"""A step of this kind is given only where one of these facts was measured."""

TOPIC_CONTRADICTED: Mapping[str, frozenset[str]] = {
    "proxy mode": frozenset({"local_refused"}),
    "exit node": frozenset({"local_refused"}),
    "stale proxy": frozenset({"local_refused"}),
    "compare paths": frozenset({"local_refused"}),
    "other network": frozenset({"local_refused"}),
    "find proxy": frozenset({"local_refused"}),
}
"""A step of this kind is wrong where one of these facts was measured (nothing to route to a local port)."""

FACT_STEPS: Mapping[tuple[str, str], NextStep] = {
    (Cause.NETWORK.value, "local_refused"): NextStep(
        "Start the local model server (for Ollama: `ollama serve`), or point the client's base URL at the port "
        "it really listens on.",
        "capdoctor config",
    ),
    (Cause.ACCOUNT.value, "key_refused"): NextStep(
        "Replace the key: create a new one in the provider's console and set it in the variable your client "
        "reads (capdoctor config shows which one, and where it came from).",
        "capdoctor config",
    ),
}
"""The step a measured fact calls for when its cause is named, before the cause's generic steps."""


def topics(step: NextStep) -> frozenset[str]:
    """The kinds of advice a step gives (`STEP_TOPICS` names)."""
    return frozenset(topic for topic, rx in STEP_TOPICS.items() if rx.search(step.text))


def fits(step: NextStep, facts: frozenset[str]) -> bool:
    """Whether `step` agrees with what was measured: each of its topics' needs met, none contradicted."""
    for topic in topics(step):
        if topic in TOPIC_NEEDS and not TOPIC_NEEDS[topic] & facts:
            return False
        if TOPIC_CONTRADICTED.get(topic, frozenset()) & facts:
            return False
    return True


def summary(cause: str, facts: frozenset[str]) -> str:
    """The cause's summary sentence, the most precise one the measured facts allow."""
    for (c, fact), text in FACT_SUMMARY.items():
        if c == cause and fact in facts:
            return text
    return CAUSE_TEXT[cause].summary


def generic_steps(cause: str, facts: frozenset[str]) -> list[NextStep]:
    """The steps a fact calls for, then the cause's generic steps (those the facts rule out go in `dedupe`)."""
    called = [step for (c, fact), step in FACT_STEPS.items() if c == cause and fact in facts]
    return [*called, *CAUSE_TEXT[cause].steps]


def dedupe(steps: Sequence[NextStep], facts: frozenset[str] = frozenset(), limit: int = 6) -> tuple[NextStep, ...]:
    """`steps` in order without repeats and without a step the facts contradict: same text, or every topic
    already covered; a command shown twice is kept only the first time."""
    out: list[NextStep] = []
    covered: set[str] = set()
    for step in steps:
        step_topics = topics(step)
        if not fits(step, facts):
            continue
        if any(step.text == s.text for s in out) or (step_topics and step_topics <= covered):
            continue
        if step.command and any(step.command == s.command for s in out):
            step = NextStep(step.text)
        out.append(step)
        covered |= step_topics
    return tuple(out[:limit])


def steps_for(
    cause: str, findings: Sequence[Finding], facts: frozenset[str], limit: int = 6, generic: int | None = None
) -> tuple[NextStep, ...]:
    """The findings' own steps, then what the facts call for and the cause's generic steps (the first `generic`
    of them), every one agreeing with the facts."""
    tail = generic_steps(cause, facts)
    return dedupe([s for f in findings for s in f.next_steps] + tail[:generic], facts, limit)


FALLBACK_COMMAND = re.compile(r"^(capdoctor fallback --format )\S+")
"""The `capdoctor fallback` next step, whose format is fitted to the client in use."""


def fit_step(step: NextStep, client: ClientInUse | None) -> NextStep:
    """`step` for the client in use: a client's switch-model command becomes that client's own, a parameter
    hint for an SDK user, or no command when the client is not known; `capdoctor fallback` gets the format that
    client loads; other steps are unchanged."""
    if client is not None and client.id != "unknown" and step.command and FALLBACK_COMMAND.match(step.command):
        return NextStep(step.text, FALLBACK_COMMAND.sub(rf"\g<1>{client.fallback_format}", step.command))
    model = switched_model(step.command) if step.command and client is not None else None
    if model is None or client is None:
        return step
    command, hint = client.switch_model(model)
    return NextStep(f"{step.text.rstrip('.')}: {hint}." if hint else step.text, command)
