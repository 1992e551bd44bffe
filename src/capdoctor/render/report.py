"""Build the report once (schema `capdoctor/report-v1`), redact it, and write it atomically.

Every renderer — terminal, JSON, Markdown, HTML — presents this one dict, so the JSON stays stable while the
human views change. The report gathers every provider request id and `cf-ray` that any check saw (support
teams ask for those). Redaction happens here, at the boundary, before anything is shown or written.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from capdoctor import __version__
from capdoctor.model import CheckResult, Verdict
from capdoctor.redact import redact
from capdoctor.run.context import Target

SCHEMA = "capdoctor/report-v1"
ID_KEYS = {"request_id": "request-id", "cf_ray": "cf-ray", "x_request_id": "request-id"}


def system_facts() -> dict[str, str]:
    """The OS, its version, the architecture and the Python and capdoctor versions."""
    return {
        "os": platform.system() or sys.platform,
        "os_version": platform.release(),
        "arch": platform.machine(),
        "python": platform.python_version(),
        "capdoctor": __version__,
    }


def _ids(value: Any, check: str) -> Iterator[dict[str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in ID_KEYS and isinstance(item, str) and item:
                yield {"check": check, "kind": ID_KEYS[key], "value": item}
            else:
                yield from _ids(item, check)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _ids(item, check)


def request_ids(results: Sequence[CheckResult]) -> list[dict[str, str]]:
    """Every distinct request id and cf-ray in the results' findings and data, in order of appearance."""
    seen: set[tuple[str, str]] = set()
    out = []
    for result in results:
        for row in _ids([result.data, [f.data for f in result.findings]], result.id):
            if (row["kind"], row["value"]) not in seen:
                seen.add((row["kind"], row["value"]))
                out.append(row)
    return out


def build(
    results: Sequence[CheckResult],
    verdict: Verdict,
    target: Target | None,
    created: datetime,
    secrets: Sequence[str] = (),
    home: str | None = None,
    client: Mapping[str, Any] | None = None,
    demo: Mapping[str, str] | None = None,
    budget: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The redacted report dict for `results` and `verdict` (the documented JSON schema).

    `demo` names the simulator scenario when the run diagnosed the demo, so that no reader mistakes a demo
    report for a real one; `budget` is the run's request budget as spent.
    """
    target_dict = target.to_dict() if target else None
    extra_secrets = [s for s in (*secrets, target.api_key if target else None) if s]
    report = {
        "schema": SCHEMA,
        "version": __version__,
        "created": created.isoformat(timespec="seconds"),
        "system": system_facts(),
        "target": target_dict,
        "checks": [r.to_dict() for r in results],
        "verdict": verdict.to_dict(),
        "request_ids": request_ids(results),
        "client": dict(client) if client else None,
        "demo": dict(demo) if demo else None,
        "budget": dict(budget) if budget else None,
    }
    redacted: dict[str, Any] = redact(report, extra_secrets, home)
    return redacted


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one, never a torn write."""
    path = path.expanduser()
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_destination(path: Path) -> None:
    """Refuse a report path that cannot be written, before the run: `UsageError` naming it and why.

    The folder must exist and take a new file (tried with a temporary file, removed at once: permission bits
    do not tell for root, ACLs or read-only mounts), and the path must not be a folder itself.
    """
    from capdoctor.errors import UsageError

    target = path.expanduser()
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"--report {path}: is a folder, not a file")
    if not directory.is_dir():
        raise UsageError(f"--report {path}: the folder {directory} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    except OSError as exc:
        raise UsageError(f"--report {path}: cannot write in {directory}: {exc.strerror or exc}") from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)
