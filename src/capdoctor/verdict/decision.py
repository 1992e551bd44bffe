"""The verdict: one pure function from check results to the primary cause, what else is present, how sure, and
what to do.

The only place where capacity vs quota vs account vs network vs hardware vs client is decided. `decide` does no
I/O, reads no clock and imports nothing heavy, so it is tested exhaustively with hand-written result lists and
reused unchanged by `logs`, `explain` and `history`.

The primary cause explains most of what the user sees now: findings are weighed per cause with their occurrence
facts by `weighing.py`. Every other cause the evidence supports on its own is named in `Verdict.also`;
`inconclusive` is kept for evidence that truly conflicts. Next steps come from `advice.py`; the confidence is
mapped through `calibration.py`, so a stated 90% is right about nine times in ten on real error texts.

"No problem" is only said about what was tested. Every skipped or broken check, and every part a check reports
in `data["untested"]`, is a coverage gap: `none` drops confidence with each gap and names them, and a decisive
gap (generation not probed) makes the verdict `inconclusive`, naming the causes it could not rule out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from capdoctor.model import (
    INCONCLUSIVE,
    NONE,
    CheckResult,
    Contributing,
    Finding,
    NextStep,
    Status,
    Verdict,
)
from capdoctor.target.clientuse import ClientInUse
from capdoctor.text import stamp as _stamp
from capdoctor.verdict.advice import CAUSE_TEXT, CauseText, dedupe, fit_step, measured, steps_for, summary
from capdoctor.verdict.calibration import calibrate
from capdoctor.verdict.weighing import CauseFacts, weigh, weight

CONFIDENCE_SCALE = 2.5
"""Evidence weight at which the raw measure reaches 1 - 1/e (~0.63) before the share is applied."""

MIN_CONFIDENCE = 0.35
"""Below this raw measure the verdict is `inconclusive`."""

CLOSE_CALL = 0.8
"""If the runner-up reaches this share of the winner's weight after every rule, the evidence conflicts."""

ALSO_MIN = 1.0
"""The least weight (after every rule) a cause needs to be named beside the primary one."""

UNTESTED_CAP = 0.6
"""The most a named cause may claim while a decisive part that could have shown another cause went untested."""

