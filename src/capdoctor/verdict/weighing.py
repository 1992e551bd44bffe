"""How the verdict weighs mixed evidence: per-cause facts (how often, over how long, how recent, recovered or
persisting) and the small table of rules an engineer applies to them.

Every finding adds its strength's weight to its cause (`against` subtracts); one check's share of one cause is
capped, so a check listing many similar findings cannot outvote the rest; weak-only causes are discounted
beside a strong one. `CAUSE_RULES` then scale each cause by its occurrence facts: repeats weigh more
(sub-linearly), a failure that stopped hours before another cause went on is history, and the failure the
evidence ends on is what blocks the user now. `CROSS_RULES` encode what no single cause's facts show (a TUN
carrying the provider's traffic while every model fails). Pure: recency is measured against the newest evidence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from capdoctor.model import Cause, CheckResult, Finding, Strength

WEIGHTS: dict[Strength, float] = {
    Strength.STRONG: 3.0,
    Strength.MODERATE: 2.0,
    Strength.WEAK: 1.0,
    Strength.CONTEXT: 0.0,
    Strength.AGAINST: -1.5,
}
"""How much one finding of each strength counts for its cause."""

PER_CHECK_CAP = 4.5
"""The most one check's findings add to one cause before the occurrence facts (1.5 strong findings)."""

WEAK_ONLY_DISCOUNT = 0.5
"""Factor applied to a cause backed only by weak findings when another cause has a strong one."""

PAST = timedelta(hours=6)
"""A cause last seen this long before the newest evidence, with another cause seen since, is history."""

BLOCKS: Mapping[str, bool] = {
    Cause.CAPACITY.value: False,
    Cause.NETWORK.value: False,
    Cause.QUOTA.value: True,
    Cause.ACCOUNT.value: True,
    Cause.CLIENT.value: True,
    Cause.HARDWARE.value: True,
}
"""Whether a cause blocks by itself until someone acts (a spent quota, a refused key, a model that does not
fit) or passes on its own (a saturated model, a flaky path): a blocking cause the evidence ends on outweighs
more of a passing one that came before."""

QUIET = "last_error_before_quiet"
"""The pattern finding of the logs: the newest error, with no completed request after it in its file."""


def weight(finding: Finding) -> float:
    """What one finding weighs for its cause, by its strength alone."""
    return WEIGHTS[finding.strength]


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass
class CauseFacts:
    """Everything the findings say about one cause: its weight before the rules and its occurrences.

    `count` is the occurrences the findings counted (0: measured, not counted); `weighed_count` leaves out the
    words layer's readings (vocabulary seen often is still only vocabulary); `recovered` counts those followed by
    a completed request; `holds_now`: the evidence ends on this cause with nothing completing after it.
    """

    cause: str
    base: float = 0.0
    strongest: float = 0.0
    count: int = 0
    weighed_count: int = 0
    recovered: int = 0
    first: datetime | None = None
    last: datetime | None = None
    holds_now: bool = False
    direct: bool = False
    """At least one finding of its own (a matched error, a measurement) rather than only a pattern hint."""
    rules: list[str] = field(default_factory=list)
    """The names of the rules that changed its weight (for -v and the JSON)."""
    explains: list[str] = field(default_factory=list)
    """Why another cause's evidence follows from this one (the reasons of the cross rules that favoured it)."""
    explained: bool = False
    """A cross rule found this cause's evidence to be a symptom of another cause."""


@dataclass(frozen=True)
class Scene:
    """What the whole body of evidence shows: the newest dated occurrence and each cause's facts."""

    newest: datetime | None
    facts: Mapping[str, CauseFacts]


@dataclass(frozen=True)
class CauseRule:
    """A rule over one cause's facts: `factor` returns what its weight is multiplied by (1.0: not applicable)."""

    name: str
    reason: str
    factor: Callable[[CauseFacts, Scene], float]


def _repeated(c: CauseFacts, _: Scene) -> float:
    return 1.0 + math.log(c.weighed_count) if c.weighed_count > 1 else 1.0


def _past(c: CauseFacts, scene: Scene) -> float:
    if c.last is None or scene.newest is None or scene.newest - c.last <= PAST:
        return 1.0
    later = any(o.last is not None and o.last > c.last for k, o in scene.facts.items() if k != c.cause and o.base)
    return 0.5 if later else 1.0


def _holds_now(c: CauseFacts, scene: Scene) -> float:
    if not c.holds_now or c.strongest < WEIGHTS[Strength.MODERATE]:
        return 1.0  # a weak hint at the end (a generic 502 passed on) says nothing of what holds
    if not any(o.base > 0 for k, o in scene.facts.items() if k != c.cause):
        return 1.0  # with no other cause beside it, what the evidence ends on tells nothing apart
    return 1.5 if BLOCKS[c.cause] else 1.25


CAUSE_RULES: tuple[CauseRule, ...] = (
    CauseRule(
        "repeated",
        "seen n times, it weighs 1 + ln(n) times one sighting: repeats of one failure are not independent "
        "witnesses, but twelve of one cause outweigh one of another",
        _repeated,
    ),
    CauseRule(
        "past",
        "last seen more than 6 hours before the newest evidence while another cause went on: it is history, not "
        "what blocks the user now (x0.5)",
        _past,
    ),
    CauseRule(
        "holds now",
        "the evidence ends on it (with at least a moderate finding) and nothing completes after, while another "
        "cause came before: what the user sees now (x1.5 for a cause that blocks by itself, x1.25 for one that "
        "passes)",
        _holds_now,
    ),
)
"""The per-cause rules, applied in order to each cause's capped weight."""


