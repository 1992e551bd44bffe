"""The terminal view and the CLI conventions: pipes, TTY wrapping, colour, quiet, completion, choices, Ctrl-C,
and any stdout encoding."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength
from capdoctor.render import checks as checks_render
from capdoctor.render import terminal
from capdoctor.render.console import PIPE_WIDTH, console_for
from capdoctor.render.report import build
from capdoctor.run.context import Target
from capdoctor.verdict.decision import decide

ANSI = re.compile(r"\x1b\[")
LONG_COMMAND = "capdoctor diagnose --provider openai --model MODEL --api-key-env OPENAI_API_KEY --timeout 60"


def long_report() -> dict[str, Any]:
    step = NextStep(
        "Give the target your client uses, so that the models check can probe the very model your "
        "client asks for, then run the diagnosis again while the error is happening.",
        LONG_COMMAND,
    )
    paths = {
        "paths": [
            {"name": "direct", "dns_ms": 2, "connect_ms": 5, "tls_ms": 10, "ttfb_ms": 40, "total_ms": 57, "status": 200}
        ]
    }
    results = [
        CheckResult(
            "models",
            "Switch model",
            1,
            Status.FAIL,
            "gpt-5.5 fails with HTTP 503 and so does every "
            "alternative model that was tried within the budget of this run",
            (
                Finding(
                    Cause.CAPACITY,
                    Strength.STRONG,
                    "The primary model is overloaded: every attempt got "
                    "HTTP 503 server_is_overloaded while the provider's status page stayed green.",
                    {},
                    (step,),
                ),
            ),
        ),
        CheckResult("paths", "Network paths", 3, Status.PASS, "direct: HTTP 200", (), (), paths),
    ]
    return build(
        results,
        decide(results),
        Target("openai", "https://api.openai.com/v1", "gpt-5.5"),
        datetime(2026, 11, 30, tzinfo=timezone.utc),
    )


def test_a_pipe_console_never_wraps() -> None:
    console = console_for(io.StringIO())
    assert console.soft_wrap and console.width == PIPE_WIDTH
    out = io.StringIO()
    terminal.render(long_report(), console_for(out), header="capdoctor test")
    text = out.getvalue()
    assert any(len(line) > 120 for line in text.splitlines())  # long lines stay whole
    assert f"      $ {LONG_COMMAND}" in text.splitlines()


def test_a_terminal_keeps_hanging_indents_and_whole_commands() -> None:
    console = Console(file=io.StringIO(), width=50, force_terminal=True, color_system=None)
    terminal.render(long_report(), console, header="capdoctor test")
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert f"      $ {LONG_COMMAND}" in lines  # longer than the window, never folded by capdoctor
    first = next(i for i, line in enumerate(lines) if line.startswith("   1. Give the target"))
    assert lines[first + 1].startswith("      ") and lines[first + 1].strip()  # continuation under the text
    bullet = next(i for i, line in enumerate(lines) if line.startswith("   • [models]"))
    assert lines[bullet + 1].startswith("     ") and not lines[bullet + 1].startswith("      •")
    check = next(i for i, line in enumerate(lines) if line.startswith("[✗] Switch model"))
    assert lines[check + 1].startswith("    ")  # a wrapped check line continues under its title
    assert all(len(line) <= 50 for line in lines if "$ " not in line), lines
    assert not any(line.endswith(" ") for line in lines)  # nothing to copy but the text


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_timing_bar_reads_without_colour(ascii_only: bool) -> None:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    terminal.render(long_report(), console, ascii_only=ascii_only)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    glyphs = [seg[4 if ascii_only else 3] for seg in terminal.SEGMENTS]
    assert len(set(glyphs)) == 4
    bar = next(line for line in text.splitlines() if line.strip().startswith("direct"))
    assert all(g in bar for g in glyphs), bar
    assert "DNS 2, connect 5, TLS 10, wait 40" in bar
    legend = next(line for line in text.splitlines() if "connect" in line and "DNS" in line and line != bar)
    assert all(f"{g} {label}" in legend for g, (_, label, *_) in zip(glyphs, terminal.SEGMENTS, strict=True))


def test_piped_demo_is_one_logical_line_per_line(cli: Any, tmp_path: Path) -> None:
    narrow = cli("demo", env={"COLUMNS": "80"}, cwd=tmp_path, timeout=120)
    wide = cli("demo", env={"COLUMNS": "400"}, cwd=tmp_path, timeout=120)
    assert narrow.returncode == wide.returncode == 0, narrow.stderr + wide.stderr
    assert len(narrow.stdout.splitlines()) == len(wide.stdout.splitlines())
    assert max(len(line) for line in narrow.stdout.splitlines()) > 80
    assert "Verdict: CAPACITY" in narrow.stdout


def test_quiet_prints_only_the_verdict_line(cli: Any, tmp_path: Path) -> None:
    proc = cli("demo", "--scenario", "quota", "--quiet", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [proc.stdout.strip()] and proc.stdout.startswith("Verdict: QUOTA")


def test_colour_follows_force_color_no_color_and_the_flag(cli: Any, tmp_path: Path) -> None:
    coloured = cli("demo", "--scenario", "healthy", env={"NO_COLOR": "", "FORCE_COLOR": "1"}, cwd=tmp_path, timeout=120)
    assert ANSI.search(coloured.stdout), coloured.stdout[:300]
    flag = cli(
        "demo",
        "--scenario",
        "healthy",
        "--no-color",
        env={"NO_COLOR": "", "FORCE_COLOR": "1"},
        cwd=tmp_path,
        timeout=120,
    )
    assert flag.returncode == 0 and not ANSI.search(flag.stdout) and "Verdict: NONE" in flag.stdout


def test_checks_table_tsv_and_json(cli: Any) -> None:
    from capdoctor.checks.registry import BUILTIN

    piped = cli("checks")
    rows = [line.split("\t") for line in piped.stdout.splitlines()]
    assert [r[1] for r in rows] == [i.id for i in BUILTIN] and all(len(r) == 4 for r in rows)
    listed = json.loads(cli("checks", "--json").stdout)
    assert [c["id"] for c in listed] == [i.id for i in BUILTIN] and set(listed[0]) == {
        "id",
        "title",
        "stage",
        "description",
    }


class FakeTTY(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_checks_on_a_terminal_is_a_table_that_wraps_between_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from capdoctor.checks.registry import BUILTIN

    monkeypatch.setenv("COLUMNS", "70")
    out = FakeTTY()
    checks_render.render(out, no_color=True)
    text = out.getvalue()
    assert text.splitlines()[0].split() == ["stage", "id", "title", "what", "it", "tells"]
    words = set(text.split())
    for info in BUILTIN:
        assert info.id in words
        assert all(w in words for w in info.description.split()), info.description  # no word cut in two
    assert all(len(line) <= 70 for line in text.splitlines())


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o default -F _capdoctor_completion capdoctor"),
        ("zsh", "#compdef capdoctor"),
        ("fish", "complete --command capdoctor"),
        ("powershell", "Register-ArgumentCompleter"),
    ],
)
def test_show_completion_prints_the_shells_script(cli: Any, shell: str, marker: str) -> None:
    proc = cli("--show-completion", shell)
    assert proc.returncode == 0 and marker in proc.stdout and "_CAPDOCTOR_COMPLETE" in proc.stdout


def test_completion_offers_providers_and_scenarios(cli: Any) -> None:
    def complete(words: str) -> list[str]:
        proc = cli(
            env={
                "_CAPDOCTOR_COMPLETE": "complete_bash",
                "COMP_WORDS": words,
                "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
            }
        )
        return proc.stdout.split()

    assert complete("capdoctor diagnose --provider o") == ["openai", "openai-compatible", "openrouter"]
    assert "rate-limit" in complete("capdoctor demo --scenario ")
    assert "diagnose" in complete("capdoctor di")


def test_provider_is_a_choice_list(cli: Any, tmp_path: Path) -> None:
    bad = cli("diagnose", "--provider", "opneai", "--only", "proxy", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "'opneai' is not one of openai, anthropic" in bad.stderr
    alias = cli("diagnose", "--provider", "claude", "--only", "proxy", "--json", cwd=tmp_path)
    assert json.loads(alias.stdout)["target"]["provider"] == "anthropic"
    assert "[openai | anthropic | gemini" in cli("diagnose", "--help", env={"COLUMNS": "200"}).stdout


@pytest.mark.parametrize("command", ["demo", "simulate"])
def test_help_lists_every_scenario(cli: Any, command: str) -> None:
    from capdoctor.simulator.scenarios import SCENARIOS

    shown = cli(command, "--help", env={"COLUMNS": "120"}).stdout
    words = set(re.findall(r"[\w-]+", shown))
    assert set(SCENARIOS) <= words, set(SCENARIOS) - words


def test_simulate_warns_beyond_loopback(cli: Any) -> None:
    proc = cli("simulate", "--host", "192.0.2.1")  # TEST-NET: never this machine, so nothing is bound
    assert "warning: --host 192.0.2.1 is not a loopback address" in proc.stderr
    assert proc.returncode == 2 and "cannot listen on 192.0.2.1" in proc.stderr


POSIX_SIGNALS = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to a child process (POSIX)")


def _interruptible(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "capdoctor", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@POSIX_SIGNALS
def test_simulate_prints_the_address_it_bound() -> None:
    proc = _interruptible(["simulate", "--scenario", "healthy"])
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        bound = next(re.search(r"listening on 127\.0\.0\.1:(\d+)", line) for line in lines if "listening on" in line)
        assert bound, lines
        with socket.create_connection(("127.0.0.1", int(bound.group(1))), timeout=5):
            pass
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert "warning" not in err


@POSIX_SIGNALS
def test_ctrl_c_keeps_the_finished_rows_and_exits_130(tmp_path: Path) -> None:
    proc = _interruptible(["demo", "--scenario", "blackhole", "--timeout", "60"])
    time.sleep(6)  # the blackhole's model probe waits 10 s for an answer; cheap checks are long done by now
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert err.strip().splitlines()[-1] == "capdoctor: interrupted" and "Traceback" not in err
    assert re.search(r"^\[.+\] Logs — ", out, re.M), out  # a check that finished at once is kept
    assert "Verdict" not in out and not re.search(r"^\[.+\] Switch model", out, re.M)


def test_an_ascii_stdout_gets_the_whole_view(cli: Any, tmp_path: Path) -> None:
    proc = cli("demo", "--scenario", "rate-limit", env={"PYTHONIOENCODING": "ascii"}, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout.isascii()
    assert "[XX] Switch model - " in proc.stdout and "Verdict: QUOTA" in proc.stdout


def test_json_survives_a_cp1252_stdout(cli: Any, tmp_path: Path) -> None:
    proc = cli(
        "diagnose",
        "--only",
        "proxy",
        "--provider",
        "openai",
        "--json",
        cwd=tmp_path,
        env={"PYTHONIOENCODING": "cp1252", "HTTPS_PROXY": "http://127.0.0.1:9"},
    )
    report = json.loads(proc.stdout)
    assert "→" in report["checks"][0]["summary"] and "\\u2192" in proc.stdout and proc.stdout.isascii()


def test_logs_json_and_verbose_view_on_any_stdout(cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "codex.log"
    log.write_text(
        "2026-11-30T10:00:00Z ERROR 503 Selected model is at capacity — 请稍后重试 → retry "
        "\x1b]0;PWNED\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07\n",
        encoding="utf-8",
    )
    as_json = cli("logs", "--json", "--since", "all", str(log), env={"PYTHONIOENCODING": "ascii"})
    doc = json.loads(as_json.stdout)
    assert doc["matches"] and "请稍后重试" in doc["matches"][0]["example"]
    view = subprocess.run(
        [sys.executable, "-m", "capdoctor", "logs", "-v", "--since", "all", str(log)],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "cp1252"},
        check=False,
    )
    text = view.stdout.decode("cp1252")
    assert view.returncode == 3 and b"Traceback" not in view.stderr
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;PWNED" in text and "— ?????" in text


def closed_pipe_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`capdoctor ARGS` writing into a pipe whose reader is already gone, as `| head -1` leaves it."""
    read, write = os.pipe()
    os.close(read)  # every write now fails with EPIPE, whatever the timing
    try:
        return subprocess.run(
            [sys.executable, "-m", "capdoctor", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "Selected model is at capacity. Please try a different model.", "-v"),
        ("explain", "--json", "Selected model is at capacity."),
        ("checks",),
        ("config",),
        ("--help",),
    ],
)
def test_a_closed_pipe_is_a_quiet_exit_not_an_internal_error(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Issue 35.6: `capdoctor explain … | head -1` exited 1, the README's "internal error"."""
    proc = closed_pipe_run(*args, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", (proc.returncode, proc.stderr)


def test_piped_config_draws_no_boxes_and_never_wraps(cli: Any, tmp_path: Path) -> None:
    """Issue 35.7: the README promises no hard wrap in a pipe; `config` drew boxes and folded at 80 columns."""
    (tmp_path / "capdoctor.toml").write_text(f'[options]\nlogs = ["{tmp_path}"]\n', encoding="utf-8")
    proc = cli("config", env={"COLUMNS": "80"}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert not any(ch in proc.stdout for ch in "┏━┃│└┡╇"), proc.stdout[:400]
    row = next(line for line in lines if line.split()[:1] == ["logs"])
    assert f"{tmp_path}/capdoctor.toml:2" in row and len(row) > 80  # the whole row on one line


def test_a_wrap_never_parts_a_number_from_its_unit() -> None:
    """Issue 35.7: a check line wrapped between "(11" and "ms)" at some widths; the pair is one unit now, and
    what is printed still has a plain space (a copied or grepped `11 ms` reads as ever)."""
    report = long_report()
    report["checks"][0]["duration_ms"] = 11
    for width in range(40, 140):
        console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
        terminal.render(report, console)
        text = console.file.getvalue()  # type: ignore[attr-defined]
        lines = text.splitlines()
        assert not any(
            re.search(r"\d$", line) and nxt.lstrip().startswith("ms)") for line, nxt in itertools.pairwise(lines)
        )
        assert "(11 ms)" in text and "\ue000" not in text


def test_the_footer_offers_minus_v_only_to_a_reader_without_it() -> None:
    """Issue 35.7: the closing line suggested `-v` to a reader who had given `-v`."""
    for verbose in (False, True):
        out = io.StringIO()
        terminal.render(long_report(), console_for(out), verbose=verbose)
        last = out.getvalue().splitlines()[-1]
        assert ("details: -v" in last) is not verbose and "--report FILE" in last


def test_explain_keeps_its_hanging_indent_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35.7: `explain`'s wrapped evidence and steps started at column 0 on a narrow terminal."""
    from capdoctor import __version__
    from capdoctor.logscan.explain import explain, to_json
    from capdoctor.render import explain as explain_view

    doc = to_json(explain("Error 529: Overloaded. The model is at capacity, please try again later " * 3), __version__)
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    out.isatty = lambda: True  # type: ignore[method-assign]
    explain_view.render(doc, out, verbose=True)
    lines = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines()
    steps = lines.index("Next steps")
    first = next(i for i in range(steps, len(lines)) if lines[i].startswith(" 1. "))
    assert lines[first + 1].startswith("    "), lines[first : first + 3]
    evidence = next(i for i, line in enumerate(lines) if line.startswith("  ") and " | " in line)
    assert lines[evidence + 1].startswith("  "), lines[evidence : evidence + 3]


@pytest.mark.parametrize("scenario", ["healthy", "blackhole"])
def test_a_demo_marks_what_the_simulator_made_up(cli: Any, tmp_path: Path, scenario: str) -> None:
    """Issue 35.8: demos showed the simulator's inventions as facts about this machine: an exit in Singapore,
    "this machine has no working internet", "All Systems Operational" for a local server."""
    proc = cli("demo", "--scenario", scenario, "-v", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "this machine has no working internet" not in text
    for line in text.splitlines():
        if "All Systems Operational" in line or "colo SIN" in line:
            assert "simulated" in line, line
    if scenario == "blackhole":
        assert "the demo plays a machine without working internet" in text
    else:
        assert "simulated status page" in text and "exit SG (colo SIN), simulated" in text
