"""Report building and the renderers: one redacted report, presented four ways, written atomically."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console

from capdoctor.errors import UsageError
from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength
from capdoctor.render import for_path, terminal
from capdoctor.render.report import SCHEMA, build, write_atomic
from capdoctor.run.context import Target
from capdoctor.verdict.decision import decide

FAKE_KEY = "sk-test-FAKEKEY0123456789abcdefghij"


def sample_report(home: str = "/home/tester") -> dict[str, object]:
    models = CheckResult(
        "models",
        "Switch model",
        1,
        Status.FAIL,
        "gpt-5.5 overloaded; gpt-5.4-mini works",
        (
            Finding(
                Cause.CAPACITY,
                Strength.STRONG,
                "primary fails with server_is_overloaded, alternative works",
                {
                    "status": 503,
                    "request_id": "req_abc123",
                    "cf_ray": "9c84b52ce87fbe62-SJC",
                    "sent": f"Authorization: Bearer {FAKE_KEY}",
                },
                (NextStep("Use gpt-5.4-mini for now", "codex -m gpt-5.4-mini"),),
            ),
        ),
        ("<script>alert(1)</script> raw body",),
        {
            "models": [
                {
                    "model": "gpt-5.5",
                    "role": "primary",
                    "outcome": "fail",
                    "attempts": [{"status": 503, "signature": "openai.server_is_overloaded"}],
                }
            ]
        },
        duration_ms=1234,
    )
    paths = CheckResult(
        "paths",
        "Network paths",
        3,
        Status.PASS,
        "direct path fine",
        (),
        (),
        {
            "paths": [
                {
                    "name": "direct",
                    "dns_ms": 2,
                    "connect_ms": 5,
                    "tls_ms": 0,
                    "ttfb_ms": 40,
                    "total_ms": 50,
                    "status": 200,
                    "exit_location": "SG",
                },
                {"name": "env proxy", "error": "connection reset", "error_class": "reset"},
            ]
        },
    )
    skip = CheckResult("hardware", "Local GPU and memory", 7, Status.SKIP, f"no GPU; log at {home}/x.log")
    results = [models, paths, skip]
    target = Target(
        "openai",
        "https://api.openai.test/v1",
        "gpt-5.5",
        ("gpt-5.4-mini",),
        "OPENAI_API_KEY",
        FAKE_KEY,
        sources={"model": "~/.codex/config.toml"},
    )
    return build(results, decide(results), target, datetime(2026, 11, 30, tzinfo=timezone.utc), home=home)


def test_report_schema_and_ids() -> None:
    report = sample_report()
    assert report["schema"] == SCHEMA
    assert set(report) >= {"schema", "version", "created", "system", "target", "checks", "verdict"}
    assert report["verdict"]["cause"] == "capacity"  # type: ignore[index]
    ids = {(r["kind"], r["value"]) for r in report["request_ids"]}  # type: ignore[attr-defined]
    assert ("request-id", "req_abc123") in ids and ("cf-ray", "9c84b52ce87fbe62-SJC") in ids
    assert report["target"]["api_key_present"] is True  # type: ignore[index]
    assert "~/x.log" in report["checks"][2]["summary"]  # type: ignore[index]


@pytest.mark.parametrize("suffix", [".md", ".json", ".html"])
def test_every_file_renderer_redacts_and_presents(tmp_path: Path, suffix: str) -> None:
    report = sample_report()
    out = tmp_path / f"report{suffix}"
    write_atomic(out, for_path(out)(report))
    text = out.read_text(encoding="utf-8")
    assert FAKE_KEY not in text
    assert "req_abc123" in text and "9c84b52ce87fbe62-SJC" in text
    assert "capacity" in text
    assert "Switch model" in text
    if suffix == ".json":
        assert json.loads(text)["schema"] == SCHEMA
    if suffix == ".html":
        assert "<script>alert" not in text and text.startswith("<!DOCTYPE html>")
    assert not list(tmp_path.glob(".report*")), "no temporary file left behind"


def test_unknown_report_extension_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"\.txt"):
        for_path(Path("r.txt"))


def test_terminal_view() -> None:
    console = Console(record=True, width=100, color_system=None)
    terminal.render(sample_report(), console, verbose=True, header="capdoctor test")
    text = console.export_text()
    assert "[✗] Switch model" in text and "[✓] Network paths" in text and "[?] Local GPU" in text
    assert "gpt-5.5 (primary) fail" in text
    assert "HTTP 200" in text and "exit SG" in text and "reset" in text
    assert "Verdict: CAPACITY" in text
    assert "codex -m gpt-5.4-mini" in text
    assert FAKE_KEY not in text
    assert "1 ok · 1 fail · 1 skipped — verdict: capacity." in text


def test_terminal_ascii_glyphs() -> None:
    console = Console(record=True, width=100, color_system=None)
    terminal.render(sample_report(), console, ascii_only=True)
    assert "[XX] Switch model" in console.export_text()


def test_every_view_names_what_else_is_present() -> None:
    """A capacity verdict beside a quota hit: the terminal, Markdown, HTML and JSON views all show the quota."""
    results = [
        CheckResult(
            "models",
            "Switch model",
            1,
            Status.FAIL,
            "gpt-5.5 overloaded",
            (Finding(Cause.CAPACITY, Strength.STRONG, "gpt-5.5 overloaded while gpt-5.4-mini answers"),),
        ),
        CheckResult(
            "logs",
            "Logs",
            8,
            Status.WARN,
            "1 error line",
            (
                Finding(
                    Cause.QUOTA,
                    Strength.MODERATE,
                    "Plan usage limit reached: seen 1x in the logs",
                    {"count": 1, "first": "2026-12-06T10:00:00Z", "last": "2026-12-06T10:00:00Z", "title": "Usage"},
                ),
            ),
        ),
    ]
    report = build(results, decide(results), None, datetime(2026, 12, 7, tzinfo=timezone.utc))
    assert [a["cause"] for a in report["verdict"]["also"]] == ["quota"]
    console = Console(record=True, width=100, color_system=None)
    terminal.render(report, console)
    views = {
        "terminal": console.export_text(),
        "markdown": for_path(Path("t.md"))(report),
        "html": for_path(Path("t.html"))(report),
    }
    for name, text in views.items():
        assert "Also present" in text and "Quota or rate limit: Usage" in text, name
    assert "6 Dec 10:00 UTC" in views["markdown"]  # when, in words
