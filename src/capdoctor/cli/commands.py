"""The command line: parse → context → engine → render → exit code. Nothing else lives here.

Start-up speed matters (a doctor is run when things are already slow), so this module imports only typer
at the top; the engine, httpx, rich consoles, psutil and the checks load inside the commands that use them.
Domain errors become exit codes here and only here (see `exitcodes.py` and the README).
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from capdoctor import __version__
from capdoctor.cli import flags as opt
from capdoctor.cli.exitcodes import ExitCode

if TYPE_CHECKING:
    from capdoctor.render.view import View

INTERRUPTED = 130
"""Exit status after Ctrl-C: 128 + SIGINT, as shells report it."""

COMPLETION_SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
"""Shells Typer's completion supports; `--show-completion SHELL` names one instead of detecting it."""

app = typer.Typer(
    name="capdoctor",
    help="Tell why your LLM API or AI coding tool says 'Selected model is at capacity' — and what to do.",
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_PROCESS_CLOCK = [False]
"""True while `main` runs as the process itself: the timeout then counts from the process start."""


def _started() -> float | None:
    """The instant the timeout counts from: the process start when capdoctor is the process, else None (now)."""
    if not _PROCESS_CLOCK[0]:
        return None
    from capdoctor.run.clock import process_started

    return process_started()


def _usage_error(message: str) -> Exception:
    """A click usage error (exit 2 through `main`), from the click that this typer uses."""
    try:  # typer >= 0.26 vendors click; older releases depend on it
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import exceptions as click_exc  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]
    return click_exc.UsageError(message)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit (-v: with details).")] = False,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="With --version: also Python, platform and the accelerators in use.")
    ] = False,
) -> None:
    """capdoctor runs the triage a seasoned engineer would, cheap to expensive, and names the cause.

    `--version` is answered here, before any command runs; it is not an eager flag so that `-v` is read on
    either side of it. A command's own `-v` comes after its name: one before it goes only with `--version`.
    """
    if version:
        if verbose:
            from capdoctor.cli.about import lines

            print("\n".join(lines(__version__)))
        else:
            print(f"capdoctor {__version__}")
        raise typer.Exit(0)
    if verbose:
        raise _usage_error("-v before a command goes only with --version; put it after the command (diagnose -v)")
    if ctx.invoked_subcommand is None:
        raise _usage_error("Missing command.")


def _flags(
    provider: str | None,
    base_url: str | None,
    model: str | None,
    alt_models: list[str] | None,
    api_key_env: str | None,
    logs: list[Path] | None,
) -> Any:
    from capdoctor.target.discovery import DiscoveryFlags

    return DiscoveryFlags(
        provider=provider,
        base_url=base_url,
        model=model,
        alt_models=tuple(alt_models or ()),
        api_key_env=api_key_env,
        logs=tuple(logs or ()),
    )


def _option_flags(
    timeout: str | None = None,
    since: str | None = None,
    reference_url: str | None = None,
    logs: list[Path] | None = None,
) -> dict[str, Any]:
    """The flags that set options, by option name (see `capdoctor.target.options`)."""
    return {"timeout": timeout, "since": since, "reference_url": reference_url, "logs": [str(p) for p in logs or ()]}


def _setup(flags: Any, option_flags: dict[str, Any]) -> tuple[Any, Any]:
    """(target, options): capdoctor.toml read once, unknown keys warned about, every value checked.

    Raises `UsageError` (exit 2) for a bad value before anything is sent anywhere.
    """
    from capdoctor.target.configfile import config_warnings, load_options, read_config_files

    env, home, cwd = dict(os.environ), Path.home(), Path.cwd()
    files = read_config_files(cwd, home, env, sys.platform)
    for line in config_warnings(files):
        _say(f"capdoctor: warning: {line}")
    options = load_options(files, option_flags, env)
    if flags is None:
        return None, options
    from capdoctor.target.discovery import discover  # (every provider adapter: only a command with a target needs it)

    return discover(flags, env, home, cwd, sys.platform, files), options


def _say(message: str) -> None:
    """One line on stderr, scrubbed: messages can quote URLs, config lines or headers."""
    from capdoctor.redact import redact_text
    from capdoctor.run.diagnosis import env_secrets
    from capdoctor.text import one_line

    print(one_line(redact_text(message, env_secrets(os.environ), str(Path.home()))), file=sys.stderr)


