"""Before/after: capdoctor says exactly what it said on every corpus text and demo scenario (tests/golden.py).

A change meant to alter an output rewrites the goldens with `python -m tests.golden --write`; the diff of
tests/data/golden then shows, text by text, what changed, for review.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import golden


def _differences(part: str, now: dict[str, Any]) -> list[str]:
    was = golden.read(part)
    names = sorted(set(was) | set(now))
    return [n for n in names if was.get(n) != now.get(n)]


@pytest.mark.parametrize("part", ["explain", "logs", "demo"])
def test_output_is_unchanged(part: str, tmp_path: Path) -> None:
    build = {"explain": golden.explain_part, "demo": golden.demo_part}
    now = build[part]() if part in build else golden.logs_part(tmp_path)
    changed = _differences(part, now)
    assert not changed, f"{len(changed)} outputs changed (first: {changed[:5]}); see `python -m tests.golden`"
