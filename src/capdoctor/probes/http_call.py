"""One bounded HTTP exchange with a provider: send a `ProbeRequest`, read until the answer is decisive.

Contract: `send()` never raises for network trouble; it returns an `Exchange` that says what happened —
an HTTP status with (redacted) headers and a bounded body excerpt, the decisive stream event for SSE
answers (first output token or failure event, read under a byte and time bound), or a connection-level
failure named by kind (`refused`, `timeout`, `reset`, `tls`, `connect`). It must not classify causes,
retry or sleep (the models check owns attempts), and it never stores a secret header.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capdoctor.probes.sse import SSEDecoder
from capdoctor.providers.base import Adapter, ErrorInfo, Outcome, ProbeRequest
from capdoctor.redact import SECRET_HEADERS

if TYPE_CHECKING:
    import httpx

MAX_BODY_BYTES = 64 * 1024
"""The most a probe reads from one response (model lists are small; streams stop at the first token)."""

MAX_STREAM_EVENTS = 200
LISTING_ROUTES = frozenset({"models", "key"})
"""Spend-nothing routes: any JSON 2xx body is a success (the caller reads it)."""


@dataclass(frozen=True)
class Exchange:
    """What one request got.

    `kind`: `ok` (a decisive success), `http_error` (non-2xx), `stream_error` (failure inside a 200 stream or
    an error object in a 200 body), `html` (HTML where JSON was expected), `undecided` (2xx that never
    showed output within the bounds), `cut` (a stream that broke after its first output, before its
    terminal event), or a connection-level kind: `refused`, `timeout`, `reset`, `tls`, `connect`.
    """

    route: str
    url: str
    kind: str
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str = ""
    error: ErrorInfo | None = None
    detail: str = ""
    latency_ms: int = 0
    json_body: Any = None

    @property
    def ok(self) -> bool:
        """True for a decisive success."""
        return self.kind == "ok"

    @property
    def connection_failed(self) -> bool:
        """True when no HTTP answer came back at all."""
        return self.kind in CONNECTION_KINDS

    @property
    def classify_text(self) -> str:
        """The text to hand to the signature classifier: the failing event or body, else the detail."""
        return self.body or self.detail


CONNECTION_KINDS = frozenset({"refused", "timeout", "reset", "tls", "connect"})


def safe_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Response headers, lower-cased, without any secret-bearing header (cookies, keys, auth)."""
    return {k.lower(): v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}


