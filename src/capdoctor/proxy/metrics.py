"""Prometheus metrics of the proxied traffic, with `prometheus_client`, in a registry of their own.

Contract: `ProxyMetrics.observe(round)` counts one judged exchange:
`capdoctor_proxy_exchanges_total{provider,model,status,cause}`, `capdoctor_proxy_stream_failures_total{provider,
model,outcome}` (error events and cut streams), `capdoctor_proxy_first_byte_seconds{provider,model}` and
`capdoctor_proxy_duration_seconds{provider,model}` (histograms); `capdoctor_proxy_in_flight` is moved by the
forwarder, `capdoctor_proxy_bursts_total` by the burst watch, `capdoctor_proxy_history_dropped_total` by the
recorder. Label values come from closed sets or pass watch's name checks (`label_model`, `label_provider`), and
at most `MAX_MODELS` model names are labelled (then `other`): a label never holds a key, a URL or free text, and a
client sending odd model names cannot grow the registry without bound. `exposition()` is what `/metrics` serves.
Thread-safe (prometheus_client locks); it must not print.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest

from capdoctor.watch.metrics import CAUSES, NO_CAUSE, OTHER, UNKNOWN, label_model, label_provider
from capdoctor.watch.records import RoundRecord

MAX_MODELS = 100
FIRST_BYTE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
"""Seconds: real completions run from milliseconds (an error) to minutes (a long stream)."""
STREAM_FAILURES = ("error_event", "cut")


class ProxyMetrics:
    """The proxy's metric families and their registry."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.secrets = secrets
        self.registry = CollectorRegistry(auto_describe=True)
        self._models: set[str] = set()
        self._lock = threading.Lock()
        self.exchanges = Counter(
            "capdoctor_proxy_exchanges",
            "Exchanges carried by capdoctor proxy, by HTTP status and cause of failure.",
            ("provider", "model", "status", "cause"),
            registry=self.registry,
        )
        self.stream_failures = Counter(
            "capdoctor_proxy_stream_failures",
            "Responses that failed after they began: an error event in the stream, or cut off.",
            ("provider", "model", "outcome"),
            registry=self.registry,
        )
        self.first_byte = Histogram(
            "capdoctor_proxy_first_byte_seconds",
            "Time from the request to the provider's first response byte.",
            ("provider", "model"),
            buckets=FIRST_BYTE_BUCKETS,
            registry=self.registry,
        )
        self.duration = Histogram(
            "capdoctor_proxy_duration_seconds",
            "Time from the request to the end of the response.",
            ("provider", "model"),
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "capdoctor_proxy_in_flight", "Exchanges being carried right now.", registry=self.registry
        )
        self.bursts = Counter(
            "capdoctor_proxy_bursts", "Bursts of failures that triggered a network snapshot.", registry=self.registry
        )
        self.dropped = Counter(
            "capdoctor_proxy_history_dropped",
            "Exchanges left out of the history because its writer fell behind.",
            registry=self.registry,
        )

    def _model(self, name: str) -> str:
        label = label_model(name, self.secrets)
        if label in (UNKNOWN, OTHER):
            return label
        with self._lock:
            if label in self._models:
                return label
            if len(self._models) >= MAX_MODELS:
                return OTHER
            self._models.add(label)
        return label

    def observe(self, rnd: RoundRecord) -> None:
        """Count one judged exchange (a proxy round of one attempt)."""
        provider = label_provider(rnd.provider)
        for a in rnd.attempts:
            model = self._model(a.model)
            status = str(a.status) if a.status is not None else "none"
            cause = NO_CAUSE if a.ok else (a.cause if a.cause in CAUSES else UNKNOWN)
            self.exchanges.labels(provider, model, status, cause).inc()
            ex = rnd.exchange
            if ex is None:
                continue
            if ex.outcome in STREAM_FAILURES:
                self.stream_failures.labels(provider, model, ex.outcome).inc()
            if ex.ttfb_ms is not None:
                self.first_byte.labels(provider, model).observe(ex.ttfb_ms / 1000)
            if ex.total_ms is not None:
                self.duration.labels(provider, model).observe(ex.total_ms / 1000)

    def exposition(self) -> bytes:
        """The text exposition format (what `/metrics` serves)."""
        return generate_latest(self.registry)
