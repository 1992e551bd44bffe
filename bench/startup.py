"""Start-up benchmark: median wall time of `capdoctor --version` and `capdoctor checks`, as a ratio to
`python -c "import typer"` measured in the same environment and the same run.

The CLI framework is the only start-up cost capdoctor accepts; httpx, psutil, NVML and the checks load only
when a command needs them. Targets: --version within 1.3x and checks within 1.6x of importing typer alone.
Both sides run with their bytecode cached: an installed typer has its .pyc files from pip, so the children
run without PYTHONDONTWRITEBYTECODE and the warm-up run writes capdoctor's (else every run would compile
capdoctor's sources and the ratio would measure the compiler).
Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

TARGETS = {"--version": 1.3, "checks": 1.6}
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_ms(cmd: list[str], runs: int) -> float:
    """Median wall time of `cmd` over `runs` runs (after one warm-up run), in milliseconds."""
    subprocess.run(cmd, capture_output=True, check=True, env=ENV)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True, env=ENV)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    py = sys.executable
    base = median_ms([py, "-c", "import typer"], args.runs)
    print(f"reference: python -c 'import typer'   {base:7.1f} ms")
    worst = 0.0
    for sub, target in TARGETS.items():
        ms = median_ms([py, "-m", "capdoctor", sub], args.runs)
        ratio = ms / base
        worst = max(worst, ratio / target)
        verdict = "ok" if ratio <= target else "OVER TARGET"
        print(f"capdoctor {sub:<10}                {ms:7.1f} ms   ratio {ratio:4.2f}x (target {target}x) {verdict}")
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