def _present(request: Any, view: View, header: str) -> int:
    from capdoctor.cli.present import run_and_present

    return run_and_present(request, view, header)


def _view(json_out: bool, report: Path | None, verbose: bool, quiet: bool, no_color: bool) -> View:
    from capdoctor.render.view import View

    return View(json_out, report, verbose, quiet, no_color)


def _request(
    target: Any,
    options: Any,
    only: list[str] | None,
    skip: list[str] | None,
    no_inference: bool,
    verbose: bool,
    started: float | None,
) -> Any:
    from capdoctor.run.diagnosis import RunRequest

    return RunRequest(
        target=target,
        env=dict(os.environ),
        home=Path.home(),
        cwd=Path.cwd(),
        timeout=options["timeout"],
        only=only,
        skip=skip,
        no_inference=no_inference,
        verbose=verbose,
        options=options,
        started=started,
    )


def _validate(only: list[str] | None, skip: list[str] | None, only_source: str = "--only") -> None:
    """Reject unknown check ids before any discovery or network work starts."""
    from capdoctor.checks.registry import selected_infos

    selected_infos(only, skip, only_source)


def _header(target: Any) -> str:
    if target is None:
        return f"capdoctor {__version__} — no provider target found (see `capdoctor config`)"
    return f"capdoctor {__version__} — {target.provider} {target.model} at {target.base_url}"


@app.command("checks")
def checks_cmd(json_out: opt.JsonOut = False, no_color: opt.NoColor = False) -> None:
    """List the checks, in stage order: id, title, what it tells."""
    from capdoctor.render.checks import render

    render(sys.stdout, json_out, no_color)


@app.command("diagnose")
def diagnose_cmd(
    provider: opt.Provider = None,
    base_url: opt.BaseUrl = None,
    model: opt.ModelOpt = None,
    alt_model: opt.AltModels = None,
    api_key_env: opt.KeyEnv = None,
    log: opt.LogOpt = None,
    timeout: opt.Timeout = None,
    only: opt.Only = None,
    skip: opt.Skip = None,
    no_inference: opt.NoInference = False,
    json_out: opt.JsonOut = False,
    report: opt.ReportOut = None,
    verbose: opt.Verbose = False,
    reference_url: opt.RefUrl = None,
    since: opt.Since = None,
    quiet: opt.Quiet = False,
    no_color: opt.NoColor = False,
) -> None:
    """Run every check, staged cheap to expensive, then print the verdict."""
    _validate(only, skip)
    target, options = _setup(
        _flags(provider, base_url, model, alt_model, api_key_env, log),
        _option_flags(timeout, since, reference_url, log),
    )
    request = _request(target, options, only, skip, no_inference, verbose, _started())
    raise typer.Exit(_present(request, _view(json_out, report, verbose, quiet, no_color), _header(target)))


@app.command("check")
def check_cmd(
    check_id: opt.CheckId,
    provider: opt.Provider = None,
    base_url: opt.BaseUrl = None,
    model: opt.ModelOpt = None,
    alt_model: opt.AltModels = None,
    api_key_env: opt.KeyEnv = None,
    log: opt.LogOpt = None,
    timeout: opt.Timeout = None,
    no_inference: opt.NoInference = False,
    json_out: opt.JsonOut = False,
    report: opt.ReportOut = None,
    verbose: opt.Verbose = False,
    reference_url: opt.RefUrl = None,
    since: opt.Since = None,
    quiet: opt.Quiet = False,
    no_color: opt.NoColor = False,
) -> None:
    """Run one check (and the verdict over it)."""
    _validate([check_id], None, "argument ID")
    target, options = _setup(
        _flags(provider, base_url, model, alt_model, api_key_env, log),
        _option_flags(timeout, since, reference_url, log),
    )
    request = _request(target, options, [check_id], None, no_inference, verbose, _started())
    raise typer.Exit(_present(request, _view(json_out, report, verbose, quiet, no_color), _header(target)))


