"""`capdoctor logs` on input that cannot be read: said on stderr, one line per input, exit 2 when nothing could
be read, a warning when some could; a folder scan never follows a link out of the folder it was given."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

import pytest

from capdoctor.logscan.sources import expand
from tests.conftest import run_cli

LINE = '2026-11-20T10:00:00Z ERROR stream error: {"type":"error","error":{"type":"overloaded_error"}}\n'


def unreadable_inputs(tmp: Path) -> dict[str, str]:
    """name -> the reason `logs` must give for it."""
    (tmp / "binary.log").write_bytes(b"\x00\x01\x02 not text \x00")
    (tmp / "fake.gz").write_bytes(b"plain text named .gz\n")
    good = gzip.compress(LINE.encode() * 50)
    (tmp / "cut.gz").write_bytes(good[: len(good) // 2])  # real gzip, truncated: a corrupt download
    (tmp / "fake.zst").write_bytes(b"plain text named .zst\n")
    (tmp / "corrupt.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\xff" * 40)
    (tmp / "broken.log").symlink_to(tmp / "nowhere.log")
    reasons = {
        "binary.log": "binary data",
        "fake.gz": "named like gzip data",
        "cut.gz": "broken gzip data",
        "fake.zst": "named like zstd data",
        "corrupt.zst": "broken zstd data",
        "broken.log": "a broken link",
    }
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp / "pipe.log")
        reasons["pipe.log"] = "not a regular file"
    return reasons


def test_each_unreadable_input_alone_is_exit_2_with_its_reason(tmp_path: Path) -> None:
    for name, reason in unreadable_inputs(tmp_path).items():
        proc = run_cli("logs", name, cwd=tmp_path, timeout=60)
        assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith(f"capdoctor: error: cannot read {name}: {reason}"), proc.stderr
        assert proc.stdout == "" and "Traceback" not in proc.stderr


def test_all_unreadable_together_is_one_line_each_and_exit_2(tmp_path: Path) -> None:
    names = list(unreadable_inputs(tmp_path))
    proc = run_cli("logs", "--json", *names, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == len(names) and all(line.startswith("capdoctor: error: cannot read ") for line in lines)


def test_partly_readable_input_is_scanned_with_a_warning(tmp_path: Path) -> None:
    unreadable_inputs(tmp_path)
    (tmp_path / "good.log").write_text(LINE * 3, encoding="utf-8")
    proc = run_cli("logs", "--json", "--since", "all", "good.log", "binary.log", "cut.gz", cwd=tmp_path, timeout=60)
    assert proc.returncode not in (1, 2), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["files"][0]["lines"] == 3
    first, second = proc.stderr.splitlines()
    assert first == "capdoctor: warning: cannot read binary.log: binary data (NUL bytes)"
    assert second.startswith("capdoctor: warning: cannot read cut.gz: broken gzip data")


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root (or Windows ACLs) can read a 000 file")
def test_a_file_without_permission(tmp_path: Path) -> None:
    secret = tmp_path / "secret.log"
    secret.write_text(LINE, encoding="utf-8")
    secret.chmod(0)
    proc = run_cli("logs", "secret.log", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "cannot read secret.log: " in proc.stderr


def test_a_folder_scan_never_follows_a_link_out_of_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.log").write_text(LINE, encoding="utf-8")
    given = tmp_path / "logs"
    (given / "sub").mkdir(parents=True)
    (given / "real.log").write_text(LINE, encoding="utf-8")
    (given / "sub" / "again.log").symlink_to(given / "real.log")  # inside: followed
    (given / "escape").symlink_to(outside)  # a folder outside: not followed
    (given / "escape.log").symlink_to(outside / "private.log")  # a file outside: not followed
    sources, skipped = expand([str(given)])
    assert sorted(Path(s.path).name for s in sources) == ["again.log", "real.log"]
    assert sorted((Path(s.path).name, s.reason) for s in skipped) == [
        ("escape", f"a link out of {given}: not followed"),
        ("escape.log", f"a link out of {given}: not followed"),
    ]
    proc = run_cli("logs", "--json", "--since", "all", str(given), cwd=tmp_path, timeout=60)
    assert "private.log" not in proc.stdout
    assert proc.stderr.count("capdoctor: warning: cannot read") == 2
