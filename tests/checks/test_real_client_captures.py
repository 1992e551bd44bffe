"""What the pinned real clients printed and wrote, read right without npm (issue #34, "Captures").

tests/data/clients/real/CLIENT/CASE/ holds one real run of the pinned client (its manifest names the version and
the case's cause; tests/e2e/test_real_clients.py made it and checks it still matches): `printed.txt` is what the
client printed, `home/` the files it wrote under its HOME (`tmp/` is its TMPDIR). capdoctor must reach the
case's cause from the text (`explain`), from the files by path and from the files discovered under that HOME,
except in the ways the manifest lists as silent (the client printed or wrote nothing to read), where it must
name no cause at all.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from capdoctor.logscan.command import run_logs
from capdoctor.logscan.explain import explain

CAPTURES = Path(__file__).parent.parent / "data" / "clients" / "real"
MANIFESTS = sorted(CAPTURES.glob("*/*/manifest.json"))
NO_CAUSE = ("none", "inconclusive")


def _manifest(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _expected(manifest: dict[str, Any], way: str) -> tuple[str, ...]:
    return NO_CAUSE if way in manifest["silent"] else (manifest["cause"],)


def test_every_client_has_its_captures() -> None:
    assert {p.parent.parent.name for p in MANIFESTS} == {"codex", "claude", "gemini"}
    assert len({(p.parent.parent.name, p.parent.name) for p in MANIFESTS}) == len(MANIFESTS) >= 27


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: f"{p.parent.parent.name}-{p.parent.name}")
def test_explain_reads_what_the_client_printed(path: Path) -> None:
    manifest = _manifest(path)
    text = (path.parent / "printed.txt").read_text(encoding="utf-8")
    if not text.strip():
        assert "explain" in manifest["silent"]
        return
    assert explain(text).verdict.cause in _expected(manifest, "explain")


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: f"{p.parent.parent.name}-{p.parent.name}")
def test_logs_reads_the_clients_files_by_path_and_discovered(path: Path, tmp_path: Path) -> None:
    manifest = _manifest(path)
    files = [str(path.parent / "home" / name) for name in manifest["files"]]
    if files:
        named = run_logs(files, since=None, env={}, home=Path("/nonexistent"), platform="linux")
        assert named.verdict.cause in _expected(manifest, "logs-path")
    else:
        assert "logs-path" in manifest["silent"]
    home = tmp_path / "home"
    if (path.parent / "home").exists():
        shutil.copytree(path.parent / "home", home)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    found = run_logs([], since="all", env={"TMPDIR": str(home / "tmp")}, home=home, platform="linux")
    assert found.verdict.cause in _expected(manifest, "logs-found")
    assert sorted(_read(found.doc)) == sorted(f"~/{name}" for name in manifest["files"])  # each found, and only those


def _read(doc: dict[str, Any]) -> list[str]:
    """The files a logs report says it read."""
    return [f["path"] if isinstance(f, dict) else str(f) for f in doc.get("files", [])]
