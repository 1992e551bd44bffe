"""`capdoctor watch`, `capdoctor history` and `logs --into`: argument checks, sinks, signals, output.

Contract: everything that can be wrong with the arguments (no target, an unusable history file, a metrics port
that cannot be bound, a missing textfile folder) is one `UsageError` line (exit 2) before the first request.
`watch_command` prints one line per round on `out`, warnings and the closing line on `err`; SIGINT and SIGTERM
stop it cleanly (exit 0). Every line is scrubbed of secrets. `sqlite3` and `prometheus_client` are imported
here, never at CLI start-up.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from capdoctor.errors import UsageError
from capdoctor.watch.rounds import MIN_QUIET_INTERVAL_S, Guard, Stopped, watch
from capdoctor.watch.store import DEFAULT_RETENTION_DAYS, HistoryBusy, HistoryError, Store

if TYPE_CHECKING:
    from capdoctor.logscan.command import LogsRun
    from capdoctor.run.diagnosis import RunRequest
    from capdoctor.watch.records import RoundRecord

DB_NAME = "history.sqlite3"


def default_db() -> Path:
    """Where the history lives unless `--db` says otherwise: capdoctor's user data directory on this OS (the one
    `context.user_dir` answer, which also places capdoctor.toml and the cache)."""
    import sys

    from capdoctor.run.context import user_dir

    return user_dir("data", os.environ, Path.home(), sys.platform) / DB_NAME


@dataclass(frozen=True)
class WatchSettings:
    """What `capdoctor watch` was asked for besides the target."""

    interval_s: float = 300.0
    count: int | None = None
    db: Path | None = None
    retention_days: float = DEFAULT_RETENTION_DAYS
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    textfile: Path | None = None


def _scrubber(request: RunRequest) -> Callable[[str], str]:
    from capdoctor.redact import redact_text
    from capdoctor.run.diagnosis import env_secrets

    secrets = [
        *env_secrets(request.env),
        *([request.target.api_key] if request.target and request.target.api_key else []),
    ]
    home = str(request.home)
    return lambda text: redact_text(text, secrets, home)


def round_line(rnd: RoundRecord) -> str:
    """One line per round: local time, verdict, failures per model, and how long the round took."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rnd.started))
    per_model: dict[str, list[int]] = {}
    for a in rnd.attempts:
        counts = per_model.setdefault(a.model, [0, 0])
        counts[0] += int(not a.ok)
        counts[1] += 1
    models = ", ".join(f"{m} {f}/{n} failed" for m, (f, n) in per_model.items()) or "no model probed"
    return f"{when}  {rnd.verdict} ({rnd.confidence:.0%})  {models}  [{rnd.finished - rnd.started:.1f} s]"


def _validate(request: RunRequest, settings: WatchSettings, err: TextIO, scrub: Callable[[str], str]) -> None:
    from capdoctor.probes.hosts import bind_problem, is_loopback_host

    if request.target is None:
        raise UsageError(
            "watch: no provider target found: pass --provider, --base-url and --model (see `capdoctor config`)"
        )
    if settings.interval_s < MIN_QUIET_INTERVAL_S:
        err.write(
            f"capdoctor: warning: --interval {settings.interval_s:g} s: every round sends a few tiny "
            "requests that spend a little of your quota; 300 s is plenty to see patterns\n"
        )
    problem = bind_problem(settings.metrics_host) if settings.metrics_port is not None else None
    if problem:
        raise UsageError(f"--metrics-host {settings.metrics_host!r} (flag --metrics-host) {problem}")
    if settings.metrics_port is not None and not is_loopback_host(settings.metrics_host):
        err.write(
            f"capdoctor: warning: --metrics-host {scrub(settings.metrics_host)}: /metrics is reachable "
            "from other machines (it holds no secret, but model names and error rates)\n"
        )
    if settings.textfile is not None:
        if settings.textfile.is_dir():
            raise UsageError(f"--textfile {settings.textfile} (flag --textfile) is a directory; give a .prom file name")
        if not settings.textfile.parent.is_dir():
            raise UsageError(f"--textfile {settings.textfile}: folder {settings.textfile.parent} does not exist")
        if not os.access(settings.textfile.parent, os.W_OK):
            raise UsageError(f"--textfile {settings.textfile}: folder {settings.textfile.parent} is not writable")
        if settings.textfile.suffix != ".prom":
            err.write(
                f"capdoctor: warning: --textfile {settings.textfile}: node_exporter's textfile collector "
                "reads only files ending in .prom\n"
            )


