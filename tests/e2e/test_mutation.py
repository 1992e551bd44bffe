"""The mutation test: every field scenario (tests/data/scenarios/*.toml) with the provider's wording removed.

The simulator plays each scenario with every message, error type and code replaced by a neutral word
(tests/support/wording.py); statuses, headers and the shape of the bodies stay. `diagnose` must then name the
scenario's cause or say `inconclusive` — never a wrong cause: what is left (a bare 503, a 401, rate-limit
headers at zero, an HTML page, a local server's 500) is read by the engine's status layer and structure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_field_scenarios import SCENARIO_FILES, run_scenario, tomllib
from tests.support.wording import has_wording, without_wording


def _stripped_specs() -> list[Path]:
    from capdoctor.simulator.scenarios import SCENARIOS

    return [
        p for p in SCENARIO_FILES if has_wording(SCENARIOS[tomllib.loads(p.read_text(encoding="utf-8"))["scenario"]])
    ]


STRIPPED = _stripped_specs()


def test_most_scenarios_have_words_to_strip() -> None:
    assert len(STRIPPED) >= 20


@pytest.mark.parametrize("path", STRIPPED, ids=[p.stem for p in STRIPPED])
def test_without_the_providers_words_the_cause_is_right_or_inconclusive(path: Path, tmp_path: Path, home: Path) -> None:
    from capdoctor.simulator.scenarios import SCENARIOS

    spec = tomllib.loads(path.read_text(encoding="utf-8"))
    _, report, context = run_scenario(spec, without_wording(SCENARIOS[spec["scenario"]]), tmp_path, home)
    print(f"\n{path.stem} without wording: {report['verdict']['cause']} (expected {spec['expect_cause']})")
    assert report["verdict"]["cause"] in (spec["expect_cause"], "inconclusive"), context
