"""The simulator's HTTP server: a real stdlib server on loopback that plays a named scenario.

Contract: `Simulator` owns the socket, the threads, the request log and the transport tricks (hang, RST,
truncated streams); `routes.respond` decides every response. `start()` never blocks; `stop()` returns
promptly even while clients hang, because every client socket is tracked and shut down on stop. The server
binds 127.0.0.1 unless told otherwise. It must not import capdoctor.classifier.signatures or any classifier, must not
print anything unless given a `log` callback, and never logs headers, bodies or query strings (keys live there).
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from capdoctor.errors import UsageError
from capdoctor.simulator.routes import PREFIXES, Call, Incoming, Outgoing, respond
from capdoctor.simulator.scenarios import SCENARIOS, Scenario

HANG_POLL_S = 0.1  # how often a hanging connection checks for stop() or the client going away
IDLE_TIMEOUT_S = 30.0  # idle keep-alive connections are closed after this
MAX_LOG = 10_000  # requests kept in `Simulator.requests` (oldest dropped first)
POLL_S = 0.01  # serve_forever checks for shutdown this often: stop() waits at most this long for the loop


def scenario_named(name: str) -> Scenario:
    """The scenario called `name`; an unknown name is a one-line usage error listing the known ones."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UsageError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})") from None


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer that remembers its open client sockets so `stop()` can close them."""

    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    request_queue_size = 512  # socketserver's 5 drops connects when hundreds of clients arrive at once (bench/proxy.py)

    def __init__(self, address: tuple[str, int], sim: Simulator) -> None:
        self.sim = sim
        self.clients: set[socket.socket] = set()
        self.clients_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.clients_lock:
            self.clients.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.clients_lock:
            self.clients.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Client-side breakage (resets, closed pipes, sockets closed by stop) is expected here: stay quiet."""

    def close_clients(self) -> None:
        """Shut down every open client socket (wakes threads blocked reading them)."""
        with self.clients_lock:
            clients = list(self.clients)
        for sock in clients:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


