"""What the proxy keeps of each exchange, decided off the event loop: cause, history row, metrics, burst.

Contract: `judge(observed)` classifies a failure with the one engine (`signatures.classify`, as the models check
and `capdoctor explain` read a provider's words: the body or the stream's error event, its status, its
headers, in the upstream's context) and returns the `RoundRecord` the history keeps — a live round of kind
`proxy` with one attempt, whose `ExchangeRecord` holds the error text redacted (the request's own credential
values removed exactly, then every key shape) and bounded to `ERROR_TEXT_CHARS`. `Recorder` does that in one
writer thread: the event loop only hands it `Observed`s through a bounded queue (`MAX_QUEUE`; past it an
exchange is counted as dropped, never waited for), and it writes batches in one transaction each. When the
history cannot be written it warns once and goes on forwarding and counting metrics. It never stores or prints
a prompt, a completion, a header value that carries a credential, or a query string.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capdoctor.proxy.exchange import Observed
from capdoctor.watch.records import PROXY, WATCH, AttemptRecord, ExchangeRecord, RoundRecord

if TYPE_CHECKING:
    from capdoctor.proxy.burst import Bursts
    from capdoctor.proxy.metrics import ProxyMetrics
    from capdoctor.watch.store import Snapshot

ERROR_TEXT_CHARS = 500
MAX_QUEUE = 10_000
"""Exchanges waiting for the writer at most (a few KiB each): memory stays bounded if the disk stalls."""
BATCH = 500
ROLE = "proxy"
"""The attempts' role: neither `primary` nor an alternative, so a watch outage streak is not moved by them."""
TIMEOUT_ROW = "name.timeout"
"""The engine's row for a request that got no answer in time (its remedy: check the network path)."""
NETWORK_KINDS = frozenset({"refused", "timeout", "reset", "tls", "connect", "cut", "html"})


def _error_text(obs: Observed) -> str | None:
    """The provider's words for the failure (`code (type): message` where the engine finds fields), whole."""
    from capdoctor.classifier.signatures import extract_error

    raw = obs.error_event or obs.error_body
    if raw:
        fields = extract_error(raw)
        code = fields.get("code")  # Google's is a number (503), OpenAI's and Anthropic's a word
        head = " ".join(
            p for p in (str(code) if code else None, f"({fields['type']})" if fields.get("type") else None) if p
        )
        msg = " ".join(str(fields.get("message") or "").split())
        text = f"{head}: {msg}" if head and msg else head or msg
        return text or " ".join(raw.split())
    return obs.detail


def _bounded(text: str | None, secrets: tuple[str, ...]) -> str | None:
    if not text:
        return None
    from capdoctor.redact import redact_text
    from capdoctor.text import neutralise, shorten

    return shorten(neutralise(redact_text(text, secrets)), ERROR_TEXT_CHARS)


def _failure(obs: Observed) -> tuple[bool, str | None, str | None, str | None]:
    """Whether the exchange failed, its kind, and the engine's row and cause for it (None where none applies)."""
    status = obs.status
    if obs.outcome == "upstream_failed":
        from capdoctor.classifier.signatures import classify

        # the engine's row for the transport failure (a reset, a refusal, a timeout), so that history
        # weighs it as it weighs the same words in a log
        named = [m for m in classify(obs.detail or "", origin="body") if m.signature.cause == "network"]
        return True, obs.failure_kind or "connect", str(named[0].signature.id) if named else None, "network"
    if (status or 0) >= 400 or obs.outcome == "error_event":
        kind = "stream_error" if obs.error_event is not None else "http_error"
        if "text/html" in obs.content_type.lower():
            kind = "html"
        from capdoctor.classifier.signatures import classify

        matches = classify(
            obs.error_event or obs.error_body or "",
            status=status,
            headers=dict(obs.headers),
            origin="stream" if obs.error_event is not None else "body",
            local=obs.local,
        )
        if matches:
            from capdoctor.model import Cause

            sig = matches[0].signature
            return True, kind, str(sig.id), Cause(sig.cause).value
        return True, kind, None, "network" if kind == "html" else None
    if obs.outcome == "cut":
        return True, "cut", None, "network"
    if obs.outcome == "cancelled" and obs.failure_kind:
        # gave up before any answer on an upstream measured silent (exchange.GAVE_UP_SILENCE_S): no answer in time
        from capdoctor.classifier.signatures import by_id

        return True, obs.failure_kind, TIMEOUT_ROW if TIMEOUT_ROW in by_id() else None, "network"
    if obs.outcome == "cancelled":
        # gave up before any answer, sooner than anything measured names a cause
        return obs.ttfb_ms is None, "cancelled", None, None
    return False, "ok", None, None


