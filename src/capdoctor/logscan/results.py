"""What a scan is asked and what it produces: `ScanOptions` in; per-file facts, per-signature statistics and the
error events out (`ScanResult`), with the merge of partial results (one per byte range) in file order.

Contract: plain data and its arithmetic (merging, pickling a worker's result compactly); no I/O, no
classification, no printing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from capdoctor.logscan import sources as src

MAX_EVENTS = 200_000
"""Events kept for the time patterns; counts stay exact beyond this, only the time series is capped."""
KEPT_IDS = 5
"""Request ids kept per signature: enough for a support ticket."""


@dataclass(frozen=True)
class ScanOptions:
    """How to scan: the cut-off instant, the clock value for syslog years, the engine preference, how many
    worker processes (None: the CPU count, at most 8) and the read size."""

    since: datetime | None = None
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    engine: str | None = None
    workers: int | None = None
    chunk_bytes: int = src.CHUNK_BYTES


@dataclass
class FileInfo:
    """One input as reported in `files[]`: bytes and lines read, and why it was skipped (if it was)."""

    path: str
    bytes: int = 0
    lines: int = 0
    skipped: str | None = None
    note: str | None = None


class Event(NamedTuple):
    """One classified error record: when, what, which model, whether it was retried and whether a request
    completed soon after it (`succeeded`: it recovered).

    A named tuple rather than a frozen dataclass: a dense log makes one per error record in a worker and
    sends them all to the parent; a tuple is built and pickled at a fraction of the cost, and is as immutable.
    """

    ts: datetime | None
    cause: str
    signature: str
    model: str | None
    retry: bool
    succeeded: bool
    path: str
    line: int
    offset: int


def min_dt(a: datetime | None, b: datetime | None) -> datetime | None:
    """The earlier of two optional times."""
    return b if a is None else a if b is None else min(a, b)


def max_dt(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later of two optional times."""
    return b if a is None else a if b is None else max(a, b)


@dataclass
class SigStat:
    """Everything aggregated for one signature over all inputs."""

    signature: str
    cause: str
    count: int = 0
    first: datetime | None = None
    last: datetime | None = None
    example: str = ""
    excerpt: str = ""
    """The words that decided the first match (the engine's excerpt), for `explain`'s evidence."""
    example_path: str = ""
    example_line: int = 0
    models: Counter[str] = field(default_factory=Counter)
    providers: Counter[str] = field(default_factory=Counter)
    request_ids: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)

    def merge(self, other: SigStat) -> None:
        """Fold `other` (the same signature from another file or byte range) into this one."""
        self.count += other.count
        self.first = min_dt(self.first, other.first)
        self.last = max_dt(self.last, other.last)
        if not self.example:
            self.example, self.example_path, self.example_line = other.example, other.example_path, other.example_line
            self.excerpt = other.excerpt
        self.models.update(other.models)
        self.providers.update(other.providers)
        self.statuses.update(other.statuses)
        self.keep_ids(other.request_ids)

    def keep_ids(self, rids: Sequence[str]) -> None:
        """Keep the first KEPT_IDS distinct request ids (what a support ticket needs; the rest add nothing)."""
        kept = self.request_ids
        for rid in rids:
            if len(kept) >= KEPT_IDS:
                return
            if rid not in kept:
                kept.append(rid)

    @property
    def ids_open(self) -> bool:
        """Whether another request id would still be kept."""
        return len(self.request_ids) < KEPT_IDS


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def _micros(ts: datetime | None) -> int | datetime | None:
    """A UTC time as whole microseconds since the epoch (exact); any other value as it is."""
    return (ts - _EPOCH) // _MICROSECOND if ts is not None and ts.tzinfo is timezone.utc else ts


@dataclass
class ScanResult:
    """The scanner's output: per-file facts, per-signature statistics, and the error events in order."""

    files: list[FileInfo] = field(default_factory=list)
    stats: dict[str, SigStat] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    events_dropped: int = 0
    too_old: int = 0
    """Error records left out because they are older than --since."""
    engine: str = ""
    last_success: dict[str, int] = field(default_factory=dict)
    """Per path: absolute offset of the first completed request after the newest error seen while scanning
    (-1: none). Enough to tell whether the log 'went quiet' on its last error."""
    unplaced: str = ""
    """When no error was placed at all: the first mark of an error the inputs hold all the same, named
    (`unplaced.describe`: "an exception (KeyError)"); empty when they hold none. `none` is said only then."""

    def __getstate__(self) -> dict[str, Any]:
        """The pickled form (a worker's result on its way to the parent): the events as columns, one per field
        (a column of repeated names and paths pickles as references), each event's UTC time as whole
        microseconds since the epoch, exactly (pickling a datetime costs twenty times more)."""
        state = self.__dict__.copy()
        columns: list[Any] = [list(c) for c in zip(*self.events, strict=True)] or [[] for _ in Event._fields]
        columns[0] = [_micros(t) for t in columns[0]]
        state["events"] = columns
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        columns = state["events"]
        epoch, delta, new = _EPOCH, timedelta, tuple.__new__  # `_micros` undone, inline: once per event
        columns[0] = [epoch + delta(0, 0, t) if t.__class__ is int else t for t in columns[0]]
        state["events"] = [new(Event, e) for e in zip(*columns, strict=True)]
        self.__dict__.update(state)

    def merge(self, other: ScanResult) -> None:
        """Fold a partial result (another process's byte range) into this one."""
        by_path = {f.path: f for f in self.files}
        for info in other.files:
            mine = by_path.get(info.path)
            if mine is None:
                self.files.append(info)
                by_path[info.path] = info
            else:
                mine.bytes += info.bytes
                mine.lines += info.lines
                mine.skipped = mine.skipped or info.skipped
                mine.note = mine.note or info.note
        for sid, stat in other.stats.items():
            if sid in self.stats:
                self.stats[sid].merge(stat)
            else:
                self.stats[sid] = stat
        room = MAX_EVENTS - len(self.events)
        self.events.extend(other.events[: max(room, 0)])
        self.events_dropped += other.events_dropped + max(0, len(other.events) - max(room, 0))
        self.too_old += other.too_old
        for path, off in other.last_success.items():
            self.last_success[path] = max(self.last_success.get(path, -1), off)
        self.engine = self.engine or other.engine