@dataclass(frozen=True)
class CrossRule:
    """A rule over the whole evidence: when `applies`, add `bonus` to one cause and scale others."""

    name: str
    reason: str
    applies: Callable[[Sequence[CheckResult], Scene], bool]
    bonus: tuple[str, float]
    scale: Mapping[str, float]


def _tun_captures_provider(results: Sequence[CheckResult]) -> bool:
    """The proxy check saw fake-IP answers for the provider's host or a TUN carrying its traffic."""
    for result in results:
        for f in result.findings:
            if (
                f.cause is Cause.NETWORK
                and weight(f) > 0
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


LOOPBACK = re.compile(r"(?<![\w.])(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)(?::\d{1,5})?(?![\w.])", re.I)
"""A loopback address in an error text or a URL: where local model servers listen."""
REFUSED = re.compile(r"refused|ECONNREFUSED|actively refused|connect(?:ion)? error", re.I)


def refused_locally(finding: Finding) -> bool:
    """A network finding about a connection to this machine that nothing accepted (a local server down)."""
    if finding.cause is not Cause.NETWORK:
        return False
    text = " ".join(str(finding.data.get(k, "")) for k in ("example", "base_url", "url", "host")) + finding.message
    return bool(LOOPBACK.search(text) and REFUSED.search(text))


def _server_died_loading(results: Sequence[CheckResult], scene: Scene) -> bool:
    hardware = scene.facts.get(Cause.HARDWARE.value)
    return bool(hardware and hardware.base > 0) and any(
        refused_locally(f) and weight(f) > 0 for r in results for f in r.findings
    )


CROSS_RULES: tuple[CrossRule, ...] = (
    CrossRule(
        "TUN carries the provider's traffic while every model fails",
        "every model failing while a TUN or fake-IP resolver carries the provider's traffic is more likely the "
        "route than the account's quota",
        lambda rs, _: _tun_captures_provider(rs) and _every_model_failed(rs),
        (Cause.NETWORK.value, WEIGHTS[Strength.MODERATE]),
        {Cause.QUOTA.value: 0.75, Cause.ACCOUNT.value: 0.75},
    ),
    CrossRule(
        "the local server ran out of memory, then refused connections",
        "a local model server that ran out of memory loading the model is down: the refused connections to it "
        "are its symptom, not a network fault",
        _server_died_loading,
        (Cause.HARDWARE.value, WEIGHTS[Strength.MODERATE]),
        {Cause.NETWORK.value: 0.25},
    ),
)
"""Cross-cause rules, applied after the per-cause rules."""


def cause_facts(results: Sequence[CheckResult]) -> Scene:
    """Each cause's capped weight and occurrence facts, and the newest dated occurrence of all."""
    facts = {c.value: CauseFacts(c.value) for c in Cause}
    for result in results:
        per_check = {c.value: 0.0 for c in Cause}
        for f in result.findings:
            c = facts[f.cause.value]
            per_check[f.cause.value] += weight(f)
            c.strongest = max(c.strongest, weight(f))
            if f.data.get("pattern") == QUIET:
                c.holds_now = True
            if weight(f) <= 0:
                continue
            count = f.data.get("count")
            if isinstance(count, int) and count > 0:
                c.count += count
                c.weighed_count += 0 if f.data.get("layer") == "words" else count
                recovered = f.data.get("recovered")
                c.recovered += recovered if isinstance(recovered, int) else 0
            if "pattern" not in f.data:
                c.direct = True
            for key, pick in (("first", min), ("last", max)):
                at = _when(f.data.get(key))
                if at is not None:
                    old = getattr(c, key)
                    setattr(c, key, at if old is None else pick(old, at))
        for cause, value in per_check.items():
            facts[cause].base += min(value, PER_CHECK_CAP)
    any_strong = {k for k, c in facts.items() if c.strongest >= WEIGHTS[Strength.STRONG]}
    for k, c in facts.items():
        if any_strong - {k} and c.strongest <= WEIGHTS[Strength.WEAK]:
            c.base *= WEAK_ONLY_DISCOUNT
    newest = max((c.last for c in facts.values() if c.last is not None and c.base > 0), default=None)
    return Scene(newest, facts)


def score(results: Sequence[CheckResult]) -> dict[str, float]:
    """Evidence per cause after every rule (never negative)."""
    return weigh(results)[0]


def weigh(results: Sequence[CheckResult]) -> tuple[dict[str, float], Scene]:
    """Evidence per cause after every rule, and the facts it was weighed from (their `rules` filled in)."""
    scene = cause_facts(results)
    totals: dict[str, float] = {}
    for k, c in scene.facts.items():
        value = c.base
        if value > 0:
            for rule in CAUSE_RULES:
                factor = rule.factor(c, scene)
                if factor != 1.0:
                    value *= factor
                    c.rules.append(rule.name)
        totals[k] = value
    for cross in CROSS_RULES:
        if cross.applies(results, scene):
            cause, bonus = cross.bonus
            totals[cause] += bonus
            scene.facts[cause].rules.append(cross.name)
            scene.facts[cause].explains.append(cross.reason)
            for other, factor in cross.scale.items():
                totals[other] *= factor
                scene.facts[other].explained = scene.facts[other].explained or factor < 0.5
    return {k: max(0.0, v) for k, v in totals.items()}, scene
