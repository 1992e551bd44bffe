"""Real network parts for the network-stage tests: a forwarding/CONNECT proxy, a small origin, TLS via trustme.

Contract: everything binds to 127.0.0.1 only, on a free port, in daemon threads, and stops cleanly (a
`stop()` that also releases hung connections). The proxy is a real HTTP proxy written with stdlib sockets:
absolute-URI forwarding for http targets and CONNECT tunnels for https, switchable at run time between
`ok`, `reset`, `502`, `407`, `hang` and `portal` (a captive portal's login page). The origin is a stand-in
provider for tests that need TLS or a behaviour the simulator does not have. No test here touches a
non-loopback address, and nothing here is imported by the package.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PORTAL_HTML = (
    b'<html><head><meta http-equiv="refresh" content="0; url=http://login.hotel-wifi.test/login?'
    b'dst=http%3A%2F%2Fconnectivitycheck.android.com"><title>Hotel WiFi login</title></head>'
    b"<body>Please accept the terms to continue.</body></html>"
)
BAD_GATEWAY_HTML = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
MODES = ("ok", "reset", "502", "407", "hang", "portal")


def _read_head(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > 1 << 20:
            break
    return data


def _pipe(src: socket.socket, dst: socket.socket, stop: threading.Event) -> None:
    try:
        while not stop.is_set():
            chunk = src.recv(65536)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


class ForwardProxy:
    """A real HTTP proxy on 127.0.0.1 whose behaviour (`mode`) can be switched while it runs.

    `requests` records `(method, target)` of every request it received, so tests can prove a path really
    went through the proxy.
    """

    def __init__(self, mode: str = "ok") -> None:
        assert mode in MODES, mode
        self.mode = mode
        self.requests: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.2)
        self.port: int = self._sock.getsockname()[1]
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True, name="test-proxy")

    @property
    def url(self) -> str:
        """The proxy URL to put in HTTP(S)_PROXY."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ForwardProxy:
        """Start accepting connections."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop, and close every connection (hung ones included)."""
        self._stop.set()
        self._thread.join(timeout=2)
        for c in list(self._conns):
            with suppress(OSError):
                c.close()
        self._sock.close()

    def __enter__(self) -> ForwardProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10)
            head = _read_head(conn)
            if not head:
                conn.close()
                return
            first = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target = ([*first.split(" "), "", ""])[:2]
            self.requests.append((method, target))
            mode = self.mode
            if mode == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
            elif mode == "hang":
                self._stop.wait()
                conn.close()
            elif mode == "407":
                conn.sendall(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic "
                    b'realm="test"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
                )
                conn.close()
            elif mode == "502":
                conn.sendall(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: "
                    + str(len(BAD_GATEWAY_HTML)).encode()
                    + b"\r\nConnection: close\r\n\r\n"
                    + BAD_GATEWAY_HTML
                )
                conn.close()
            elif mode == "portal":
                if method == "CONNECT":
                    conn.sendall(
                        b"HTTP/1.1 302 Found\r\nLocation: http://login.hotel-wifi.test/login\r\n"
                        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                else:
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                        + str(len(PORTAL_HTML)).encode()
                        + b"\r\nConnection: close\r\n\r\n"
                        + PORTAL_HTML
                    )
                conn.close()
            elif method == "CONNECT":
                self._tunnel(conn, target)
            else:
                self._forward(conn, head, method, target)
        except OSError:
            with suppress(OSError):
                conn.close()

    def _tunnel(self, conn: socket.socket, target: str) -> None:
        host, _, port = target.rpartition(":")
        try:
            up = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
        except OSError:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            conn.close()
            return
        self._conns.append(up)
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        conn.settimeout(None)
        up.settimeout(None)
        threading.Thread(target=_pipe, args=(up, conn, self._stop), daemon=True).start()
        _pipe(conn, up, self._stop)

    def _forward(self, conn: socket.socket, head: bytes, method: str, target: str) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        header_blob, _, body = head.partition(b"\r\n\r\n")
        lines = header_blob.split(b"\r\n")[1:]
        length = 0
        kept = []
        for line in lines:
            name = line.split(b":", 1)[0].strip().lower()
            if name == b"content-length":
                length = int(line.split(b":", 1)[1])
            if name in (b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization"):
                continue
            kept.append(line)
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        req = f"{method} {path} HTTP/1.1\r\n".encode() + b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n"
        try:
            up = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=10)
        except OSError:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            conn.close()
            return
        self._conns.append(up)
        up.sendall(req + body)
        # Tell the client this connection ends with the response (we do not keep upstreams alive).
        resp = _read_head(up)
        status_line, _, rest = resp.partition(b"\r\n")
        conn.sendall(status_line + b"\r\nConnection: close\r\n" + rest)
        up.settimeout(None)
        conn.settimeout(None)
        _pipe(up, conn, self._stop)
        conn.close()
        up.close()


