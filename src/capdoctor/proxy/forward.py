"""The forwarder: an aiohttp server that carries each request to its upstream and the answer back, as it comes.

Contract: `make_app(state)` is the proxy's aiohttp application. For each request it checks the token (when one is
set: the `x-capdoctor-token` header or a `/_t/TOKEN` path prefix, both removed), picks the upstream by path
prefix, sends the same method, path (under the upstream's), query, headers (less the hop-by-hop ones, `Host`
and the token) and body — once: it never retries, rewrites or adds a request — and hands back the status,
headers (less the hop-by-hop ones) and body bytes exactly as they come (no decompression), chunk by chunk, so a
stream's events reach the client as they arrive. A client that hangs up cancels the handler, which closes the
upstream connection (the provider sees the request cancelled); an upstream that breaks off mid-body breaks the
client's connection off too, so the client sees the truncation it would have seen. An upstream that gives no
answer at all (refused, reset, timed out) gets the client's connection reset: the proxy never answers in the
provider's stead. A connection trace marks on each `Watch` when its upstream connection was up, so that a client
that gives up before any answer leaves what was measured of the upstream (`Watch.gave_up`). The cookie jar is a
dummy (one client's cookies never reach another), and the environment's HTTP(S)_PROXY is honoured for the way
out, as the client itself would have. Every exchange goes to `state.submit` as an `Observed` once it ends;
nothing is logged here.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from capdoctor.proxy.exchange import HOP_BY_HOP, Observed, Watch, asks_stream, model_of, secrets_of
from capdoctor.proxy.settings import TOKEN_HEADER, TOKEN_PATH, ProxySettings, Upstream

MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""The largest request body accepted (a prompt with images); aiohttp answers 413 above it."""
CONNECT_TIMEOUT_S = 30.0
READ_IDLE_TIMEOUT_S = 600.0
"""No byte from the upstream for this long ends the exchange as cut: far above a model's longest pause."""
SKIP_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
"""Headers aiohttp's client would add of its own: only the client's own are sent."""


@dataclass
class ProxyState:
    """What the handlers share: the settings, the upstream session, where observations go, and counters."""

    settings: ProxySettings
    submit: Callable[[Observed], None]
    local: dict[str, bool] = field(default_factory=dict)
    session: aiohttp.ClientSession | None = None
    in_flight: int = 0
    on_flight: Callable[[int], None] = lambda delta: None


STATE: web.AppKey[ProxyState] = web.AppKey("capdoctor_proxy_state", ProxyState)


def _drop(headers: Any) -> set[str]:
    """The hop-by-hop header names of one message: the fixed ones and those its `Connection` header lists."""
    names = set(HOP_BY_HOP)
    for value in headers.getall("connection", ()):
        names.update(p.strip().lower() for p in value.split(",") if p.strip())
    return names


def _own_answer(status: int, kind: str, message: str) -> web.Response:
    """A response the proxy makes itself (bad token, no upstream for the path), shaped like an API error."""
    return web.json_response({"error": {"type": kind, "message": f"capdoctor proxy: {message}"}}, status=status)


def _failure_kind(exc: BaseException) -> str:
    """refused / timeout / tls / reset / connect for an upstream that gave no answer."""
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return "timeout"
    if isinstance(exc, aiohttp.ClientSSLError):
        return "tls"
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error = getattr(exc, "os_error", None)
        if isinstance(os_error, ConnectionRefusedError):
            return "refused"
        return "connect"
    if (
        isinstance(exc, (aiohttp.ServerDisconnectedError, ConnectionResetError))
        or getattr(exc, "errno", 0) == errno.ECONNRESET
    ):
        return "reset"
    return "connect"


