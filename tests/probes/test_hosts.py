"""`capdoctor.probes.hosts`: the one answer to "is this host this machine" and "is that local port listening"."""

from __future__ import annotations

import socket

import pytest

from capdoctor.probes.hosts import hostname, is_loopback, is_loopback_host, port_open, url_port_open
from tests.conftest import free_port


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("localhost.localdomain", True),
        ("api.localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("198.18.0.1", False),
        ("api.openai.com", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, expected: bool) -> None:
    assert is_loopback_host(host) is expected


def test_urls_and_bare_host_ports() -> None:
    assert hostname("http://User@LocalHost:8080/v1") == "localhost"
    assert hostname("127.0.0.1:7890") == "127.0.0.1"
    assert hostname("http://[::1") == ""
    assert is_loopback("http://127.0.0.1:8787") and not is_loopback("https://api.anthropic.com")


def test_port_open_tells_listening_refused_and_any_address() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert port_open("127.0.0.1", port, 1.0) is True
        assert port_open("0.0.0.0", port, 1.0) is True  # probed on loopback
        assert url_port_open(f"http://localhost:{port}/v1", 1.0) is True
    dead = free_port()
    assert port_open("127.0.0.1", dead, 1.0) is False
    assert url_port_open(f"127.0.0.1:{dead}", 1.0) is False
