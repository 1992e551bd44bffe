"""Path timing and error classes: pure classifiers, and `probe_path` against a real origin and a real proxy."""

from __future__ import annotations

import ssl
from collections.abc import Iterator

import pytest

from capdoctor.probes.net_timing import (
    classify_exception,
    classify_html,
    exit_location,
    parse_cdn_trace,
    probe_path,
    time_dns,
    timings,
    trace_url,
)
from tests.conftest import free_port
from tests.support.netfixtures import Origin, private_ca, running_proxy, tls_server_context


@pytest.mark.parametrize(
    ("names", "message", "expected"),
    [
        (["ConnectError"], "[Errno 111] Connection refused", "refused"),
        (["ConnectError"], "[Errno -2] Name or service not known", "dns"),
        (["ConnectError"], "[Errno 8] nodename nor servname provided, or not known", "dns"),
        (["ReadError"], "[Errno 104] Connection reset by peer", "reset"),
        (["RemoteProtocolError"], "Server disconnected without sending a response.", "reset"),
        (["ReadTimeout", "TimeoutException"], "timed out", "timeout"),
        (["ConnectTimeout", "TimeoutException"], "", "timeout"),
        (
            ["ConnectError"],
            "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer "
            "certificate (_ssl.c:1006)",
            "tls_verify",
        ),
        (["ConnectError"], "[SSL: WRONG_VERSION_NUMBER] wrong version number", "tls"),
        (["ProxyError"], "407 Proxy Authentication Required", "proxy_407"),
        (["ProxyError"], "502 Bad Gateway", "proxy_502"),
        (["ProxyError"], "302 Found", "proxy_error"),
        (["ValueError"], "Unknown scheme for proxy URL URL('socks://127.0.0.1:7891/')", "proxy_config"),
        (["ImportError"], "Using SOCKS proxy, but the 'socksio' package is not installed.", "proxy_config"),
        (["ConnectError"], "[Errno 101] Network is unreachable", "unreachable"),
        (["Weird"], "something else", "other"),
    ],
)
def test_classify_exception(names: list[str], message: str, expected: str) -> None:
    assert classify_exception(names, message) == expected


def test_classify_html_tells_portals_from_block_pages() -> None:
    assert (
        classify_html('<meta http-equiv="refresh" content="0; url=http://1.1.1.1/login?dst=x">')[0] == "captive_portal"
    )
    assert classify_html("<title>Just a moment...</title>") == ("html", "cloudflare challenge page")
    assert classify_html("<html>Internet Security by Zscaler</html>") == ("html", "Zscaler block page")
    assert classify_html("<html><body>hello</body></html>") == ("html", "an HTML page")


def test_cdn_trace_parsing_and_exit_location() -> None:
    text = "fl=29f184\nh=api.test\nip=203.0.113.9\nts=1.0\ncolo=HKG\nloc=HK\nwarp=off\n"
    tr = parse_cdn_trace(text)
    assert tr["loc"] == "HK" and tr["colo"] == "HKG"
    assert exit_location(tr) == "HK (colo HKG)"  # the egress IP is not repeated
    assert parse_cdn_trace("<html>not a trace</html>") == {}
    assert exit_location({}) is None
    assert trace_url("https://api.test:8443/v1/x") == "https://api.test:8443/cdn-cgi/trace"


def test_timings_from_trace_events_direct_and_through_a_tunnel() -> None:
    direct = [
        (0.000, "connection.connect_tcp.started"),
        (0.030, "connection.connect_tcp.complete"),
        (0.030, "connection.start_tls.started"),
        (0.080, "connection.start_tls.complete"),
        (0.081, "http11.send_request_headers.started"),
        (0.200, "http11.receive_response_headers.complete"),
    ]
    assert timings(direct, dns_ms=10.0, via_proxy=False) == (20.0, 50.0, 119.0)
    tunnel = [
        (0.000, "connection.connect_tcp.started"),
        (0.001, "connection.connect_tcp.complete"),
        (0.001, "http11.send_request_headers.started"),
        (0.040, "http11.receive_response_headers.complete"),
        (0.041, "proxy.start_tls.started"),
        (0.100, "proxy.start_tls.complete"),
        (0.100, "http11.send_request_headers.started"),
        (0.300, "http11.receive_response_headers.complete"),
    ]
    assert timings(tunnel, dns_ms=None, via_proxy=True) == (41.0, 59.0, 200.0)


