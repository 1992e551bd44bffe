"""The JSON renderer: the report dict as stable, indented JSON (what `--json` prints on stdout)."""

from __future__ import annotations

import json
from typing import Any


def render(report: dict[str, Any]) -> str:
    """`report` as pretty JSON with a trailing newline."""
    return json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n"
