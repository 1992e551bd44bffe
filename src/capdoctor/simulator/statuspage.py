"""Status-page documents the simulator serves: Atlassian Statuspage v2 and an incident.io-style feed.

Contract: pure builders, one per document, for the modes a scenario picks ("green", "incident", "broken").
Shapes follow shared/reference/anchors.md §4 and platform-facts.md §C (page, status{indicator, description},
components[] with Statuspage statuses, incidents[] with incident_updates). No I/O; nothing here classifies.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

PAGE_ID = "simcapdoc01"
COMPONENTS = ("API", "Responses", "Codex", "ChatGPT", "Claude API", "Claude Code")
INCIDENT_NAME = "Elevated error rates for gpt-5.5 on the API and Codex"
INCIDENT_IMPACT = {"API": "partial_outage", "Responses": "partial_outage", "Codex": "degraded_performance"}

BROKEN_HTML = (
    "<html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error"
    "</h1></center><hr><center>nginx</center></body></html>\n"
)


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _page(url: str, now: datetime) -> dict[str, Any]:
    return {"id": PAGE_ID, "name": "capdoctor simulator", "url": url, "time_zone": "Etc/UTC", "updated_at": _stamp(now)}


def _components(mode: str, now: datetime) -> list[dict[str, Any]]:
    out = []
    for i, name in enumerate(COMPONENTS):
        status = INCIDENT_IMPACT.get(name, "operational") if mode == "incident" else "operational"
        out.append(
            {
                "id": f"cmp{i:09d}",
                "name": name,
                "status": status,
                "created_at": "2024-01-01T00:00:00.000Z",
                "updated_at": _stamp(now),
                "position": i + 1,
                "description": None,
                "showcase": True,
                "start_date": None,
                "group_id": None,
                "page_id": PAGE_ID,
                "group": False,
                "only_show_if_degraded": False,
            }
        )
    return out


def _incidents(mode: str, url: str, now: datetime) -> list[dict[str, Any]]:
    if mode != "incident":
        return []
    started = now - timedelta(minutes=37)
    return [
        {
            "id": "inc000000001",
            "name": INCIDENT_NAME,
            "status": "investigating",
            "impact": "major",
            "created_at": _stamp(started),
            "updated_at": _stamp(now),
            "monitoring_at": None,
            "resolved_at": None,
            "started_at": _stamp(started),
            "page_id": PAGE_ID,
            "shortlink": f"{url}/incidents/inc000000001",
            "incident_updates": [
                {
                    "id": "upd000000001",
                    "status": "investigating",
                    "body": "We are seeing elevated error rates and 'model at capacity' errors for gpt-5.5 requests.",
                    "incident_id": "inc000000001",
                    "created_at": _stamp(started),
                    "updated_at": _stamp(started),
                    "display_at": _stamp(started),
                    "affected_components": [
                        {
                            "code": f"cmp{COMPONENTS.index(n):09d}",
                            "name": n,
                            "old_status": "operational",
                            "new_status": s,
                        }
                        for n, s in INCIDENT_IMPACT.items()
                    ],
                }
            ],
            "components": [c for c in _components(mode, now) if c["name"] in INCIDENT_IMPACT],
        }
    ]


def status_json(mode: str, url: str, now: datetime) -> dict[str, Any]:
    """`/api/v2/status.json`: the page and its overall indicator."""
    indicator, description = (
        ("major", "Partial System Outage") if mode == "incident" else ("none", "All Systems Operational")
    )
    return {"page": _page(url, now), "status": {"indicator": indicator, "description": description}}


def summary_json(mode: str, url: str, now: datetime) -> dict[str, Any]:
    """`/api/v2/summary.json`: status plus components, unresolved incidents and maintenances."""
    return {
        **status_json(mode, url, now),
        "components": _components(mode, now),
        "incidents": _incidents(mode, url, now),
        "scheduled_maintenances": [],
    }


def components_json(mode: str, url: str, now: datetime) -> dict[str, Any]:
    """`/api/v2/components.json`."""
    return {"page": _page(url, now), "components": _components(mode, now)}


def incidents_json(mode: str, url: str, now: datetime) -> dict[str, Any]:
    """`/api/v2/incidents.json` and `/api/v2/incidents/unresolved.json` (active incidents only here)."""
    return {"page": _page(url, now), "incidents": _incidents(mode, url, now)}


def incidentio_feed(mode: str, url: str, now: datetime) -> dict[str, Any]:
    """An incident.io-style native feed (`/proxy/<host>`): `summary.ongoing_incidents`, `structure` groups."""
    comps = [{"id": f"01J{i:023d}", "name": n} for i, n in enumerate(COMPONENTS)]
    ongoing = []
    affected = []
    if mode == "incident":
        affected = [
            {
                "component_id": c["id"],
                "status": "partial_outage"
                if INCIDENT_IMPACT[c["name"]] == "partial_outage"
                else "degraded_performance",
            }
            for c in comps
            if c["name"] in INCIDENT_IMPACT
        ]
        ongoing = [
            {
                "id": "01JSIMINCIDENT0000000000001",
                "name": INCIDENT_NAME,
                "status": "investigating",
                "url": f"{url}/incidents/01JSIMINCIDENT0000000000001",
                "last_update_at": _stamp(now),
                "current_worst_impact": "partial_outage",
                "affected_components": [{"id": c["component_id"]} for c in affected],
            }
        ]
    return {
        "summary": {
            "id": "01JSIMPAGE000000000000001",
            "name": "capdoctor simulator",
            "public_url": url,
            "structure": {
                "items": [
                    {
                        "group": {
                            "id": "01JSIMGROUP0000000000000001",
                            "name": "APIs",
                            "components": [{"component_id": c["id"], "name": c["name"]} for c in comps],
                        }
                    }
                ]
            },
            "ongoing_incidents": ongoing,
            "affected_components": affected,
            "in_progress_maintenances": [],
            "scheduled_maintenances": [],
        }
    }
