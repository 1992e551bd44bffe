"""Metrics: the exposition read back with prometheus_client's own parser, label hygiene, the textfile and the
real `/metrics` server on loopback."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from capdoctor.watch.metrics import VERDICTS, Metrics, label_model, label_provider
from capdoctor.watch.records import WATCH, AttemptRecord, RoundRecord
from tests.conftest import free_port

KEY = "sk-proj-" + "Q" * 40


def _round(verdict: str = "capacity", model: str = "gpt-5.5", quota: dict[str, float] | None = None) -> RoundRecord:
    attempts = (
        AttemptRecord(
            at=1.0,
            model=model,
            role="primary",
            ok=False,
            status=503,
            kind="http_error",
            signature="openai.server_is_overloaded",
            cause="capacity",
            latency_ms=120,
        ),
        AttemptRecord(
            at=1.0, model=model, role="primary", ok=False, status=None, kind="reset", cause="network", latency_ms=3000
        ),
        AttemptRecord(at=1.0, model=model, role="primary", ok=True, status=200, kind="ok", latency_ms=80),
        AttemptRecord(
            at=1.0,
            model="gpt-5.4-mini",
            role="alternative",
            ok=False,
            status=418,
            kind="http_error",
            cause="teapot",
            latency_ms=None,
        ),
    )
    return RoundRecord(
        100.0,
        104.5,
        WATCH,
        "openai",
        model,
        verdict,
        0.8,
        "",
        attempts,
        quota if quota is not None else {"openai_requests": 9998.0, "openai_tokens": 29999950.0},
    )


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, keyed by name and sorted labels (parsed by prometheus_client)."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_round_counted_into_every_family() -> None:
    m = Metrics()
    m.observe(_round())
    m.observe(_round(verdict="none", quota={"openai_requests": 9990.0}))
    got = samples(m.exposition().decode())

    def req(model: str, outcome: str, cause: str) -> float:
        labels = (("cause", cause), ("model", model), ("outcome", outcome), ("provider", "openai"))
        return got[("capdoctor_probe_requests_total", labels)]

    assert req("gpt-5.5", "error", "capacity") == 2
    assert req("gpt-5.5", "error", "network") == 2
    assert req("gpt-5.5", "ok", "none") == 2
    assert req("gpt-5.4-mini", "error", "unknown") == 2  # a cause outside the closed set is not a label value
    hist = dict((k[1], v) for k, v in got.items() if k[0].startswith("capdoctor_probe_latency_seconds"))
    assert got[("capdoctor_probe_latency_seconds_count", (("model", "gpt-5.5"), ("provider", "openai")))] == 6
    assert (
        got[("capdoctor_probe_latency_seconds_bucket", (("le", "0.1"), ("model", "gpt-5.5"), ("provider", "openai")))]
        == 2
    )
    assert hist  # the histogram is exported
    assert (
        "capdoctor_probe_latency_seconds_count",
        (("model", "gpt-5.4-mini"), ("provider", "openai")),
    ) not in got  # no latency, no observation
    verdicts = {dict(k[1])["cause"]: v for k, v in got.items() if k[0] == "capdoctor_verdict"}
    assert set(verdicts) == set(VERDICTS)
    assert verdicts["none"] == 1 and sum(verdicts.values()) == 1
    quota = {dict(k[1])["kind"]: v for k, v in got.items() if k[0] == "capdoctor_quota_remaining"}
    assert quota == {"openai_requests": 9990.0}  # windows not seen in the latest round are dropped
    assert got[("capdoctor_round_timestamp_seconds", ())] == 104.5
    assert not any(k[0].endswith("_created") for k in got)


def test_labels_never_hold_keys_urls_or_free_text() -> None:
    assert label_model("gpt-5.5") == "gpt-5.5"
    assert label_model("openai/gpt-5.4-mini") == "openai/gpt-5.4-mini"
    assert label_model("llama3.1:70b") == "llama3.1:70b"
    assert label_model(KEY) == "other"
    assert label_model("my model with spaces") == "other"
    assert label_model("https://user:pw@example.com/v1") == "other"
    assert label_model("a" * 300) == "other"
    assert label_model("custom-model-xyz", secrets=("custom-model-xyz",)) == "other"
    assert label_model("") == "unknown"
    assert label_provider("ollama") == "openai-compatible"
    assert label_provider("evil provider {}") == "other"
    m = Metrics(secrets=(KEY,))
    m.observe(_round(model=KEY, quota={"bad kind!": 1.0, "ok_kind": 2.0}))
    text = m.exposition().decode()
    assert KEY not in text and "sk-proj" not in text
    assert 'model="other"' in text
    assert 'kind="ok_kind"' in text and "bad kind" not in text


def test_textfile_is_written_atomically_and_parses(tmp_path: Path) -> None:
    path = tmp_path / "capdoctor.prom"
    m = Metrics()
    m.write_textfile(path)
    assert path.exists()
    m.observe(_round())
    m.write_textfile(path)
    assert [p.name for p in tmp_path.iterdir()] == ["capdoctor.prom"]  # no temporary file left behind
    got = samples(path.read_text(encoding="utf-8"))
    assert got[("capdoctor_round_timestamp_seconds", ())] == 104.5


def test_metrics_server_serves_on_loopback() -> None:
    m = Metrics()
    m.observe(_round())
    port = free_port()
    stop = m.serve("127.0.0.1", port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            assert resp.status == 200
            body = resp.read().decode()
    finally:
        stop()
    assert samples(body) == samples(m.exposition().decode())


def test_attempt_time_is_the_providers_clock_only_when_it_is_plausible() -> None:
    from capdoctor.watch.records import attempt_time

    started, finished = 1_790_000_000.0, 1_790_000_004.0
    assert attempt_time({"time": "2026-09-21T14:13:22Z"}, started, finished) == 1_790_000_002.0
    assert attempt_time({"time": "2020-01-01T00:00:00Z"}, started, finished) == started  # a proxy's bad clock
    assert attempt_time({"time": "yesterday"}, started, finished) == started
    assert attempt_time({}, started, finished) == started