@contextlib.contextmanager
def _signals(guard: Guard) -> Iterator[None]:
    """SIGINT and SIGTERM request a stop (see `Guard`); the previous handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        guard.request_stop()

    names = [n for n in ("SIGINT", "SIGTERM", "SIGBREAK") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), handler) for n in names}
    try:
        yield
    finally:
        for n, old in previous.items():
            signal.signal(getattr(signal, n), old)


def watch_command(
    request: RunRequest, settings: WatchSettings, out: TextIO, err: TextIO, stop: threading.Event | None = None
) -> int:
    """Run `capdoctor watch` (see the module docstring); returns the exit code."""
    scrub = _scrubber(request)
    _validate(request, settings, err, scrub)
    db = settings.db or default_db()
    store = Store.open(db)
    stop_server: Callable[[], None] | None = None
    try:
        metrics = None
        if settings.metrics_port is not None or settings.textfile is not None:
            from capdoctor.watch.metrics import Metrics

            metrics = Metrics(tuple(s for s in (request.target.api_key if request.target else None,) if s))
        if metrics is not None and settings.metrics_port is not None:
            try:
                stop_server = metrics.serve(settings.metrics_host, settings.metrics_port)
            except OSError as exc:
                raise UsageError(
                    f"--metrics-port {settings.metrics_port}: cannot serve metrics on "
                    f"{settings.metrics_host}: {exc.strerror or exc}"
                ) from None
        return _loop(request, settings, store, metrics, out, err, scrub, stop or threading.Event())
    finally:
        if stop_server is not None:
            stop_server()
        store.close()


def _loop(
    request: RunRequest,
    settings: WatchSettings,
    store: Store,
    metrics: Any,
    out: TextIO,
    err: TextIO,
    scrub: Callable[[str], str],
    stop: threading.Event,
) -> int:
    target = request.target
    assert target is not None
    recorded = 0

    def record(rnd: RoundRecord) -> None:
        nonlocal recorded
        try:
            store.record(rnd, settings.retention_days)
            recorded += 1
        except HistoryBusy as exc:
            err.write(scrub(f"capdoctor: warning: round not recorded: {exc}") + "\n")

    def textfile(rnd: RoundRecord) -> None:
        try:
            metrics.write_textfile(settings.textfile)
        except OSError as exc:
            err.write(scrub(f"capdoctor: warning: --textfile {settings.textfile}: {exc.strerror or exc}") + "\n")

    def show(rnd: RoundRecord) -> None:
        out.write(scrub(round_line(rnd)) + "\n")
        out.flush()

    sinks: list[Callable[[RoundRecord], None]] = [record]
    if metrics is not None:
        sinks.append(metrics.observe)
    if settings.textfile is not None:
        sinks.append(textfile)
    sinks.append(show)
    where = (
        f"; metrics on http://{settings.metrics_host}:{settings.metrics_port}/metrics"
        if settings.metrics_port is not None
        else ""
    )
    err.write(
        scrub(
            f"capdoctor watch: {target.provider} {target.model} at {target.base_url}, every "
            f"{settings.interval_s:g} s; history in {store.path}{where}"
        )
        + "\n"
    )
    err.flush()
    guard = Guard(stop)
    with _signals(guard), contextlib.suppress(Stopped):
        watch(request, settings.interval_s, settings.count, sinks, guard)
    err.write(scrub(f"capdoctor watch: {recorded} round(s) recorded in {store.path}") + "\n")
    return 0


def history_command(db: Path | None, since: str | None, json_out: bool, out: TextIO, ascii_only: bool = False) -> int:
    """Run `capdoctor history`; returns the exit code of the history's verdict (2 for bad input).

    The chart falls back to ASCII where `out` cannot encode the block glyphs.
    """
    from datetime import datetime, timezone

    from capdoctor import __version__
    from capdoctor.cli.exitcodes import for_verdict
    from capdoctor.logscan.timestamps import parse_since
    from capdoctor.redact import redact
    from capdoctor.run.diagnosis import env_secrets
    from capdoctor.watch import history

    now = datetime.now(timezone.utc)
    try:
        cutoff = parse_since(since, now) if since else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    path = db or default_db()
    with Store.open(path, create=False) as store:
        stored = store.rounds(cutoff.timestamp() if cutoff else None)
    rounds = [s.record for s in stored]
    analysis = history.analyse(rounds)
    doc = history.document(
        rounds, analysis, version=__version__, since=cutoff.timestamp() if cutoff else None, now=now.timestamp()
    )
    doc["db"] = str(path)
    doc = redact(doc, env_secrets(os.environ), str(Path.home()))
    if json_out:
        json.dump(doc, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        from capdoctor.render.history import render

        utf = (getattr(out, "encoding", None) or "utf-8").lower().replace("-", "") in ("utf8", "utf16")
        render(doc, out, ascii_only=ascii_only or not utf)
    return int(for_verdict(analysis.verdict.cause))


def open_history(path: Path) -> Store:
    """The history `logs --into PATH` feeds (created when missing); HistoryError when it cannot be used, naming
    `--into`, the flag this path came from (the store's own words name `--db`, watch's and history's flag)."""
    try:
        return Store.open(path)
    except HistoryError as exc:
        raise type(exc)(str(exc).replace("--db", "--into")) from None


def feed_logs(run: LogsRun, store: Store, err: TextIO) -> int:
    """Add the dated error events of a logs run to `store` as one round; returns how many were new."""
    from capdoctor.watch.records import log_round

    events = list(run.scan.events) if run.scan is not None else []
    rnd, undated = log_round(events, run.verdict)
    added = store.record(rnd, DEFAULT_RETENTION_DAYS) if rnd is not None else 0
    already = len(rnd.attempts) - added if rnd is not None else 0
    notes = [f"{already} already there"] if already else []
    if undated:
        notes.append(f"{undated} without a time left out")
    extra = f" ({', '.join(notes)})" if notes else ""
    from capdoctor.redact import redact_text

    err.write(
        redact_text(
            f"capdoctor logs: {added} error line(s) added to the history at {store.path}{extra}", home=str(Path.home())
        )
        + "\n"
    )
    return added
