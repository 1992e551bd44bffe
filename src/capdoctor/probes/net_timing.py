"""Timing one network path: DNS, TCP connect, TLS, time to first byte, total, status and the error class.

Contract: `probe_path` makes one cheap GET (never a token-spending call) over a *fresh* httpx client (so the
connection events happen every time), through the given proxy or direct, and never raises: every failure is
a `PathResult` with an `error_class` from `ERROR_CLASSES`. DNS is timed on its own with `getaddrinfo`
(httpx has no DNS event); connect/TLS/TTFB come from httpcore's trace extension. Classification of
exceptions, HTML bodies and Cloudflare `/cdn-cgi/trace` text is done by pure functions. httpx is imported
inside functions only. This module does not decide causes: the paths check does.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ERROR_CLASSES: Mapping[str, str] = {
    "dns": "DNS resolution failed",
    "refused": "connection refused (nothing listening)",
    "reset": "connection reset",
    "timeout": "timed out",
    "unreachable": "network unreachable",
    "tls_verify": "TLS certificate verification failed",
    "tls": "TLS handshake failed",
    "proxy_407": "proxy requires authentication (407)",
    "proxy_502": "the proxy answered with an error page (502/503/504)",
    "proxy_error": "the proxy refused the tunnel",
    "proxy_config": "the proxy setting is unusable (client cannot be created)",
    "html": "HTML came back where JSON was expected",
    "captive_portal": "a captive portal / login page answered",
    "protocol": "the server broke the HTTP protocol",
    "other": "request failed",
}
"""Error classes of a failed path, with their one-line meaning (data for renderers and tests)."""

CONNECTION_LEVEL = frozenset(
    {
        "dns",
        "refused",
        "reset",
        "timeout",
        "unreachable",
        "tls",
        "tls_verify",
        "proxy_407",
        "proxy_502",
        "proxy_error",
        "proxy_config",
        "protocol",
        "other",
    }
)
"""Classes meaning no answer from the provider came back at all."""


@dataclass(frozen=True)
class PathResult:
    """One measured path. Times are milliseconds (None when the phase did not happen or was not measured)."""

    name: str
    url: str
    proxy: str | None = None
    dns_ms: float | None = None
    connect_ms: float | None = None
    tls_ms: float | None = None
    ttfb_ms: float | None = None
    total_ms: float | None = None
    status: int | None = None
    error: str | None = None
    error_class: str | None = None
    exit_location: str | None = None
    content_type: str | None = None
    addresses: tuple[str, ...] = ()
    trace: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The provider (not a middlebox) answered with an HTTP response, whatever its status."""
        return self.status is not None and self.error_class is None

    @property
    def connection_failed(self) -> bool:
        """No answer came back from the provider at all."""
        return self.error_class in CONNECTION_LEVEL

    def to_row(self) -> dict[str, Any]:
        """The `result.data["paths"]` row the terminal renderer draws as one httpstat-like bar."""
        return {
            "name": self.name,
            "proxy": self.proxy,
            "dns_ms": self.dns_ms,
            "connect_ms": self.connect_ms,
            "tls_ms": self.tls_ms,
            "ttfb_ms": self.ttfb_ms,
            "total_ms": self.total_ms,
            "status": self.status,
            "error": self.error,
            "error_class": self.error_class,
            "exit_location": self.exit_location,
        }


def classify_exception(type_names: Sequence[str], message: str) -> str:
    """The error class of a failed request from its exception type names (MRO) and message: the classifier's
    `path` transport rules (structure.toml). Pure.

    Why by name: the same classification must work for httpx and httpx2 exception types alike.
    """
    from capdoctor.classifier.marks import Raised, transport_kind

    return transport_kind("path", [Raised(frozenset(type_names))], message or "")


def classify_html(body: str) -> tuple[str, str]:
    """(error_class, what it is) for an HTML body where JSON was expected: the classifier's pages (structure.toml,
    signatures.md §12: what in the middle answered). Pure."""
    from capdoctor.classifier.marks import html_page

    return html_page(body)


def looks_like_html(content_type: str | None, body: str) -> bool:
    """True when a response is HTML (by type, or by a body that starts like a page)."""
    if content_type and "html" in content_type.lower():
        return True
    head = body.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body"))


def parse_cdn_trace(text: str) -> dict[str, str]:
    """The `key=value` lines of a Cloudflare `/cdn-cgi/trace` answer (empty when it is not one). Pure."""
    out: dict[str, str] = {}
    for line in text.splitlines()[:40]:
        key, sep, value = line.partition("=")
        if sep and re.fullmatch(r"[a-z_]{1,20}", key.strip()):
            out[key.strip()] = value.strip()
    return out if "loc" in out or "colo" in out else {}


