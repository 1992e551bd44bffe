"""The `status` check ("Provider status page"): is the provider reporting an incident right now?

Contract: reads the provider's Statuspage-format feed (ctx.options["status_url"] when given, else the
feed its adapter declares in `status_page`), cached for a few minutes in ctx.cache_dir. An unresolved
incident or a degraded component that matches the target's product is capacity evidence; a green page is
recorded as context only (pages often stay green during capacity errors). A page that cannot be read or
parsed is "unknown", never "degraded". It must not probe the API itself and never fetches a public page when
CAPDOCTOR_NO_NETWORK_LOOKUPS=1 or for a local target without an explicit status URL.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from capdoctor.checks.base import Need
from capdoctor.checks.registry import Registered
from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength, result_of, skipped

if TYPE_CHECKING:
    from capdoctor.probes.statuspage import PageStatus
    from capdoctor.providers.base import StatusPage
    from capdoctor.run.context import Context

IMPACT_STRENGTH: dict[str, Strength] = {
    "critical": Strength.STRONG,
    "major": Strength.STRONG,
    "minor": Strength.MODERATE,
    "none": Strength.WEAK,
}


def _page(provider: str) -> StatusPage:
    from capdoctor.providers.catalog import adapter_for

    return adapter_for(provider).status_page


def _matches(provider: str, name: str) -> bool:
    low = name.lower()
    return any(k in low for k in _page(provider).components)


def assess(page: PageStatus, provider: str, url: str) -> tuple[Status, str, list[Finding]]:
    """Pure: findings from a parsed page for `provider` (incidents on matching components are capacity)."""
    findings: list[Finding] = []
    human = _page(provider).human or url
    for inc in page.incidents:
        relevant = not inc.components or any(_matches(provider, c) for c in inc.components)
        strength = IMPACT_STRENGTH.get(inc.impact, Strength.MODERATE) if relevant else Strength.CONTEXT
        where = f" ({', '.join(inc.components)})" if inc.components else ""
        findings.append(
            Finding(
                Cause.CAPACITY,
                strength,
                f"Status page incident{where}: {inc.name} [{inc.status}, impact {inc.impact or 'unknown'}]",
                {"incident": inc.name, "impact": inc.impact, "components": list(inc.components), "url": inc.url},
                (NextStep(f"Follow the incident at {inc.url or human}; switch to a lighter model until it clears."),),
            )
        )
    degraded = [
        (n, s) for n, s in page.components if s not in ("operational", "under_maintenance") and _matches(provider, n)
    ]
    if degraded and not any(f.strength is not Strength.CONTEXT for f in findings):
        findings.append(
            Finding(
                Cause.CAPACITY,
                Strength.MODERATE,
                "Degraded components on the status page: " + ", ".join(f"{n} ({s})" for n, s in degraded),
                {"components": [n for n, _ in degraded]},
            )
        )
    if not findings:
        findings.append(
            Finding(
                Cause.CAPACITY,
                Strength.CONTEXT,
                f"The status page is green ({page.description or page.indicator}); pages often "
                "stay green during model-level capacity errors.",
                {"indicator": page.indicator},
            )
        )
        return Status.PASS, f"{page.description or 'operational'} ({page.format})", findings
    active = [f for f in findings if f.strength is not Strength.CONTEXT]
    if not active:
        return Status.PASS, f"{len(page.incidents)} incident(s), none on {provider}'s API components", findings
    return Status.WARN, f"{page.description or page.indicator}: {active[0].message}", findings


def _untested(why: str) -> list[dict[str, Any]]:
    """The coverage gap an unreadable page leaves: an incident (capacity) can be neither seen nor ruled out."""
    return [{"what": "the status page", "why": why, "open_causes": ["capacity"], "decisive": False}]


class StatusCheck(Registered, check_id="status"):
    """Provider status page: incident or green."""

    needs: frozenset[Need] = frozenset({Need.NETWORK})
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """Pick the feed, fetch it (cached), parse it, and weigh incidents on matching components."""
        from capdoctor.probes.hosts import is_loopback
        from capdoctor.probes.statuspage import fetch_page, parse_page, summary_url
        from capdoctor.providers.catalog import canonical

        explicit = ctx.options["status_url"]
        provider = canonical(ctx.target.provider) if ctx.target else None
        provider = provider or (ctx.target.provider if ctx.target else "")
        if explicit:
            url = summary_url(str(explicit))
        else:
            if ctx.options["no_network_lookups"]:
                return skipped(self, "skipped: CAPDOCTOR_NO_NETWORK_LOOKUPS=1 and no status_url configured")
            if ctx.target is None:
                return skipped(self, "no provider known: pass --provider or set status_url in capdoctor.toml")
            declared = _page(provider)
            if not declared.feed and is_loopback(ctx.target.base_url):
                return skipped(self, "a local server has no status page")
            if not declared.feed:
                human = declared.human
                why = f"{provider} has no machine-readable status page" + (f" (see {human})" if human else "")
                return skipped(self, why)
            url = declared.feed
        ttl = float(ctx.options["status.cache_s"])
        with ctx.http_client(timeout=5.0) as client:
            got = fetch_page(
                client, url, cache_dir=ctx.cache_dir, now_s=ctx.now().timestamp(), timeout=ctx.timeout(5.0), ttl_s=ttl
            )
        data: dict[str, Any] = {"url": url, "http_status": got.http_status, "cached": got.cached}
        if got.error or got.http_status != 200:
            why = f"could not be read: {got.error or f'HTTP {got.http_status}'}"
            return result_of(
                self,
                Status.WARN,
                f"status unknown: the status page {why}",
                data={**data, "indicator": "unknown", "untested": _untested(why)},
            )
        page = parse_page(got.body)
        if page is None:
            why = "not a format capdoctor reads"
            return result_of(
                self,
                Status.WARN,
                f"status unknown: the status page is {why}",
                data={**data, "indicator": "unknown", "untested": _untested(why)},
            )
        status, summary, findings = assess(page, provider or "openai", url)
        if ctx.options["demo"]:  # the simulator's page, not the provider's: what it says is part of the play
            summary = f"{summary} — simulated status page"
            findings = [replace(f, message=f"{f.message} (simulated status page)") for f in findings]
        data.update(
            {
                "indicator": page.indicator,
                "format": page.format,
                "incidents": [
                    {
                        "name": i.name,
                        "status": i.status,
                        "impact": i.impact,
                        "components": list(i.components),
                        "url": i.url,
                    }
                    for i in page.incidents
                ],
                "degraded_components": [n for n, s in page.components if s != "operational"],
            }
        )
        return result_of(self, status, summary, findings, data=data)
