"""Proxy environment variables: what Python clients (urllib, httpx) will actually do with them.

Contract: pure functions over an env *mapping* (never `os.environ`). It mirrors CPython's
`urllib.request.getproxies_environment()` (lowercase names win; an empty lowercase variable *deletes* the
uppercase one) and httpx 0.28's `get_environment_proxies()` + `URLPattern` (`NO_PROXY` rules, most specific
mount wins, `*` disables every proxy), then names the mistakes that break a client before any packet leaves.
No I/O, no httpx; only `effective_proxy` returns a raw URL (for a probe): output goes through `redact_url`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from capdoctor.redact import redact_url

PROXY_KEYS = ("http", "https", "all")
"""The `*_proxy` prefixes httpx uses (urllib also collects ftp_proxy etc., which httpx ignores)."""

HTTPX_SCHEMES = frozenset({"http", "https", "socks5", "socks5h"})
"""Proxy URL schemes httpx 0.28 accepts; anything else makes `httpx.Client()` raise ValueError."""

SOCKS_SCHEMES = frozenset({"socks5", "socks5h"})


@dataclass(frozen=True)
class EnvProxy:
    """The proxy settings a Python client derives from the environment.

    `proxies` maps a key (`http`, `https`, `all`, `no`) to the effective raw value, `sources` to the variable that
    supplied it; `variables` lists every `*_proxy` variable, redacted, empty ones kept (an empty lowercase one matters).
    """

    proxies: Mapping[str, str]
    sources: Mapping[str, str]
    variables: Mapping[str, str]
    cgi: bool = False

    @property
    def no_proxy(self) -> tuple[str, ...]:
        """The `NO_PROXY` entries, stripped, in order."""
        return tuple(h.strip() for h in self.proxies.get("no", "").split(",") if h.strip())

    def to_dict(self) -> dict[str, object]:
        """Machine-readable facts for `result.data["env_proxy"]` (values redacted)."""
        return {
            "variables": dict(self.variables),
            "effective": {k: redact_url(v) for k, v in self.proxies.items() if k in PROXY_KEYS},
            "sources": dict(self.sources),
            "no_proxy": list(self.no_proxy),
        }


@dataclass(frozen=True)
class ProxyChoice:
    """Which proxy a Python client uses for one URL: `url` (raw) from variable `source`, or direct.

    `bypassed_by` names the `NO_PROXY` entry that made the request go direct although a proxy was set.
    """

    url: str | None
    source: str | None = None
    bypassed_by: str | None = None

    @property
    def redacted(self) -> str | None:
        """The proxy URL with any credentials masked, for output."""
        return redact_url(self.url) if self.url else None


@dataclass(frozen=True)
class ProxyIssue:
    """A proxy misconfiguration: stable `kind`, the variable involved, a message and the fix."""

    kind: str
    variable: str
    message: str
    fix: str
    command: str | None = None
    data: Mapping[str, object] = field(default_factory=dict)


def read_env_proxies(env: Mapping[str, str]) -> EnvProxy:
    """Apply urllib's rules to `env`: why — the case and emptiness rules decide what Python clients use.

    Pass 1 takes every non-empty `*_proxy` variable case-insensitively; pass 2 lets lowercase-suffixed
    names override, and an empty one deletes the key (so `all_proxy=` cancels `ALL_PROXY=socks5://…`).
    With `REQUEST_METHOD` set (CGI), an uppercase `HTTP_PROXY` is dropped (CVE-2016-1000110).
    """
    proxies: dict[str, str] = {}
    sources: dict[str, str] = {}
    variables: dict[str, str] = {}
    for name, value in env.items():
        if name.lower().endswith("_proxy"):
            variables[name] = redact_url(value) if value else ""
        if value and name[-6:].lower() == "_proxy":
            proxies[name[:-6].lower()] = value
            sources[name[:-6].lower()] = name
    cgi = "REQUEST_METHOD" in env
    if cgi:
        proxies.pop("http", None)
        sources.pop("http", None)
    for name, value in env.items():
        if name[-6:] == "_proxy":
            key = name[:-6].lower()
            if value:
                proxies[key] = value
                sources[key] = name
            else:
                proxies.pop(key, None)
                sources.pop(key, None)
    return EnvProxy(proxies=proxies, sources=sources, variables=dict(sorted(variables.items())), cgi=cgi)


@dataclass(frozen=True)
class _Pattern:
    """One httpx mount pattern (`all://*example.com`, `https://`…) and the proxy it maps to (None: direct)."""

    pattern: str
    scheme: str
    host: str
    port: int | None
    proxy: str | None
    source: str | None

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.host:
            if self.host.startswith("*."):
                ok = re.match(rf"^.+\.{re.escape(self.host[2:])}$", host) is not None
            elif self.host.startswith("*"):
                ok = re.match(rf"^(.+\.)?{re.escape(self.host[1:])}$", host) is not None
            else:
                ok = host == self.host
            if not ok:
                return False
        return self.port is None or self.port == port


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host.split("/")[0])
    except ValueError:
        return False
    return True


def _is_ipv6(host: str) -> bool:
    try:
        ipaddress.IPv6Address(host.split("/")[0])
    except ValueError:
        return False
    return True


def _pattern(pattern: str, proxy: str | None, source: str | None) -> _Pattern | None:
    try:
        parts = urlsplit(pattern)
        port = parts.port
    except ValueError:
        return None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    host = parts.hostname or ""
    if netloc.startswith("*"):  # urlsplit keeps "*example.com" as hostname, lower-cased
        host = netloc.split(":")[0].lower() if not netloc.startswith("[") else host
    scheme = "" if parts.scheme == "all" else parts.scheme
    return _Pattern(pattern, scheme, "" if host == "*" else host, port, proxy, source)


def mounts(env_proxy: EnvProxy) -> list[_Pattern]:
    """httpx's proxy mounts for these settings, most specific first (empty when `NO_PROXY` has `*`)."""
    out: list[_Pattern] = []
    for key in PROXY_KEYS:
        value = env_proxy.proxies.get(key)
        if value:
            url = value if "://" in value else f"http://{value}"
            p = _pattern(f"{key}://", url, env_proxy.sources.get(key))
            if p:
                out.append(p)
    for host in env_proxy.no_proxy:
        if host == "*":
            return []
        if "://" in host:
            pat = host
        elif _is_ipv4(host):
            pat = f"all://{host}"
        elif _is_ipv6(host):
            pat = f"all://[{host}]"
        elif host.lower() == "localhost":
            pat = f"all://{host}"
        else:
            pat = f"all://*{host}"
        p = _pattern(pat, None, host)
        if p:
            out.append(p)
    return sorted(out, key=lambda p: p.priority)


