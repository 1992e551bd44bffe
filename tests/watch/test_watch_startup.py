"""Watch mode costs the other commands nothing at start-up: `sqlite3`, `prometheus_client` and the
watch package are imported only by `watch`, `history` and `logs --into` (checked with `python -X importtime`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WATCH_ONLY = ("sqlite3", "_sqlite3", "prometheus_client", "capdoctor.watch")


def imported(*args: str) -> set[str]:
    """Every module a `capdoctor ARGS` process imported (from `-X importtime`'s report on stderr)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "capdoctor", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize(
    "args", [("--version",), ("checks",), ("diagnose", "--only", "paths", "--timeout", "5"), ("watch", "--help")]
)
def test_other_commands_do_not_import_watch_dependencies(args: tuple[str, ...]) -> None:
    modules = imported(*args)
    assert "typer" in modules  # the report was read
    assert not {m for m in modules if m.startswith(WATCH_ONLY)}


def test_history_does_import_them(tmp_path: Path) -> None:
    """The control: the same detector sees sqlite3 where it belongs."""
    assert "sqlite3" in imported("history", "--db", str(tmp_path / "missing.db"))
