"""The JSON renderer: the report dict as stable, indented JSON (what `--json` prints on stdout).

Contract: the output is always valid, complete JSON. With `ascii_only` (a stdout that cannot encode every
character: a cp1252 redirect, `PYTHONIOENCODING=ascii`) every non-ASCII character is written as a `\\u`
escape; otherwise text stays readable, except C1 controls and bidi overrides, which are escaped too so that
`cat report.json` cannot drive a terminal (JSON already escapes C0 controls such as ESC).
"""

from __future__ import annotations

import json
import re
from typing import Any

_INERT = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def dumps(obj: Any, *, ascii_only: bool = False) -> str:
    """`obj` as indented JSON with a trailing newline; see the module docstring for the escaping."""
    text = json.dumps(obj, indent=2, ensure_ascii=ascii_only, default=str)
    if not ascii_only:  # these characters can only occur inside strings, where \\u escapes are valid
        text = _INERT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text + "\n"


def render(report: dict[str, Any], ascii_only: bool = False) -> str:
    """`report` as pretty JSON with a trailing newline."""
    return dumps(report, ascii_only=ascii_only)
