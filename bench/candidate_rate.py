"""How often the ordinary lines of an agent's day become prefilter candidates, and which literals make them so.

    .venv/bin/python bench/candidate_rate.py [--lines 20000] [--top 10]
    PYTHONPATH=../base/src .venv/bin/python bench/candidate_rate.py     # another checkout's engine

Generates ordinary lines (bench/logscan.py's `LINES`: client chatter, the words incident-time logs carry, and an
agent's realistic day: JSON request logs with statuses and latencies, local-server and localhost URLs with their
ports, `context window` fields, 404 access lines, `No such file or directory` from tool calls) and prints the
fraction that hold one of the engine's prefilter literals, and the fraction that become candidates (what
`capdoctor logs` decodes and judges: a line holding a selective literal, or one of the engine's at a level the
words layer reads; the issue's target is at most 2%), per kind of line, the literals of the candidates, and how
many of the lines the engine judges an error (should be 0). A benchmark, not a test: nothing asserts a number.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logscan import LINES, ordinary_kind


def judged(line: str) -> bool:
    """Whether `capdoctor logs` judges the one-line record `line`: it holds one of the engine's literals and the
    file scanner does not set it aside as chatter (`FileScanner._chatter`, asked here directly)."""
    from capdoctor.logscan.filescan import FileScanner
    from capdoctor.logscan.prefilter import prefilter_for
    from capdoctor.logscan.results import ScanOptions, ScanResult

    pf = prefilter_for(None)
    raw = line.encode("utf-8")
    ends, ids = pf.hits(raw)
    if not ends:
        return False
    if ids is None:
        return True
    scanner = FileScanner(pf, ScanOptions(), "-", ScanResult())
    if scanner.extra is not None and hasattr(scanner, "_extra_ids"):  # (another checkout: ends only)
        scanner._extra_ends, extra_ids = scanner.extra.hits(raw)
        scanner._extra_ids = extra_ids or []
    elif scanner.extra is not None:
        scanner._extra_ends = scanner.extra.hits(raw)[0]
    return not scanner._chatter(raw, ids, ends, 0, len(raw))


def main() -> int:
    """Print the candidate rate of `--lines` ordinary lines."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--top", type=int, default=10, help="how many of the literals that hit most to list")
    args = parser.parse_args()
    from capdoctor.classifier.signatures import engine

    eng = engine()
    literals = eng.literals()
    has_selective = hasattr(eng, "selective")  # (another checkout's engine: every literal hit is judged)
    rng = random.Random(11)
    by_kind: Counter[int] = Counter()
    hits_by_kind: Counter[int] = Counter()
    by_literal: Counter[str] = Counter()
    holding: list[str] = []
    candidates: list[str] = []
    for i in range(args.lines):
        kind, line = ordinary_kind(rng, "2026-11-30T10:00:00.000Z", i)
        by_kind[kind] += 1
        ids = eng.literal_ids(line)
        if ids:
            holding.append(line)
            if not has_selective or judged(line):
                candidates.append(line)
                hits_by_kind[kind] += 1
                by_literal.update(literals[i] for i in ids)
    errors = sum(bool(eng.classify(line, origin="log")) for line in holding)
    n = max(1, args.lines)
    print(
        f"{len(literals)} literals; ordinary lines holding one: {len(holding)}/{args.lines} ({len(holding) / n:.2%}); "
        f"candidates (judged by the scanner): {len(candidates)} ({len(candidates) / n:.2%}); "
        f"judged as errors: {errors}"
    )
    print("literals of the candidates:", ", ".join(f"{lit!r} {k}" for lit, k in by_literal.most_common(args.top)))
    for kind, k in sorted(hits_by_kind.items(), key=lambda kv: -kv[1]):
        print(f"  {k / by_kind[kind]:6.1%} of {by_kind[kind]:5d}  {LINES[kind].strip()[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
