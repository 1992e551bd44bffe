"""The verdict: one pure function from check results to a named cause, a confidence and next steps.

This is the only place where capacity vs quota vs account vs network vs hardware vs client is decided.
`decide` does no I/O, reads no clock and imports nothing heavy, so it is tested exhaustively with hand-written
result lists (contradictory ones included) and reused unchanged by the log scanner.

How it weighs: every finding adds its strength's weight to its cause (`against` subtracts). One check's
contribution to one cause is capped, so a check that lists many similar findings cannot outvote the rest.
When some cause has strong evidence, a cause backed only by weak hints is discounted: a strong, direct
observation (the lighter model works) beats a pile of circumstantial ones. The triage knowledge of the source
articles lives in the checks that observe (e.g. `models` turns "switching the model fixes it" into strong
capacity evidence); the verdict only weighs.

"No problem" is only said about what was tested. Every check that was skipped or broke, and every part a check
reports in `data["untested"]` (`{what, why, open_causes, decisive}`: the status page that could not be read,
generation under `--no-inference`), is a coverage gap: `none` keeps its high confidence only without gaps, drops
with each gap and names them in its summary, and a decisive gap (generation not probed) makes the verdict
`inconclusive`, naming the causes it could not rule out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from capdoctor.clientuse import ClientInUse, switched_model
from capdoctor.model import (
    INCONCLUSIVE,
    NONE,
    Cause,
    CheckResult,
    Finding,
    NextStep,
    Status,
    Strength,
    Verdict,
)

WEIGHTS: dict[Strength, float] = {
    Strength.STRONG: 3.0,
    Strength.MODERATE: 2.0,
    Strength.WEAK: 1.0,
    Strength.CONTEXT: 0.0,
    Strength.AGAINST: -1.5,
}
"""How much one finding of each strength counts for its cause."""

PER_CHECK_CAP = 4.5
"""The most one check can add to one cause (1.5 strong findings)."""

WEAK_ONLY_DISCOUNT = 0.5
"""Factor applied to a cause backed only by weak findings when another cause has a strong one."""

CONFIDENCE_SCALE = 2.5
"""Evidence mass at which confidence reaches 1 - 1/e (~0.63) before the share is applied."""

MIN_CONFIDENCE = 0.35
"""Below this the verdict is `inconclusive`."""

CLOSE_CALL = 0.8
"""If the runner-up reaches this share of the winner's score, the evidence is contradictory."""


@dataclass(frozen=True)
class CauseText:
    """What the verdict says for one cause: a summary sentence and the generic next steps."""

    summary: str
    steps: tuple[NextStep, ...]