def judge(obs: Observed) -> RoundRecord:
    """The history's record of one exchange, its failure (if any) classified by the one engine."""
    status = obs.status
    failed, kind, signature, cause = _failure(obs)
    error_text = _bounded(_error_text(obs), obs.secrets) if failed else None
    request_id = next(iter(v for k, v in obs.request_ids.items() if k != "cf-ray"), None)
    attempt = AttemptRecord(
        at=obs.started,
        model=obs.model or "",
        role=ROLE,
        ok=not failed,
        status=status,
        kind=kind,
        signature=signature,
        cause=cause,
        latency_ms=int(obs.total_ms),
        request_id=request_id,
    )
    exchange = ExchangeRecord(
        method=obs.method,
        path=_bounded(obs.path, obs.secrets) or "/",
        upstream=obs.upstream,
        client=obs.client,
        client_version=obs.client_version,
        stream=obs.stream,
        outcome=obs.outcome,
        bytes=obs.bytes,
        ttfb_ms=obs.ttfb_ms,
        total_ms=obs.total_ms,
        request_ids=dict(obs.request_ids),
        ratelimit=dict(obs.ratelimit),
        error_text=error_text,
    )
    verdict = cause or ("inconclusive" if failed else "none")
    return RoundRecord(
        started=obs.started,
        finished=obs.started + obs.total_ms / 1000,
        source=WATCH,
        provider=obs.provider,
        model=obs.model,
        verdict=verdict,
        confidence=1.0 if cause or not failed else 0.0,
        summary=error_text or "",
        attempts=(attempt,),
        kind=PROXY,
        exchange=exchange,
    )


def line(rnd: RoundRecord) -> str:
    """One line for a failed exchange: local time, method and path, status, outcome, model, cause, request id."""
    a, ex = rnd.attempts[0], rnd.exchange
    assert ex is not None
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rnd.started))
    status = f"HTTP {a.status}" if a.status is not None else a.kind or "-"
    rid = f"  request-id {a.request_id}" if a.request_id else ""
    text = f"  {ex.error_text}" if ex.error_text else ""
    return (
        f"{when}  {ex.method} {ex.path}  {status} {ex.outcome}  {a.model or '?'}  {a.cause or 'unclassified'}"
        f"  [{ex.total_ms or 0:.0f} ms]{rid}{text}"
    )


class Recorder:
    """The writer thread: judges, counts, prints failures, and writes the history in batches."""

    def __init__(
        self,
        db: Path | None,
        retention_days: float,
        metrics: ProxyMetrics | None,
        bursts: Bursts | None,
        out: Callable[[str], None],
        warn: Callable[[str], None],
    ) -> None:
        self.db, self.retention_days = db, retention_days
        self.metrics, self.bursts = metrics, bursts
        self.out, self.warn = out, warn
        self.queue: queue.Queue[Any] = queue.Queue(MAX_QUEUE)
        self.recorded = 0
        self.dropped = 0
        self.exchanges = 0
        self.failures = 0
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="capdoctor-proxy-recorder", daemon=True)
        self._thread.start()

    def submit(self, obs: Observed) -> None:
        """Hand one exchange over (from the event loop: never blocks)."""
        try:
            self.queue.put_nowait(obs)
        except queue.Full:
            with self._lock:
                self.dropped += 1
            if self.metrics is not None:
                self.metrics.dropped.inc()
            self._warn_once("full", "capdoctor: warning: the history writer is behind; exchanges are being dropped")

    def snapshot(self, snap: Snapshot) -> None:
        """Record a network snapshot (from the burst thread)."""
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(snap)

    def flush(self) -> None:
        """Wait until everything submitted so far has been judged and written (tests, shutdown)."""
        self.queue.join()

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued and stop the thread (at most `timeout` seconds)."""
        with contextlib.suppress(queue.Full):
            self.queue.put(None, timeout=timeout)
        self._thread.join(timeout)

    def _warn_once(self, key: str, message: str) -> None:
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        self.warn(message)

    def _open(self) -> Any:
        from capdoctor.watch.store import HistoryError, Store

        if self.db is None:
            return None
        try:
            return Store.open(self.db)
        except HistoryError as exc:
            self._warn_once("write", f"capdoctor: warning: {exc}; forwarding goes on, exchanges are counted only")
            return None

    def _run(self) -> None:
        from capdoctor.watch.store import Snapshot

        store = self._open()
        stopping = False
        while not stopping:
            items = [self.queue.get()]
            while len(items) < BATCH:
                try:
                    items.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            rounds: list[RoundRecord] = []
            snaps: list[Snapshot] = []
            for item in items:
                if item is None:
                    stopping = True
                elif isinstance(item, Snapshot):
                    snaps.append(item)
                else:
                    try:
                        rounds.append(self._judged(item))
                    except Exception as exc:  # one odd exchange must not stop the recording of the others
                        self._warn_once("judge", f"capdoctor: warning: an exchange could not be read: {exc!r}")
            store = self._write(store, rounds, snaps)
            for _ in items:
                self.queue.task_done()
        if store is not None:
            store.close()

    def _judged(self, obs: Observed) -> RoundRecord:
        rnd = judge(obs)
        self.exchanges += 1
        if self.metrics is not None:
            self.metrics.observe(rnd)
        a = rnd.attempts[0]
        if not a.ok:
            self.failures += 1
            self.out(line(rnd))
        if self.bursts is not None:
            self.bursts.observe(rnd)
        return rnd

    def _write(self, store: Any, rounds: list[RoundRecord], snaps: list[Snapshot]) -> Any:
        from capdoctor.watch.store import HistoryError

        if store is None or not (rounds or snaps):
            return store
        try:
            if rounds:
                store.record_many(rounds, self.retention_days)
                self.recorded += len(rounds)
            for snap in snaps:
                store.record_snapshot(snap)
        except HistoryError as exc:
            self._warn_once("write", f"capdoctor: warning: {exc}; forwarding goes on, exchanges are counted only")
        return store
