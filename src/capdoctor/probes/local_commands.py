"""Find executables on a PATH and run short, non-interactive commands such as `codex --version`.

Contract: the PATH comes from the mapping the caller passes (the check passes `ctx.env`), never from
`os.environ`; every command gets stdin=DEVNULL, a hard timeout, and its own process group (session), which
is killed whole on timeout, so a client that prompts, hangs or forks cannot stall the run. Output is
decoded leniently and capped. Must not interpret the output (see `local_versions`) or raise for an
expected failure: a missing, hanging or crashing command comes back as a `CommandOutput` with `error` set.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT_CHARS = 4000
"""Version output longer than this is cut: no client prints a novel for `--version`."""


@dataclass(frozen=True)
class CommandOutput:
    """What a command printed (stdout and stderr together), its exit status, or why it did not finish."""

    argv: tuple[str, ...]
    text: str = ""
    returncode: int | None = None
    error: str | None = None  # "timed out after 3.0 s", "cannot execute: ...", None when it ran

    @property
    def ok(self) -> bool:
        """True when the command ran to completion with exit status 0."""
        return self.error is None and self.returncode == 0


def _is_executable(path: Path, platform: str) -> bool:
    try:
        if not path.is_file():
            return False
    except OSError:
        return False
    return platform == "win32" or os.access(path, os.X_OK)


def find_all(name: str, env: Mapping[str, str], platform: str = sys.platform) -> list[Path]:
    """Every executable called `name` on env's PATH, in PATH order, one entry per distinct file.

    Two entries mean two installs (the first one is what the shell runs); symlinks to the same file count
    once, so an npm shim and its target are not reported as a conflict.
    """
    path_var = env.get("PATH") or env.get("Path") or ""
    exts = [""]
    if platform == "win32":
        exts = [e.lower() for e in (env.get("PATHEXT") or ".COM;.EXE;.BAT;.CMD").split(";") if e] + [""]
    found: list[Path] = []
    seen: set[str] = set()
    for directory in path_var.split(os.pathsep):
        if not directory:
            continue
        for ext in exts:
            candidate = Path(directory) / f"{name}{ext}"
            if not _is_executable(candidate, platform):
                continue
            try:
                real = str(candidate.resolve())
            except OSError:
                real = str(candidate)
            if real in seen:
                continue
            seen.add(real)
            found.append(candidate)
    return found


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything it started (its own session on POSIX, its tree on Windows)."""
    try:
        if sys.platform == "win32":
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=5,
                check=False,
            )
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, subprocess.SubprocessError):
        with contextlib.suppress(OSError):
            proc.kill()


def run_command(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> CommandOutput:
    """Run `argv` with `env`, no stdin and a hard `timeout`; return what it printed, never raise.

    Why a process group: npm-installed clients are shell/node shims that start a child; killing only the
    shim would leave the child holding the output pipe open, and reading it would block until it exits.
    """
    args = tuple(str(a) for a in argv)
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    else:
        kwargs["start_new_session"] = True
    try:
        proc = subprocess.Popen(  # argv is a fixed client command, never a shell string
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env),
            **kwargs,  # type: ignore[call-overload]
        )
    except OSError as exc:
        return CommandOutput(args, error=f"cannot execute: {exc.strerror or exc}")
    try:
        raw, _ = proc.communicate(timeout=max(0.05, timeout))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            raw, _ = proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            raw = b""
        return CommandOutput(args, text=_decode(raw), error=f"timed out after {timeout:.1f} s")
    return CommandOutput(args, text=_decode(raw), returncode=proc.returncode)


def _decode(raw: bytes | None) -> str:
    text = (raw or b"")[: MAX_OUTPUT_CHARS * 4].decode("utf-8", errors="replace")
    return text[:MAX_OUTPUT_CHARS].strip()
