"""Which hosts are this machine, and whether a local port is listening: asked by several stages, answered here.

Discovery (a stale base URL), the client check (a dead relay in a config), the proxy check (a proxy client
that is not running), the hardware check (a local model server) and the models rules (a refused loopback
target) all need the same two answers. The test is pure; the one probe is a single TCP connect with a short
timeout, never an HTTP request.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOCALHOST_NAMES = frozenset({"localhost", "localhost.localdomain"})
ANY_ADDRESS = "0.0.0.0"
"""A server "listening on 0.0.0.0" is reached on loopback; as a destination it means this machine."""


def is_loopback_host(host: str) -> bool:
    """True for localhost names and loopback literals (127.0.0.0/8, ::1, bracketed or not)."""
    name = host.strip("[]").lower()
    if name in LOCALHOST_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def bind_problem(host: str) -> str | None:
    """Why a server cannot listen on `host` (empty: every interface, never meant by a user; a name that does
    not resolve), or None. Asked before any warning about the address, so a bad value is one line."""
    import socket

    if not host.strip():
        return "is empty (give an address to listen on, such as 127.0.0.1)"
    try:
        socket.getaddrinfo(host.strip("[]"), None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        return f"cannot be listened on: {getattr(exc, 'strerror', None) or exc}"
    return None


def hostname(url: str) -> str:
    """The lower-case host of `url` ("" when it has none or cannot be parsed); a bare host:port is accepted."""
    try:
        return (urlsplit(url if "://" in url else f"//{url}").hostname or "").lower()
    except ValueError:
        return ""


def is_loopback(url: str) -> bool:
    """True when `url` points at a loopback host."""
    return is_loopback_host(hostname(url))


def port_open(host: str, port: int, timeout: float) -> bool | None:
    """True when host:port accepts a TCP connection, False when it is refused, None when it cannot be told
    (timeout, unreachable). `0.0.0.0` is probed on loopback."""
    import socket

    address = "127.0.0.1" if host == ANY_ADDRESS else host.strip("[]")
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except ConnectionRefusedError:
        return False
    except OSError:
        return None


def url_port_open(url: str, timeout: float) -> bool | None:
    """`port_open` for a URL's host and port (default ports by scheme)."""
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return port_open(parts.hostname or "127.0.0.1", port, timeout)