def effective_proxy(env_proxy: EnvProxy, url: str) -> ProxyChoice:
    """The proxy an httpx client with `trust_env=True` would use for `url` (raw URL, or direct).

    Why: the "client path" of the paths check must be the path the user's Python tools really take, which
    the `NO_PROXY` and scheme rules decide, not the mere presence of `HTTPS_PROXY`.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port if port is not None else {"http": 80, "https": 443}.get(scheme)
    any_proxy = any(env_proxy.proxies.get(k) for k in PROXY_KEYS)
    if any_proxy and "*" in env_proxy.no_proxy:
        return ProxyChoice(None, bypassed_by="*")
    # httpx normalises the default port away; a pattern with an explicit port compares against `url.port`,
    # which is None for the default port.
    cmp_port = None if port == {"http": 80, "https": 443}.get(scheme) else port
    for p in mounts(env_proxy):
        if p.matches(scheme, host, cmp_port):
            if p.proxy is None:
                return ProxyChoice(None, bypassed_by=p.source if any_proxy else None)
            return ProxyChoice(p.proxy, source=p.source)
    return ProxyChoice(None)


def proxy_scheme(url: str) -> str:
    """The lower-case scheme of a proxy value, with httpx's default of `http` for a bare `host:port`."""
    return url.split("://", 1)[0].lower() if "://" in url else "http"


def find_issues(env: Mapping[str, str], socks_supported: bool, target_url: str | None = None) -> list[ProxyIssue]:
    """Proxy settings that break clients before any packet leaves, each named with its fix.

    Why each matters: httpx builds a transport for *every* env mount when a client is created, so a bad
    `ALL_PROXY` breaks even plain https requests; and the upper/lower-case rules silently change which proxy
    Python tools use compared with Node (Claude Code) or Rust (Codex) tools.
    `socks_supported` says whether `socksio` is importable (the caller checks; this stays pure).
    """
    ep = read_env_proxies(env)
    found = [_scheme_issue(ep, key, socks_supported) for key in PROXY_KEYS if ep.proxies.get(key)]
    found += _case_issues(env)
    if target_url and any(ep.proxies.get(k) for k in PROXY_KEYS):
        found.append(_bypass_issue(ep, target_url))
    return [issue for issue in found if issue is not None]


