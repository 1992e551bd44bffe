"""Time and model patterns over classified error events: pure functions, no I/O, no clock.

Contract: `analyse(events)` returns counts by hour of day, by day and by model, the bursts, the retries
that eventually succeeded, the peak-hour cluster (errors bunched in a few hours of the day across several
days argue provider capacity) and the model spread (one model only argues capacity; every model argues
quota or account). It only counts and compares; weighing the evidence is the verdict's job, and turning a
pattern into a finding is `findings.py`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from itertools import pairwise
from operator import attrgetter, itemgetter

from capdoctor.logscan.results import Event

BURST_GAP = timedelta(seconds=60)
"""Errors closer together than this belong to one burst."""
BURST_MIN = 3
SAMPLED = 3
"""Records per burst whose place is kept, for the few request ids a ticket lists."""
PEAK_WINDOW_HOURS = 4
PEAK_SHARE = 0.6
PEAK_MIN_EVENTS = 10
PEAK_MIN_DAYS = 2
MODEL_MIN_EVENTS = 3
ONE_MODEL_SHARE = 0.9
MODEL_CAUSES = ("capacity", "quota", "account")
"""Only these causes say something when compared across models."""


@dataclass
class Burst:
    """A run of errors with gaps under BURST_GAP: an incident, as a support ticket lists it.

    `cause` is the cause most of its errors name; `request_ids` are filled by the caller that can read the
    records again (`sample`: where its first records start, as (path, byte offset)).
    """

    start: str
    end: str
    count: int
    cause: str = ""
    causes: dict[str, int] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    sample: tuple[tuple[str, int], ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape: every field but `sample`."""
        return {k: v for k, v in self.__dict__.items() if k != "sample"}


@dataclass
class Patterns:
    """What the error events show over time and across models."""

    by_hour: dict[int, int] = field(default_factory=dict)
    by_day: dict[str, int] = field(default_factory=dict)
    by_model: dict[str, int] = field(default_factory=dict)
    bursts: list[Burst] = field(default_factory=list)
    retries: int = 0
    retries_succeeded: int = 0
    peak_hours: tuple[int, int] | None = None
    peak_share: float = 0.0
    model_spread: str | None = None  # "one" | "many" | None
    dated: int = 0
    undated: int = 0


def _peak(by_hour: Counter[int], total: int) -> tuple[tuple[int, int] | None, float]:
    best_start, best = 0, 0
    for start in range(24):
        n = sum(by_hour.get((start + k) % 24, 0) for k in range(PEAK_WINDOW_HOURS))
        if n > best:
            best_start, best = start, n
    share = best / total if total else 0.0
    return ((best_start, (best_start + PEAK_WINDOW_HOURS) % 24), share) if total else (None, 0.0)


def _bursts(dated: Sequence[tuple[datetime, Event]]) -> list[Burst]:
    """The runs of at least BURST_MIN dated events (ascending by time) with gaps under BURST_GAP, each with its
    causes and models."""
    cuts = [i for i, (a, b) in enumerate(pairwise(dated), 1) if b[0] - a[0] > BURST_GAP]  # where a run starts
    out: list[Burst] = []
    start = 0
    for end in (*cuts, len(dated)):
        if end - start >= BURST_MIN:
            run = dated[start:end]
            causes = Counter(e.cause for _, e in run)
            models = Counter(e.model for _, e in run if e.model)
            out.append(
                Burst(
                    run[0][0].isoformat(),
                    run[-1][0].isoformat(),
                    end - start,
                    causes.most_common(1)[0][0],
                    dict(causes.most_common()),
                    [m for m, _ in models.most_common(5)],
                    sample=tuple((e.path, e.offset) for _, e in run[:SAMPLED]),
                )
            )
        start = end
    return out


def analyse(events: Sequence[Event]) -> Patterns:
    """Count and compare the events (see the module docstring for what each figure argues)."""
    out = Patterns()
    hours: Counter[int] = Counter()
    days: Counter[str] = Counter()
    models: Counter[str] = Counter()
    times: list[datetime] = sorted(e[0] for e in events if e[0] is not None)  # Event.ts, by index: once per event
    out.dated, out.undated = len(times), len(events) - len(times)
    dates: Counter[date] = Counter()
    hours.update(map(attrgetter("hour"), times))  # counted in C: once per event of a dense log
    dates.update(map(datetime.date, times))  # the day is formatted once per distinct day, below
    for day, n in dates.items():
        days[day.isoformat()] += n
    retries = succeeded = 0
    for _ts, cause, _sig, model, retry, ok, *_ in events:  # unpacked: a named field is a call per event
        if model and cause in MODEL_CAUSES:
            models[model] += 1
        if retry:
            retries += 1
            succeeded += int(ok)
    out.retries, out.retries_succeeded = retries, succeeded
    out.by_hour = {h: hours.get(h, 0) for h in range(24)}
    out.by_day = dict(sorted(days.items()))
    out.by_model = dict(models.most_common())
    out.bursts = _bursts(sorted(((e[0], e) for e in events if e[0] is not None), key=itemgetter(0)))
    if len(times) >= PEAK_MIN_EVENTS and len(days) >= PEAK_MIN_DAYS:
        window, share = _peak(hours, len(times))
        if share >= PEAK_SHARE:
            out.peak_hours, out.peak_share = window, share
    total_models = sum(models.values())
    if total_models >= MODEL_MIN_EVENTS:
        top = models.most_common(1)[0][1]
        if len(models) == 1 or top / total_models >= ONE_MODEL_SHARE:
            out.model_spread = "one"
        elif len(models) >= 2:
            out.model_spread = "many"
    return out