class _OriginHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _OriginServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.paths_seen.append(self.path)
        mode = self.server.mode
        if mode == "hang":
            self.server.stop_event.wait()
            return
        if self.path.startswith("/cdn-cgi/trace"):
            text = (
                f"fl=1f1\nh=localhost\nip=127.0.0.1\nts=0\nvisit_scheme=http\ncolo={self.server.colo}\n"
                f"loc={self.server.loc}\ntls=TLSv1.3\nwarp=off\n"
            )
            self._send(200, text.encode(), "text/plain")
        elif mode == "portal":
            self._send(200, PORTAL_HTML, "text/html")
        elif self.path.rstrip("/").endswith("/models"):
            self._send(
                200,
                json.dumps({"object": "list", "data": [{"id": "gpt-test", "object": "model"}]}).encode(),
                "application/json",
            )
        else:
            self._send(404, b'{"error": {"message": "not found"}}', "application/json")


class _OriginServer(ThreadingHTTPServer):
    daemon_threads = True
    mode = "ok"
    loc = "SG"
    colo = "SIN"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.paths_seen: list[str] = []
        self.stop_event = threading.Event()


class Origin:
    """A small provider stand-in on 127.0.0.1: `/v1/models` JSON, `/cdn-cgi/trace`, optional TLS.

    `mode` is `ok`, `portal` (HTML 200 for everything but the trace) or `hang` (accepts, never answers).
    With `tls=` an `ssl.SSLContext` it serves https (use `trustme` to make one signed by a private CA).
    """

    def __init__(self, tls: ssl.SSLContext | None = None, mode: str = "ok") -> None:
        self._server = _OriginServer(("127.0.0.1", 0), _OriginHandler)
        self._server.mode = mode
        self.tls = tls
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    @property
    def server(self) -> _OriginServer:
        """The underlying server (set `.mode`, `.loc`; read `.paths_seen`)."""
        return self._server

    def base_url(self, host: str = "127.0.0.1") -> str:
        """The provider base URL (`…/v1`)."""
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/v1"

    def start(self) -> Origin:
        """Start serving."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release hung handlers."""
        self._server.stop_event.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Origin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def private_ca(org: str = "Fake Corp Interception Test CA") -> Any:
    """A trustme CA that no public bundle contains: it plays a TLS-intercepting middlebox."""
    import trustme

    return trustme.CA(organization_name=org)


def tls_server_context(ca: Any, *names: str) -> ssl.SSLContext:
    """A server SSLContext with a leaf for `names` (default localhost and 127.0.0.1) signed by `ca`."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("localhost", "127.0.0.1"))).configure_cert(ctx)
    return ctx


@contextmanager
def running_proxy(mode: str = "ok") -> Iterator[ForwardProxy]:
    """A started `ForwardProxy`, stopped on exit."""
    proxy = ForwardProxy(mode).start()
    try:
        yield proxy
    finally:
        proxy.stop()