def _scheme_issue(ep: EnvProxy, key: str, socks_supported: bool) -> ProxyIssue | None:
    """A proxy whose scheme httpx rejects, or a SOCKS proxy without `socksio`: `httpx.Client()` raises."""
    value = ep.proxies[key]
    var = ep.sources.get(key, f"{key}_proxy")
    scheme = proxy_scheme(value)
    shown = redact_url(value)
    if scheme not in HTTPX_SCHEMES:
        fixed = "socks5" if scheme.startswith("socks") else "http"
        return ProxyIssue(
            "rejected_scheme",
            var,
            f"{var}={shown} uses the scheme '{scheme}://', which httpx rejects "
            f'("Unknown scheme for proxy URL"): Python clients fail before sending anything',
            f"Use a scheme httpx supports, e.g. {fixed}://host:port (Clash/mihomo mixed ports accept "
            f"http:// too), or unset {var}.",
            command=f"export {var}={fixed}://{value.split('://', 1)[-1]}",
            data={"scheme": scheme, "value": shown},
        )
    if scheme in SOCKS_SCHEMES and not socks_supported:
        return ProxyIssue(
            "socks_unsupported",
            var,
            f"{var}={shown} is a SOCKS proxy but the 'socksio' package is not installed: httpx.Client() "
            f"raises ImportError in Python tools (Claude Code does not support SOCKS at all)",
            "Install SOCKS support for Python clients, or point the variable at the proxy's HTTP port.",
            command="pip install 'httpx[socks]'",
            data={"scheme": scheme, "value": shown},
        )
    return None


def _case_issues(env: Mapping[str, str]) -> list[ProxyIssue | None]:
    """Each lowercase `*_proxy` against each other-case spelling of the same key that is set: an empty
    lowercase one cancels it for Python clients, a different value splits Python from other tools."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for name, value in env.items():
        if name.lower().endswith("_proxy"):
            by_key.setdefault(name[:-6].lower(), []).append((name, value))
    return [
        _case_issue(lname, lvalue, oname, ovalue)
        for _key, entries in sorted(by_key.items())
        for lname, lvalue in entries
        if lname[-6:] == "_proxy"
        for oname, ovalue in entries
        if oname[-6:] != "_proxy" and ovalue
    ]


def _case_issue(lname: str, lvalue: str, oname: str, ovalue: str) -> ProxyIssue | None:
    """The issue between lowercase `lname` and other-case `oname`, or None when they agree."""
    if not lvalue:
        return ProxyIssue(
            "empty_cancels",
            lname,
            f"{lname} is set but empty, which cancels {oname}={redact_url(ovalue)} for Python "
            f"clients (urllib/httpx), while Node and Rust clients may still use {oname}",
            f"Decide on one: unset the empty {lname}, or unset {oname} too.",
            command=f"unset {lname}",
            data={"cancelled": oname},
        )
    if lvalue.strip() != ovalue.strip():
        return ProxyIssue(
            "case_conflict",
            lname,
            f"{lname}={redact_url(lvalue)} and {oname}={redact_url(ovalue)} differ: "
            f"Python and curl use the lowercase one, other tools may use the uppercase one",
            "Set both to the same value, or unset one of them.",
            command=f"unset {oname}",
            data={"lower": redact_url(lvalue), "upper": redact_url(ovalue)},
        )
    return None


def _bypass_issue(ep: EnvProxy, target_url: str) -> ProxyIssue | None:
    """A `NO_PROXY` entry that sends the provider's requests direct although a proxy is configured."""
    choice = effective_proxy(ep, target_url)
    if not choice.bypassed_by:
        return None
    host = urlsplit(target_url).hostname or target_url
    return ProxyIssue(
        "no_proxy_covers",
        ep.sources.get("no", "NO_PROXY"),
        f"NO_PROXY entry '{choice.bypassed_by}' covers {host}: requests to the provider go direct, "
        f"not through the configured proxy",
        f"If the provider is only reachable through the proxy, remove '{choice.bypassed_by}' from NO_PROXY.",
        data={"entry": choice.bypassed_by, "host": host},
    )
