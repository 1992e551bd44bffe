"""The `paths` check: compare the network paths to the provider (client path, direct, system proxy).

Contract: for the target's base URL it measures every available path separately, each over a fresh connection,
with one cheap GET of the model listing (never a call that spends tokens), into `result.data["paths"]`. It also
reaches a neutral reference URL to tell "no internet" from "provider unreachable" (unless
`CAPDOCTOR_NO_NETWORK_LOOKUPS=1` and no `reference_url`), compares IPv4 with IPv6, reads the exit location from
the edge's `/cdn-cgi/trace`, and names proxy-variable mistakes. All probes run in parallel inside the deadline.
It reads the environment only via `ctx.env`, never sends the key or prints a proxy credential; a path the run's
request budget refuses is not measured, and the summary names it. `assess` is pure over the measured rows.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from capdoctor.checks.base import Need, status_of
from capdoctor.checks.registry import Registered
from capdoctor.model import Cause, Finding, NextStep, Status, Strength, result_of
from capdoctor.run.threads import run_parallel

if TYPE_CHECKING:
    from capdoctor.model import CheckResult
    from capdoctor.probes.net_proxyenv import ProxyIssue
    from capdoctor.probes.net_timing import PathResult
    from capdoctor.run.budget import RunBudget
    from capdoctor.run.context import Context

DEFAULT_REFERENCE_URL = "http://connectivitycheck.gstatic.com/generate_204"
"""A well-known connectivity-check URL (answers 204, an HTML 200 means a captive portal)."""

NOT_SENT = "not sent"
"""What a path's job returns when the run's request budget refused its request."""

PATH_TIMEOUT_S = 10.0
"""What one path may take at most (cut to the run's deadline)."""

DEADLINE_MARGIN_S = 0.4
"""Seconds kept back from the run's deadline so the check reports before the runner gives up on it."""

SLOW_FACTOR = 3.0
SLOW_MIN_EXTRA_MS = 500.0
"""A phase is "far above" the others when it is SLOW_FACTOR× the best path and SLOW_MIN_EXTRA_MS more."""

ISSUE_STRENGTH: Mapping[str, Strength] = {
    "rejected_scheme": Strength.MODERATE,
    "socks_unsupported": Strength.WEAK,
    "empty_cancels": Strength.WEAK,
    "case_conflict": Strength.WEAK,
    "no_proxy_covers": Strength.CONTEXT,
}
"""How much each proxy-variable mistake weighs for `network` (strong when it breaks the client path itself)."""


@dataclass(frozen=True)
class PathSpec:
    """One path to measure: a display name, the raw proxy URL (None: direct), and whether the client uses it."""

    name: str
    proxy: str | None
    client: bool = False


@dataclass(frozen=True)
class Reference:
    """The neutral reference probe: `checked` False with a reason, or per-path outcomes."""

    url: str | None
    checked: bool
    reason: str | None = None
    rows: tuple[PathResult, ...] = ()

    @property
    def reachable(self) -> bool | None:
        """True when any path reached the reference, False when none did, None when not checked."""
        if not self.checked:
            return None
        return any(r.ok for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        """`result.data["reference"]`."""
        return {
            "url": self.url,
            "checked": self.checked,
            "reason": self.reason,
            "reachable": self.reachable,
            "paths": [r.to_row() for r in self.rows],
        }


def models_url(base_url: str) -> str:
    """The cheap GET for a base URL: its `models` listing (costs no tokens; any status proves reachability).

    Userinfo, query and fragment are dropped: a key in `?key=` or `user:pass@` must never travel to a proxy
    we are only testing, nor appear in the report.
    """
    from capdoctor.target.urls import join, without_query

    return join(without_query(base_url.strip()), "models")


def plan_paths(env: Mapping[str, str], url: str, system_proxy: str | None, system_source: str | None) -> list[PathSpec]:
    """The paths to measure, client path first: env proxy (if the client uses one), direct, system proxy.

    Why this order and dedupe: the user's client path is what failed for them; the others tell whether another
    path would work. A system proxy equal to the env proxy is not measured twice.
    """
    from capdoctor.probes.net_proxyenv import effective_proxy, read_env_proxies

    choice = effective_proxy(read_env_proxies(env), url)
    specs: list[PathSpec] = []
    if choice.url:
        specs.append(PathSpec(f"env proxy ({choice.source})", choice.url, client=True))
        specs.append(PathSpec("direct", None))
    else:
        specs.append(PathSpec("direct", None, client=True))
    if system_proxy and system_proxy.rstrip("/") != (choice.url or "").rstrip("/"):
        specs.append(PathSpec(f"system proxy ({system_source})", system_proxy))
    return specs


def _ms(value: float | None) -> str:
    return "—" if value is None else (f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms")


def describe(row: PathResult) -> str:
    """One human line per path, httpstat-like: dns · connect · tls · ttfb · total · outcome."""
    outcome = f"HTTP {row.status}" if row.ok else f"{_failure(row)}: {row.error}"
    exit_ = f" · exit {row.exit_location}" if row.exit_location else ""
    via = f" via {row.proxy}" if row.proxy else ""
    return (
        f"{row.name}{via}: dns {_ms(row.dns_ms)} · connect {_ms(row.connect_ms)} · tls {_ms(row.tls_ms)} · "
        f"ttfb {_ms(row.ttfb_ms)} · total {_ms(row.total_ms)} · {outcome}{exit_}"
    )


def _fix_steps(working: PathResult, host: str, proxy_var: str | None) -> tuple[NextStep, ...]:
    """Remedies naming the path that works: drop or bypass a broken env proxy, or adopt the working one."""
    if working.name == "direct" and proxy_var:
        return (
            NextStep(
                f"Use the direct path: the proxy in {proxy_var} is the problem (restart or fix the proxy "
                f"client, or switch its node).",
                f"unset {proxy_var}",
            ),
            NextStep(
                f"Or keep the proxy for other hosts but bypass it for {host}.",
                f'export NO_PROXY="${{NO_PROXY:+$NO_PROXY,}}{host}"',
            ),
        )
    if working.proxy:
        var = proxy_var or "HTTPS_PROXY"
        return (
            NextStep(f"Use the path that works ({working.name}): point {var} at it.", f"export {var}={working.proxy}"),
        )
    return (NextStep(f"Use the path that works: {working.name}."),)


def _failure(row: PathResult) -> str:
    """The human name of a path's error class (`failed` when it has none)."""
    from capdoctor.probes.net_timing import ERROR_CLASSES

    return ERROR_CLASSES.get(row.error_class or "", "failed")


def assess(
    rows: Sequence[PathResult],
    client_name: str,
    host: str,
    reference: Reference,
    issues: Sequence[ProxyIssue] = (),
    families: Sequence[Mapping[str, Any]] = (),
    proxy_var: str | None = None,
    simulated: bool = False,
) -> list[Finding]:
    """The findings for measured paths. Pure: table-driven tests feed it hand-made rows. `simulated`: a demo,
    whose reference is the simulator (its reachability says nothing about this machine's internet).

    Rules: the client path failing while another works, every path failing at connection level, and an HTML
    page where JSON was expected are strong network evidence; a phase far slower than on the other paths is
    weak; a reference failure while the provider answers is context only.
    """
    client = {r.name: r for r in rows}.get(client_name)
    if client is None:
        return []
    others = [r for r in rows if r.name != client_name]
    if client.ok:
        findings = _client_works(client, others, rows, host, reference)
    else:
        findings = [_client_fails(client, others, rows, host, reference, proxy_var, simulated)]
    return [
        *findings,
        *_exit_findings(rows),
        *_family_findings(families, host),
        *(_issue_finding(issue, client, proxy_var) for issue in issues),
    ]


def _client_works(
    client: PathResult, others: Sequence[PathResult], rows: Sequence[PathResult], host: str, reference: Reference
) -> list[Finding]:
    """The client's path works: other paths failing are context, a slow phase a warning, all working a finding
    against `network`, and an unreachable reference only context (this provider answers)."""
    findings = [
        Finding(
            Cause.NETWORK,
            Strength.CONTEXT,
            f"{r.name} fails ({_failure(r)}) while your client's path ({client.name}) works — keep using {client.name}",
            {"path": r.name, "error_class": r.error_class},
        )
        for r in others
        if not r.ok
    ]
    findings.extend(_slow(client, [r for r in others if r.ok]))
    if all(r.ok for r in rows):
        findings.append(
            Finding(
                Cause.NETWORK,
                Strength.AGAINST,
                f"Every path reaches {host} ({', '.join(f'{r.name}: HTTP {r.status}' for r in rows)}): "
                f"the network path is not what fails",
                {"paths": [r.name for r in rows]},
            )
        )
    if reference.reachable is False:
        findings.append(
            Finding(
                Cause.NETWORK,
                Strength.CONTEXT,
                f"The reference {reference.url} is unreachable, but {host} answers: not a problem for this provider",
                {"reference_url": reference.url},
            )
        )
    return findings


def _client_fails(
    client: PathResult,
    others: Sequence[PathResult],
    rows: Sequence[PathResult],
    host: str,
    reference: Reference,
    proxy_var: str | None,
    simulated: bool,
) -> Finding:
    """The client's path fails: another path that works names the fix; a page where JSON was expected names
    what answered; no path at all is this machine's connection or the host (the reference tells which)."""
    base_data = {"path": client.name, "error_class": client.error_class, "status": client.status}
    working = next((r for r in others if r.ok), None)
    if working is not None:
        # Errors read from a response already say what happened; exceptions need the class spelled out.
        what = client.error if client.status is not None else f"{_failure(client)}: {client.error}"
        return Finding(
            Cause.NETWORK,
            Strength.STRONG,
            f"Requests over {client.name} fail ({what}) while {working.name} reaches {host} "
            f"(HTTP {working.status} in {_ms(working.total_ms)}): the path, not the provider, is the problem",
            {**base_data, "working_path": working.name, "working_status": working.status},
            _fix_steps(working, host, proxy_var),
        )
    if client.error_class in ("html", "captive_portal"):
        portal = client.error_class == "captive_portal"
        return Finding(
            Cause.NETWORK,
            Strength.STRONG,
            f"{'A captive portal' if portal else 'Something in the middle'} answered instead of {host}: {client.error}",
            base_data,
            (
                NextStep("Open a browser and log in to the network (hotel/airport/office Wi-Fi), then retry.")
                if portal
                else NextStep("Check the proxy/firewall in front of you; the page names it."),
            ),
        )
    return Finding(
        Cause.NETWORK,
        Strength.STRONG,
        f"No path reaches {host}: "
        + "; ".join(f"{r.name}: {_failure(r)}" for r in rows)
        + f" {_reference_tail(reference, host, simulated)}",
        {**base_data, "reference_reachable": reference.reachable},
        (
            NextStep("Check the connection itself: another network (phone hotspot), VPN/proxy on or off."),
            NextStep(f"Confirm the base URL's host {host} is right and up."),
        ),
    )


def _reference_tail(reference: Reference, host: str, simulated: bool) -> str:
    """What the reference says when no path reaches the host: no internet here, or only the host unreachable."""
    if reference.reachable is None:
        return "(reference not checked)"
    if reference.reachable:
        return (
            f"while the reference {reference.url} answers: the internet works, but {host} is "
            f"unreachable from here (blocked, wrong address, or down)"
        )
    if simulated:  # the reference is the simulator: what it plays says nothing of this machine
        return (
            f"and the simulated reference {reference.url} is unreachable too: the demo plays a machine "
            "without working internet"
        )
    return f"and the reference {reference.url} is unreachable too: this machine has no working internet"


def _exit_findings(rows: Sequence[PathResult]) -> list[Finding]:
    """Context when the provider sees the paths exit in different places (region blocks follow the exit)."""
    locations = {r.name: r.exit_location for r in rows if r.exit_location}
    if len(set(locations.values())) <= 1:
        return []
    return [
        Finding(
            Cause.NETWORK,
            Strength.CONTEXT,
            "The provider sees different exit locations per path: "
            + ", ".join(f"{n} → {loc}" for n, loc in locations.items())
            + " (region blocks follow the exit node)",
            {"exit_locations": locations},
        )
    ]


BREAKS_CLIENT = frozenset({"rejected_scheme", "socks_unsupported"})
"""Proxy-variable mistakes that make a Python client fail before it sends (`proxy_config` on its path)."""


def _issue_finding(issue: ProxyIssue, client: PathResult, proxy_var: str | None) -> Finding:
    """A proxy-variable mistake, weighed by `ISSUE_STRENGTH`; strong when it is what broke the client's path."""
    broke = issue.kind in BREAKS_CLIENT and client.error_class == "proxy_config" and proxy_var == issue.variable
    return Finding(
        Cause.NETWORK,
        Strength.STRONG if broke else ISSUE_STRENGTH.get(issue.kind, Strength.WEAK),
        issue.message,
        {"issue": issue.kind, "variable": issue.variable, **dict(issue.data)},
        (NextStep(issue.fix, issue.command),),
    )


def _slow(client: PathResult, others: Sequence[PathResult]) -> list[Finding]:
    out: list[Finding] = []
    for field_name, label in (("tls_ms", "TLS handshake"), ("ttfb_ms", "time to first byte")):
        mine = getattr(client, field_name)
        best = min((getattr(r, field_name) for r in others if getattr(r, field_name) is not None), default=None)
        if mine is None or best is None:
            continue
        if mine >= SLOW_FACTOR * max(best, 1.0) and mine - best >= SLOW_MIN_EXTRA_MS:
            fastest = min(
                (r for r in others if getattr(r, field_name) is not None), key=lambda r: float(getattr(r, field_name))
            )
            out.append(
                Finding(
                    Cause.NETWORK,
                    Strength.WEAK,
                    f"{label} over {client.name} is {_ms(mine)} against {_ms(best)} over {fastest.name}",
                    {"path": client.name, "phase": field_name, "ms": mine, "best_ms": best, "best_path": fastest.name},
                    (NextStep(f"{fastest.name} is faster: consider using it, or switch the proxy's node."),),
                )
            )
    return out


def _family_findings(families: Sequence[Mapping[str, Any]], host: str) -> list[Finding]:
    fam = {f["family"]: f for f in families}
    v4, v6 = fam.get("ipv4"), fam.get("ipv6")
    if not v4 or not v6:
        return []
    if v4.get("error") is None and v6.get("error") is not None:
        return [
            Finding(
                Cause.NETWORK,
                Strength.WEAK,
                f"{host} resolves to IPv6 too, but IPv6 connects fail ({v6['error']}) while IPv4 works: "
                f"clients that try IPv6 first can hang",
                {"families": list(families)},
                (NextStep("Disable IPv6 on this network, or fix its IPv6 route."),),
            )
        ]
    if v6.get("error") is None and v4.get("error") is not None:
        return [
            Finding(
                Cause.NETWORK,
                Strength.WEAK,
                f"IPv4 connects to {host} fail ({v4['error']}) while IPv6 works",
                {"families": list(families)},
            )
        ]
    return []


def reference_plan(ctx: Context) -> tuple[str | None, str | None]:
    """(url, reason-not-checked): the option wins; `CAPDOCTOR_NO_NETWORK_LOOKUPS=1` disables the default."""
    url = ctx.options["reference_url"]
    if url:
        return str(url), None
    if ctx.options["no_network_lookups"]:
        return None, "not checked (CAPDOCTOR_NO_NETWORK_LOOKUPS=1)"
    return DEFAULT_REFERENCE_URL, None


def _families(addresses: Sequence[str], port: int, timeout: float) -> list[dict[str, Any]]:
    from capdoctor.probes.net_timing import tcp_connect

    v4 = next((a for a in addresses if ":" not in a), None)
    v6 = next((a for a in addresses if ":" in a), None)
    if not (v4 and v6):
        return []
    results = run_parallel(
        [
            (fam, lambda a=addr: tcp_connect(a, port, timeout))  # type: ignore[misc]
            for fam, addr in (("ipv4", v4), ("ipv6", v6))
        ],
        timeout + 0.2,
    )
    out = []
    for fam, addr in (("ipv4", v4), ("ipv6", v6)):
        ms, err = results.get(fam, (None, f"timed out after {timeout:.1f} s"))
        out.append({"family": fam, "address": addr, "connect_ms": ms, "error": err})
    return out


def client_verify(env: Mapping[str, str]) -> Any:
    """The TLS verification a Python client of the user would use: `SSL_CERT_FILE`/`SSL_CERT_DIR` when set
    (httpx honours them with trust_env), else httpx's default (certifi). Interception itself is the proxy
    check's business; here a user's corporate CA must not make every path look broken."""
    import ssl

    cafile, capath = env.get("SSL_CERT_FILE"), env.get("SSL_CERT_DIR")
    if not (cafile or capath):
        return True
    try:
        return ssl.create_default_context(cafile=cafile or None, capath=capath or None)
    except (OSError, ssl.SSLError):
        return True


@dataclass(frozen=True)
class _Probe:
    """What every path's measurement shares: the seconds it may take, the user's TLS verification, and the run's
    request budget (asked before each request to the provider; `guard` refuses one sent beyond it)."""

    check_id: str
    seconds: float
    verify: Any
    budget: RunBudget
    guard: Callable[..., None]

    def admit(self) -> bool:
        """Take one request from the run's budget (the models check's reserve first)."""
        return self.budget.take(self.check_id)

    def measure(self, spec: PathSpec, target_url: str, is_ref: bool) -> PathResult | str:
        """One path to one URL, or `NOT_SENT` when the run's budget refuses the provider's request."""
        from capdoctor.probes.net_timing import probe_path
        from capdoctor.redact import redact_url

        if self.budget.is_provider(target_url) and not self.admit():
            return NOT_SENT
        shown = redact_url(spec.proxy) if spec.proxy else None
        return probe_path(
            spec.name,
            target_url,
            spec.proxy,
            shown,
            self.seconds,
            expect_json=not is_ref,
            want_trace=not is_ref,
            verify=self.verify,
            admit=self.admit,
            on_request=self.guard,
        )

    def measure_all(
        self, specs: Sequence[PathSpec], url: str, ref_url: str | None, host: str, port: int
    ) -> dict[str, Any]:
        """Every path to the target (`t:` name) and the reference (`r:` name), and the IPv4/IPv6 connects, in
        parallel; a job that did not finish in time is missing."""
        from capdoctor.probes.net_timing import time_dns

        jobs: list[tuple[str, Callable[[], Any]]] = [
            (f"t:{s.name}", partial(self.measure, s, url, False)) for s in specs
        ]
        if ref_url:
            jobs += [(f"r:{s.name}", partial(self.measure, s, ref_url, True)) for s in specs]
        fam_timeout = min(3.0, self.seconds / 2)
        jobs.append(("families", lambda: _families(time_dns(host, port, fam_timeout)[1], port, fam_timeout)))
        return run_parallel(jobs, self.seconds + 0.2)

    def row(self, done: Mapping[str, Any], key: str, spec: PathSpec, url: str) -> PathResult:
        """The measured row for `key`, or a timeout row when its job never answered."""
        from capdoctor.probes.net_timing import PathResult
        from capdoctor.redact import redact_url

        got = done.get(key)
        if isinstance(got, PathResult):
            return got
        return PathResult(
            spec.name,
            url,
            redact_url(spec.proxy) if spec.proxy else None,
            error=f"no answer within {self.seconds:.1f} s",
            error_class="timeout",
            total_ms=round(self.seconds * 1000, 1),
        )


class PathsCheck(Registered, check_id="paths"):
    """Network paths: which way to the provider works, how fast, and where it exits."""

    needs: frozenset[Need] = frozenset({Need.TARGET, Need.NETWORK})
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """Measure every path in parallel within the deadline, then assess the rows."""
        from capdoctor.probes.http_budget import budget_hook
        from capdoctor.probes.net_proxyenv import effective_proxy, find_issues, read_env_proxies
        from capdoctor.probes.net_sysproxy import read_system_proxy

        if ctx.target is None:
            return result_of(self, Status.SKIP, "no target: pass --base-url/--model")
        url = models_url(ctx.target.base_url)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return result_of(self, Status.SKIP, f"base URL {ctx.target.base_url!r} is not an http(s) URL")
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
        issues = find_issues(ctx.env, importlib.util.find_spec("socksio") is not None, url)
        choice = effective_proxy(read_env_proxies(ctx.env), url)
        sysproxy = read_system_proxy(ctx.platform, ctx.env, ctx.home, timeout=min(2.0, ctx.remaining() / 4))
        seconds = max(0.1, ctx.timeout(PATH_TIMEOUT_S) - DEADLINE_MARGIN_S)
        sys_url = sysproxy.proxy_for(parts.scheme) if sysproxy else None
        specs = plan_paths(ctx.env, url, sys_url, sysproxy.source if sysproxy else None)
        ref_url, ref_reason = reference_plan(ctx)
        budget = ctx.provider_budget
        probe = _Probe(self.id, seconds, client_verify(ctx.env), budget, budget_hook(budget))
        done = probe.measure_all(specs, url, ref_url, host, port)

        unsent = [s for s in specs if done.get(f"t:{s.name}") == NOT_SENT]  # refused by the run's budget
        rows = [probe.row(done, f"t:{s.name}", s, url) for s in specs if s not in unsent]
        if ctx.options["demo"]:  # the exit location is the simulator's made-up trace, not where this machine exits
            rows = [replace(r, exit_location=f"{r.exit_location}, simulated") if r.exit_location else r for r in rows]
        reference = Reference(ref_url, False, ref_reason)
        if ref_url:
            ref_specs = [s for s in specs if done.get(f"r:{s.name}") != NOT_SENT]
            reference = Reference(
                ref_url, True, None, tuple(probe.row(done, f"r:{s.name}", s, ref_url) for s in ref_specs)
            )
        budget_text = budget.spent_text(self.id, len(unsent), "path request") if unsent else ""
        not_measured = [s.name for s in unsent]
        if not rows:
            return result_of(
                self,
                Status.SKIP,
                f"no path measured: {budget_text}",
                data={"not_measured": not_measured, "budget": budget_text},
            )
        families = done.get("families") or []
        proxy_var = choice.source if choice.url else None
        findings = assess(rows, specs[0].name, host, reference, issues, families, proxy_var, ctx.options["demo"])
        summary = _summary(rows, specs[0].name)
        details = [describe(r) for r in rows]
        if unsent:  # never silently: say which paths the run's budget left unmeasured
            summary += f"; not measured: {', '.join(not_measured)} ({budget_text})"
            details.append(f"run budget: {budget_text}")
        details += _context_details(reference, families)
        data = {
            "paths": [r.to_row() for r in rows],
            "client_path": specs[0].name,
            "target_url": url,
            "reference": reference.to_dict(),
            "families": list(families),
            "proxy_issues": [{"kind": i.kind, "variable": i.variable, "message": i.message} for i in issues],
            "not_measured": not_measured,
            "budget": budget_text or None,
        }
        return result_of(self, status_of(findings), summary, findings, details, data)


def _context_details(reference: Reference, families: Sequence[Mapping[str, Any]]) -> list[str]:
    """Detail lines for the reference's outcome per path and each address family's connect."""
    shown = (
        "; ".join(f"{r.name} {'ok' if r.ok else r.error_class}" for r in reference.rows)
        if reference.checked
        else str(reference.reason)
    )
    return [
        f"reference {reference.url}: {shown}",
        *(
            f"{f['family']} {f['address']}: "
            + (f"connect {_ms(f['connect_ms'])}" if f["error"] is None else f"fails: {f['error']}")
            for f in families
        ),
    ]


def _summary(rows: Sequence[PathResult], client_name: str) -> str:
    parts = []
    for r in rows:
        mark = "your path" if r.name == client_name else ""
        state = f"HTTP {r.status} in {_ms(r.total_ms)}" if r.ok else _failure(r)
        parts.append(f"{r.name}{' (' + mark + ')' if mark else ''}: {state}")
    return "; ".join(parts)
