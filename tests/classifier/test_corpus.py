"""The out-of-sample corpus (tests/data/corpus, see its README): real excerpts the engine was not written from.

Each set is scored per cause on its `decidable` items through exactly the path of `capdoctor explain`
(bench/corpus_score.py), and the figures are pinned so they can only go up. The tuning sets (`tune`, the first
half of the split, and `tune2` … `tune13`, later collections) may be read while tuning; the held-out half is only ever
scored here: its figures are printed (pytest -s), its items never are, and nobody tunes after reading one.
A capacity verdict must be right: wrong in under 2% of the times it is given where the text decides. `logs`
must reach the same cause as `explain` on every text of every set.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.scripts import load_script


def _bench() -> ModuleType:
    return load_script("bench/corpus_score.py")


cs = _bench()

PINNED = {
    "tune": {"capacity": 26, "quota": 28, "account": 26, "network": 29, "hardware": 22, "client": 20},
    "tune2": {"capacity": 30, "quota": 34, "account": 33, "network": 36, "hardware": 32, "client": 26},
    "tune3": {"capacity": 21, "quota": 31, "account": 23, "network": 24, "hardware": 26, "client": 22},
    "tune4": {"capacity": 17, "quota": 25, "account": 20, "network": 25, "hardware": 21, "client": 24},
    "tune5": {"capacity": 9, "quota": 20, "account": 12, "network": 12, "hardware": 12, "client": 12},
    "tune6": {"capacity": 4, "quota": 15, "account": 6, "network": 5, "hardware": 4, "client": 6},
    "tune7": {"capacity": 1, "quota": 3, "account": 1, "network": 5, "hardware": 4, "client": 6},
    "tune8": {"capacity": 1, "quota": 18, "account": 7, "network": 6, "hardware": 4, "client": 7},
    "tune9": {"capacity": 7, "quota": 1, "account": 0, "network": 0, "hardware": 7, "client": 6},
    "tune10": {"capacity": 1, "quota": 3, "account": 3, "network": 7, "hardware": 0, "client": 10},
    "tune11": {"capacity": 0, "quota": 5, "account": 1, "network": 1, "hardware": 0, "client": 0},
    "tune12": {"capacity": 4, "quota": 6, "account": 8, "network": 4, "hardware": 4, "client": 4},
    "tune13": {"capacity": 2, "quota": 20, "account": 7, "network": 25, "hardware": 19, "client": 17},
    "tune14": {"capacity": 1, "quota": 13, "account": 3, "network": 6, "hardware": 11, "client": 8},
    "tune15": {"capacity": 3, "quota": 7, "account": 4, "network": 2, "hardware": 4, "client": 1},
    "holdout": {"capacity": 21, "quota": 23, "account": 25, "network": 25, "hardware": 23, "client": 15},
    "holdout14": {"capacity": 1, "quota": 8, "account": 1, "network": 4, "hardware": 9, "client": 8},
    "holdout15": {"capacity": 2, "quota": 7, "account": 1, "network": 2, "hardware": 2, "client": 1},
}
"""Decidable items judged right per cause, per set. Raise these when the engine improves; never lower them.
tune2 was first scored by the engine tuned on `tune` alone (its out-of-sample figure then: 150 of 198,
capacity 25, quota 30, account 19, network 35, hardware 28, client 13); tune3 by the engine tuned on `tune` and
`tune2` (122 of 148: capacity 19, quota 30, account 18, network 20, hardware 23, client 12). The held-out half
was scored once after each tuning round: 115 of 146, then 118 of 146 (account 19 -> 22), then 118 of 146 again
after the third round (no cause changed), then 125 of 146 after the fourth, which added the words layer and
tuned no row (quota +1, account +3, network +1, hardware +1, client +1), then 125 of 146 again after the fifth
(tune4, 173 excerpts, scored first by the fourth round's engine: 117 of 133 decidable, capacity 15, quota 24,
account 18, network 23, hardware 21, client 16; then tuned on, rows and word counts). tune5 (102 excerpts, 79
decidable) was scored once by the fifth round's engine (67 of 79: capacity 8, quota 18, account 11, network 11,
hardware 11, client 8) and tuned on in the sixth round; the held-out half after it: 125 of 146. tune6 (62
excerpts, 42 decidable) was scored once by the sixth round's engine (34 of 42: capacity 4, quota 14, account 5,
network 3, hardware 4, client 4) and tuned on in the seventh; the held-out half after it, and again after the
yielding client_bug family: 125 of 146. tune7 (38 excerpts, 20 decidable) was scored once by the seventh round's
engine and not tuned on: its pins are that out-of-sample figure, 16 of 20. Then rows were written from fresh
texts of other runtimes, gateways and languages (`tests/classifier/test_fresh_texts.py`, no corpus read): the held-out
half, scored once after them, 127 of 146 (capacity +1, hardware +1); tune7 unchanged. The eighth round tuned on
tune7 (its out-of-sample figure stays 16 of 20) and on tune8 (61 excerpts, 48 decidable), which the engine of the
eighth round's first rows (those from tune7) scored once before anything was tuned on it: 36 of 48 (capacity 1,
quota 18, account 6, network 6, hardware 1, client 4). tune9 (32 excerpts, 22 decidable, gathered for capacity
and hardware) was scored once by the engine with every row of the eighth round but its own: 18 of 22 (capacity 7,
quota 1, hardware 5, client 5), then tuned on; tune10 (47 excerpts, 26 decidable, gathered for client and network)
likewise: 23 of 26 (capacity 1, quota 3, account 3, network 7, client 9); tune11 (15 excerpts, 9 decidable, from
forums and Q&A pages as well as threads) likewise: 7 of 9 (quota 5, account 1, network 1). The held-out half in the
eighth round: 126 of 146 once, by this test, with a retraining of the word counts that was then dropped on the
tuning sets' evidence (client 12); 128 of 146 after the rows from tune8 … tune11 and four fresh batches (client
+1); 129 of 146 (88%) on the engine of the round's end, after four more fresh batches (quota +1). The ninth round
wrote rows from seventeen fresh batches; tune12 (40 excerpts found, two whose text was already in the corpus word
for word left out: 38, 30 decidable) was scored once, by the engine with the first eleven batches' rows, before
its one miss became a row: 29 of 30 (capacity 4, quota 6, account 8, network 4, hardware 3, client 4). The
held-out half, scored once at the ninth round's end: 132 of 146 (90%; hardware +2, client +1). The tenth round
(issue #37): tune13 (151 excerpts, 93 decidable, from 147 repositories never drawn from) was scored in two parts,
each once, before any row was written from it: its first 70 (51 decidable) by the ninth round's engine, 36 of 51
(capacity 1/1, quota 3/4, account 2/2, network 17/18, hardware 10/17, client 3/9; capacity verdicts right 2 of 7:
gateway wrappers read as capacity), its other 81 (42 decidable) by the engine with the first part's rows, 36 of 42
(capacity 1/1, quota 16/16, account 4/6, network 8/8, hardware 1/2, client 6/9); after the round's rows, 90 of 93.
The held-out half, scored once after the first part's rows and once at the round's end: 132 of 146 both times.
The fourteenth batch (98 excerpts from 97 repositories never drawn from, 75 decidable) was scored whole once before
any row was written from it: 70 of 75; three cuDNN-missing excerpts were then relabelled client, as the house labels
a runtime library a GPU build lacks (fresh/local-hardware.tsv), and the same engine scores it 70 of 75 again
(capacity 2/2, quota 21/22, account 4/5, network 10/10, hardware 20/20, client 13/16). Split by `split.py`'s rule
into `tune14` (42 decidable, 41 right before) and `holdout14` (33 decidable, 29 right before); after the rows
written from `tune14` alone (the client runtime family reads a cuDNN/cuBLAS/CUDA library the loader cannot find in
its usual shapes; "status is 429" spelled in a sentence): tune14 42 of 42, holdout14 31 of 33 (94%; client +2).
The fifteenth batch (55 excerpts from 53 repositories never drawn from, 39 decidable, which brings the fresh batch
of issue #37 to 153) was scored whole once, by the engine of the fourteenth round, before anything was written
from it: 36 of 39 (92%; capacity 5/5, quota 14/14, account 5/5, network 4/4, hardware 6/7, client 2/4). Split by
`split.py`'s rule into `tune15` (21 decidable, all 21 right: nothing to tune on) and `holdout15` (18 decidable,
15 right). No row was written after it; the fresh batch's held-out halves together: 46 of 51 (90%)."""

WRONG_CAPACITY_CEILING = 1
"""Wrong capacity verdicts among decidable items of all sets, at most (lower it when it improves): measured
1 of 77 after the second tuning round, 1 of 114 after the fifth, 1 of 122 with tune5, 1 of 128 with tune6 and
tune7, 1 of 139 with tune8 … tune11, 1 of 143 with tune12, 1 of 145 with tune13, 1 of 147 with tune14 and holdout14,
1 of 152 with tune15 and holdout15 (the one is held out)."""


@functools.cache
def _score(half: str) -> Any:
    return cs.score(cs.load(half))


@pytest.mark.parametrize("half", cs.HALVES)
def test_figures_per_cause_only_go_up(half: str) -> None:
    score = _score(half)
    print(f"\n{half}: {score.line()}")
    low = {c: f"{score.right[c]} < {floor}" for c, floor in PINNED[half].items() if score.right[c] < floor}
    assert not low, f"{half}: below the pinned figures: {low}"  # counts only: held-out items are never named


def test_a_capacity_verdict_is_rarely_wrong() -> None:
    """Over every set, among decidable items: how often a capacity verdict is wrong. The target is under 2%
    of those given; the first measurement (tune and holdout, after tuning on the tuning half only) was 1 of 46
    (2.2%), the second (all three sets) 1 of 77 (1.3%), pinned here as a ceiling so it can only go down."""
    given = wrong = 0
    for half in cs.HALVES:
        for item in cs.load(half):
            if not item.get("decidable", True):
                continue
            got = cs.verdict(item["text"])
            given += got == "capacity"
            wrong += got == "capacity" and item["label"] != "capacity"
    print(f"\ncapacity verdicts on decidable items: {given}, wrong: {wrong} ({wrong / max(1, given):.1%})")
    assert given >= 40 and wrong <= WRONG_CAPACITY_CEILING


def test_logs_reaches_the_same_cause_as_explain(tmp_path: Path) -> None:
    """The same text as a file under `capdoctor logs` (read whole: named files ignore the default window)."""
    from capdoctor.logscan.command import run_logs

    disagree = 0
    items = [item for half in cs.HALVES for item in cs.load(half)]
    for n, item in enumerate(items):
        path = tmp_path / f"{n}.log"
        path.write_text(item["text"], encoding="utf-8")
        run = run_logs([str(path)], since=None, env={}, home=tmp_path, platform="linux")
        disagree += run.verdict.cause != cs.verdict(item["text"])
    assert disagree == 0, f"{disagree} of {len(items)} texts got another cause from logs than from explain"


def test_none_is_never_said_of_a_text_that_holds_an_error() -> None:
    """`none` means the text holds no error at all: over every text of every set that holds a mark of an error
    (`logscan.unplaced.describe`: an exception, a stack trace, an HTTP error status, a failed request, an error
    code or word), the verdict is a cause or `inconclusive`, never `none`. Counts only: held-out items are never
    named."""
    from capdoctor.logscan.unplaced import describe

    marked = said_none = 0
    for half in cs.HALVES:
        for item in cs.load(half):
            if describe(item["text"]) is None:
                continue
            marked += 1
            said_none += cs.verdict(item["text"]) == "none"
    print(f"\ntexts holding an error: {marked}, said none: {said_none}")
    assert marked > 1000 and said_none == 0
