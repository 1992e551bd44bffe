"""The `proxy` check: what sits between the user and the provider (env/system proxy, TUN, TLS interception).

Contract: it reports facts in `result.data` that the verdict and other checks read (`env_proxy`, `tun`, `tls`,
…) and findings: a configured proxy nothing listens on, TLS interception (naming the issuer), TUN mode capturing
the provider's traffic, fake-IP DNS answers. It needs no target (with one it also inspects the provider's host,
egress interface and TLS chain). It reads only `ctx.env` and files under `ctx.home`, never prints credentials,
sends no HTTP request to the provider, and never raises for a missing tool or permission (unknown facts are
reported as unknown). `assess` is pure over the gathered `Facts`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from capdoctor.checks.base import Need, status_of
from capdoctor.checks.registry import Registered
from capdoctor.model import Cause, Finding, NextStep, Strength, result_of
from capdoctor.probes.hosts import is_loopback_host

if TYPE_CHECKING:
    from capdoctor.model import CheckResult
    from capdoctor.probes.net_proxyenv import EnvProxy
    from capdoctor.probes.net_sysproxy import SystemProxy
    from capdoctor.probes.net_tls import TlsJudgement
    from capdoctor.run.context import Context
    from capdoctor.target.client_settings import Setting

PUBLIC_PROBE_ADDRESS = "1.1.1.1"
"""Where the egress interface is computed when the target is local or absent (UDP connect sends nothing)."""

DEADLINE_MARGIN_S = 0.4
"""Seconds kept back from the run's deadline so the check reports before the runner gives up on it."""

LISTEN_TIMEOUT_S = 0.5
"""How long to wait for a local proxy port to accept a connection before calling it dead."""


@dataclass(frozen=True)
class Facts:
    """Everything the proxy check gathered, as plain values, so `assess` can be tested without a machine."""

    env_proxy: Mapping[str, Any]
    system_proxy: Mapping[str, Any] | None
    client_proxies: Sequence[Mapping[str, str]]
    dead_proxies: Sequence[Mapping[str, str]]
    tun: Mapping[str, Any]
    resolved: Sequence[str]
    fake_ip: bool | None
    processes: Sequence[tuple[str, str]]
    tls: Mapping[str, Any]
    host: str | None = None
    tls_judgement: TlsJudgement | None = None
    egress: Mapping[str, Any] = field(default_factory=dict)


def client_proxy_entries(home: Path, env: Mapping[str, str]) -> list[tuple[dict[str, str], str]]:
    """(shown entry, raw value) for proxy variables set in clients' own files. The raw value (which may hold
    credentials) is only for the "is anything listening" probe and must never be output."""
    from capdoctor.redact import redact_url

    out: list[tuple[dict[str, str], str]] = []
    for client, settings in _client_env_settings(home, env):
        for s in settings:
            if s.name.lower().endswith("_proxy") and s.value:
                shown = {
                    "client": client,
                    "source": s.file,
                    "variable": s.name,
                    "value": s.value if s.name.lower() == "no_proxy" else redact_url(s.value),
                }
                out.append((shown, s.value))
    return out


def _client_env_settings(home: Path, env: Mapping[str, str]) -> list[tuple[str, tuple[Setting, ...]]]:
    """(client, variables) from the clients' files that can set proxies: Claude Code's `settings.json`
    `env` block, Codex's `.env` (in $CODEX_HOME when set). A missing, unreadable or malformed file is skipped."""
    from capdoctor.target.client_settings import (
        ClientConfigError,
        claude_dir,
        codex_env_path,
        read_claude_settings,
        read_dotenv,
    )

    found: list[tuple[str, tuple[Setting, ...]]] = []
    try:
        claude = read_claude_settings(claude_dir(env, home) / "settings.json", home, strict=False)
        if claude is not None:
            found.append(("Claude Code", claude.env))
    except ClientConfigError:
        pass
    label = "$CODEX_HOME/.env" if env.get("CODEX_HOME") else "~/.codex/.env"
    try:
        dotenv = read_dotenv(codex_env_path(env, home), home, label=label, strict=False)
        if dotenv is not None:
            found.append(("Codex", dotenv))
    except ClientConfigError:
        pass
    return found


