"""At a burst of failures, look at the network once: the cheap checks, in the background, recorded.

Contract: `Bursts.observe(round)` is fed every judged exchange (by the recorder's thread, in order); when
`failures` of them failed within `window_s` seconds (by the exchanges' own times), it starts `take` once in a
daemon thread and hands the `Snapshot` it returns to `record`. One burst gives one snapshot: the next needs the
failures to stop (a success, or the window passing without `failures` of them) and `MIN_INTERVAL_S` to pass,
so a long outage does not become a stream of network probes. `network_snapshot` is the default `take`: the
`proxy` and `paths` checks (system and environment proxies, TUN, DNS, connect, TLS and first byte per path) —
no inference, no key sent — against the upstream the failing exchange went to, its result redacted.
A failing `take` is one warning, never an end of forwarding.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capdoctor.watch.records import RoundRecord

if TYPE_CHECKING:
    from capdoctor.watch.store import Snapshot

MIN_INTERVAL_S = 300.0
SNAPSHOT_TIMEOUT_S = 20.0
SNAPSHOT_CHECKS = ("proxy", "paths")


class Bursts:
    """Counts failures in a sliding window and takes one network snapshot per burst."""

    def __init__(
        self,
        failures: int,
        window_s: float,
        take: Callable[[RoundRecord], Snapshot],
        record: Callable[[Snapshot], None],
        warn: Callable[[str], None],
        on_burst: Callable[[], None] = lambda: None,
    ) -> None:
        self.failures, self.window_s = failures, window_s
        self.take, self.record, self.warn, self.on_burst = take, record, warn, on_burst
        self._times: deque[float] = deque(maxlen=max(1, failures))
        self._active = False
        self._last: float | None = None
        self.threads: list[threading.Thread] = []
        self.bursts = 0

    def observe(self, rnd: RoundRecord) -> bool:
        """Count one exchange; True when it starts a burst (and its snapshot)."""
        if self.failures <= 0:
            return False
        at = rnd.started
        if all(a.ok for a in rnd.attempts):
            self._active = False
            self._times.clear()
            return False
        self._times.append(at)
        full = len(self._times) == self.failures and at - self._times[0] <= self.window_s
        if not full:
            if len(self._times) < self.failures or at - self._times[0] > self.window_s:
                self._active = False
            return False
        if self._active or (self._last is not None and at - self._last < MIN_INTERVAL_S):
            return False
        self._active, self._last = True, at
        self.bursts += 1
        self.on_burst()
        thread = threading.Thread(target=self._snapshot, args=(rnd,), name="capdoctor-proxy-burst", daemon=True)
        self.threads = [t for t in self.threads if t.is_alive()] + [thread]
        thread.start()
        return True

    def _snapshot(self, rnd: RoundRecord) -> None:
        try:
            self.record(self.take(rnd))
        except Exception as exc:  # a snapshot is context; forwarding and recording go on without it
            self.warn(f"capdoctor: warning: the network snapshot at a burst failed: {type(exc).__name__}: {exc}")


def network_snapshot(
    rnd: RoundRecord, base_urls: Mapping[str, str], env: Mapping[str, str], home: Path, cwd: Path
) -> Snapshot:
    """The `proxy` and `paths` checks against the upstream of `rnd` (`base_urls`: upstream → the base URL its
    clients use), as a redacted `Snapshot`."""
    import time

    from capdoctor.redact import redact
    from capdoctor.run.context import Target
    from capdoctor.run.diagnosis import RunRequest, diagnose, env_secrets
    from capdoctor.target.options import resolve
    from capdoctor.watch.store import Snapshot

    ex = rnd.exchange
    upstream = ex.upstream if ex is not None else ""
    target = Target(
        provider=rnd.provider or "openai-compatible",
        base_url=base_urls.get(upstream, upstream),
        model=rnd.model or "unknown",
        sources={"base_url": "capdoctor proxy upstream"},
    )
    request = RunRequest(
        target=target,
        env=env,
        home=home,
        cwd=cwd,
        timeout=SNAPSHOT_TIMEOUT_S,
        only=list(SNAPSHOT_CHECKS),
        no_inference=True,
        options=resolve([], env=env),
    )
    outcome = diagnose(request)
    data: dict[str, Any] = {
        "upstream": upstream,
        "trigger": {"model": rnd.model, "cause": rnd.attempts[0].cause if rnd.attempts else None},
        "checks": [
            {
                "id": r.id,
                "status": r.status.value,
                "summary": r.summary,
                "findings": [{"cause": f.cause.value, "message": f.message} for f in r.findings],
            }
            for r in outcome.results
        ],
        "summary": outcome.verdict.summary,
    }
    return Snapshot(time.time(), "burst", outcome.verdict.cause, redact(data, env_secrets(env), str(home)))