NONE_TEXT = CauseText(
    "no problem",
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

    `decisive`: the question cannot be answered without it (generation never probed); "no problem" is not said.
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
    """`none`, as sure as the coverage allows; `inconclusive` when a decisive part was not tested, or when a
    check saw an error that no row placed (`data["unplaced"]`: `none` means no error at all)."""
    unplaced = [str(r.data["unplaced"]) for r in ran if r.data.get("unplaced")]
    if unplaced:
        return Verdict(
            INCONCLUSIVE,
            0.0,
            f"Inconclusive: the text holds {unplaced[0]}, but nothing in it names the cause.",
            ranking,
            tuple(f"{r.id}: {r.summary}" for r in ran if r.data.get("unplaced")),
            (
                NextStep(
                    "Paste the whole error: the status line, the response body and the exception's message, with the "
                    "lines around it; the cause is in the provider's own words, which this excerpt does not hold."
                ),
                NextStep("Run a diagnosis while the error is happening.", "capdoctor diagnose"),
            ),
        )
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


def _evidence(results: Sequence[CheckResult], cause: str, limit: int = 5) -> list[tuple[Finding, str]]:
    rows = [(f, r.id) for r in results for f in r.findings if f.cause.value == cause and weight(f) > 0]
    rows.sort(key=lambda row: -weight(row[0]))
    return rows[:limit]


def _span(first: datetime, last: datetime) -> str:
    hours = (last - first).total_seconds() / 3600
    if hours >= 36:
        return f"{round(hours / 24)} days"
    if hours >= 1.5:
        return f"{hours:.0f} hours"
    minutes = max(1, round(hours * 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def occurrence(c: CauseFacts) -> str:
    """How often and when a cause was seen, in words: `seen 14 times over 2 days (5 Dec 09:10 to 7 Dec 08:55
    UTC), every one recovered on retry`; empty where the evidence was measured rather than counted."""
    if c.count <= 0:
        return ""
    if c.count == 1:
        text = f"seen once, at {_stamp(c.last)}" if c.last else "seen once"
    elif c.first and c.last and c.last - c.first >= timedelta(hours=1):
        text = f"seen {c.count} times over {_span(c.first, c.last)} ({_stamp(c.first)} to {_stamp(c.last)})"
    elif c.first and c.last:
        text = f"seen {c.count} times within {_span(c.first, c.last)}, from {_stamp(c.first)}"
    else:
        text = f"seen {c.count} times"
    if c.count >= 2 and c.recovered == c.count:
        text += ", every one recovered on retry (intermittent)"
    elif c.recovered:
        text += f", {c.recovered} recovered on retry"
    if c.holds_now:
        text += "; the log ends on it, with nothing completing after"
    return text


def _iso(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at else None


def raw_confidence(top: float, total: float) -> float:
    """The raw evidence measure of a cause weighing `top` out of `total`: its share times how much evidence
    there is (calibrated before it is stated)."""
    return (top / total if total else 0.0) * (1.0 - math.exp(-top / CONFIDENCE_SCALE))


def decide(results: Sequence[CheckResult], client: ClientInUse | None = None) -> Verdict:
    """Weigh every finding of `results` and name the cause (or `none` / `inconclusive`) and every other cause
    present; the next steps are fitted to `client` (None: left as the findings wrote them)."""
    facts = measured(results)
    verdict = _weigh(results, facts)
    return replace(verdict, next_steps=dedupe([fit_step(s, client) for s in verdict.next_steps], facts))


def _also(
    results: Sequence[CheckResult],
    scores: Mapping[str, float],
    facts_by_cause: Mapping[str, CauseFacts],
    skip: set[str],
    facts: frozenset[str],
) -> tuple[Contributing, ...]:
    """Every other cause with evidence of its own, strongest first: how sure it is present (the confidence its
    evidence would have alone, before recency and persistence weigh it against the others), its plain summary,
    evidence, steps, count and times."""
    out = []
    for cause, value in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        c = facts_by_cause[cause]
        if cause in skip or value < ALSO_MIN or not c.direct:
            continue
        evidence = _evidence(results, cause, 3)
        when = occurrence(c)
        name = CAUSE_TEXT[cause].name
        head = str(evidence[0][0].data.get("title") or evidence[0][0].message) if evidence else summary(cause, facts)
        note = "; a symptom of the primary cause" if c.explained else ""
        out.append(
            Contributing(
                cause,
                round(calibrate(1.0 - math.exp(-c.base / CONFIDENCE_SCALE)), 3),
                f"{name[:1].upper()}{name[1:]}: {head}" + (f" — {when}" if when else "") + note,
                tuple(f"[{check}] {f.message}" for f, check in evidence),
                steps_for(cause, [f for f, _ in evidence], facts, limit=3, generic=2),
                c.count,
                _iso(c.first),
                _iso(c.last),
            )
        )
    return tuple(out)


def _weigh(results: Sequence[CheckResult], facts: frozenset[str]) -> Verdict:
    """The verdict as the evidence gives it, with the findings' own next steps (before any client fitting)."""
    scores, scene = weigh(results)
    ranking = tuple(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])))
    top_cause, top = ranking[0]
    runner_up = ranking[1][1]
    total = sum(scores.values())

    if top <= 0:
        return _nothing(results, ranking)

    raw = raw_confidence(top, total)
    evidence = _evidence(results, top_cause)
    evidence_lines = tuple(f"[{check}] {f.message}" for f, check in evidence)
    contradictory = runner_up >= CLOSE_CALL * top
    if raw < MIN_CONFIDENCE or contradictory:
        second = ranking[1][0] if contradictory else top_cause
        others = _evidence(results, second, 2) if contradictory else []
        return Verdict(
            INCONCLUSIVE,
            calibrate(raw),
            f"Inconclusive: the evidence points at {CAUSE_TEXT[top_cause].name}"
            + (f" and {CAUSE_TEXT[second].name} about equally" if contradictory else ", but only weakly")
            + ". Run again while the error is happening.",
            ranking,
            evidence_lines + tuple(f"[{c}] {f.message}" for f, c in others),
            dedupe(
                [s for f, _ in [*evidence, *others] for s in f.next_steps]
                + list(steps_for(top_cause, [], facts, generic=2))
                + list(steps_for(second, [], facts, generic=2) if contradictory else ()),
                facts,
            ),
            _also(results, scores, scene.facts, {top_cause, second}, facts) if contradictory else (),
        )
    when = occurrence(scene.facts[top_cause])
    why = "".join(f" {r[0].upper()}{r[1:]}." for r in scene.facts[top_cause].explains)
    confidence, untested = calibrate(raw), _untested(results, top_cause)
    if untested:
        confidence = min(confidence, UNTESTED_CAP)
    return Verdict(
        top_cause,
        confidence,
        summary(top_cause, facts) + (f" It was {when}." if when else "") + why + untested,
        ranking,
        evidence_lines,
        steps_for(top_cause, [f for f, _ in evidence], facts),
        _also(results, scores, scene.facts, {top_cause}, facts),
    )


def _untested(results: Sequence[CheckResult], cause: str) -> str:
    """What a decisive gap left open beside `cause` (the model's generation never probed under a short deadline),
    as a sentence for the summary; empty when no decisive gap could have named another cause."""
    gaps = [g for g in coverage_gaps(results) if g.decisive and set(g.open_causes) - {cause}]
    if not gaps:
        return ""
    others = list(dict.fromkeys(c for g in gaps for c in g.open_causes if c != cause))
    what = "; ".join(f"{g.what} ({g.why})" for g in gaps)
    return f" Not tested: {what}, so {', '.join(others)} could not be ruled out."


def _nothing(results: Sequence[CheckResult], ranking: tuple[tuple[str, float], ...]) -> Verdict:
    """No cause has evidence: `none` over what was tested, or `inconclusive` when too little ran or broke."""
    ran = [r for r in results if r.status is not Status.SKIP]
    broken = [r for r in ran if r.status in (Status.FAIL, Status.ERROR)]
    skipped = [r for r in results if r.status is Status.SKIP]
    if ran and not broken and len(ran) >= len(skipped):
        return _none(results, ran, ranking)
    if not broken:  # most or all checks could not run: "nothing wrong" would overstate what was seen
        why = (
            f"nothing wrong among the {len(ran)} check(s) that ran, but {len(skipped)} of {len(results)} could not run"
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
