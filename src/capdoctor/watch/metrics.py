"""Prometheus metrics of the watch rounds, with `prometheus_client`: a `/metrics` server and textfiles.

Contract: `Metrics.observe(round)` counts a finished round into its own registry (no process or platform
collectors, no `_created` series: what a fleet scrapes is capdoctor's, the same on every OS). Every label value
comes from a closed set or is checked against a name shape (`label_model`, `label_provider`, `label_kind`), so a
label never holds a key, a URL's credentials or free text. `serve` starts `/metrics`; `write_textfile` writes
node_exporter's textfile format atomically. It must not print.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    write_to_textfile,
)
from prometheus_client.exposition import start_http_server

from capdoctor.model import INCONCLUSIVE, NONE, Cause
from capdoctor.watch.records import RoundRecord

VERDICTS: tuple[str, ...] = (*(c.value for c in Cause), NONE, INCONCLUSIVE)
"""Every value `capdoctor_verdict{cause}` takes; all are exported each round (one at 1)."""

CAUSES: frozenset[str] = frozenset(c.value for c in Cause)
NO_CAUSE = "none"
UNKNOWN = "unknown"
OTHER = "other"

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""Seconds: a probe is one tiny request, so the buckets stop where a request timeout would."""

_MODEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}")
_KIND_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")


def label_model(name: str, secrets: tuple[str, ...] = ()) -> str:
    """A model name fit for a label: the usual name shape (letters, digits, `._:/@+-`, ≤ 100 characters) that
    redaction leaves alone and that contains no known secret; anything else is `other`."""
    from capdoctor.redact import redact_text

    if not name:
        return UNKNOWN
    if not _MODEL_RE.fullmatch(name) or redact_text(name, secrets) != name:
        return OTHER
    return name


def label_provider(name: str | None) -> str:
    """A provider label: a name the catalogue knows (its canonical spelling), else `other`."""
    from capdoctor.providers.catalog import canonical

    return (canonical(name) if name else None) or OTHER


def label_kind(kind: str) -> str | None:
    """A quota kind label (`openai_requests`…), or None when it does not have the expected shape."""
    return kind if _KIND_RE.fullmatch(kind) else None


class Metrics:
    """The metric families of one watcher and their registry."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        # `_created` series double the output and say only when this process started counting.
        # A process-wide switch in prometheus_client; capdoctor exports nothing else.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.secrets = secrets
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "capdoctor_probe_requests",
            "Probe requests sent by capdoctor watch, by outcome and cause of failure.",
            ("provider", "model", "outcome", "cause"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "capdoctor_probe_latency_seconds",
            "Time until a probe request was decided (answer or failure).",
            ("provider", "model"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.verdict = Gauge(
            "capdoctor_verdict",
            "The latest round's verdict: 1 for its cause, 0 for every other.",
            ("cause",),
            registry=self.registry,
        )
        self.quota = Gauge(
            "capdoctor_quota_remaining",
            "Requests or tokens left in each rate-limit window, as last seen.",
            ("kind",),
            registry=self.registry,
        )
        # Registered with the first round: before it, a 0 would read as "the last round ran in 1970".
        self.round_time = Gauge(
            "capdoctor_round_timestamp_seconds",
            "Unix time at which the latest watch round finished.",
            registry=None,
        )
        self.rounds = 0

    def observe(self, rnd: RoundRecord) -> None:
        """Count one finished round."""
        provider = label_provider(rnd.provider)
        for a in rnd.attempts:
            model = label_model(a.model, self.secrets)
            outcome = "ok" if a.ok else "error"
            cause = NO_CAUSE if a.ok else (a.cause if a.cause in CAUSES else UNKNOWN)
            self.requests.labels(provider, model, outcome, cause).inc()
            if a.latency_ms is not None:
                self.latency.labels(provider, model).observe(a.latency_ms / 1000)
        for cause in VERDICTS:
            self.verdict.labels(cause).set(1 if rnd.verdict == cause else 0)
        self.quota.clear()
        for kind, remaining in rnd.quota.items():
            label = label_kind(kind)
            if label is not None:
                self.quota.labels(label).set(remaining)
        self.round_time.set(rnd.finished)
        if not self.rounds:
            self.registry.register(self.round_time)
        self.rounds += 1

    def exposition(self) -> bytes:
        """The text exposition format of the registry (what `/metrics` serves)."""
        return generate_latest(self.registry)

    def write_textfile(self, path: Path) -> None:
        """Write the registry for node_exporter's textfile collector, atomically (temp file, then rename)."""
        write_to_textfile(str(path), self.registry)

    def serve(self, host: str, port: int) -> Callable[[], None]:
        """Serve `/metrics` on `host:port` in a daemon thread; returns the function that stops it.

        OSError (port taken, address not on this machine) is the caller's to report.
        """
        server, thread = start_http_server(port, addr=host, registry=self.registry)

        def stop() -> None:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

        return stop