def exit_location(trace: Mapping[str, str]) -> str | None:
    """A short exit location from a trace, e.g. `SG (colo SIN)`; the egress IP is left out on purpose."""
    loc, colo = trace.get("loc"), trace.get("colo")
    if not loc and not colo:
        return None
    return f"{loc or '?'} (colo {colo})" if colo else str(loc)


def trace_url(base_url: str) -> str:
    """The Cloudflare trace endpoint at the root of the API host."""
    p = urlsplit(base_url)
    return urlunsplit((p.scheme, p.netloc, "/cdn-cgi/trace", "", ""))


def is_ip_literal(host: str) -> bool:
    """True for an IPv4/IPv6 literal (no DNS needed)."""
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host.strip("[]"))
    except OSError:
        return False
    return True


def time_dns(host: str, port: int, timeout: float) -> tuple[float | None, tuple[str, ...], str | None]:
    """(ms, addresses, error) for resolving `host`, bounded by `timeout` (getaddrinfo itself cannot be)."""
    if is_ip_literal(host):
        return 0.0, (host.strip("[]"),), None
    box: dict[str, Any] = {}

    def work() -> None:
        t = time.monotonic()
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            box["addrs"] = tuple(dict.fromkeys(str(i[4][0]) for i in infos))
        except (OSError, UnicodeError) as exc:
            box["error"] = f"{type(exc).__name__}: {exc}"
        box["ms"] = (time.monotonic() - t) * 1000

    th = threading.Thread(target=work, daemon=True, name="dns")
    th.start()
    th.join(timeout)
    if "ms" not in box:
        return None, (), f"DNS lookup of {host} timed out after {timeout:.1f} s"
    return round(box["ms"], 1), box.get("addrs", ()), box.get("error")


