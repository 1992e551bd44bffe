"""Score the out-of-sample corpus per cause, through exactly the path of `capdoctor explain` (and `logs`).

    .venv/bin/python bench/corpus_score.py                     # every tuning set (tune … tune13), per cause
    .venv/bin/python bench/corpus_score.py --half tune2 --misses   # and every miss of tune2 (text and verdict)
    .venv/bin/python bench/corpus_score.py --half holdout      # the held-out half: per-cause figures only

Only `decidable` items count (the thread's cause can be read from the text alone). The tuning sets are
`tune` (the first half of the split) and the later collections `tune2` … `tune13`; the held-out half is never
scored unless asked for by name, and never listed item by item: its misses are not shown, by design (nobody
tunes after reading a held-out miss). `tests/classifier/test_corpus.py` uses `score()` and pins each set's figures so
they can only go up.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"
TUNING = (
    "tune",
    "tune2",
    "tune3",
    "tune4",
    "tune5",
    "tune6",
    "tune7",
    "tune8",
    "tune9",
    "tune10",
    "tune11",
    "tune12",
    "tune13",
    "tune14",
    "tune15",
)
"""The sets that may be read while tuning; `holdout` is the other half of the split. Each later set was scored
once by the engine as it stood before it was tuned on (`tune7` by the seventh round's, `tune8` … `tune11` by
the eighth's as it stood, `tune12` and `tune13` by the ninth's, `tune14` with its held-out half `holdout14` by the
tenth's); every one of them has been tuned on since."""
HELD_OUT = ("holdout", "holdout14", "holdout15")
"""The held-out halves: `holdout` (the first split) and `holdout14` (the fourteenth batch's other half): scored,
never read, their misses never listed."""
HALVES = (*TUNING, *HELD_OUT)
CAUSES = ("capacity", "quota", "account", "network", "hardware", "client")


@dataclass
class Score:
    """Per-cause figures for one half: right and total among decidable items, and what each verdict was."""

    right: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    given: Counter[str] = field(default_factory=Counter)
    """How many times each verdict cause was given (decidable or not)."""
    wrong_given: Counter[str] = field(default_factory=Counter)
    """How many of those verdicts named a cause other than the label."""
    outcomes: Counter[str] = field(default_factory=Counter)
    misses: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def line(self) -> str:
        """One line: right/total per cause, the total, and the capacity verdicts' precision."""
        parts = [f"{c} {self.right[c]}/{self.total[c]}" for c in CAUSES]
        n = sum(self.total.values())
        ok = sum(self.right.values())
        cap = self.given["capacity"]
        prec = f"{cap - self.wrong_given['capacity']}/{cap}" if cap else "0/0"
        return (
            f"{', '.join(parts)}; total {ok}/{n} ({ok / n:.0%}); capacity verdicts right {prec}; "
            f"outcomes {dict(self.outcomes)}"
        )


def load(half: str) -> list[dict[str, Any]]:
    """The items of `half` (`tune`, `tune2` or `holdout`)."""
    path = CORPUS / f"{half}.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def verdict(text: str) -> str:
    """The cause `capdoctor explain` names for `text`."""
    from capdoctor.logscan.explain import explain

    return explain(text).verdict.cause


def score(items: list[dict[str, Any]]) -> Score:
    """Judge every item; count right/total over decidable items and every verdict given."""
    out = Score()
    for item in items:
        got = verdict(item["text"])
        out.outcomes[got if got in ("none", "inconclusive") else ("right" if got == item["label"] else "wrong")] += 1
        if got in CAUSES:
            out.given[got] += 1
            out.wrong_given[got] += got != item["label"]
        if not item.get("decidable", True):
            continue
        out.total[item["label"]] += 1
        if got == item["label"]:
            out.right[item["label"]] += 1
        else:
            out.misses.append((item, got))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--half", action="append", choices=HALVES, help="a set to score (repeatable; default: the tuning sets)"
    )
    parser.add_argument("--misses", action="store_true", help="list the misses (tuning sets only)")
    args = parser.parse_args(argv)
    halves = args.half or list(TUNING)
    if args.misses and set(halves) & set(HELD_OUT):
        parser.error("the held-out half's misses are not shown: nobody tunes after reading one")
    for half in halves:
        result = score(load(half))
        print(f"{half}: {result.line()}")
        if args.misses:
            for item, got in result.misses:
                text = " ".join(item["text"].split())[:300]
                print(f"- {item['id']} {item['label']} -> {got} [{item['ecosystem']}] {text}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    sys.exit(main())
