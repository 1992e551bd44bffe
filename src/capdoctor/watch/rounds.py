"""The watch loop: every interval, one round of the cheap checks through the engine, recorded and counted.

Contract: a round is `engine.diagnose` over `ROUND_CHECKS` (the models check within `ROUND_MAX_REQUESTS`
requests of at most 16 output tokens, the status page, the quota headers, the network paths) under its own
deadline. Its `RoundRecord` goes to each sink in turn (the store first). `watch` runs rounds until `count` or
`stop`; a stop while a round probes abandons it (its record would be partial), one while it is recorded lets
it finish, and one between rounds ends the wait within `POLL_S`. The loop never prints; the sinks do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from capdoctor.watch.records import RoundRecord, round_of

if TYPE_CHECKING:
    from capdoctor.run.diagnosis import RunRequest

ROUND_CHECKS: tuple[str, ...] = ("models", "status", "quota", "paths")
"""The cheap checks a round runs: nothing that installs, scans the disk or reads local hardware."""

ROUND_MAX_REQUESTS = 12
"""The models check's request cap in a round (the list call included)."""

MIN_QUIET_INTERVAL_S = 60.0
"""Below this interval `watch` warns: every round spends a little of the user's quota."""

Sink = Callable[[RoundRecord], None]


class Stopped(Exception):
    """Raised inside a round when a stop request arrives while it probes: the round is abandoned."""


POLL_S = 0.2
"""How often the wait between rounds looks at the stop flag a signal handler set."""


@dataclass
class Guard:
    """Where the loop stands, for the signal handler: may a stop abandon the round right now?

    `stop` is for other threads (an embedding program, tests). A signal handler only sets `requested` (or
    raises `Stopped` while a round probes): it must not take a lock the interrupted code may be holding, which
    `Event.set` would.
    """

    stop: threading.Event
    probing: bool = False
    requested: bool = False

    @property
    def stopping(self) -> bool:
        """True once a stop was asked for, by a signal or through `stop`."""
        return self.requested or self.stop.is_set()

    def request_stop(self) -> None:
        """Called from a signal handler: stop after the current step, at once when a round only probes."""
        self.requested = True
        if self.probing:
            self.probing = False
            raise Stopped()

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`, or less when a stop comes (seen within `POLL_S`)."""
        deadline = time.monotonic() + seconds
        while not self.stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.stop.wait(min(left, POLL_S))


def round_request(base: RunRequest) -> RunRequest:
    """`base` narrowed to a round: the round's checks and the models check's request cap."""
    from capdoctor.checks import registry

    options = dict(base.options)
    wanted = int(options.get("models.max_requests", ROUND_MAX_REQUESTS))
    options["models.max_requests"] = max(1, min(wanted, ROUND_MAX_REQUESTS))
    return replace(base, checks=registry.select(list(ROUND_CHECKS)), only=None, skip=None, options=options)


def run_round(request: RunRequest, clock: Callable[[], float] = time.time) -> RoundRecord:
    """Run one round and return its record (raises only what the engine raises, and `Stopped`)."""
    from capdoctor.run import diagnosis as engine

    started = clock()
    outcome = engine.diagnose(request)
    target = request.target
    return round_of(
        outcome.results,
        outcome.verdict,
        target.provider if target else None,
        target.model if target else None,
        started,
        clock(),
    )


def watch(
    request: RunRequest,
    interval_s: float,
    count: int | None,
    sinks: Sequence[Sink],
    guard: Guard,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run rounds every `interval_s` seconds until `count` rounds are recorded or a stop; returns the count.

    Rounds start on a fixed schedule: a round that overruns the interval makes the next start at once, never two.
    """
    req = round_request(request)
    done = 0
    next_start = clock()
    while not guard.stopping and (count is None or done < count):
        guard.probing = True
        try:
            rnd = run_round(req)
        except Stopped:
            break
        finally:
            guard.probing = False
        for sink in sinks:
            sink(rnd)
        done += 1
        if count is not None and done >= count:
            break
        next_start = max(next_start + interval_s, clock())
        guard.sleep(max(0.0, next_start - clock()))
    return done
