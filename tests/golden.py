"""The before/after golden check: what capdoctor says on every corpus text and every demo scenario.

A refactor must leave these outputs unchanged; a change that means to change them rewrites the goldens
(`python -m tests.golden --write`) and the diff shows, text by text, what changed. Three parts:

- `explain`: the explain-v1 verdict and evidence of every text in tests/data (corpus, fresh texts, field cases);
- `logs`: the logs-v1 document of one log holding every one of those texts, one record per text;
- `demo`: every simulator scenario's verdict and each check's status and summary.

Volatile values (ports, latencies, request ids, times) are normalised away before comparing.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = DATA / "golden"
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=timezone.utc)
"""A fixed clock: ages and windows read the same every run."""

_VOLATILE = (
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    (re.compile(r"localhost:\d+"), "localhost:PORT"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "N\\2"),
    (re.compile(r"\b(req|msg|chatcmpl|resp)_[0-9A-Za-z]+"), "\\1_ID"),
    (re.compile(r"\b[0-9a-f]{16}-[A-Z]{3}\b"), "RAY"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?"), "TIME"),
    (re.compile(r"/tmp/[^\s\"']+"), "/tmp/PATH"),
    (re.compile(r"\b\d+(\.\d+)? GiB\b"), "N GiB"),
    (re.compile(r"\b(\d+ h )?\d+ min\b"), "N min"),
)
_RACE = (re.compile(r"\b(\w*Timeout|TimeoutError): [^),;]*"), "\\1: …")
"""In a demo, which of two timeouts fires first (the client's read timeout or the run's deadline) is a race
under load; the kind of the failure is not."""
MACHINE_CHECKS = {"client", "hardware"}
"""Checks that also read this machine (its processes, its memory): only their status is compared."""


def normal(value: Any, rules: tuple[tuple[re.Pattern[str], str], ...] = _VOLATILE) -> Any:
    """`value` with its volatile parts replaced, recursively."""
    if isinstance(value, str):
        for rx, sub in rules:
            value = rx.sub(sub, value)
        return value
    if isinstance(value, list):
        return [normal(v, rules) for v in value]
    if isinstance(value, dict):
        return {k: normal(v, rules) for k, v in value.items()}
    return value


def texts() -> Iterator[tuple[str, str]]:
    """Every text of tests/data that a classifier change could read differently: (name, text)."""
    for path in sorted((DATA / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                yield f"{path.stem}/{item['id']}", item["text"]
    for path in sorted((DATA / "fresh").glob("*.tsv")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip() and not line.startswith("#") and "\t" in line:
                yield f"{path.stem}/{n}", line.split("\t", 1)[1].replace("\\n", "\n")
    for n, line in enumerate((DATA / "field-cases.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            item = json.loads(line)
            yield f"field/{item.get('id', n)}", item["text"]


def explain_part() -> dict[str, Any]:
    """The explain-v1 verdict and evidence of every text."""
    from capdoctor.logscan.explain import explain, to_json

    out: dict[str, Any] = {}
    for name, text in texts():
        doc = to_json(explain(text, now=NOW), "golden")
        out[name] = normal({"verdict": doc["verdict"], "evidence": doc["evidence"]})
    return out


def logs_part(tmp: Path) -> dict[str, Any]:
    """The logs-v1 document of one log holding every text, one record per text."""
    from capdoctor.logscan.command import run_logs

    log = tmp / "every-text.log"
    with log.open("w", encoding="utf-8") as fh:
        for n, (_, text) in enumerate(texts()):
            stamp = f"2026-12-0{1 + n % 6}T{n % 24:02d}:{n % 60:02d}:00Z"
            fh.write(f"{stamp} {text}\n")
    run = run_logs([str(log)], since="all", env={}, home=tmp, platform="linux", now=NOW, discover_when_empty=False)
    doc = dict(run.doc)
    doc.pop("files", None)
    return {"logs": normal(doc)}


def scenarios() -> list[str]:
    from capdoctor.simulator.scenarios import SCENARIOS

    return sorted(SCENARIOS)


@functools.cache
def _alone() -> tuple[str, ...]:
    """A prefix that runs a command in a process namespace of its own where one can be made (Linux, root): the
    client check counts the AI clients running on the machine, and a real client that another test or another
    engineer runs would otherwise change a demo's next steps."""
    unshare = shutil.which("unshare")
    if not unshare or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return ()
    probe = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", "true"], capture_output=True, check=False)
    return (unshare, "--pid", "--fork", "--mount-proc") if probe.returncode == 0 else ()


def _demo(name: str) -> tuple[str, Any]:
    proc = subprocess.run(
        [*_alone(), sys.executable, "-m", "capdoctor", "demo", "--scenario", name, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    doc = json.loads(proc.stdout)
    checks = [
        {"id": c["id"], "status": c["status"]} | ({} if c["id"] in MACHINE_CHECKS else {"summary": c["summary"]})
        for c in doc["checks"]
    ]
    verdict = {k: v for k, v in doc["verdict"].items() if k != "ranking"}
    return name, normal({"exit": proc.returncode, "verdict": verdict, "checks": checks}, (*_VOLATILE, _RACE))


def demo_part() -> dict[str, Any]:
    """Every scenario's verdict and each check's status and summary, run four at a time."""
    with ThreadPoolExecutor(4) as pool:
        return dict(pool.map(_demo, scenarios()))


def build(tmp: Path) -> dict[str, dict[str, Any]]:
    """All three parts, as they are written to tests/data/golden/."""
    return {"explain": explain_part(), "logs": logs_part(tmp), "demo": demo_part()}


def lines(part: dict[str, Any]) -> str:
    """One JSON line per item, sorted by name: a diff of two goldens reads text by text."""
    return "".join(
        json.dumps({"name": k, "out": part[k]}, ensure_ascii=False, sort_keys=True) + "\n" for k in sorted(part)
    )


def read(name: str) -> dict[str, Any]:
    """The golden part `name` as written."""
    text = (GOLDEN / f"{name}.jsonl").read_text(encoding="utf-8")
    return {item["name"]: item["out"] for item in map(json.loads, text.splitlines())}


def main(argv: list[str]) -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        parts = build(Path(tmp))
    if "--write" not in argv:
        print(json.dumps(parts, indent=1, ensure_ascii=False))
        return 0
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, part in parts.items():
        (GOLDEN / f"{name}.jsonl").write_text(lines(part), encoding="utf-8")
    print(f"wrote {', '.join(parts)} to {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
