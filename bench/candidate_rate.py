"""How often ordinary log lines become prefilter candidates, and how much one candidate costs the engine.

    .venv/bin/python bench/candidate_rate.py [--lines 20000]

Generates ordinary lines — client logs (bench/logscan.py's background) and the lines incident-time logs are
full of: access lines with 404s, words such as "account", "proxy", "daily", "token", "model", "timeout" — and
prints, for the engine's prefilter literals, the share of lines selected as candidates, the share the engine
then judges as an error (should be 0), and the mean classification time per candidate. With `--base REF` it
prints the same for the literal table of a git ref (e.g. `main`) for comparison. A benchmark, not a test:
nothing asserts a time.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from logscan import NORMAL, ORDINARY


def lines(n: int, seed: int = 11) -> list[str]:
    """`n` ordinary lines (bench/logscan.py's background and incident-time words), reproducibly."""
    rng = random.Random(seed)
    pool = NORMAL + ORDINARY
    out = []
    for i in range(n):
        out.append(
            rng.choice(pool).format(
                ts="2026-11-30T10:00:00Z",
                ms=rng.randrange(5, 9000),
                n=rng.randrange(1, 99999),
                m=i % 60,
                ip=f"10.0.{rng.randrange(255)}.{rng.randrange(255)}",
                port=rng.randrange(1024, 65536),
            )
        )
    return out


def base_literals(ref: str) -> list[str]:
    """The prefilter literals of the flat signature table at `ref` (before the layered engine)."""
    import tomllib

    text = subprocess.run(
        ["git", "show", f"{ref}:src/capdoctor/signatures.toml"], capture_output=True, text=True, check=True
    ).stdout
    rows = tomllib.loads(text)["signature"]
    return sorted({str(x).lower() for r in rows for x in (*r.get("literals", ()), *r.get("codes", ()))})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--base", help="also measure the literal table of this git ref (e.g. main)")
    args = parser.parse_args()
    from capdoctor.classifier.signatures import engine

    eng = engine()
    sample = lines(args.lines)
    lits = eng.literals()
    candidates = [ln for ln in sample if eng.literal_ids(ln)]
    t0 = time.perf_counter()
    judged = sum(bool(eng.classify(ln, origin="log")) for ln in candidates)
    per = (time.perf_counter() - t0) / max(1, len(candidates)) * 1e6
    print(
        f"engine: {len(lits)} literals; {len(candidates)}/{len(sample)} ordinary lines are candidates "
        f"({len(candidates) / len(sample):.1%}); judged as errors: {judged}; {per:.0f} µs per candidate "
        "(literal search + classification)"
    )
    if args.base:
        old = base_literals(args.base)
        hits = sum(any(lit in ln.lower() for lit in old) for ln in sample)
        print(
            f"{args.base}: {len(old)} literals; {hits}/{len(sample)} ordinary lines are candidates "
            f"({hits / len(sample):.1%})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