class _Handler(BaseHTTPRequestHandler):
    """Parses one request, records it, and carries out the `Outgoing` that `routes.respond` returns."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    server: _Server
    _server_name = ""

    def setup(self) -> None:
        """Disable Nagle: headers and body go out in separate writes, and delayed ACKs would add ~40 ms."""
        super().setup()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_response(self, code: int, message: str | None = None) -> None:
        """Like the stdlib's, but with the simulated provider's `server` header (none for Ollama)."""
        self.log_request(code)
        self.send_response_only(code, message)
        if self._server_name:
            self.send_header("server", self._server_name)
        self.send_header("date", self.date_time_string())

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """One line per request to the simulator's log callback: method, path (never the query), status."""
        log = self.server.sim.log
        if log is not None:
            log(f"{self.command} {urlsplit(self.path).path} {code}")

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib's stderr logging."""

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self) -> None:
        sim = self.server.sim
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        split = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = Incoming(self.command, split.path or "/", dict(parse_qsl(split.query)), headers, body)
        sim.record(req)
        out = respond(req, Call(sim.scenario, sim.url, sim.next_attempt))
        try:
            self._carry_out(out)
        except OSError:  # the client went away, or stop() closed the socket
            self.close_connection = True

    def _carry_out(self, out: Outgoing) -> None:
        if out.action == "hang":
            self.close_connection = True
            self._hang()
            return
        if out.action == "reset":
            self.close_connection = True
            linger = struct.pack("HH" if sys.platform == "win32" else "ii", 1, 0)  # on, 0 s: close sends RST
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.connection.close()
            return
        self._server_name = out.server
        self.send_response(out.status)
        for key, value in out.headers.items():
            self.send_header(key, value)
        if out.frames is None:
            self.send_header("content-length", str(len(out.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(out.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for frame in out.frames:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        if out.cut:
            self.close_connection = True  # no terminating chunk: the client sees a truncated body
            return
        self.wfile.write(b"0\r\n\r\n")

    def _hang(self) -> None:
        """Send nothing until stop() or until the client closes its end."""
        stopping = self.server.sim.stopping
        while not stopping.wait(HANG_POLL_S):
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return
            except (OSError, ValueError):
                return

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch


class Simulator:
    """A provider simulator on one port; see the package docstring for routes and scenarios.

    `requests` is the log of received requests, dicts `{method, path, query, headers, body, json, t}`
    (appended under a lock; safe to read from the test thread). `log`, when given, receives one line per
    request ("POST /v1/chat/completions 503").
    """

    def __init__(
        self,
        scenario: str | Scenario = "healthy",
        host: str = "127.0.0.1",
        port: int = 0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self._scenario = scenario if isinstance(scenario, Scenario) else scenario_named(scenario)
        self.host = host
        self.port = port
        self.log = log
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._attempts = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Simulator:
        """Bind and serve in a daemon thread; returns self at once. A busy port is a one-line usage error."""
        if self._httpd is not None:
            return self
        try:
            self._httpd = _Server((self.host, self.port), self)
        except OSError as exc:
            raise UsageError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self.port = int(self._httpd.server_address[1])
        self.stopping.clear()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": POLL_S},
            name=f"capdoctor-sim-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every client connection, hanging ones included; returns promptly."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.stopping.set()
        httpd.shutdown()
        httpd.close_clients()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- addresses

    @property
    def url(self) -> str:
        """`http://HOST:PORT` (a wildcard bind is shown as loopback, the address a local client uses)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @property
    def bound(self) -> str:
        """The address and port the server really listens on (`0.0.0.0:41234`: every interface)."""
        host, port = self._httpd.server_address[:2] if self._httpd is not None else (self.host, self.port)
        host = str(host)
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def base_url(self, provider: str) -> str:
        """The base URL a client of `provider` is configured with (the client appends its own paths)."""
        try:
            return self.url + PREFIXES[provider]
        except KeyError:
            raise UsageError(f"unknown provider {provider!r} (known: {', '.join(PREFIXES)})") from None

    @property
    def status_url(self) -> str:
        """The Statuspage v2 root: `/api/v2/summary.json` lives under it."""
        return self.url + "/status"

    # -- scenario and state

    @property
    def scenario(self) -> Scenario:
        """The scenario now playing."""
        return self._scenario

    def set_scenario(self, name: str) -> None:
        """Switch scenario at runtime (the flaky counter restarts; the request log is kept)."""
        scenario = scenario_named(name)
        with self._lock:
            self._scenario = scenario
            self._attempts = 0

    def next_attempt(self) -> int:
        """The index of this failing-model request, for deterministic flaky patterns."""
        with self._lock:
            n = self._attempts
            self._attempts += 1
            return n

    def record(self, req: Incoming) -> None:
        """Append `req` to the request log."""
        text = req.body.decode("utf-8", errors="replace")
        try:
            parsed: Any = json.loads(text) if text else None
        except ValueError:
            parsed = None
        entry = {
            "method": req.method,
            "path": req.path,
            "query": dict(req.query),
            "headers": dict(req.headers),
            "body": text,
            "json": parsed,
            "t": time.time(),
        }
        with self._lock:
            self.requests.append(entry)
            if len(self.requests) > MAX_LOG:  # a long `capdoctor simulate` session must not grow without bound
                del self.requests[0]


def diagnose_command(sim: Simulator, provider: str) -> str:
    """The whole `capdoctor diagnose …` line that plays the running scenario through `provider`'s shape: the
    provider, base URL and models said outright, since defaults guessed from a loopback URL are not the
    simulator's (`--base-url …/v1` alone is an OpenAI-compatible local server with a local default model), and
    the simulator's status page named (`CAPDOCTOR_STATUS_URL`), since the provider's real one is not the play's."""
    import shlex

    from capdoctor.simulator.routes import PROVIDER_SHAPE, _catalog

    sc = sim.scenario
    shape = PROVIDER_SHAPE.get(provider, provider)
    own = sc.provider == provider or (sc.provider == "ollama" and shape in ("ollama", "compat"))
    primary, alts = (sc.primary_model, sc.alt_models) if own else _catalog(shape)
    words = [
        f"CAPDOCTOR_STATUS_URL={sim.status_url}",
        "capdoctor",
        "diagnose",
        "--provider",
        provider,
        "--base-url",
        sim.base_url(provider),
        "--model",
        primary,
    ]
    for alt in alts[:1]:
        words += ["--alt-model", alt]
    return " ".join(shlex.quote(w) for w in words)


def serve(
    scenario: str = "healthy",
    host: str = "127.0.0.1",
    port: int = 0,
    out: Callable[[str], None] = print,
    until: threading.Event | None = None,
) -> None:
    """Run the simulator in the foreground: print the base URLs, then serve until Ctrl+C (or `until` is set).

    Used by `capdoctor simulate`; prints one line per request (method, path, status; never keys or bodies).
    """
    sim = Simulator(scenario, host, port, log=out).start()
    sc = sim.scenario
    try:
        out(f"capdoctor simulator: scenario {sc.name!r} (expected cause: {sc.expected_cause})")
        out(f"  listening on {sim.bound}")
        out(f"  {sc.description}")
        width = max(len(p) for p in PREFIXES)
        for provider in PREFIXES:
            out(f"  {provider:<{width}}  {sim.base_url(provider)}")
        out(f"  {'status page':<{width}}  {sim.status_url}/api/v2/summary.json")
        out(f"  model {sc.primary_model} (alternatives: {', '.join(sc.alt_models)})")
        out(f"Diagnose it (any of these reaches the verdict {sc.expected_cause!r}):")
        for provider in PREFIXES:
            out(f"  {diagnose_command(sim, provider)}")
        out("Press Ctrl+C to stop.")
        waiter = until or threading.Event()
        while not waiter.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
