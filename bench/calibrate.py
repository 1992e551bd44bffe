"""Fit and measure what a verdict's confidence means: stated confidence against how often that verdict is right.

    .venv/bin/python bench/calibrate.py            # the reliability tables and calibration errors (10 bins)
    .venv/bin/python bench/calibrate.py --write    # refit src/capdoctor/verdict/calibration.json, then measure

The raw evidence measure of every verdict that names a cause is collected through exactly the path of
`capdoctor explain` (bench/corpus_score.py), on the decidable items of the corpus. The map is fitted on the
tuning sets only (isotonic regression, pool-adjacent-violators, each block's rate with a Laplace prior:
(right + 1) / (n + 2)); the held-out half is only measured, never fitted on. The expected calibration error
(ECE) is the item-weighted mean gap between stated confidence and the rate of right verdicts over 10 equal
bins of stated confidence; the table prints every bin that holds an item.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "capdoctor" / "verdict" / "calibration.json"
BINS = 10


def observations(halves: Sequence[str], raw: bool) -> list[tuple[float, bool]]:
    """(confidence, right) for every decidable item of `halves` whose verdict names a cause; `raw`: the evidence
    measure before calibration."""
    import corpus_score as cs

    import capdoctor.verdict.decision as verdict
    from capdoctor.logscan.explain import explain

    saved = verdict.calibrate
    if raw:
        verdict.calibrate = lambda x: x  # type: ignore[assignment]
    try:
        out = []
        for half in halves:
            for item in cs.load(half):
                if not item.get("decidable", True):
                    continue
                v = explain(item["text"]).verdict
                if v.cause in cs.CAUSES:
                    out.append((v.confidence, v.cause == item["label"]))
        return out
    finally:
        verdict.calibrate = saved


def fit(obs: Sequence[tuple[float, bool]]) -> list[list[float]]:
    """The isotonic map (raw -> rate right) as points at each block's mean raw value, anchored at (0, 0): equal
    values grouped, adjacent violators pooled on their plain rates, then each block's rate given the prior."""
    groups: dict[float, list[float]] = {}
    for conf, ok in obs:
        g = groups.setdefault(round(conf, 6), [0.0, 0.0, 0.0])  # [sum_raw, n, right]
        g[0] += conf
        g[1] += 1
        g[2] += ok
    blocks: list[list[float]] = []
    for _, g in sorted(groups.items()):
        blocks.append(list(g))
        while len(blocks) > 1 and blocks[-2][2] / blocks[-2][1] >= blocks[-1][2] / blocks[-1][1]:
            last = blocks.pop()
            for i in range(3):
                blocks[-1][i] += last[i]
    points = [[0.0, 0.0]]
    for b in blocks:  # the prior can bend a small block below its neighbour: kept monotone
        points.append([round(b[0] / b[1], 4), max(points[-1][1], round((b[2] + 1) / (b[1] + 2), 4))])
    return points


def ece(obs: Sequence[tuple[float, bool]]) -> tuple[float, list[tuple[str, int, float, float]]]:
    """The expected calibration error over BINS equal bins, and each bin's (range, n, stated, right)."""
    rows = []
    total = 0.0
    for b in range(BINS):
        lo, hi = b / BINS, (b + 1) / BINS
        inside = [(c, ok) for c, ok in obs if lo <= c < hi or (b == BINS - 1 and c == 1.0)]
        if not inside:
            continue
        stated = sum(c for c, _ in inside) / len(inside)
        right = sum(ok for _, ok in inside) / len(inside)
        rows.append((f"{lo:.1f}-{hi:.1f}", len(inside), stated, right))
        total += len(inside) * abs(stated - right)
    return (total / len(obs) if obs else 0.0), rows


def report(name: str, obs: Sequence[tuple[float, bool]]) -> float:
    """Print one reliability table; return its ECE."""
    error, rows = ece(obs)
    print(f"{name}: {len(obs)} verdicts naming a cause, ECE {error:.3f}")
    for span, n, stated, right in rows:
        print(f"  {span}  n={n:4d}  stated {stated:.3f}  right {right:.3f}  gap {abs(stated - right):.3f}")
    return error


def main(argv: list[str] | None = None) -> int:
    import corpus_score as cs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="refit the map on the tuning sets and write it")
    args = parser.parse_args(argv)
    if args.write:
        points = fit(observations(cs.TUNING, raw=True))
        doc = {
            "method": "isotonic regression (pool-adjacent-violators) of verdicts right against the raw evidence "
            "measure, each block's rate (right + 1) / (n + 2); fitted by bench/calibrate.py --write",
            "fitted_on": " ".join(cs.TUNING),
            "points": points,
        }
        body = json.dumps({k: v for k, v in doc.items() if k != "points"}, indent=1)[:-2]
        rows = ",\n  ".join(json.dumps(p) for p in points)
        TARGET.write_text(f'{body},\n "points": [\n  {rows}\n ]\n}}\n', "utf-8")
        from capdoctor.verdict.calibration import points as cached

        cached.cache_clear()
        print(f"wrote {TARGET.relative_to(ROOT)}: {len(points)} points")
    report("tuning sets, raw measure", observations(cs.TUNING, raw=True))
    report("held-out half, raw measure", observations(["holdout"], raw=True))
    report("tuning sets, stated confidence (in-sample for the fit)", observations(cs.TUNING, raw=False))
    report("held-out half, stated confidence (out of sample)", observations(["holdout"], raw=False))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT / "bench"))
    sys.exit(main())