def _is_html(content_type: str, text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return "text/html" in content_type or head.startswith(("<!doctype html", "<html"))


def connection_kind(exc: BaseException) -> str:
    """Name a transport failure: refused, timeout, reset, tls or connect (DNS and the rest), by the classifier's
    `exchange` transport rules (structure.toml) over the exception and what caused it."""
    from capdoctor.classifier.marks import Raised, transport_kind

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 8:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    text = " ".join(str(e) for e in chain).lower()
    return transport_kind("exchange", [Raised.of(e) for e in chain], text)


def send(
    client: httpx.Client,
    adapter: Adapter,
    req: ProbeRequest,
    *,
    timeout: float,
    max_bytes: int = MAX_BODY_BYTES,
) -> Exchange:
    """Send `req` and read just enough to decide; every failure comes back as an `Exchange`, never raised."""
    import httpx

    t0 = time.monotonic()

    def ms() -> int:
        return int((time.monotonic() - t0) * 1000)

    try:
        with client.stream(
            req.method,
            req.url,
            headers=dict(req.headers),
            params=dict(req.params) or None,
            json=dict(req.body) if req.body is not None else None,
            timeout=timeout,
        ) as resp:
            headers = safe_headers(resp.headers)
            ctype = headers.get("content-type", "").lower()
            if resp.status_code < 300 and "text/event-stream" in ctype:
                return _read_stream(resp, adapter, req, headers, t0, timeout, max_bytes)
            raw = bytearray()
            for chunk in resp.iter_bytes():
                raw.extend(chunk)
                if len(raw) >= max_bytes or time.monotonic() - t0 > timeout:
                    break
            text = raw[:max_bytes].decode("utf-8", errors="replace")
            return _read_body(req, adapter, resp.status_code, headers, ctype, text, ms())
    except httpx.HTTPError as exc:
        detail = f"{type(exc).__name__}: {exc}"[:300]
        return Exchange(req.route, req.url, connection_kind(exc), detail=detail, latency_ms=ms())
    except (OSError, ValueError) as exc:  # malformed URL, socket errors outside httpx's mapping
        kind = connection_kind(exc) if isinstance(exc, OSError) else "connect"
        detail = f"{type(exc).__name__}: {exc}"[:300]
        return Exchange(req.route, req.url, kind, detail=detail, latency_ms=ms())


def _read_body(
    req: ProbeRequest, adapter: Adapter, status: int, headers: dict[str, str], ctype: str, text: str, latency: int
) -> Exchange:
    try:
        obj: Any = json.loads(text) if text.strip() else None
    except ValueError:
        obj = None
    if obj is None and text.strip() and _is_html(ctype, text):
        return Exchange(
            req.route,
            req.url,
            "html",
            status,
            headers,
            text[:4000],
            detail=f"HTML where JSON was expected (HTTP {status})",
            latency_ms=latency,
        )
    outcome: Outcome = adapter.read_body(req.route, obj) if obj is not None else Outcome()
    if status >= 400:
        return Exchange(
            req.route,
            req.url,
            "http_error",
            status,
            headers,
            text[:4000],
            outcome.error,
            f"HTTP {status}",
            latency,
            obj,
        )
    if outcome.error is not None:
        return Exchange(
            req.route,
            req.url,
            "stream_error",
            status,
            headers,
            text[:4000],
            outcome.error,
            f"error object inside an HTTP {status} body",
            latency,
            obj,
        )
    if (req.route in LISTING_ROUTES and obj is not None) or outcome.ok:
        return Exchange(req.route, req.url, "ok", status, headers, text[:4000], latency_ms=latency, json_body=obj)
    return Exchange(
        req.route,
        req.url,
        "undecided",
        status,
        headers,
        text[:4000],
        detail=f"HTTP {status} without output",
        latency_ms=latency,
        json_body=obj,
    )


def _read_stream(
    resp: httpx.Response,
    adapter: Adapter,
    req: ProbeRequest,
    headers: dict[str, str],
    t0: float,
    timeout: float,
    max_bytes: int,
) -> Exchange:
    import httpx

    dec = SSEDecoder()
    seen = 0
    events = 0
    status = resp.status_code

    def result(kind: str, body: str, error: ErrorInfo | None, detail: str) -> Exchange:
        return Exchange(
            req.route, req.url, kind, status, headers, body[:4000], error, detail, int((time.monotonic() - t0) * 1000)
        )

    output = False
    try:
        for chunk in resp.iter_bytes():
            seen += len(chunk)
            for ev in dec.feed(chunk):
                events += 1
                out = adapter.read_event(req.route, ev)
                if out.error is not None:
                    name = f"'{ev.event}' " if ev.event else ""
                    return result(
                        "stream_error", ev.data, out.error, f"failure event {name}inside an HTTP {status} stream"
                    )
                output = output or out.ok
                if out.done:
                    return result(
                        "ok" if output else "undecided",
                        ev.data,
                        None,
                        "stream completed" if output else "stream ended without output",
                    )
            if seen >= max_bytes or events >= MAX_STREAM_EVENTS or time.monotonic() - t0 > timeout:
                if output:
                    return result("ok", "", None, "output seen (stream still running at the read bound)")
                return result("undecided", "", None, f"no output within {seen} bytes / {events} events")
        for ev in dec.close():
            out = adapter.read_event(req.route, ev)
            if out.error is not None:
                detail = f"failure event inside an HTTP {status} stream"
                return result("stream_error", ev.data, out.error, detail)
            output = output or out.ok
            if out.done:
                return result("ok" if output else "undecided", ev.data, None, "stream completed")
    except httpx.HTTPError as exc:
        if output:
            broke = f"the connection broke after the first output ({type(exc).__name__})"
            return result("cut", "", None, f"stream disconnected before completion: {broke}")
        kind = connection_kind(exc)
        detail = f"stream broke before output: {type(exc).__name__}: {exc}"[:300]
        return result(kind if kind != "connect" else "reset", "", None, detail)
    if output:
        closed = "closed after the first output without a terminal event"
        return result("cut", "", None, f"stream disconnected before completion: {closed}")
    if seen:
        return result("reset", "", None, "stream closed before any output (stream disconnected before completion)")
    return result("reset", "", None, "connection closed before any output")
