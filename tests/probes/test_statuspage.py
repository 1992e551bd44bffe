"""Status-page parsing: Atlassian v2 summary, incident.io's native feed, and unreadable pages (pure)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from capdoctor.checks.status import assess
from capdoctor.model import Cause, Status, Strength
from capdoctor.probes.statuspage import parse_page, summary_url
from capdoctor.simulator import statuspage as sp

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
URL = "http://127.0.0.1:1/status"


def test_atlassian_green() -> None:
    page = parse_page(json.dumps(sp.summary_json("green", URL, NOW)))
    assert page is not None and page.format == "atlassian" and page.indicator == "none"
    assert not page.incidents and all(s == "operational" for _, s in page.components)
    status, _, findings = assess(page, "openai", URL)
    assert status is Status.PASS
    assert [f.strength for f in findings] == [Strength.CONTEXT]


def test_atlassian_incident_on_matching_component() -> None:
    page = parse_page(json.dumps(sp.summary_json("incident", URL, NOW)))
    assert page is not None and page.indicator == "major"
    (inc,) = page.incidents
    assert "API" in inc.components and inc.impact == "major"
    status, summary, findings = assess(page, "openai", URL)
    assert status is Status.WARN and "Elevated error rates" in summary
    assert findings[0].cause is Cause.CAPACITY and findings[0].strength is Strength.STRONG


def test_incident_on_other_components_is_context_only() -> None:
    doc = sp.summary_json("incident", URL, NOW)
    for inc in doc["incidents"]:
        inc["components"] = [{"name": "Billing dashboard"}]
        for upd in inc["incident_updates"]:
            upd["affected_components"] = [{"name": "Billing dashboard"}]
    for c in doc["components"]:
        c["status"] = "operational"
    page = parse_page(json.dumps(doc))
    assert page is not None
    status, _, findings = assess(page, "gemini", URL)
    assert status is Status.PASS and all(f.strength is Strength.CONTEXT for f in findings)


def test_incidentio_native_feed() -> None:
    page = parse_page(json.dumps(sp.incidentio_feed("incident", URL, NOW)))
    assert page is not None and page.format == "incident.io"
    assert page.incidents and "Codex" in page.incidents[0].components
    assert page.indicator == "major"
    green = parse_page(json.dumps(sp.incidentio_feed("green", URL, NOW)))
    assert green is not None and green.indicator == "none" and not green.incidents


def test_unreadable_pages_are_none_never_degraded() -> None:
    assert parse_page(sp.BROKEN_HTML) is None
    assert parse_page('{"status": "ok"}') is None
    assert parse_page("[]") is None


def test_summary_url() -> None:
    assert summary_url("https://status.claude.com") == "https://status.claude.com/api/v2/summary.json"
    assert summary_url("https://x/api/v2/summary.json") == "https://x/api/v2/summary.json"
    assert summary_url("https://status.openai.com/proxy/status.openai.com").endswith("/proxy/status.openai.com")


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "status",
                    "indicator",
                    "components",
                    "incidents",
                    "incident_updates",
                    "affected_components",
                    "name",
                    "summary",
                    "ongoing_incidents",
                    "structure",
                    "items",
                    "group",
                    "component_id",
                    "id",
                    "impact",
                    "current_worst_impact",
                    "in_progress_maintenances",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=15,
)


@given(_values)
def test_parse_page_never_raises(value: object) -> None:
    page = parse_page(json.dumps(value))
    if page is not None:
        assess(page, "openai", URL)
