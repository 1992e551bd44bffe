"""What a confidence means: on the held-out half (never fitted on), a stated confidence is about how often the
verdict is right (expected calibration error at most 0.05 over 10 bins); the shipped map is what the fit on
the tuning sets gives; a single decisive text is not a 55% verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capdoctor.logscan.explain import explain
from tests.support.scripts import load_script

cal = load_script("bench/calibrate.py")
cs = load_script("bench/corpus_score.py")
MAP = Path(__file__).resolve().parents[2] / "src" / "capdoctor" / "verdict" / "calibration.json"


def test_held_out_calibration_error_is_small() -> None:
    error, rows = cal.ece(cal.observations(["holdout"], raw=False))
    print(f"held-out ECE {error:.3f}: {rows}")
    assert error <= 0.05, rows


def test_the_shipped_map_is_the_fit_on_the_tuning_sets() -> None:
    shipped = json.loads(MAP.read_text("utf-8"))
    assert shipped["fitted_on"].split() == list(cs.TUNING)
    assert shipped["points"] == cal.fit(cal.observations(cs.TUNING, raw=True))


@pytest.mark.parametrize(
    "text",
    [
        "Selected model is at capacity. Please try a different model.",
        '{"error":{"message":"Incorrect API key provided: sk-abc***","type":"invalid_request_error",'
        '"code":"invalid_api_key"}}',
        '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}',
    ],
)
def test_a_decisive_text_is_stated_with_decisive_confidence(text: str) -> None:
    assert explain(text).verdict.confidence >= 0.7


def test_the_map_is_monotone_and_never_certain() -> None:
    from capdoctor.verdict.calibration import calibrate

    values = [calibrate(x / 100) for x in range(101)]
    assert values == sorted(values) and max(values) < 1.0
