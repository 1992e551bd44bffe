"""The support ticket (Markdown and HTML from one report): what a support engineer needs, formatted for people."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from capdoctor.checks.models import response_time
from capdoctor.model import Cause, CheckResult, Finding, Status, Strength
from capdoctor.render import html as html_render
from capdoctor.render import markdown
from capdoctor.render.report import build
from capdoctor.render.ticket import human, ticket
from capdoctor.run.context import Target
from capdoctor.verdict.decision import decide

REPR = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\['|\{'")
"""Python values leaking into a ticket."""


@pytest.fixture(scope="module")
def rate_limit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The rate-limit demo's Markdown and HTML tickets, each written by the real CLI with the JSON report of the
    same run (request ids differ from run to run)."""
    from tests.conftest import run_cli

    tmp = tmp_path_factory.mktemp("rate-limit")
    out: dict[str, Any] = {}
    for suffix in ("md", "html"):
        path = tmp / f"ticket.{suffix}"
        proc = run_cli("demo", "--scenario", "rate-limit", "--json", "--report", str(path), cwd=tmp, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out[suffix] = path.read_text(encoding="utf-8")
        out[f"{suffix}-report"] = json.loads(proc.stdout)
    out["report"] = out["md-report"]
    return out


def _attempts(report: dict[str, Any]) -> list[dict[str, Any]]:
    models = next(c for c in report["checks"] if c["id"] == "models")["data"]["models"]
    return [dict(a, model=m["model"]) for m in models for a in m["attempts"]]


def test_attempt_rows_carry_utc_time_and_the_full_provider_text(rate_limit: dict[str, Any]) -> None:
    attempts = _attempts(rate_limit["report"])
    assert len(attempts) >= 2
    for a in attempts:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", a["time"]), a
        assert a["error_text"].endswith("to learn more."), a  # the provider's words, uncut
        assert len(a["error_text"]) > len(a["error"].rstrip("…"))


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_rate_limit_ticket_holds_what_support_needs(rate_limit: dict[str, Any], fmt: str) -> None:
    text = rate_limit[fmt]
    plain = re.sub(r"<[^>]+>", "", text) if fmt == "html" else text
    for a in _attempts(rate_limit[f"{fmt}-report"]):
        assert a["error_text"] in plain  # full provider error text
        row = next((line for line in re.split(r"</tr>|\n", plain) if a["request_id"] in line), "")
        assert a["model"] in row and str(a["status"]) in row and a["cf_ray"] in row, row
        assert a["time"].replace("T", " ").rstrip("Z") in row, row  # its UTC time on the same row
    assert "Client" in plain and "not identified" in plain  # the client line, with the reason
    assert "Demo report" in plain  # a demo says it is one
    assert "capdoctor/report-v1" in plain and "capdoctor 0.1.0" in plain
    assert not REPR.search(plain), REPR.search(plain)
    assert "htt " not in plain and not re.search(r"Visit htt\b", plain)  # never cut mid-word


def test_html_ticket_is_self_contained_and_fits_phones(rate_limit: dict[str, Any]) -> None:
    page = rate_limit["html"]
    assert "name='viewport'" in page and "width=device-width" in page
    assert "<script" not in page and "http-equiv" not in page
    assert not re.search(r"<(link|img|iframe)\b", page) and "@import" not in page
    assert "@media print" in page and "size:A4" in page and "@media (max-width:640px)" in page
    assert "Egress" in page and "Network paths" in page and "Attempts" in page


def _report(
    target: Target, results: list[CheckResult] | None = None, client: dict[str, Any] | None = None
) -> dict[str, Any]:
    results = results or [CheckResult("proxy", "Proxy and TUN", 4, Status.PASS, "fine")]
    return build(
        results,
        decide(results),
        target,
        datetime(2026, 11, 30, 8, 1, 2, tzinfo=timezone.utc),
        home="/home/tester",
        client=client,
    )


def test_target_sources_are_each_values_own() -> None:
    target = Target(
        "openai",
        "https://api.openai.com/v1",
        "gpt-5.5",
        ("gpt-5.4-mini", "o4-mini"),
        "RELAY_KEY",
        "sk-test-not-a-real-key-000000",
        sources={"provider": "flag --provider", "key": "env RELAY_KEY", "api_key_env": "~/.codex/config.toml env_key"},
    )
    md = markdown.render(_report(target))
    assert "| key variable | RELAY_KEY | ~/.codex/config.toml env_key |" in md
    assert "| key present | yes | env RELAY_KEY |" in md
    assert "| alternative models | gpt-5.4-mini, o4-mini | — |" in md
    assert "| wire API | — | — |" in md
    found = Target(
        "openai",
        "https://api.openai.com/v1",
        "gpt-5.5",
        (),
        "OPENAI_API_KEY",
        "sk-test-x" * 3,
        sources={"key": "env OPENAI_API_KEY"},
    )
    assert "| key variable | OPENAI_API_KEY | env OPENAI_API_KEY |" in markdown.render(_report(found))


def test_values_are_formatted_for_people() -> None:
    assert human(None) == "—" and human("") == "—" and human([]) == "—"
    assert human(True) == "yes" and human(False) == "no"
    assert human(["a", "b"]) == "a, b" and human({"a": 1, "b": None}) == "a: 1; b: —"
    assert human(0.25) == "0.25" and human("two\nlines\x1b[2J") == "two lines\\x1b[2J"


def test_foreign_text_cannot_become_markup_or_drive_a_terminal() -> None:
    evil = "<script>alert(1)</script> | \x1b]52;c;ZWNobw==\x07"
    result = CheckResult(
        "models",
        "Switch model",
        1,
        Status.FAIL,
        evil,
        (Finding(Cause.CAPACITY, Strength.STRONG, evil, {}),),
        (evil,),
        {
            "models": [
                {
                    "model": "m",
                    "role": "primary",
                    "outcome": "fail",
                    "attempts": [{"status": 503, "kind": "http_error", "error_text": evil}],
                }
            ]
        },
    )
    report = _report(Target("openai", "https://api.openai.com/v1", "m"), [result])
    for text in (markdown.render(report), html_render.render(report)):
        assert "<script>" not in text and "\x1b" not in text and "\x07" not in text
    assert "\\x1b]52" in markdown.render(report)


def test_ticket_orders_sections_for_a_support_engineer() -> None:
    report = _report(
        Target("openai", "https://api.openai.com/v1", "gpt-5.5"),
        client={
            "id": "codex",
            "name": "Codex CLI",
            "version": "0.55.0",
            "basis": "the target was read from Codex CLI's settings",
        },
    )
    t = ticket(report)
    assert t.seen[0] == ("When", "2026-11-30 08:01:02 UTC")  # nothing failed: no error seen to show first
    assert ("Client", "Codex CLI 0.55.0 — the target was read from Codex CLI's settings") in t.seen
    assert [tb.title for tb in t.tables][:2] == ["Client", "Checks"]  # no attempts, no paths recorded here
    assert t.demo is None and "(demo)" not in t.title


def test_response_time_reads_the_date_header() -> None:
    assert response_time({"Date": "Sun, 30 Nov 2026 08:01:02 GMT"}) == "2026-11-30T08:01:02Z"
    assert response_time({"date": "not a date"}) is None and response_time({}) is None


def test_report_to_stdout_is_the_markdown_ticket(cli: Any, tmp_path: Path) -> None:
    proc = cli("demo", "--scenario", "quota", "--report", "-", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# capdoctor report (demo)")
    assert "Verdict: quota" in proc.stdout and "demo: verdict matches" not in proc.stdout
    both = cli("demo", "--json", "--report", "-", cwd=tmp_path)
    assert both.returncode == 2 and "use one of them" in both.stderr


def test_the_target_table_names_the_alternative_the_probe_tried() -> None:
    """Issue 35.9: with no alternative configured the table said "alternative models —" while the attempts
    listed the lighter model capdoctor picked and tried."""
    models = CheckResult(
        "models",
        "Switch model",
        1,
        Status.FAIL,
        "gpt-5.5 fails",
        data={
            "models": [
                {"model": "gpt-5.5", "role": "primary", "attempts": [{"status": 529, "kind": "http"}]},
                {"model": "gpt-5.4-mini", "role": "alternative", "attempts": [{"status": 200, "kind": "ok"}]},
            ]
        },
    )
    target = Target("openai", "https://api.openai.com/v1", "gpt-5.5")
    md = markdown.render(_report(target, [models]))
    assert "| alternative models | gpt-5.4-mini | none configured; picked by capdoctor" in md
    assert "| alternative models | — |" not in md