@app.command("demo")
def demo_cmd(
    scenario: opt.Scenario = "capacity",
    timeout: opt.Timeout = None,
    json_out: opt.JsonOut = False,
    report: opt.ReportOut = None,
    verbose: opt.Verbose = False,
    quiet: opt.Quiet = False,
    no_color: opt.NoColor = False,
) -> None:
    """Start the simulator on a free loopback port and diagnose against it (a self-test: exit 0 when right)."""
    from capdoctor.cli.demo import run_demo
    from capdoctor.target.options import flag_layer, resolve

    seconds = resolve([flag_layer({"timeout": timeout})])["timeout"]  # the demo ignores capdoctor.toml
    view = _view(json_out, report, verbose, quiet, no_color)
    raise typer.Exit(run_demo(scenario, seconds, view, _present, _started()))


@app.command("simulate")
def simulate_cmd(scenario: opt.Scenario = "capacity", host: opt.SimHost = "127.0.0.1", port: opt.SimPort = 0) -> None:
    """Serve the provider simulator until Ctrl-C: point your own retry/fallback code at it."""
    from capdoctor.cli.demo import scenario_or_error
    from capdoctor.errors import UsageError
    from capdoctor.probes.hosts import bind_problem, is_loopback_host
    from capdoctor.simulator.server import serve

    scenario_or_error(scenario)
    problem = bind_problem(host)
    if problem:
        raise UsageError(f"--host {host!r} (flag --host) {problem}")
    if not is_loopback_host(host):
        print(
            f"capdoctor: warning: --host {host} is not a loopback address: anyone who can reach this machine "
            "can use the simulator",
            file=sys.stderr,
            flush=True,
        )
    serve(scenario, host, port, lambda line: print(line, flush=True))


@app.command("config")
def config_cmd(
    provider: opt.Provider = None,
    base_url: opt.BaseUrl = None,
    model: opt.ModelOpt = None,
    alt_model: opt.AltModels = None,
    api_key_env: opt.KeyEnv = None,
    json_out: opt.JsonOut = False,
) -> None:
    """Show the target and the options as discovered, with where each value came from (secrets redacted)."""
    from capdoctor.cli.demo import print_config

    target, options = _setup(_flags(provider, base_url, model, alt_model, api_key_env, None), {})
    raise typer.Exit(print_config(target, options, json_out))


@app.command("fallback")
def fallback_cmd(
    provider: opt.Provider = None,
    base_url: opt.BaseUrl = None,
    model: opt.ModelOpt = None,
    alt_model: opt.AltModels = None,
    api_key_env: opt.KeyEnv = None,
    from_report: opt.FromReport = None,
    fmt: opt.FormatOpt = None,
    write: opt.WriteOpt = None,
    merge: opt.MergeOpt = False,
    timeout: opt.Timeout = None,
    report: opt.ReportOut = None,
) -> None:
    """Turn the models that answered into a fallback pool and retry policy your client loads."""
    from capdoctor.fallback.command import FallbackOptions, run

    given = {
        "--provider": provider,
        "--base-url": base_url,
        "--model": model,
        "--alt-model": alt_model,
        "--api-key-env": api_key_env,
    }
    opts = FallbackOptions(fmt, from_report, write, merge, report, tuple(k for k, v in given.items() if v))

    def live() -> Any:
        target, options = _setup(
            _flags(provider, base_url, model, alt_model, api_key_env, None), _option_flags(timeout)
        )
        return _request(target, options, ["models"], None, False, False, _started())

    raise typer.Exit(run(opts, live, sys.stdout, sys.stderr, dict(os.environ), str(Path.home())))


@app.command("logs")
def logs_cmd(
    paths: opt.LogPaths = None,
    json_out: opt.JsonOut = False,
    since: opt.Since = None,
    verbose: opt.Verbose = False,
    into: opt.Into = None,
    report: opt.ReportOut = None,
) -> None:
    """Scan logs for known failure signatures and judge the cause from them."""
    from capdoctor.logscan.command import logs_command

    _, options = _setup(None, _option_flags(since=since))
    raise typer.Exit(
        logs_command(paths or [], json_out, options["since"], verbose, sys.stdout, sys.stderr, into, report)
    )


