"""Servers that misbehave on purpose, on loopback: a black hole, a reset, a header drip, a body drip.

Each is a real TCP server (a thread per connection) that reads the request and then does its one wrong
thing, for tests that a run's deadline holds whatever the server does. `stop()` closes every socket, so a
test never waits on a dripping connection.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from typing import Any

KINDS = ("blackhole", "reset", "header_drip", "body_drip")
DRIP_INTERVAL_S = 0.5


class FaultServer:
    """A loopback server of one fault `kind` (see KINDS); `url` is its base URL, `hits` counts requests."""

    def __init__(self, kind: str) -> None:
        assert kind in KINDS, kind
        self.kind = kind
        self.hits = 0
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.1)
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._serve, daemon=True, name=f"fault-{kind}")

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop accepting and close every connection."""
        self._stop.set()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                conn.close()
        self._thread.join(timeout=2)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> bool:
        conn.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return False
                data += chunk
        except OSError:
            return False
        self.hits += 1
        return True

    def _drip(self, conn: socket.socket, head: bytes, forever: bytes) -> None:
        try:
            conn.sendall(head)
            while not self._stop.is_set():
                for byte in forever:
                    if self._stop.wait(DRIP_INTERVAL_S):
                        return
                    conn.sendall(bytes([byte]))
        except OSError:
            return

    def _handle(self, conn: socket.socket) -> None:
        if not self._read_request(conn):
            return
        if self.kind == "blackhole":
            self._stop.wait()
        elif self.kind == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
        elif self.kind == "header_drip":
            self._drip(conn, b"HTTP/1.1 200 OK\r\n", b"x-drip: " + b"a" * 4000)
        else:  # body_drip: a complete head, then a body one byte at a time that never ends
            head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n"
            self._drip(conn, head, b'{"data": [' + b" " * 4000)


def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    """Poll `predicate` until it is true or `timeout` passes."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())
