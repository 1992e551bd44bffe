"""Renderers: they present a finished, redacted report dict and never compute anything of their own.

`for_path` picks the renderer of a `--report FILE` by the file's extension (`-`: the Markdown ticket, for
stdout). `view.View` carries the presentation flags; they never change which checks run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from capdoctor.errors import UsageError

STDOUT = "-"
"""`--report -`: the Markdown ticket goes to stdout."""

GLYPHS = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "?", "error": "☠"}
ASCII_GLYPHS = {"pass": "ok", "warn": "!!", "fail": "XX", "skip": "--", "error": "!!"}


def for_path(path: Path) -> Callable[[dict[str, Any]], str]:
    """The renderer for a report file: `.md`/`.markdown` (and `-`), `.json` or `.html`/`.htm`."""
    suffix = path.suffix.lower()
    if suffix in (".md", ".markdown") or str(path) == STDOUT:
        from capdoctor.render.markdown import render
    elif suffix == ".json":
        from capdoctor.render.json import render
    elif suffix in (".html", ".htm"):
        from capdoctor.render.html import render
    else:
        raise UsageError(f"--report {path}: unknown extension {suffix or '(none)'}; use .md, .json or .html")
    return render
