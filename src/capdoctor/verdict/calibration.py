"""What a verdict's confidence means: the raw evidence measure mapped to how often such a verdict is right.

The raw measure (`share x (1 - e^(-weight / 2.5))`, see `capdoctor.verdict.decision`) orders verdicts well but says
little by itself: a single decisive text ("Selected model is at capacity") scores 0.55 and is right nineteen
times in twenty. `calibration.json` holds a monotone map from the raw measure to the observed rate of right
verdicts, fitted by `bench/calibrate.py` (isotonic regression with a Laplace prior on the corpus's tuning sets;
the held-out half only measures it), so a stated 90% is right about nine times in ten. Between points the map
is linear; it is read once, lazily.
"""

from __future__ import annotations

import functools
import json
from bisect import bisect_right
from importlib import resources

CEILING = 0.99
"""No verdict is stated as certain."""


@functools.cache
def points() -> tuple[tuple[float, float], ...]:
    """The map's points (raw, calibrated), ascending, as `calibration.json` holds them."""
    doc = json.loads(resources.files(__package__).joinpath("calibration.json").read_text("utf-8"))
    return tuple((float(a), float(b)) for a, b in doc["points"])


def calibrate(raw: float) -> float:
    """The confidence to state for a verdict whose raw evidence measure is `raw` (in [0, 1])."""
    pts = points()
    if not pts:
        return raw
    xs = [x for x, _ in pts]
    i = bisect_right(xs, raw)
    if i == 0:
        x1, y1 = pts[0]
        return min(CEILING, y1 * raw / x1) if x1 > 0 else y1
    if i == len(pts):
        return min(CEILING, pts[-1][1])
    (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    return min(CEILING, y0 + (y1 - y0) * (raw - x0) / (x1 - x0))
