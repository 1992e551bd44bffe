"""`capdoctor proxy`: the glue between cli.py and the proxy package — start, print the client lines, stop.

Contract: `proxy_command(settings, out, err)` checks what can be wrong before anything listens (the history file
is opened once: a foreign, newer or corrupt one is a `UsageError`, exit 2; a port that cannot be bound is one
too), then serves until SIGTERM or Ctrl-C. On stop it stops accepting, lets open exchanges finish for up to
`settings.drain_s` seconds (then cancels them), writes what is queued and returns 0. `out` gets the listening
address, the lines to paste into each client, and one line per failed exchange; `err` gets warnings. Every
line is scrubbed of secrets. aiohttp is imported here and in `forward`, nowhere else; `stop` (a
`threading.Event`) lets a caller in another thread end it, as tests and the benchmark do.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from capdoctor.errors import UsageError
from capdoctor.proxy.settings import ProxySettings, client_lines, public_url

if TYPE_CHECKING:
    from aiohttp import web

    from capdoctor.proxy.metrics import ProxyMetrics
    from capdoctor.watch.records import RoundRecord
    from capdoctor.watch.store import Snapshot


SWITCH_INTERVAL_S = 0.0005
"""How soon the event loop gets the interpreter back from the recorder's thread (Python's default is 5 ms): a
request that arrives while the recorder judges a batch waits at most this long. Measured with bench/proxy.py
on 2 busy cores: p99 added latency about 2 ms instead of 5-7 ms; the median did not move."""


def _scrubber(settings: ProxySettings) -> Callable[[str], str]:
    from capdoctor.redact import redact_text
    from capdoctor.run.diagnosis import env_secrets
    from capdoctor.text import one_line

    secrets = [*env_secrets(os.environ), *((settings.token,) if settings.token else ())]
    home = str(Path.home())
    return lambda text: one_line(redact_text(text, secrets, home))


def _writer(stream: TextIO, scrub: Callable[[str], str]) -> Callable[[str], None]:
    lock = threading.Lock()

    def write(text: str) -> None:
        with lock:
            stream.write(scrub(text) + "\n")
            stream.flush()

    return write


def _route_aiohttp_logs(warn: Callable[[str], None]) -> None:
    """aiohttp's own complaints (a malformed request, a handler error) become one scrubbed warning line each,
    without a traceback: left to Python's last-resort handler they would print raw, and a bad header they quote
    could hold a key."""
    import logging

    class Scrubbed(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            exc = f": {record.exc_info[1]!r}" if record.exc_info and record.exc_info[1] is not None else ""
            warn(f"capdoctor: warning: aiohttp: {record.getMessage()}{exc}")

    logger = logging.getLogger("aiohttp")
    for old in [h for h in logger.handlers if type(h).__name__ == "Scrubbed"]:  # the latest proxy's lines
        logger.removeHandler(old)
    logger.addHandler(Scrubbed(logging.WARNING))
    logger.propagate = False


def _local_upstreams(settings: ProxySettings) -> dict[str, bool]:
    """Which upstreams are a local model server (an unknown or generic provider on this machine): their bare
    5xx read as the server's own trouble, as the models check reads them; a relay in front of a known provider
    on loopback is not one."""
    from capdoctor.probes.local_servers import is_local

    return {
        u.url: (u.provider is None or u.provider == "openai-compatible") and is_local(u.url) for u in settings.upstreams
    }


def proxy_command(
    settings: ProxySettings,
    out: TextIO,
    err: TextIO,
    stop: threading.Event | None = None,
    ready: Callable[[str], None] | None = None,
) -> int:
    """Run `capdoctor proxy` (see the module docstring); returns the exit code."""
    from capdoctor.watch.command import default_db
    from capdoctor.watch.store import Store

    scrub = _scrubber(settings)
    db = settings.db or default_db()
    Store.open(db).close()  # a history that cannot be used is exit 2 now, not a warning later
    say, warn = _writer(out, scrub), _writer(err, scrub)
    from capdoctor.probes.hosts import is_loopback_host

    if settings.metrics_port is not None and not is_loopback_host(settings.metrics_host):
        warn(
            f"capdoctor: warning: --metrics-host {settings.metrics_host}: /metrics is reachable from other machines "
            "(it holds no secret, but model names and error rates)"
        )
    _route_aiohttp_logs(warn)
    if threading.current_thread() is threading.main_thread():  # the process is the proxy (not a test's thread)
        sys.setswitchinterval(SWITCH_INTERVAL_S)
    return asyncio.run(_serve(settings, db, say, warn, stop, ready))


async def _serve(
    settings: ProxySettings,
    db: Path,
    say: Callable[[str], None],
    warn: Callable[[str], None],
    stop: threading.Event | None,
    ready: Callable[[str], None] | None,
) -> int:
    from aiohttp import web

    from capdoctor.proxy.burst import Bursts, network_snapshot
    from capdoctor.proxy.forward import ProxyState, make_app, make_session
    from capdoctor.proxy.metrics import ProxyMetrics
    from capdoctor.proxy.recording import Recorder

    metrics = ProxyMetrics((settings.token,) if settings.token else ())
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    recorder_box: list[Recorder] = []

    def take(rnd: RoundRecord) -> Snapshot:
        env = dict(os.environ)
        bases = {u.url: u.url + u.client_suffix for u in settings.upstreams}
        return network_snapshot(rnd, bases, env, Path.home(), Path.cwd())

    bursts = Bursts(
        settings.burst_failures,
        settings.burst_window_s,
        take,
        lambda snap: recorder_box[0].snapshot(snap),
        warn,
        on_burst=metrics.bursts.inc,
    )
    if not settings.network_checks:
        bursts.failures = 0
    recorder = Recorder(db, settings.retention_days, metrics, bursts, say, warn)
    recorder_box.append(recorder)
    state = ProxyState(settings, recorder.submit, _local_upstreams(settings))
    state.on_flight = lambda delta: metrics.in_flight.inc(delta)
    runner = web.AppRunner(
        make_app(state), handler_cancellation=True, shutdown_timeout=settings.drain_s, access_log=None
    )
    metrics_runner: web.AppRunner | None = None
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.host, settings.port, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            raise UsageError(
                f"--listen {settings.host}:{settings.port}: cannot listen: {exc.strerror or exc}"
            ) from None
        port = _bound_port(runner, settings.port)
        if settings.metrics_port is not None:
            metrics_runner = await _metrics_site(metrics, settings)
        state.session = make_session()
        url = public_url(settings.host, port)
        say(f"capdoctor proxy: listening on {url}; history in {db}" + _metrics_where(settings))
        for text in client_lines(settings, url):
            say(text)
        if ready is not None:
            ready(url)
        _signals(loop, stopping, stop)
        await stopping.wait()
        say(f"capdoctor proxy: stopping; open exchanges have {settings.drain_s:g} s to finish")
    finally:
        await runner.cleanup()  # stops accepting, waits up to drain_s for open exchanges, then cancels them
        if state.session is not None:
            await state.session.close()
        if metrics_runner is not None:
            await metrics_runner.cleanup()
        recorder.close()
    say(
        f"capdoctor proxy: {recorder.exchanges} exchange(s), {recorder.failures} failed; "
        f"{recorder.recorded} recorded in {db}"
    )
    return 0


def _bound_port(runner: object, wanted: int) -> int:
    for address in getattr(runner, "addresses", ()):
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return wanted


def _metrics_where(settings: ProxySettings) -> str:
    if settings.metrics_port is None:
        return ""
    return f"; metrics on {public_url(settings.metrics_host, settings.metrics_port)}/metrics"


async def _metrics_site(metrics: ProxyMetrics, settings: ProxySettings) -> web.AppRunner:
    from aiohttp import web

    async def serve(request: web.Request) -> web.Response:
        body = metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    app = web.Application()
    app.router.add_get("/metrics", serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.metrics_host, settings.metrics_port).start()
    except OSError as exc:
        await runner.cleanup()
        raise UsageError(
            f"--metrics-port {settings.metrics_port}: cannot serve metrics on {settings.metrics_host}: "
            f"{exc.strerror or exc}"
        ) from None
    return runner


def _signals(loop: asyncio.AbstractEventLoop, stopping: asyncio.Event, stop: threading.Event | None) -> None:
    """SIGTERM and Ctrl-C set `stopping` (in the main thread); `stop`, when given, does too from any thread."""
    if stop is not None:
        threading.Thread(
            target=lambda: (stop.wait(), loop.call_soon_threadsafe(stopping.set)),
            name="capdoctor-proxy-stop",
            daemon=True,
        ).start()
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGINT", "SIGTERM"):
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            loop.add_signal_handler(signum, stopping.set)
        except (NotImplementedError, RuntimeError):  # Windows: no loop signal handlers
            signal.signal(signum, lambda *_: loop.call_soon_threadsafe(stopping.set))
    if sys.platform == "win32" and hasattr(signal, "SIGBREAK"):
        signal.signal(signal.SIGBREAK, lambda *_: loop.call_soon_threadsafe(stopping.set))