@app.command("watch")
def watch_cmd(
    provider: opt.Provider = None,
    base_url: opt.BaseUrl = None,
    model: opt.ModelOpt = None,
    alt_model: opt.AltModels = None,
    api_key_env: opt.KeyEnv = None,
    timeout: opt.RoundTimeout = None,
    no_inference: opt.NoInference = False,
    reference_url: opt.RefUrl = None,
    interval: opt.Interval = None,
    count: opt.Count = None,
    db: opt.DbOpt = None,
    retention: opt.Retention = None,
    metrics_port: opt.MetricsPort = None,
    metrics_host: opt.MetricsHost = "127.0.0.1",
    textfile: opt.Textfile = None,
) -> None:
    """Every --interval seconds, run the cheap checks, record the round in the history, export metrics."""
    from capdoctor.watch.command import WatchSettings, watch_command

    target, options = _setup(
        _flags(provider, base_url, model, alt_model, api_key_env, None),
        {
            **_option_flags(timeout, None, reference_url),
            "watch.interval_s": interval,
            "watch.retention_days": retention,
        },
    )
    request = _request(target, options, None, None, no_inference, False, None)  # each round has its own clock
    settings = WatchSettings(
        options["watch.interval_s"], count, db, options["watch.retention_days"], metrics_port, metrics_host, textfile
    )
    raise typer.Exit(watch_command(request, settings, sys.stdout, sys.stderr))


@app.command("proxy")
def proxy_cmd(
    upstream: opt.Upstreams = None,
    provider: opt.Provider = None,
    listen: opt.Listen = None,
    token: opt.ProxyToken = None,
    db: opt.DbOpt = None,
    retention: opt.Retention = None,
    metrics_port: opt.MetricsPort = None,
    metrics_host: opt.MetricsHost = "127.0.0.1",
    burst_failures: opt.BurstFailures = None,
    burst_window: opt.BurstWindow = None,
    drain: opt.Drain = None,
    no_network_checks: opt.NoNetworkChecks = False,
) -> None:
    """Pass your client's traffic through to the provider, recording and classifying every failure as it happens."""
    from capdoctor.proxy.command import proxy_command
    from capdoctor.proxy.settings import build

    _, options = _setup(
        None,
        {
            "watch.retention_days": retention,
            "proxy.burst_failures": burst_failures,
            "proxy.burst_window_s": burst_window,
            "proxy.drain_s": drain,
        },
    )
    settings = build(
        upstream,
        provider,
        listen,
        token,
        dict(os.environ),
        db=db,
        metrics_port=metrics_port,
        metrics_host=metrics_host,
        retention_days=options["watch.retention_days"],
        burst_failures=options["proxy.burst_failures"],
        burst_window_s=options["proxy.burst_window_s"],
        drain_s=options["proxy.drain_s"],
        network_checks=not no_network_checks,
    )
    raise typer.Exit(proxy_command(settings, sys.stdout, sys.stderr))


@app.command("history")
def history_cmd(db: opt.DbOpt = None, since: opt.HistorySince = None, json_out: opt.JsonOut = False) -> None:
    """What the recorded rounds show: error rate by hour of day and by model, the longest outage, the verdict."""
    from capdoctor.target.options import Given, check
    from capdoctor.watch.command import history_command

    if since is not None:
        check("since", Given(since, "flag --since", text=True))  # the one rule for --since: exit 2 when bad
    raise typer.Exit(history_command(db, since, json_out, sys.stdout))


