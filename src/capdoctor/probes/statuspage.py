"""Provider status pages: parse Atlassian Statuspage v2 and incident.io feeds, fetch them with a small cache.

Contract: `parse_page(text)` is pure and format-agnostic (Atlassian `summary.json`, incident.io's
Statuspage-compatible shim — same shape — and incident.io's native `/proxy/<host>` feed); it returns None
for anything it cannot read, so a migrated or broken page yields "unknown", never "degraded". `fetch_page`
does one bounded GET and caches the raw body for a few minutes under the cache directory. This module must
not decide causes; the status check weighs what it returns.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

CACHE_TTL_S = 300.0


@dataclass(frozen=True)
class Incident:
    """One unresolved incident: name, status, impact and the component names it affects (may be empty)."""

    name: str
    status: str
    impact: str
    components: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class PageStatus:
    """What a status page says now. `indicator` is Statuspage's none|minor|major|critical|maintenance."""

    format: str
    indicator: str
    description: str
    components: tuple[tuple[str, str], ...] = ()
    incidents: tuple[Incident, ...] = ()


def _list(value: Any) -> list[Any]:
    """`value` when it is a list, else [] (feeds in the wild put odd things where lists belong)."""
    return value if isinstance(value, list) else []


def _atlassian(obj: dict[str, Any]) -> PageStatus | None:
    status = obj.get("status")
    if not isinstance(status, dict) or "indicator" not in status:
        return None
    comps = tuple(
        (str(c.get("name")), str(c.get("status")))
        for c in _list(obj.get("components"))
        if isinstance(c, dict) and c.get("name") and not c.get("group")
    )
    incidents = []
    for inc in _list(obj.get("incidents")):
        if not isinstance(inc, dict) or inc.get("status") in ("resolved", "postmortem", "completed"):
            continue
        names = {str(c.get("name")) for c in _list(inc.get("components")) if isinstance(c, dict)}
        for upd in _list(inc.get("incident_updates")):
            for c in _list(upd.get("affected_components")) if isinstance(upd, dict) else []:
                if isinstance(c, dict) and c.get("name"):
                    names.add(str(c["name"]))
        incidents.append(
            Incident(
                str(inc.get("name", "")),
                str(inc.get("status", "")),
                str(inc.get("impact", "")),
                tuple(sorted(names)),
                inc.get("shortlink"),
            )
        )
    return PageStatus(
        "atlassian", str(status.get("indicator")), str(status.get("description", "")), comps, tuple(incidents)
    )


IMPACT_OF = {"full_outage": "critical", "partial_outage": "major", "degraded_performance": "minor"}


def _incidentio(obj: dict[str, Any]) -> PageStatus | None:
    summary = obj.get("summary")
    if not isinstance(summary, dict) or "ongoing_incidents" not in summary:
        return None
    names: dict[str, str] = {}
    structure = summary.get("structure") or {}
    for item in _list(structure.get("items")) if isinstance(structure, dict) else []:
        group = item.get("group") if isinstance(item, dict) else None
        members = _list(group.get("components")) if isinstance(group, dict) else []
        if isinstance(item, dict) and isinstance(item.get("component"), dict):
            members = [item["component"]]
        for c in members:
            if isinstance(c, dict):
                names[str(c.get("component_id") or c.get("id"))] = str(c.get("name"))
    status_by_id = {
        str(a.get("component_id")): str(a.get("status"))
        for a in _list(summary.get("affected_components"))
        if isinstance(a, dict)
    }
    comps = tuple((name, status_by_id.get(cid, "operational")) for cid, name in names.items())
    incidents = []
    worst = "none"
    for inc in _list(summary.get("ongoing_incidents")):
        if not isinstance(inc, dict):
            continue
        impact = IMPACT_OF.get(str(inc.get("current_worst_impact")), "minor")
        worst = max(worst, impact, key=["none", "minor", "major", "critical"].index)
        affected = tuple(
            sorted(
                names.get(str(a.get("id")), str(a.get("id")))
                for a in _list(inc.get("affected_components"))
                if isinstance(a, dict)
            )
        )
        incidents.append(
            Incident(str(inc.get("name", "")), str(inc.get("status", "")), impact, affected, inc.get("url"))
        )
    if summary.get("in_progress_maintenances") and worst == "none":
        worst = "maintenance"
    text = "All Systems Operational" if worst == "none" else f"{len(incidents)} ongoing incident(s)"
    return PageStatus("incident.io", worst, text, comps, tuple(incidents))


def parse_page(text: str) -> PageStatus | None:
    """Read a status page body in any supported format; None when it is not one (HTML, other JSON)."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    return _atlassian(obj) or _incidentio(obj)


def summary_url(url: str) -> str:
    """The machine-readable URL for a status page root (`…/api/v2/summary.json`); JSON URLs pass through."""
    if url.endswith(".json") or "/proxy/" in url:
        return url
    from capdoctor.target.urls import join

    return join(url, "api/v2/summary.json")


@dataclass(frozen=True)
class Fetched:
    """The raw answer (or why there is none), and whether it came from the cache."""

    url: str
    http_status: int | None
    body: str
    error: str = ""
    cached: bool = False


def _cache_file(cache_dir: Path, url: str) -> Path:
    return cache_dir / "status" / (hashlib.sha256(url.encode()).hexdigest()[:20] + ".json")


def fetch_page(
    client: httpx.Client, url: str, *, cache_dir: Path, now_s: float, timeout: float, ttl_s: float = CACHE_TTL_S
) -> Fetched:
    """GET `url`, or reuse a cached body younger than `ttl_s`; never raises for network trouble."""
    import httpx

    path = _cache_file(cache_dir, url)
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("url") == url and 0 <= now_s - float(saved.get("fetched", 0)) < ttl_s:
            return Fetched(url, saved.get("http_status"), str(saved.get("body", "")), cached=True)
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    try:
        resp = client.get(url, timeout=timeout, headers={"accept": "application/json"})
        body = resp.text[:512_000]
    except httpx.HTTPError as exc:
        return Fetched(url, None, "", f"{type(exc).__name__}: {exc}"[:200])
    if resp.status_code == 200:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(
                json.dumps({"url": url, "fetched": now_s, "http_status": resp.status_code, "body": body}),
                encoding="utf-8",
            )
            tmp.replace(path)
        except OSError:
            pass
    return Fetched(url, resp.status_code, body)