def tcp_connect(addr: str, port: int, timeout: float) -> tuple[float | None, str | None]:
    """(ms, error) of a bare TCP connect to one address: used to compare IPv4 with IPv6."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    t = time.monotonic()
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect((addr, port))
    except OSError as exc:
        return None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return round((time.monotonic() - t) * 1000, 1), None


def _span(events: Sequence[tuple[float, str]], suffix: str, last: bool = False) -> float | None:
    starts = [t for t, n in events if n.endswith(f"{suffix}.started")]
    ends = [t for t, n in events if n.endswith(f"{suffix}.complete") or n.endswith(f"{suffix}.failed")]
    if not starts:
        return None
    start = starts[-1] if last else starts[0]
    after = [e for e in ends if e >= start]
    return round((after[0] - start) * 1000, 1) if after else None


def timings(
    events: Sequence[tuple[float, str]],
    dns_ms: float | None,
    via_proxy: bool,
) -> tuple[float | None, float | None, float | None]:
    """connect/tls/ttfb from httpcore trace events `(monotonic_s, name)`. Pure.

    Direct: `connect_tcp` re-resolves the name, so the separately timed DNS is subtracted. Through a proxy,
    `connect` runs from the TCP connect to the proxy until the tunnel is up (CONNECT answered).
    """
    tcp = _span(events, "connect_tcp")
    tls = _span(events, "start_tls", last=True)
    ttfb = None
    sends = [t for t, n in events if n.endswith("send_request_headers.started")]
    recvs = [t for t, n in events if n.endswith("receive_response_headers.complete")]
    if sends:
        after = [r for r in recvs if r >= sends[-1]]
        ttfb = round((after[0] - sends[-1]) * 1000, 1) if after else None
    connect = tcp
    if via_proxy:
        t0 = [t for t, n in events if n.endswith("connect_tcp.started")]
        tls_start = [t for t, n in events if n.endswith("start_tls.started")]
        if t0 and tls_start:
            connect = round((tls_start[-1] - t0[0]) * 1000, 1)
    elif tcp is not None and dns_ms:
        connect = round(max(0.0, tcp - dns_ms), 1)
    return connect, tls, ttfb


def _ms_since(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000, 1)


def answer_error(
    status: int, content_type: str | None, body: str, *, proxied: bool, expect_json: bool
) -> tuple[str | None, str | None]:
    """(error class, error) of an HTTP answer that is not the provider's, or (None, None): a proxy's 407 or
    error page, a captive portal, an HTML page where JSON was expected. Pure."""
    html = looks_like_html(content_type, body)
    cls, what = classify_html(body) if html else ("", "")
    if proxied and status == 407:
        return "proxy_407", "the proxy answered 407 Proxy Authentication Required"
    if html and proxied and status in (502, 503, 504) and cls == "html":
        return "proxy_502", f"the proxy answered HTTP {status} with {what}"
    if html and cls == "captive_portal":
        return cls, f"HTTP {status} with a {what} instead of the real answer"
    if html and expect_json and (status < 500 or proxied):
        # A provider's own HTML 5xx during an incident is an answer; anything else is a middlebox.
        return cls, f"HTTP {status} with {what} where JSON was expected"
    return None, None


def _edge_trace(client: Any, url: str, left: float) -> dict[str, str]:
    """The Cloudflare edge trace beside `url` (`trace_url`), read with `client`; {} when there is none."""
    try:
        tr = client.get(trace_url(url), timeout=min(left, 3.0))
    except Exception:
        return {}
    return parse_cdn_trace(tr.text[:2048]) if tr.status_code == 200 else {}


def probe_path(
    name: str,
    url: str,
    proxy: str | None,
    proxy_shown: str | None,
    timeout: float,
    *,
    expect_json: bool = True,
    want_trace: bool = False,
    verify: Any = True,
    user_agent: str = "capdoctor",
    admit: Callable[[], bool] | None = None,
    on_request: Callable[[Any], None] | None = None,
) -> PathResult:
    """Measure one GET of `url` over a fresh connection, direct (`proxy=None`) or through `proxy`.

    Why fresh: pooled connections skip the connect and TLS events, so every path gets its own client.
    `admit` (the run's budget) is asked before the edge-trace request; `on_request` is the budget's hook. Never raises.
    """
    import httpx

    t0 = time.monotonic()
    base = PathResult(name=name, url=url, proxy=proxy_shown)
    host, port = urlsplit(url).hostname or "", urlsplit(url).port or (443 if url.startswith("https") else 80)
    dns_ms: float | None = None
    addrs: tuple[str, ...] = ()
    if proxy is None:
        dns_ms, addrs, dns_err = time_dns(host, port, min(timeout, 5.0))
        if dns_err:
            return replace(base, dns_ms=dns_ms, error=dns_err, error_class="dns", total_ms=_ms_since(t0))
    events: list[tuple[float, str]] = []

    def on_trace(event: str, info: Mapping[str, Any]) -> None:
        events.append((time.monotonic(), event))

    left = max(0.05, timeout - (time.monotonic() - t0))
    headers = {"user-agent": user_agent, "accept": "application/json" if expect_json else "*/*"}
    try:
        client = httpx.Client(
            proxy=proxy,
            trust_env=False,
            verify=verify,
            follow_redirects=False,
            timeout=httpx.Timeout(left, connect=min(left, 5.0)),
            headers=headers,
            event_hooks={"request": [on_request]} if on_request is not None else None,
        )
    except (ValueError, ImportError) as exc:
        return replace(base, error=f"{type(exc).__name__}: {exc}", error_class="proxy_config", total_ms=_ms_since(t0))
    timed = replace(base, dns_ms=dns_ms, addresses=addrs)
    t_req = time.monotonic()

    def total_ms() -> float:
        # DNS plus the request itself: building the client (loading the CA bundle) is not network time.
        return round((dns_ms or 0.0) + (time.monotonic() - t_req) * 1000, 1)

    try:
        with client:
            try:
                response = client.get(url, extensions={"trace": on_trace})
                body = response.text[:4096]
            except Exception as exc:
                connect, tls, ttfb = timings(events, dns_ms, proxy is not None)
                cls = classify_exception([c.__name__ for c in type(exc).__mro__], str(exc))
                detail = str(exc) or type(exc).__name__
                failed = replace(timed, error=f"{type(exc).__name__}: {detail}", error_class=cls, total_ms=total_ms())
                return replace(failed, connect_ms=connect, tls_ms=tls, ttfb_ms=ttfb)
            total = total_ms()
            connect, tls, ttfb = timings(events, dns_ms, proxy is not None)
            status = response.status_code
            ctype = response.headers.get("content-type")
            error_class, error = answer_error(status, ctype, body, proxied=proxy is not None, expect_json=expect_json)
            traced = want_trace and error_class is None and (admit is None or admit())
            trace = _edge_trace(client, url, max(0.05, timeout - (time.monotonic() - t0))) if traced else {}
    except Exception as exc:
        return replace(base, error=f"{type(exc).__name__}: {exc}", error_class="other")
    done = replace(timed, total_ms=total, status=status, error=error, error_class=error_class, content_type=ctype)
    return replace(done, trace=trace, exit_location=exit_location(trace), connect_ms=connect, tls_ms=tls, ttfb_ms=ttfb)
