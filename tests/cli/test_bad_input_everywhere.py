"""One property over the whole CLI: a bad value for any option of any command is one line, exit 2, no request.

For every command and every option that takes a value, values drawn from a grammar of bad ones — wrong types,
out of range, paths that are missing, directories or binary files, URLs without a scheme or a host, unknown
names, empty stdin — must give exactly one stderr line that names the value and the flag it came from, exit 2,
no traceback, and no request: the target flags point at a loopback server that counts every request it gets.
The grammar is a table (not random draws) so that every row runs every time, and the CLI runs in process
(`capdoctor.cli.commands.main` with an argv), with the real engine behind it: a value that slipped through would send
its requests to the counting server and fail the test. `test_every_option_is_in_the_grammar` keeps the table
honest: a new option without bad values of its own fails it.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

MISSING, DIRECTORY, BINARY, NO_FOLDER = "{missing}", "{directory}", "{binary}", "{no_folder}"
"""Path placeholders, made real in each test's folder (a missing file, a folder, NUL bytes, a missing parent)."""

BAD: dict[str, tuple[str, ...]] = {
    "--provider": ("nosuch",),
    "--base-url": ("example.com/v1", "http:///v1", ""),
    "--model": ("",),
    "--alt-model": ("",),
    "--api-key-env": ("", "NOT A NAME"),
    "--log": (MISSING, BINARY),
    "--timeout": ("nan", "-1", "3s", "1e309"),
    "--only": ("nosuch",),
    "--skip": ("nosuch",),
    "--report": (DIRECTORY, NO_FOLDER + ".md", "report.txt"),
    "--reference-url": ("example.com", "http://"),
    "--since": ("yesterday", "-3d"),
    "--scenario": ("nosuch",),
    "--host": ("", "256.0.0.1"),
    "--port": ("-1", "70000", "abc"),
    "--from-report": (MISSING, DIRECTORY, BINARY),
    "--format": ("nosuch",),
    "--write": (DIRECTORY, NO_FOLDER + ".yaml"),
    "--interval": ("nan", "0", "soon"),
    "--count": ("0", "abc"),
    "--db": (DIRECTORY, BINARY),
    "--retention": ("0", "x"),
    "--metrics-port": ("0", "70000", "abc"),
    "--metrics-host": ("", "256.0.0.1"),
    "--textfile": (DIRECTORY, NO_FOLDER + ".prom"),
    "--into": (DIRECTORY, BINARY),
    "--upstream": ("example.com", "http://", "/v1=", "ftp://127.0.0.1:9"),
    "--listen": ("nohost", "127.0.0.1:70000", "0.0.0.0:8787"),
    "--token": ("",),
    "--burst-failures": ("-1", "abc"),
    "--burst-window": ("0", "soon"),
    "--drain": ("-1", "x"),
    "check_id": ("nosuch",),
    "paths": (MISSING,),
}
"""Bad values per option (and positional argument), shared by every command that has it."""

NEEDS: dict[str, tuple[str, ...]] = {"--metrics-host": ("--metrics-port", "19999")}
"""Options that are read only beside another (the metrics address only when metrics are served)."""

EMPTY_STDIN: tuple[tuple[str, ...], ...] = (("explain",), ("explain", "-"), ("explain", "--json"), ("logs", "-"))
"""Commands reading stdin, given an empty one."""


class Counter(BaseHTTPRequestHandler):
    """Counts every request and answers it with an empty JSON object."""

    hits: ClassVar[list[str]] = []

    def _any(self) -> None:
        Counter.hits.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_HEAD = _any

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def counting() -> Iterator[str]:
    """The base URL of a loopback server that counts every request (its `Counter.hits`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def commands() -> dict[str, list[tuple[str, bool]]]:
    """Every command's parameters: (option or argument name, takes a value)."""
    import typer

    from capdoctor.cli.commands import app

    root = typer.main.get_command(app)
    out: dict[str, list[tuple[str, bool]]] = {}
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        params = []
        for p in command.params:
            if p.name == "help":
                continue
            label = max(p.opts, key=len) if getattr(p, "param_type_name", "") == "option" else str(p.name)
            params.append((label, not getattr(p, "is_flag", False)))
        out[name] = params
    return out


def cases() -> list[tuple[str, str, str]]:
    """(command, option, bad value) for every value-taking option of every command."""
    return [
        (command, option, value)
        for command, params in commands().items()
        for option, takes_value in params
        if takes_value
        for value in BAD.get(option, ())
    ]


