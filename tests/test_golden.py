"""Before/after: capdoctor says exactly what it said on every corpus text and demo scenario (tests/golden.py).

A change meant to alter an output rewrites the goldens with `python -m tests.golden --write`; the diff of
tests/data/golden then shows, text by text, what changed, for review.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from tests import golden


def _differences(part: str, now: dict[str, Any]) -> list[str]:
    was = golden.read(part)
    names = sorted(set(was) | set(now))
    return [n for n in names if was.get(n) != now.get(n)]


def _diff(part: str, name: str, now: dict[str, Any]) -> str:
    """What changed in one output, as a unified diff of its JSON."""
    was = golden.read(part).get(name)
    a, b = (json.dumps(v, indent=1, sort_keys=True, ensure_ascii=False).splitlines() for v in (was, now.get(name)))
    return "\n".join(difflib.unified_diff(a, b, "golden", "now", lineterm="", n=1))


@pytest.mark.parametrize("part", ["explain", "logs", "demo"])
def test_output_is_unchanged(part: str, tmp_path: Path) -> None:
    build = {"explain": golden.explain_part, "demo": golden.demo_part}
    now = build[part]() if part in build else golden.logs_part(tmp_path)
    changed = _differences(part, now)
    detail = _diff(part, changed[0], now) if changed else ""
    assert not changed, f"{len(changed)} outputs changed (first: {changed[:5]}); see `python -m tests.golden`\n{detail}"
