"""A whole-request deadline for httpx: every exchange ends by its deadline, whatever the server does.

Why: httpx timeouts apply per network operation. A server that drips its headers or body one byte a second
never trips a read timeout, and the system resolver (`getaddrinfo`) cannot be interrupted at all.
`DeadlineTransport` wraps the transport of a client made by `Context.http_client`: each request ends at its own
timeout cut to the run's deadline. The exchange up to the response headers runs in a daemon worker the caller
stops waiting for then (`ConnectTimeout` when no connection was made, else `ReadTimeout`), and a timer shuts
the socket down so the body stream raises `ReadTimeout` instead of yielding more drips.

Callers see ordinary `httpx.TimeoutException`s. A worker left behind is a daemon thread nobody joins; a
response it gets late it closes itself. This module never retries, sleeps or classifies.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

GRACE_S = 0.05
"""After the end, how long the caller waits for a worker that the socket shutdown has just woken."""


class _Watch:
    """One request's end instant, the sockets it opened, and whether the end has come."""

    def __init__(self, end: float) -> None:
        self.end = end
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.expired = False
        self.abandoned = False
        self.timer: threading.Timer | None = None

    def trace(self, inner: Callable[..., Any] | None) -> Callable[[str, dict[str, Any]], None]:
        """An httpcore trace callback that records each connected socket (TCP, then TLS over it)."""

        def on_event(name: str, info: dict[str, Any]) -> None:
            if name.endswith((".connect_tcp.complete", ".start_tls.complete", ".connect_unix_socket.complete")):
                stream = info.get("return_value")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    with self.lock:
                        self.sockets.append(sock)
                    if self.expired:  # connected after the end: stop it at once
                        self.expire()
            if inner is not None:
                inner(name, info)

        return on_event

    @property
    def connected(self) -> bool:
        """True once a connection was made (the end then falls on reading, not on DNS or connect)."""
        with self.lock:
            return bool(self.sockets)

    def arm(self) -> None:
        """Start the timer that ends the request at `end`."""
        self.timer = threading.Timer(max(0.0, self.end - time.monotonic()), self.expire)
        self.timer.daemon = True
        self.timer.name = "http-deadline"
        self.timer.start()

    def disarm(self) -> None:
        """The exchange is over: the timer is not needed."""
        if self.timer is not None:
            self.timer.cancel()

    def expire(self) -> None:
        """The end has come: shut every socket of the request down (wakes a thread blocked reading it)."""
        self.expired = True
        with self.lock:
            sockets = list(self.sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _DeadlineStream(httpx.SyncByteStream):
    """The response body, ended by the request's deadline (`ReadTimeout`), however slowly it arrives."""

    def __init__(self, inner: httpx.SyncByteStream, watch: _Watch, request: httpx.Request, budget: float) -> None:
        self._inner = inner
        self._watch = watch
        self._request = request
        self._budget = budget

    def _timeout(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout(f"the whole answer did not arrive within {self._budget:.1f} s", request=self._request)

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                if self._watch.expired or time.monotonic() >= self._watch.end:
                    self._watch.expire()
                    raise self._timeout()
                yield chunk
        except httpx.TransportError:
            if self._watch.expired:
                raise self._timeout() from None
            raise
        if self._watch.expired:  # the shutdown made the stream end early: not a complete answer
            raise self._timeout()

    def close(self) -> None:
        self._watch.disarm()
        self._inner.close()


class DeadlineTransport(httpx.BaseTransport):
    """Wraps `inner` so that each request ends by `min(now + its timeout, deadline())` (see the module doc)."""

    def __init__(self, inner: httpx.BaseTransport, deadline: Callable[[], float]) -> None:
        self._inner = inner
        self._deadline = deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request`; `httpx.TimeoutException` when the headers do not arrive by the end."""
        start = time.monotonic()
        wanted = (request.extensions.get("timeout") or {}).get("read")
        end = min(self._deadline(), start + wanted) if wanted is not None else self._deadline()
        budget = max(0.0, end - start)
        watch = _Watch(end)
        request.extensions = {**request.extensions, "trace": watch.trace(request.extensions.get("trace"))}
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                response = self._inner.handle_request(request)
            except BaseException as exc:  # handed to the caller; a thread prints nothing
                box["error"] = exc
                done.set()
                return
            with watch.lock:
                late = watch.abandoned
                if not late:
                    box["response"] = response
                    done.set()
            if late:  # the caller has gone: give the connection back
                with contextlib.suppress(Exception):
                    response.close()

        watch.arm()
        threading.Thread(target=work, daemon=True, name="http-request").start()
        if not done.wait(budget) and watch.connected:
            done.wait(GRACE_S)  # the shutdown at the end wakes a worker blocked reading: let it say so
        with watch.lock:
            watch.abandoned = not done.is_set()
        if watch.abandoned or (watch.expired and "error" in box):
            watch.expire()
            watch.disarm()
            if not watch.connected:
                raise httpx.ConnectTimeout(
                    f"no connection within {budget:.1f} s (DNS lookup or TCP connect did not finish)", request=request
                )
            raise httpx.ReadTimeout(f"no answer within {budget:.1f} s", request=request)
        if "error" in box:
            watch.disarm()
            raise box["error"]
        response: httpx.Response = box["response"]
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_DeadlineStream(response.stream, watch, request, budget),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the wrapped transport."""
        self._inner.close()