CAUSE_TEXT: dict[str, CauseText] = {
    Cause.CAPACITY.value: CauseText(
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
        "Your account's quota, credits or rate limit is exhausted: the provider is fine, your allowance is not.",
        (
            NextStep("Check usage and billing in the provider's console; add credits or raise the limit."),
            NextStep("Wait for the reset time shown by the quota check before retrying; do not retry in a loop."),
            NextStep("Lower the request rate and concurrency (fewer parallel sessions on one key)."),
        ),
    ),
    Cause.ACCOUNT.value: CauseText(
        "Your account or key is being refused (invalid key, permission, region, or account-level throttling).",
        (
            NextStep("Verify the key and its project/organisation permissions; create a fresh key if in doubt."),
            NextStep("Sign out of every session and device, wait, then sign in again on one machine only."),
            NextStep("Stop sharing the account across devices, scripts or relays; keep one stable egress location."),
            NextStep("If it persists, contact the provider's support with the request ids from this report."),
        ),
    ),
    Cause.NETWORK.value: CauseText(
        "The path between you and the provider is failing (proxy, TUN, DNS, TLS interception, resets or timeouts).",
        (
            NextStep(
                "Compare paths: run the same request direct and through your proxy (or on a phone hotspot).",
                "capdoctor check paths",
            ),
            NextStep("Fix the proxy mode: switch TUN to system-proxy mode (or back), update the proxy client."),
            NextStep("Remove stale proxy variables from your shell profile and the clients' .env files."),
            NextStep("Pin one stable exit node; avoid switching nodes during long streams."),
        ),
    ),
    Cause.HARDWARE.value: CauseText(
        "The local model does not fit this machine: GPU memory or RAM is exhausted.",
        (
            NextStep("Use a smaller quantization (e.g. Q4 instead of Q8) or a smaller model."),
            NextStep("Shorten the context window and lower the batch size."),
            NextStep("Stop other processes holding GPU memory; for vLLM lower --gpu-memory-utilization."),
        ),
    ),
    Cause.CLIENT.value: CauseText(
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

NONE_TEXT = CauseText(
    "No problem found: every check that could run passed.",
    (
        NextStep(
            "If the error comes back, run capdoctor while it happens and attach the report to your ticket.",
            "capdoctor diagnose --report capdoctor-report.md",
        ),
    ),
)

GAP_WEIGHT: dict[str, float] = {"skip": 0.1, "error": 0.15, "untested": 0.15}
"""How much each kind of coverage gap takes off a `none` verdict's confidence."""

NONE_WITH_GAPS = 0.8
"""The most a `none` verdict may claim once anything was not tested; each gap's weight comes off it."""

NONE_FLOOR = 0.4
"""The least a `none` verdict says while something was tested and nothing was decisive."""


@dataclass(frozen=True)
class Gap:
    """Something a run did not test: which check, what, why, which causes it leaves open, how much it weighs.

    `decisive` marks a gap that the question cannot be answered without (the model's generation was never
    probed): then "no problem" is not said at all.
    """

    check: str
    what: str
    why: str
    open_causes: tuple[str, ...] = ()
    decisive: bool = False
    weight: float = GAP_WEIGHT["untested"]

    def line(self) -> str:
        """One evidence line: `[status] not tested: the status page (could not be read: HTTP 500)`."""
        return f"[{self.check}] not tested: {self.what} ({self.why})"


def coverage_gaps(results: Sequence[CheckResult]) -> list[Gap]:
    """What the run did not test: skipped and broken checks, and each check's own `data["untested"]` parts."""
    gaps: list[Gap] = []
    for r in results:
        if r.status is Status.SKIP:
            gaps.append(Gap(r.id, r.title.lower() if r.title else r.id, r.summary, weight=GAP_WEIGHT["skip"]))
        elif r.status is Status.ERROR:
            gaps.append(Gap(r.id, r.title.lower() if r.title else r.id, r.summary, weight=GAP_WEIGHT["error"]))
        untested = r.data.get("untested") if isinstance(r.data, Mapping) else None
        for item in untested if isinstance(untested, list) else []:
            if isinstance(item, Mapping):
                gaps.append(
                    Gap(
                        r.id,
                        str(item.get("what", "")),
                        str(item.get("why", "")),
                        tuple(str(c) for c in item.get("open_causes") or ()),
                        bool(item.get("decisive")),
                    )
                )
    return gaps


def _none(
    results: Sequence[CheckResult], ran: Sequence[CheckResult], ranking: tuple[tuple[str, float], ...]
) -> Verdict:
    """`none`, as sure as the coverage allows; `inconclusive` when a decisive part was not tested."""
    gaps = coverage_gaps(results)
    decisive = [g for g in gaps if g.decisive]
    if decisive:
        open_causes = list(dict.fromkeys(c for g in decisive for c in g.open_causes))
        what = "; ".join(f"{g.what} ({g.why})" for g in decisive)
        causes = f": {', '.join(open_causes)} could not be ruled out" if open_causes else ""
        return Verdict(
            INCONCLUSIVE,
            0.0,
            f"Inconclusive: nothing wrong was seen, but {what} was not tested{causes}.",
            ranking,
            tuple(g.line() for g in gaps),
            (
                NextStep(
                    "Run again while the error is happening, letting capdoctor probe generation (no --no-inference; "
                    "a longer --timeout if it ran out).",
                    "capdoctor diagnose",
                ),
            ),
        )
    confidence = 1.0 - 0.5 ** len(ran)
    if not gaps:
        return Verdict(NONE, confidence, NONE_TEXT.summary, ranking, (), NONE_TEXT.steps)
    confidence = round(max(NONE_FLOOR, min(confidence, NONE_WITH_GAPS - sum(g.weight for g in gaps))), 3)
    missing = ", ".join(f"{g.what} ({g.why})" for g in gaps)
    return Verdict(
        NONE,
        confidence,
        f"No problem found in what was tested; not tested: {missing}.",
        ranking,
        tuple(g.line() for g in gaps),
        NONE_TEXT.steps,
    )


@dataclass(frozen=True)
class Rule:
    """A cross-stage rule: when `applies(results)`, add `bonus` to one cause and scale others.

    Rules encode what no single check can see alone, e.g. that every model failing *while* the provider's
    traffic runs through a TUN with fake-IP DNS is more likely the route than the account's quota.
    """

    name: str
    applies: Callable[[Sequence[CheckResult]], bool]
    bonus: tuple[str, float]
    scale: Mapping[str, float]


def _tun_captures_provider(results: Sequence[CheckResult]) -> bool:
    """The proxy check saw fake-IP answers for the provider's host or a TUN carrying its traffic."""
    for result in results:
        for f in result.findings:
            if (
                f.cause is Cause.NETWORK
                and _weight(f) > 0
                and (
                    "resolved" in f.data
                    or (f.data.get("interface") and f.data.get("interface") == f.data.get("egress_interface"))
                )
            ):
                return True
    return False


def _every_model_failed(results: Sequence[CheckResult]) -> bool:
    """The models check probed at least one model and none of them answered."""
    for result in results:
        models = result.data.get("models") if result.id == "models" else None
        if isinstance(models, list) and models:
            return all(isinstance(m, dict) and m.get("outcome") == "fail" for m in models)
    return False


RULES: tuple[Rule, ...] = (
    Rule(
        "every model fails while a TUN/fake-IP resolver carries the provider's traffic",
        lambda rs: _tun_captures_provider(rs) and _every_model_failed(rs),
        (Cause.NETWORK.value, WEIGHTS[Strength.MODERATE]),
        {Cause.QUOTA.value: 0.75, Cause.ACCOUNT.value: 0.75},
    ),
)
"""Cross-stage rules, applied after the per-finding weights."""


def _weight(finding: Finding) -> float:
    return WEIGHTS[finding.strength]


def score(results: Sequence[CheckResult]) -> dict[str, float]:
    """Evidence per cause: capped per check, with weak-only causes discounted when another cause is strong."""
    totals = {c.value: 0.0 for c in Cause}
    strongest = {c.value: 0.0 for c in Cause}
    for result in results:
        per_check = {c.value: 0.0 for c in Cause}
        for finding in result.findings:
            per_check[finding.cause.value] += _weight(finding)
            strongest[finding.cause.value] = max(strongest[finding.cause.value], _weight(finding))
        for cause, value in per_check.items():
            totals[cause] += min(value, PER_CHECK_CAP)
    any_strong = {c for c, w in strongest.items() if w >= WEIGHTS[Strength.STRONG]}
    for cause in totals:
        if any_strong - {cause} and strongest[cause] <= WEIGHTS[Strength.WEAK]:
            totals[cause] *= WEAK_ONLY_DISCOUNT
    for rule in RULES:
        if rule.applies(results):
            cause, bonus = rule.bonus
            totals[cause] += bonus
            for other, factor in rule.scale.items():
                totals[other] *= factor
    return {c: max(0.0, v) for c, v in totals.items()}


def _evidence(results: Sequence[CheckResult], cause: str, limit: int = 5) -> list[tuple[Finding, str]]:
    rows = [(f, r.id) for r in results for f in r.findings if f.cause.value == cause and _weight(f) > 0]
    rows.sort(key=lambda row: -_weight(row[0]))
    return rows[:limit]


STEP_TOPICS: dict[str, re.Pattern[str]] = {
    topic: re.compile(rx, re.IGNORECASE)
    for topic, rx in {
        "switch model": r"\bswitch (to|back)\b|\b(lighter|alternative) model\b",
        "backoff": r"\bbackoff\b|\bjitter\b|\bretry-after\b",
        "wait for reset": r"\bwait\b[^.;]*\breset\b|\breset time\b|ratelimit-reset",
        "lower rate": r"\blower (the |your )?(request rate|concurrency)\b|\bfewer parallel\b",
        "off-peak": r"\boff-peak\b",
        "fallback": r"\bfallback\b",
        "status page": r"\bstatus page\b|\bincident\b",
        "billing": r"\bcredits?\b|\bbilling\b|\bspend limit\b|\braise the [\w' ]*limit\b",
        "key": r"\b(verify|check|replace) the key\b|\bfresh key\b",
        "sign out": r"\bsign (out|in)\b",
        "support": r"\bcontact\b[^.;]*\bsupport\b",
        "compare paths": r"\bcompare\b[^.;]*\bpaths?\b",
        "other network": r"\bphone hotspot\b|\banother network\b",
        "proxy mode": r"\bTUN\b|\bsystem-proxy\b",
        "stale proxy": r"\bstale proxy variables?\b",
        "exit node": r"\bexit node\b",
        "upgrade client": r"\b(update|upgrade) the client\b",
        "model name": r"\bmodel name\b",
    }.items()
}
"""What a next step advises, by phrase family: a step whose every topic an earlier step already covers says
nothing new (a finding's "Switch to gpt-5.4-mini" makes the generic "Switch to a lighter model" redundant)."""


def _topics(step: NextStep) -> frozenset[str]:
    return frozenset(topic for topic, rx in STEP_TOPICS.items() if rx.search(step.text))


def _dedupe(steps: Sequence[NextStep], limit: int = 6) -> tuple[NextStep, ...]:
    """`steps` in order without repeats: same text, or every topic already covered; a command shown twice is
    kept only the first time."""
    out: list[NextStep] = []
    covered: set[str] = set()
    for step in steps:
        topics = _topics(step)
        if any(step.text == s.text for s in out) or (topics and topics <= covered):
            continue
        if step.command and any(step.command == s.command for s in out):
            step = NextStep(step.text)
        out.append(step)
        covered |= topics
    return tuple(out[:limit])


def _steps(findings: Sequence[Finding], generic: Sequence[NextStep], limit: int = 6) -> tuple[NextStep, ...]:
    return _dedupe([s for f in findings for s in f.next_steps] + list(generic), limit)


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


def decide(results: Sequence[CheckResult], client: ClientInUse | None = None) -> Verdict:
    """Weigh every finding of `results` and name the cause (or `none` / `inconclusive`); the next steps are
    fitted to `client` (None: left as the findings wrote them)."""
    verdict = _weigh(results)
    return replace(verdict, next_steps=_dedupe([fit_step(s, client) for s in verdict.next_steps]))


def _weigh(results: Sequence[CheckResult]) -> Verdict:
    """The verdict as the evidence gives it, with the findings' own next steps (before any client fitting)."""
    scores = score(results)
    ranking = tuple(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])))
    top_cause, top = ranking[0]
    runner_up = ranking[1][1]
    total = sum(scores.values())

    if top <= 0:
        ran = [r for r in results if r.status is not Status.SKIP]
        broken = [r for r in ran if r.status in (Status.FAIL, Status.ERROR)]
        skipped = [r for r in results if r.status is Status.SKIP]
        if ran and not broken and len(ran) >= len(skipped):
            return _none(results, ran, ranking)
        if not broken:  # most or all checks could not run: "nothing wrong" would overstate what was seen
            why = (
                f"nothing wrong among the {len(ran)} check(s) that ran, but {len(skipped)} of {len(results)} "
                "could not run"
                if ran
                else "nothing could be checked (every check was skipped)"
            )
            return Verdict(
                INCONCLUSIVE,
                0.0,
                f"Inconclusive: {why}.",
                ranking,
                tuple(f"{r.id}: {r.summary}" for r in skipped),
                (
                    NextStep(
                        "Remove what kept the checks from running (the reasons above): give the target your client "
                        "uses, or the log files to read.",
                        "capdoctor diagnose --provider openai --model MODEL --api-key-env OPENAI_API_KEY",
                    ),
                    NextStep("See what was discovered and from where.", "capdoctor config"),
                ),
            )
        return Verdict(
            INCONCLUSIVE,
            0.0,
            f"Inconclusive: {len(broken)} check(s) failed or broke without pointing at a cause.",
            ranking,
            tuple(f"{r.id}: {r.summary}" for r in broken),
            (
                NextStep("Run the failing checks alone with -v to see what they hit.", "capdoctor check ID -v"),
                *NONE_TEXT.steps,
            ),
        )

    share = top / total
    confidence = share * (1.0 - math.exp(-top / CONFIDENCE_SCALE))
    evidence = _evidence(results, top_cause)
    evidence_lines = tuple(f"[{check}] {f.message}" for f, check in evidence)
    text = CAUSE_TEXT[top_cause]
    contradictory = runner_up >= CLOSE_CALL * top
    if confidence < MIN_CONFIDENCE or contradictory:
        second = ranking[1][0] if contradictory else top_cause
        others = _evidence(results, second, 2) if contradictory else []
        return Verdict(
            INCONCLUSIVE,
            confidence,
            f"Inconclusive: the evidence points at {top_cause}"
            + (f" and {second} about equally" if contradictory else ", but only weakly")
            + ". Run again while the error is happening.",
            ranking,
            evidence_lines + tuple(f"[{c}] {f.message}" for f, c in others),
            _steps(
                [f for f, _ in evidence] + [f for f, _ in others],
                CAUSE_TEXT[top_cause].steps[:2] + (CAUSE_TEXT[second].steps[:2] if contradictory else ()),
            ),
        )
    return Verdict(
        top_cause,
        confidence,
        text.summary,
        ranking,
        evidence_lines,
        _steps([f for f, _ in evidence], text.steps),
    )