@app.command("explain")
def explain_cmd(text: opt.ExplainText = None, json_out: opt.JsonOut = False, verbose: opt.Verbose = False) -> None:
    """Name the cause of an error text you paste: the words that decided, how sure, and what to do."""
    from capdoctor.cli import exitcodes
    from capdoctor.logscan.explain import explain, read_text, to_json

    doc = to_json(explain(read_text(text or [], sys.stdin, sys.stdin.isatty())), __version__)
    if json_out:
        import json

        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        from capdoctor.render.explain import render

        render(doc, sys.stdout, verbose=verbose)
    raise typer.Exit(int(exitcodes.for_verdict(doc["verdict"]["cause"])))


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning every error into one stderr line and a documented exit code."""
    try:  # typer >= 0.26 vendors click; older releases depend on it
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import exceptions as click_exc  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]

    from capdoctor.errors import CapdoctorError, UsageError

    _PROCESS_CLOCK[0] = argv is None
    from capdoctor.cli.streams import protect

    protect(sys.stdout, sys.stderr)  # any stdout encoding: never die on a dash halfway through a report
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--show-completion" and args[1] in COMPLETION_SHELLS:
        from typer._completion_shared import get_completion_script  # Typer's own script for the named shell

        print(get_completion_script(prog_name="capdoctor", complete_var="_CAPDOCTOR_COMPLETE", shell=args[1]))
        sys.exit(0)
    was_devnull = _on_devnull()
    try:
        code = _app_for(args)(args=args, prog_name="capdoctor", standalone_mode=False)
    except click_exc.NoArgsIsHelpError:
        code = 0  # no arguments: help was printed
    except click_exc.ClickException as exc:
        _say(f"capdoctor: error: {exc.format_message()} (see capdoctor --help)")
        code = ExitCode.USAGE
    except (typer.Abort, KeyboardInterrupt):
        code = INTERRUPTED
    except UsageError as exc:
        _say(f"capdoctor: error: {exc}")
        code = ExitCode.USAGE
    except CapdoctorError as exc:
        _say(f"capdoctor: {exc}")
        code = ExitCode.INTERNAL
    except BrokenPipeError:  # the reader left (`| head -1`): what it wanted was said, nothing broke
        _silence_stdout()
        code = 0
    except SystemExit as exc:
        if exc.code != 1 or not _pipe_closed(was_devnull):
            raise
        _silence_stdout()  # click's own answer to a closed pipe is exit 1, capdoctor's "internal error"
        code = 0
    except Exception as exc:
        if os.environ.get("CAPDOCTOR_DEBUG"):
            raise
        _say(
            f"capdoctor: internal error: {type(exc).__name__}: {exc} "
            "(please report; set CAPDOCTOR_DEBUG=1 for a traceback)"
        )
        code = ExitCode.INTERNAL
    if code == INTERRUPTED:  # typer turns Ctrl-C into a quiet exit 130; older releases raise Abort
        _say("capdoctor: interrupted")
    try:  # what is still buffered goes now: a reader that left shows here, not in the interpreter's last flush
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        code = 0
    except (OSError, ValueError):
        pass
    _exit(int(code) if isinstance(code, int) else 0, wait=argv is not None)


def _on_devnull() -> bool:
    """True when stdout's file descriptor is the null device."""
    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError, AttributeError):
        return False


def _pipe_closed(was_devnull: bool) -> bool:
    """True when a `SystemExit` came from a closed stdout (EPIPE), not from capdoctor: click then wraps the
    streams in its `PacifyFlushWrapper`, and Rich (typer's help) points stdout at the null device first."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper" or (not was_devnull and _on_devnull())


def _silence_stdout() -> None:
    """Point stdout at the null device after its pipe closed, so the interpreter's last flush of what is still
    buffered cannot fail again on the way out ("Exception ignored … BrokenPipeError", exit 120)."""
    import contextlib

    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _app_for(args: list[str]) -> typer.Typer:
    """The app to run `args` with: only the command they name, when they name one.

    Typer turns every registered command into a click command at each start (about 25 ms for these eleven,
    most of a start-up budget); a run needs only the one it names. The copy keeps the app's settings and
    root callback (`--version`, completion), so usage, help and errors read exactly as with the whole app.
    `--version` is answered by the root callback before any command runs, so the smallest one will do.
    No command named (`--help`, completion, a typo): the whole app, which lists or suggests them all.
    """
    name = "checks" if args[:1] == ["--version"] else args[0] if args else None
    chosen = [c for c in app.registered_commands if c.name == name]
    if not chosen:
        return app
    narrow = copy.copy(app)
    narrow.registered_commands = chosen
    return narrow


def _exit(code: int, *, wait: bool) -> None:
    """Exit with `code`. As the process (`wait` False) with threads still running — a check abandoned at the
    deadline, a DNS lookup that never returns — flush what was written and leave at once: the interpreter's
    exit would wait for them (thread-pool joins) or trip over them (daemon threads holding stream locks)."""
    import threading

    if wait or threading.active_count() <= 1:
        sys.exit(code)
    import contextlib

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code)