def test_every_option_is_in_the_grammar() -> None:
    missing = [
        f"{command} {option}"
        for command, params in commands().items()
        for option, takes_value in params
        if takes_value and option not in BAD and option != "text"  # explain's text: the empty-stdin rows
    ]
    assert not missing, f"options without bad values in BAD: {missing}"


def real(value: str, folder: Path) -> str:
    """`value` with its path placeholder made real under `folder`."""
    (folder / "a-folder").mkdir(exist_ok=True)
    (folder / "binary.dat").write_bytes(b"\x00\xff\xfe\x00 not text\n")
    return (
        value.replace(MISSING, str(folder / "missing.file"))
        .replace(DIRECTORY, str(folder / "a-folder"))
        .replace(BINARY, str(folder / "binary.dat"))
        .replace(NO_FOLDER, str(folder / "no-folder" / "x"))
    )


def base_args(command: str, option: str, target: str, folder: Path) -> list[str]:
    """A valid command line for `command` that the bad `option` value is added to (last, so it wins)."""
    flags = ["--provider", "openai", "--base-url", target, "--model", "gpt-5.5"]
    log = folder / "ok.log"
    log.write_text("2026-11-30T08:00:00Z all fine\n", encoding="utf-8")
    history = folder / "history.db"
    if command == "history" and not history.exists():
        run_main(["logs", str(log), "--into", str(history)], "")
    return {
        "diagnose": [*flags, "--timeout", "5", "--no-inference"],
        "check": ["models" if option != "check_id" else "nosuch", *flags, "--timeout", "5"],
        # a value let through would start the simulator: the demo runs (on its own server, not the counting
        # one: the exit code fails the row); `simulate` would serve until stopped (the row hangs)
        "demo": ["--scenario", "healthy"] if option != "--scenario" else [],
        "simulate": ["--scenario", "healthy"] if option != "--scenario" else [],
        "config": flags,
        "fallback": [*flags, "--timeout", "5"] if option != "--from-report" else [],
        "logs": [] if option == "paths" else [str(log)],
        "watch": [*flags, "--count", "1", "--db", str(folder / "w.db"), "--timeout", "5", "--no-inference"],
        "history": ["--db", str(history)],
        # a value let through would start the proxy (the row hangs until the test's timeout fails it)
        "proxy": ["--upstream", target.removesuffix("/v1"), "--listen", "127.0.0.1:0", "--db", str(folder / "p.db")]
        if option != "--upstream"
        else ["--listen", "127.0.0.1:0"],
    }.get(command, [])


def run_main(argv: list[str], stdin: str) -> tuple[int, str]:
    """Run the CLI in this process; (exit code, stderr)."""
    import contextlib
    import sys

    from capdoctor.cli.commands import main

    err = io.StringIO()
    old_in = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(io.StringIO()),
            pytest.raises(SystemExit) as ended,
        ):
            main(argv)
    finally:
        sys.stdin = old_in
    code = ended.value.code
    return (code if isinstance(code, int) else 0), err.getvalue()


def one_line_naming(code: int, stderr: str, *names: str) -> str:
    assert code == 2, (code, stderr)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("capdoctor: error:") and "Traceback" not in stderr, stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


@pytest.mark.parametrize(("command", "option", "value"), cases())
def test_a_bad_value_is_one_line_exit_2_and_no_request(
    counting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, option: str, value: str
) -> None:
    monkeypatch.chdir(tmp_path)
    bad = real(value, tmp_path)
    argv = [command, *base_args(command, option, counting, tmp_path)]
    if option in ("check_id",):
        pass  # the id is in the base line
    elif option == "paths":
        argv.append(bad)
    else:
        argv += [*NEEDS.get(option, ()), option, bad]
    before = len(Counter.hits)
    code, stderr = run_main(argv, "")
    shown = bad if option != "check_id" else "nosuch"
    where = () if option in ("check_id", "paths") else (option,)
    one_line_naming(code, stderr, *where, os.path.basename(shown) if os.sep in shown else shown)
    assert Counter.hits[before:] == [], "a request was sent"


@pytest.mark.parametrize("argv", EMPTY_STDIN)
def test_empty_stdin_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]) -> None:
    monkeypatch.chdir(tmp_path)
    code, stderr = run_main(list(argv), "")
    one_line_naming(code, stderr, "stdin")