def read_client_proxies(home: Path, env: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """Proxy variables set in clients' own files (Claude Code settings.json `env`, Codex `.env`), redacted.

    Why: a stale proxy in `~/.codex/.env` or settings.json applies to that client only, so the shell looks
    clean while the client still goes through a dead proxy.
    """
    return [shown for shown, _ in client_proxy_entries(home, env or {})]


def _hostport(url: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname, port or {"http": 80, "https": 443}.get(parts.scheme, 1080)


def find_dead_proxies(candidates: Sequence[tuple[str, str, str]], timeout: float) -> list[dict[str, str]]:
    """Loopback proxies (source, variable, raw url) that refuse connections: the proxy client is not running.

    Why only loopback: a local port answers instantly either way, so the probe is cheap and conclusive;
    remote proxies are judged by the paths check instead.
    """
    from capdoctor.probes.net_timing import tcp_connect
    from capdoctor.redact import redact_url

    dead: list[dict[str, str]] = []
    seen: set[tuple[str, int]] = set()
    for source, var, url in candidates:
        hp = _hostport(url)
        if hp is None or not is_loopback_host(hp[0]) or hp in seen:
            continue
        seen.add(hp)
        addr = "127.0.0.1" if hp[0].lower().startswith("localhost") else hp[0].strip("[]")
        _, err = tcp_connect(addr, hp[1], timeout)
        if err is not None:
            dead.append({"source": source, "variable": var, "proxy": redact_url(url), "error": err})
    return dead


def _dead_proxy_findings(facts: Facts) -> list[Finding]:
    """A configured local proxy that nothing listens on breaks every request through it: strong."""
    return [
        Finding(
            Cause.NETWORK,
            Strength.STRONG,
            f"{d['variable']} ({d['source']}) points at {d['proxy']}, but nothing is listening there "
            f"({d['error']}): the proxy client is not running or uses another port",
            {"variable": d["variable"], "proxy": d["proxy"], "source": d["source"]},
            (
                NextStep("Start the proxy client (Clash/mihomo, v2rayN…) or fix the port in the variable."),
                NextStep(
                    f"Or stop using it: remove {d['variable']} from {d['source']}.",
                    f"unset {d['variable']}" if d["source"] == "environment" else None,
                ),
            ),
        )
        for d in facts.dead_proxies
    ]


def _interception_findings(facts: Facts) -> list[Finding]:
    """TLS interception: strong when no client trusts the chain (total), moderate when only some do."""
    j = facts.tls_judgement
    if j is None or not j.intercepted:
        return []
    return [
        Finding(
            Cause.NETWORK,
            Strength.STRONG if j.severity == "total" else Strength.MODERATE,
            j.message,
            {
                "issuer": j.issuer,
                "interceptor": j.interceptor,
                "accepted_by": list(j.accepted_by),
                "severity": j.severity,
            },
            (
                NextStep(
                    f"Ask the network/IT owner about the TLS inspection by '{j.issuer}', or exempt the provider's "
                    f"host from it."
                ),
                NextStep(
                    "If it is legitimate, give the CA to each client: NODE_EXTRA_CA_CERTS (Claude Code), "
                    "CODEX_CA_CERTIFICATE (Codex), SSL_CERT_FILE (Python)."
                ),
            ),
        )
    ]


def _tun_findings(facts: Facts) -> list[Finding]:
    """TUN mode: weak when it carries the provider's traffic (it often works fine), else context."""
    tun = facts.tun
    if not tun.get("active"):
        return []
    captures = tun.get("egress_interface") == tun.get("interface")
    steps = (
        NextStep(
            "If requests fail or streams drop, compare with TUN off (system-proxy mode), or switch the "
            "proxy's node; Clash's auto_close_connection cuts long streams."
        ),
    )
    return [
        Finding(
            Cause.NETWORK,
            Strength.WEAK if captures else Strength.CONTEXT,
            f"TUN mode is on: {tun.get('interface')} ({tun.get('label')})"
            + (
                " carries the traffic to the provider"
                if captures
                else " is up, but the provider's traffic leaves through another interface"
            ),
            {"interface": tun.get("interface"), "egress_interface": tun.get("egress_interface")},
            steps if captures else (),
        )
    ]


def _fake_ip_findings(facts: Facts) -> list[Finding]:
    """Fake-IP DNS answers: weak (the real route depends on the proxy's rules, which other checks test)."""
    if not facts.fake_ip:
        return []
    return [
        Finding(
            Cause.NETWORK,
            Strength.WEAK,
            f"DNS answers {facts.host} with a fake IP ({', '.join(facts.resolved)}, 198.18.0.0/15): a TUN/fake-IP "
            f"resolver captures it, so the real route depends on the proxy's rules",
            {"host": facts.host, "resolved": list(facts.resolved)},
            (
                NextStep(
                    "Check the proxy's rule for this host (it must go to a working node), or add the host to "
                    "fake-ip-filter to get real DNS answers."
                ),
            ),
        )
    ]


def _context_findings(facts: Facts) -> list[Finding]:
    """Context only: a system proxy without a proxy variable, clients' own proxy settings, proxy processes."""
    findings: list[Finding] = []
    sysp = facts.system_proxy
    if sysp and not facts.env_proxy.get("effective"):
        shown = sysp.get("https") or sysp.get("http") or sysp.get("pac_url")
        findings.append(
            Finding(
                Cause.NETWORK,
                Strength.CONTEXT,
                f"A system proxy is set ({sysp.get('source')}: {shown}) "
                f"but no proxy variable: browsers use it, most CLI tools (Node, Rust, Python on Linux) do not",
                {"system_proxy": dict(sysp)},
            )
        )
    findings += [
        Finding(
            Cause.NETWORK,
            Strength.CONTEXT,
            f"{c['client']} sets {c['variable']}={c['value']} in {c['source']} (applies to that client only)",
            dict(c),
        )
        for c in facts.client_proxies
    ]
    if facts.processes:
        findings.append(
            Finding(
                Cause.NETWORK,
                Strength.CONTEXT,
                "Proxy/VPN clients running: " + ", ".join(f"{n} ({label})" for n, label in facts.processes),
                {"processes": [n for n, _ in facts.processes]},
            )
        )
    return findings


RULES: tuple[Callable[[Facts], list[Finding]], ...] = (
    _dead_proxy_findings,
    _interception_findings,
    _tun_findings,
    _fake_ip_findings,
    _context_findings,
)
"""The judgement as a table, in the order its findings are reported."""


def assess(facts: Facts) -> list[Finding]:
    """The findings for gathered facts. Pure.

    Weights: a dead local proxy and total TLS interception break every request (strong); partial interception
    (moderate); TUN capturing the provider's traffic and fake-IP DNS often work fine (weak); mere presence is context.
    """
    return [finding for rule in RULES for finding in rule(facts)]


def _tls_facts(
    ctx: Context, host: str, port: int, scheme: str, proxy_url: str | None, timeout: float
) -> tuple[dict[str, Any], TlsJudgement | None]:
    from capdoctor.probes.net_proxyenv import proxy_scheme
    from capdoctor.probes.net_tls import inspect_tls, judge

    if scheme != "https":
        return {"applicable": False, "reason": "not applicable: the target is plain http"}, None
    via = None
    if proxy_url:
        if proxy_scheme(proxy_url) not in ("http", "https"):
            return {
                "applicable": True,
                "checked": False,
                "reason": f"not checked: the client's proxy is {proxy_scheme(proxy_url)}://",
            }, None
        via = _hostport(proxy_url)
    report = inspect_tls(host, port, ctx.env, timeout, proxy=via)
    j = judge(report)
    return {
        "applicable": True,
        "checked": report.error is None,
        "error": report.error,
        "issuer": report.issuer,
        "chain": [dict(c) for c in report.chain],
        "trusted_by": dict(report.trusted_by),
        "intercepted": j.intercepted,
        "severity": j.severity,
        "interceptor": j.interceptor,
        "via_proxy": via is not None,
    }, j


def _listen_candidates(
    ep: EnvProxy, sysproxy: SystemProxy | None, entries: Sequence[tuple[dict[str, str], str]]
) -> list[tuple[str, str, str]]:
    """(source, variable, raw URL) of every proxy a client may use: env, system, and the clients' own files."""
    candidates = [("environment", ep.sources[k], v) for k, v in ep.proxies.items() if k in ("http", "https", "all")]
    if sysproxy:
        candidates += [
            (sysproxy.source, f"system {k} proxy", v)
            for k, v in (("https", sysproxy.https), ("http", sysproxy.http), ("socks", sysproxy.socks))
            if v
        ]
    candidates += [(s["source"], s["variable"], raw) for s, raw in entries if s["variable"].lower() != "no_proxy"]
    return candidates


@dataclass(frozen=True)
class _Route:
    """Where the target is and how a client reaches it: host, scheme and port, its addresses, its proxy."""

    host: str | None = None
    scheme: str | None = None
    port: int = 443
    resolved: tuple[str, ...] = ()
    proxy_url: str | None = None


def _route(ctx: Context, ep: EnvProxy) -> _Route:
    """The target's route; its host is resolved within a third of the time left (no target: an empty route)."""
    from capdoctor.probes.net_proxyenv import effective_proxy
    from capdoctor.probes.net_timing import time_dns

    if ctx.target is None:
        return _Route()
    parts = urlsplit(ctx.target.base_url)
    host, scheme = parts.hostname, parts.scheme
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        port = 443
    if not host:
        return _Route(host, scheme, port)
    resolved = tuple(time_dns(host, port, max(0.05, min(3.0, ctx.remaining() / 3)))[1])
    return _Route(host, scheme, port, resolved, effective_proxy(ep, ctx.target.base_url).url)


def _egress(resolved: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(TUN summary, egress) for the interface the provider's traffic leaves through (UDP connect: nothing sent)."""
    from capdoctor.probes import net_tun

    interfaces = net_tun.read_interfaces()
    public = [a for a in resolved if not is_loopback_host(a)]
    probe_addr = next((a for a in public if ":" not in a), public[0] if public else PUBLIC_PROBE_ADDRESS)
    src = net_tun.egress_source(probe_addr)
    iface = net_tun.interface_for_address(interfaces, src) if src else None
    tun = net_tun.summarize(net_tun.classify_interfaces(interfaces, iface), iface)
    return tun, {"probe_address": probe_addr, "source_address": src, "interface": iface}


def _route_tls(ctx: Context, route: _Route) -> tuple[dict[str, Any], TlsJudgement | None]:
    """The TLS facts for the route, or why they were not gathered."""
    if not (route.host and route.scheme):
        return {"applicable": False, "reason": "no target"}, None
    if not route.resolved and not route.proxy_url:
        # a lookup that failed or never answered would block the TLS connect in getaddrinfo again
        return {"applicable": False, "reason": f"not checked: {route.host} did not resolve"}, None
    tls_budget = max(0.05, min(5.0, ctx.remaining() - DEADLINE_MARGIN_S))
    return _tls_facts(ctx, route.host, route.port, route.scheme, route.proxy_url, tls_budget)


class ProxyCheck(Registered, check_id="proxy"):
    """Proxy and TUN: environment and system proxies, clients' own proxy settings, TUN, fake-IP, TLS."""

    needs: frozenset[Need] = frozenset()
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """Gather the facts (each one failing soft), then assess them."""
        from capdoctor.probes import net_tun
        from capdoctor.probes.net_proxyenv import read_env_proxies
        from capdoctor.probes.net_sysproxy import read_system_proxy

        ep = read_env_proxies(ctx.env)
        sysproxy = read_system_proxy(ctx.platform, ctx.env, ctx.home, timeout=ctx.timeout(2.0))
        entries = client_proxy_entries(ctx.home, ctx.env)
        candidates = _listen_candidates(ep, sysproxy, entries)
        dead = find_dead_proxies(candidates, min(LISTEN_TIMEOUT_S, ctx.timeout(LISTEN_TIMEOUT_S)))
        route = _route(ctx, ep)
        resolved = list(route.resolved)
        tun, egress = _egress(resolved)
        processes = net_tun.match_processes(net_tun.read_process_names())
        tls, judgement = _route_tls(ctx, route)
        facts = Facts(
            env_proxy=ep.to_dict(),
            system_proxy=sysproxy.to_dict() if sysproxy else None,
            client_proxies=[shown for shown, _ in entries],
            dead_proxies=dead,
            tun=tun,
            resolved=resolved,
            fake_ip=any(net_tun.is_fake_ip(a) for a in resolved) if resolved else None,
            processes=processes,
            tls=tls,
            host=route.host,
            tls_judgement=judgement,
            egress=egress,
        )
        findings = assess(facts)
        data = {
            "env_proxy": facts.env_proxy,
            "system_proxy": facts.system_proxy,
            "client_proxies": facts.client_proxies,
            "dead_proxies": dead,
            "tun": tun,
            "fake_ip": facts.fake_ip,
            "resolved": resolved,
            "egress": egress,
            "proxy_processes": [{"name": n, "client": label} for n, label in processes],
            "tls": tls,
        }
        return result_of(self, status_of(findings), _summary(facts), findings, _details(facts), data)


def _summary(f: Facts) -> str:
    eff = f.env_proxy.get("effective") or {}
    parts = [", ".join(f"{f.env_proxy['sources'].get(k, k)} → {v}" for k, v in eff.items()) or "no proxy variables"]
    if f.system_proxy:
        sp = f.system_proxy
        parts.append(f"system proxy {sp.get('https') or sp.get('http') or sp.get('mode')}")
    if f.dead_proxies:
        parts.append(f"{len(f.dead_proxies)} proxy not listening")
    parts.append(f"TUN on ({f.tun.get('interface')})" if f.tun.get("active") else "no TUN")
    if f.fake_ip:
        parts.append("fake-IP DNS")
    if f.tls.get("intercepted"):
        parts.append(f"TLS intercepted by {f.tls.get('issuer')}")
    elif f.tls.get("applicable") is False:
        parts.append("TLS n/a")
    elif f.tls.get("checked"):
        parts.append("TLS not intercepted")
    return "; ".join(parts)


def _details(f: Facts) -> list[str]:
    out = []
    for name, value in (f.env_proxy.get("variables") or {}).items():
        out.append(f"env {name}={value!s}" if value else f"env {name} is set but empty")
    if f.system_proxy:
        out.append(
            f"system proxy ({f.system_proxy.get('source')}): "
            + ", ".join(
                f"{k} {v}" for k, v in f.system_proxy.items() if k in ("http", "https", "socks", "pac_url") and v
            )
        )
    for c in f.client_proxies:
        out.append(f"{c['client']}: {c['variable']}={c['value']} ({c['source']})")
    for iface in f.tun.get("interfaces") or []:
        out.append(
            f"interface {iface['name']}: {iface['label']}, {'up' if iface['up'] else 'down'}"
            + (f", {'; '.join(iface['reasons'])}" if iface["reasons"] else "")
        )
    if f.egress.get("interface"):
        out.append(
            f"egress to {f.egress.get('probe_address')}: {f.egress.get('interface')} "
            f"(source {f.egress.get('source_address')})"
        )
    if f.resolved:
        out.append(f"{f.host} resolves to {', '.join(f.resolved)}")
    if f.tls.get("reason"):
        out.append(f"TLS: {f.tls['reason']}")
    elif f.tls.get("issuer"):
        out.append(
            f"TLS issuer: {f.tls['issuer']} (trusted by: "
            f"{', '.join(k for k, v in (f.tls.get('trusted_by') or {}).items() if v) or 'none'})"
        )
    return out
