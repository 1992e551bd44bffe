"""Helpers for the proxy tests: the proxy run in-process on loopback, a byte-recording TCP tee in front of an
upstream (what the provider really sent, to compare with what the client got), and a gated streaming upstream
(it sends its next event only when the test says, and notices when its client hangs up)."""

from __future__ import annotations

import contextlib
import io
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h11

from capdoctor.proxy.command import proxy_command
from capdoctor.proxy.exchange import HOP_BY_HOP
from capdoctor.proxy.settings import build

WAIT_S = 20.0
"""How long a test waits for something that should happen at once (a bound, not a timing assertion)."""


class _Lines(io.StringIO):
    """A thread-safe text sink that keeps what was written."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, s: str) -> int:
        with self._lock:
            return super().write(s)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


@dataclass
class RunningProxy:
    """A proxy serving in a thread: its URL, its history file, what it printed, how it ended."""

    url: str
    db: Path
    out: _Lines
    err: _Lines
    stop: threading.Event
    thread: threading.Thread
    result: dict[str, Any] = field(default_factory=dict)

    def close(self) -> int:
        """Stop it (as SIGTERM would) and return its exit code."""
        self.stop.set()
        self.thread.join(WAIT_S + 15)
        assert not self.thread.is_alive(), "the proxy did not stop"
        if "error" in self.result:
            raise self.result["error"]
        return int(self.result["rc"])


@contextlib.contextmanager
def running_proxy(upstreams: list[str], db: Path, **kwargs: Any) -> Iterator[RunningProxy]:
    """`capdoctor proxy` on a free loopback port, in this process, until the block ends."""
    provider = kwargs.pop("provider", None)
    token = kwargs.pop("token", None)
    kwargs.setdefault("network_checks", False)
    settings = build(upstreams, provider, kwargs.pop("listen", "127.0.0.1:0"), token, {}, db=db, **kwargs)
    out, err, stop, ready = _Lines(), _Lines(), threading.Event(), threading.Event()
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["rc"] = proxy_command(
                settings, out, err, stop, lambda url: (result.setdefault("url", url), ready.set())
            )
        except BaseException as exc:
            result["error"] = exc
            ready.set()

    thread = threading.Thread(target=run, name="test-proxy", daemon=True)
    thread.start()
    assert ready.wait(WAIT_S), "the proxy did not start"
    if "error" in result:
        raise result["error"]
    proxy = RunningProxy(result["url"], db, out, err, stop, thread, result)
    try:
        yield proxy
    finally:
        if thread.is_alive():
            proxy.close()


@dataclass
class Conn:
    """One connection through the tee: the bytes each way."""

    up: bytearray = field(default_factory=bytearray)
    down: bytearray = field(default_factory=bytearray)


class Tee:
    """A TCP relay on loopback that records every byte between its clients and `target` (host, port)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.conns: list[Conn] = []
        self._lock = threading.Lock()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stopping:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            conn = Conn()
            with self._lock:
                self.conns.append(conn)
            server = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(client, server, conn.up), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, conn.down), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket, log: bytearray) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                log += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._stopping = True
        self._sock.close()

    def responses(self) -> list[tuple[int, list[tuple[str, str]], bytes]]:
        """Every response the upstream sent, in order per connection: (status, headers, body as sent)."""
        out: list[tuple[int, list[tuple[str, str]], bytes]] = []
        with self._lock:
            conns = list(self.conns)
        for conn in conns:
            server = h11.Connection(h11.SERVER)
            server.receive_data(bytes(conn.up))
            methods: list[bytes] = []
            while True:
                try:
                    event = server.next_event()
                except h11.RemoteProtocolError:
                    break
                if isinstance(event, h11.Request):
                    methods.append(event.method)
                elif isinstance(event, h11.EndOfMessage):  # answer it (discarded) to read the next request
                    server.send(h11.Response(status_code=204, headers=[]))
                    server.send(h11.EndOfMessage())
                    server.start_next_cycle()
                elif event in (h11.NEED_DATA, h11.PAUSED) or isinstance(event, h11.ConnectionClosed):
                    break
            client = h11.Connection(h11.CLIENT)
            client.receive_data(bytes(conn.down))
            client.receive_data(b"")
            for method in methods:
                client.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
                client.send(h11.EndOfMessage())
                status, headers, body = 0, [], bytearray()
                while True:
                    try:
                        event = client.next_event()
                    except h11.RemoteProtocolError:
                        out.append((status, headers, bytes(body)))
                        return out
                    if isinstance(event, h11.Response):
                        status = event.status_code
                        headers = [(k.decode(), v.decode()) for k, v in event.headers]
                    elif isinstance(event, h11.Data):
                        body += event.data
                    elif isinstance(event, h11.EndOfMessage):
                        out.append((status, headers, bytes(body)))
                        break
                    else:
                        out.append((status, headers, bytes(body)))
                        break
                if client.our_state is h11.DONE and client.their_state is h11.DONE:
                    client.start_next_cycle()
                else:
                    break
        return out


def end_to_end(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers less the hop-by-hop ones and the framing (`content-length` and chunking may differ)."""
    names = set(HOP_BY_HOP) | {"content-length"}
    return [(k.lower(), v) for k, v in headers if k.lower() not in names]


class Gated:
    """A streaming upstream (stdlib sockets, loopback): answers 200 `text/event-stream`, sends `first`, then waits
    for `go` before sending `rest`; `hung_up` is set when its client went away while it waited."""

    def __init__(self, first: bytes, rest: bytes) -> None:
        self.first, self.rest = first, rest
        self.go = threading.Event()
        self.hung_up = threading.Event()
        self.finished = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head = (
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-request-id: req_gated\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            conn.sendall(head + b"%x\r\n%s\r\n" % (len(self.first), self.first))
            conn.settimeout(0.05)
            while not self.go.is_set():
                try:
                    if conn.recv(1) == b"":
                        self.hung_up.set()
                        return
                except TimeoutError:
                    continue
                except OSError:
                    self.hung_up.set()
                    return
            with contextlib.suppress(OSError):
                conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(self.rest), self.rest))
            self.finished.set()

    def close(self) -> None:
        self._sock.close()