def _reset(request: web.Request) -> None:
    """Reset the client's connection (RST, as the provider's own reset or refusal reached the proxy)."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # on, 0 s: closing sends RST
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("HH" if sys.platform == "win32" else "ii", 1, 0)
            )
    transport.abort()


def _authorised(request: web.Request, token: str | None, path: str) -> tuple[bool, str]:
    """(allowed, path without the token prefix)."""
    if token is None:
        return True, path
    given = request.headers.get(TOKEN_HEADER)
    if path.startswith(TOKEN_PATH):
        in_path, _, rest = path[len(TOKEN_PATH) :].partition("/")
        path = "/" + rest
        given = given or in_path
    return given is not None and hmac.compare_digest(given.encode(), token.encode()), path


async def handle(request: web.Request) -> web.StreamResponse:
    """Forward one request (see the module docstring)."""
    state = request.app[STATE]
    raw_path, sep, query = request.raw_path.partition("?")
    allowed, path = _authorised(request, state.settings.token, raw_path)
    if not allowed:
        return _own_answer(401, "capdoctor_proxy_token", f"missing or wrong token (send it in {TOKEN_HEADER})")
    found = state.settings.upstream_for(path)
    if found is None:
        return _own_answer(404, "capdoctor_proxy_route", "no upstream serves this path (see the --upstream prefixes)")
    up, rest = found
    body = await request.read()
    t0 = time.perf_counter()
    watch = Watch(
        started=time.time(),
        t0=t0,
        method=request.method,
        path=path,
        prefix=up.prefix,
        upstream=up.url,
        provider=up.provider,
        local=state.local.get(up.url, False),
        user_agent=request.headers.get("user-agent"),
        model=model_of(rest, body, request.headers.get("content-type")),
        stream_asked=asks_stream(rest, body),
        secrets=(
            *secrets_of(request.headers.items(), query),
            *((state.settings.token,) if state.settings.token else ()),
        ),
    )
    state.in_flight += 1
    state.on_flight(1)
    try:
        return await _forward(request, state, up, rest + sep + query, body, watch)
    except asyncio.CancelledError:
        if watch.finished is None:
            state.submit(watch.finish("cancelled", time.perf_counter()))
        raise
    finally:
        state.in_flight -= 1
        state.on_flight(-1)


async def _forward(
    request: web.Request, state: ProxyState, up: Upstream, rest: str, body: bytes, watch: Watch
) -> web.StreamResponse:
    assert state.session is not None
    # Host is the upstream's; the body is read whole, so its length is aiohttp's to set and a client's
    # `Expect: 100-continue` has been answered here already.
    drop = _drop(request.headers) | {"host", TOKEN_HEADER, "content-length", "expect"}
    headers = [(k, v) for k, v in request.headers.items() if k.lower() not in drop]
    try:
        upstream = await state.session.request(
            request.method,
            URL(up.url + rest, encoded=True),
            headers=headers,
            data=body if body or request.can_read_body else None,
            allow_redirects=False,
            skip_auto_headers=SKIP_AUTO_HEADERS,
            trace_request_ctx=watch,
        )
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        kind = _failure_kind(exc)
        detail = f"{up.url} did not answer: {kind} ({type(exc).__name__}: {exc})"
        state.submit(watch.finish("upstream_failed", time.perf_counter(), detail=detail, failure_kind=kind))
        _reset(request)  # the provider sent nothing: the client gets nothing either, not an answer of the proxy's
        return web.Response()  # never sent: the connection is gone
    try:
        return await _relay(request, state, upstream, watch)
    finally:
        upstream.close() if watch.finished is None or watch.finished.outcome != "completed" else upstream.release()


async def _relay(
    request: web.Request, state: ProxyState, upstream: aiohttp.ClientResponse, watch: Watch
) -> web.StreamResponse:
    drop = _drop(upstream.headers)
    resp = web.StreamResponse(status=upstream.status, reason=upstream.reason)
    for key, value in upstream.headers.items():
        if key.lower() not in drop:
            resp.headers.add(key, value)
    watch.response(
        upstream.status,
        upstream.headers.items(),
        time.perf_counter(),
        path_streams=":streamGenerateContent" in watch.path,
    )
    await resp.prepare(request)
    try:
        async for chunk in upstream.content.iter_any():
            watch.chunk(chunk)
            await resp.write(chunk)
    except (TimeoutError, aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
        if request.transport is None or request.transport.is_closing():
            state.submit(watch.finish("cancelled", time.perf_counter()))
            return resp
        state.submit(watch.finish("cut", time.perf_counter(), detail=f"the upstream broke off: {type(exc).__name__}"))
        request.transport.close()  # the client sees the body end early, as it would have without the proxy
        return resp
    except ConnectionResetError:
        state.submit(watch.finish("cancelled", time.perf_counter()))
        return resp
    with contextlib.suppress(ConnectionResetError, aiohttp.ClientConnectionError):
        # every byte the provider sent was written: a client that hangs up once it has read the stream's last
        # event (the SDKs close on `[DONE]`) leaves a completed exchange, not a cancelled one
        await resp.write_eof()
    state.submit(watch.finish("completed", time.perf_counter()))
    return resp


def make_app(state: ProxyState) -> web.Application:
    """The proxy's application: every method and path goes to `handle`."""
    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app[STATE] = state
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def _connected(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: object) -> None:
    """The upstream connection of a request is up (made or reused): marked on its `Watch`."""
    if isinstance(ctx.trace_request_ctx, Watch):
        ctx.trace_request_ctx.connected = time.perf_counter()


def make_session(connections: int = 1000) -> aiohttp.ClientSession:
    """The upstream client: bytes as sent (no decompression), no cookies kept, env proxies honoured, each
    request's connection traced (`_connected`)."""
    trace = aiohttp.TraceConfig()
    trace.on_connection_create_end.append(_connected)
    trace.on_connection_reuseconn.append(_connected)
    connector = aiohttp.TCPConnector(limit=connections, limit_per_host=0, ttl_dns_cache=300)
    return aiohttp.ClientSession(
        connector=connector,
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=True,
        timeout=aiohttp.ClientTimeout(total=None, connect=CONNECT_TIMEOUT_S, sock_read=READ_IDLE_TIMEOUT_S),
        skip_auto_headers=SKIP_AUTO_HEADERS,
        trace_configs=[trace],
    )