@pytest.fixture
def origin() -> Iterator[Origin]:
    with Origin() as o:
        yield o


def test_direct_probe_measures_and_reads_the_trace(origin: Origin) -> None:
    r = probe_path("direct", origin.base_url("localhost") + "/models", None, None, 5.0, want_trace=True)
    assert r.ok and r.status == 200 and r.error_class is None
    assert r.dns_ms is not None and r.connect_ms is not None and r.ttfb_ms is not None
    assert r.total_ms is not None and r.total_ms >= r.ttfb_ms
    assert r.tls_ms is None  # plain http
    assert r.exit_location == "SG (colo SIN)"
    assert "127.0.0.1" in r.addresses


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("ok", None),
        ("reset", "reset"),
        ("502", "proxy_502"),
        ("407", "proxy_407"),
        ("portal", "captive_portal"),
    ],
)
def test_proxy_probe_error_classes_http_target(origin: Origin, mode: str, expected: str | None) -> None:
    with running_proxy(mode) as proxy:
        r = probe_path("env proxy", origin.base_url() + "/models", proxy.url, proxy.url, 5.0)
        assert proxy.requests, "the probe did not go through the proxy"
        assert proxy.requests[0][1].startswith("http://127.0.0.1:")  # absolute-URI forwarding
    assert r.error_class == expected
    assert r.ok is (expected is None)
    assert r.dns_ms is None  # the proxy resolves the origin


def test_proxy_probe_hang_is_bounded_by_the_timeout(origin: Origin) -> None:
    with running_proxy("hang") as proxy:
        r = probe_path("env proxy", origin.base_url() + "/models", proxy.url, proxy.url, 0.5)
    assert r.error_class == "timeout" and not r.ok


@pytest.mark.parametrize(
    ("mode", "expected"), [("ok", None), ("407", "proxy_407"), ("502", "proxy_502"), ("reset", "reset")]
)
def test_connect_tunnel_error_classes_and_tls_timing(mode: str, expected: str | None) -> None:
    ca = private_ca()
    with Origin(tls=tls_server_context(ca)) as tls_origin, running_proxy(mode) as proxy:
        verify = ssl.create_default_context()
        ca.configure_trust(verify)  # the client trusts the private CA: only the proxy decides the outcome
        r = probe_path(
            "env proxy", tls_origin.base_url("localhost") + "/models", proxy.url, proxy.url, 5.0, verify=verify
        )
        assert proxy.requests and proxy.requests[0][0] == "CONNECT"
    assert r.error_class == expected
    if expected is None:
        assert r.status == 200 and r.tls_ms is not None and r.connect_ms is not None


def test_tls_verify_failure_is_its_own_class() -> None:
    with Origin(tls=tls_server_context(private_ca())) as tls_origin:
        r = probe_path("direct", tls_origin.base_url("localhost") + "/models", None, None, 5.0)
    assert r.error_class == "tls_verify" and "CERTIFICATE_VERIFY_FAILED" in (r.error or "")


def test_refused_dns_and_bad_proxy_scheme() -> None:
    port = free_port()
    assert probe_path("direct", f"http://127.0.0.1:{port}/v1/models", None, None, 3.0).error_class == "refused"
    dns = probe_path("direct", "http://no-such-host.invalid/v1/models", None, None, 3.0)
    assert dns.error_class == "dns" and dns.status is None
    bad = probe_path(
        "env proxy", "http://127.0.0.1:1/v1/models", "socks://127.0.0.1:7891", "socks://127.0.0.1:7891", 3.0
    )
    assert bad.error_class == "proxy_config" and "Unknown scheme" in (bad.error or "")


def test_time_dns_literal_and_failure() -> None:
    assert time_dns("127.0.0.1", 80, 1.0) == (0.0, ("127.0.0.1",), None)
    _ms, addrs, err = time_dns("no-such-host.invalid", 80, 3.0)
    assert addrs == () and err is not None
