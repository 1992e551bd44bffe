"""`probes.http_call.send` over real loopback sockets: every way an exchange can end gets its kind."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from capdoctor.probes.http_call import send
from capdoctor.probes.sse import Event
from capdoctor.providers.base import error_fields
from capdoctor.providers.catalog import adapter_for
from capdoctor.run.context import Target
from tests.conftest import free_port


def client() -> httpx.Client:
    return httpx.Client(trust_env=False, timeout=5.0)


def openai_target(base: str) -> Target:
    return Target(provider="openai", base_url=base, model="gpt-5.5", api_key="sk-test-fake-http")


def test_refused() -> None:
    a = adapter_for("openai")
    with client() as c:
        ex = send(c, a, a.list_request(openai_target(f"http://127.0.0.1:{free_port()}/v1")), timeout=2)
    assert ex.kind == "refused" and ex.connection_failed and ex.status is None


@pytest.fixture
def tls_server() -> Iterator[str]:
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")

    class H(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(ctx)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_untrusted_certificate_is_tls(tls_server: str) -> None:
    a = adapter_for("openai")
    with client() as c:  # certifi does not trust the test CA, like a client behind TLS interception
        ex = send(c, a, a.list_request(openai_target(tls_server)), timeout=3)
    assert ex.kind == "tls", ex.detail


@pytest.mark.scenario("captive-portal")
def test_html_where_json_expected(sim: Any) -> None:
    a = adapter_for("openai")
    with client() as c:
        ex = send(c, a, a.list_request(openai_target(sim.base_url("openai"))), timeout=3)
    assert ex.kind == "html" and ex.status == 200


@pytest.mark.scenario("stream-cut")
def test_stream_cut_after_first_output(sim: Any) -> None:
    a = adapter_for("openai")
    t = openai_target(sim.base_url("openai"))
    with client() as c:
        ex = send(c, a, a.generate_request(t, "gpt-5.5", "responses"), timeout=3)
    assert ex.kind == "cut" and "before completion" in ex.detail


@pytest.mark.scenario("healthy")
def test_stream_read_to_completion_and_body_bound(sim: Any) -> None:
    a = adapter_for("anthropic")
    t = Target(
        provider="anthropic", base_url=sim.base_url("anthropic"), model="claude-haiku-4-5", api_key="sk-ant-test-fake"
    )
    with client() as c:
        ok = send(c, a, a.generate_request(t, "claude-haiku-4-5", "messages"), timeout=3)
        small = send(c, a, a.list_request(t), timeout=3, max_bytes=64)
    assert ok.ok and ok.detail == "stream completed"
    assert len(small.body) <= 64 and small.kind in ("undecided", "ok")


@pytest.mark.scenario("reset")
def test_reset(sim: Any) -> None:
    a = adapter_for("openai")
    with client() as c:
        ex = send(c, a, a.list_request(openai_target(sim.base_url("openai"))), timeout=3)
    assert ex.kind == "reset"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "error",
                    "type",
                    "response",
                    "status",
                    "code",
                    "message",
                    "detail",
                    "details",
                    "choices",
                    "delta",
                    "finish_reason",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(json_values, st.sampled_from([None, "error", "response.failed", "message_stop", "content_block_delta"]))
def test_readers_never_raise_on_odd_payloads(value: Any, name: str | None) -> None:
    import json

    error_fields(value)
    data = json.dumps(value)
    for provider in ("openai", "anthropic", "gemini", "openrouter"):
        a = adapter_for(provider)
        a.read_event("chat", Event(name, data))
        a.read_body("chat", value)
