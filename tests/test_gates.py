"""The phrase gates: a gate's literals are in every match of its pattern, and a gated alternation finds exactly
what the one-regex alternation of its patterns finds (the same span), on the tables' own texts in their own
case, upper-case and beside characters that fold to ASCII letters."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from capdoctor.classifier.gates import Alternation, admits, required
from capdoctor.classifier.structure import ascii_words
from capdoctor.signatures import engine, rows

CORPUS = Path(__file__).parent / "data" / "corpus"
FLAGS = re.IGNORECASE | re.DOTALL


def _texts() -> list[str]:
    texts = [" ".join(ex.split()) for sig in rows() for ex in sig.examples]
    for name in ("tune", "holdout"):
        texts += [json.loads(ln)["text"] for ln in (CORPUS / f"{name}.jsonl").read_text("utf-8").splitlines() if ln]
    return texts + [t.upper() for t in texts] + [f"ſ {t} K" for t in texts[:300]]


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        ("rate limit(?:ed)? exceeded", ["RATE LIMIT EXCEEDED"], ["rate limits"]),
        ("(?:balance|credits?|quota) (?:is )?(?:empty|low)", ["Quota is empty", "credit low"], ["balance"]),
        ("couldn[\\x27’]t (?:connect|reach)", ["Couldn’t reach", "couldn't connect"], ["could not connect"]),
        ("(?<![a-z])o[134]-mini", ["O3-MINI"], ["o2-mini"]),
        ("(?-i:KeyError): (?:x|)", ["KeyError: "], []),
        ("(?:foo)+bar|baz", ["foofoobar", "BAZ"], ["bar"]),
        ("s", ["ſ"], []),  # IGNORECASE folds the long s to `s`: an ASCII gate would miss it
        ("\u212a", ["k"], []),  # and the Kelvin sign to `k`
        ("内存不足", ["内存不足"], ["out of memory"]),
    ],
)
def test_gate_literals_are_in_every_match(pattern: str, hits: list[str], misses: list[str]) -> None:
    """Every text the pattern matches passes its gate (ASCII texts are gated; others always pass), and on the
    ASCII texts listed as misses the gate or the pattern says no."""
    gate = required(pattern)
    rx = re.compile(pattern, FLAGS)
    for text in hits:
        assert rx.search(text), text
        assert admits(gate, text.lower() if text.isascii() else None), (pattern, gate, text)
    for text in misses:
        assert not rx.search(text)
    assert required("(?:a|)b") == ("b",)  # an alternative without a literal leaves the branch ungated
    assert required("x*") == ()


def test_every_phrase_has_a_gate_its_matches_pass() -> None:
    """Each phrase of the tables is gated (a row's phrases cost a substring test each unless a text can match
    them), and on every text it matches the gate admits the text (the engine's own compiled rows, gates from
    the build cache or the parse)."""
    eng = engine()
    texts = _texts()
    gated = 0
    for i, sig in enumerate(eng._text_rows):
        row = eng._row(i)
        for alt in (row.phrase, row.unless):
            for gate, rx in alt.parts if alt is not None else ():
                gated += bool(gate)
                for text in texts:
                    if text.isascii() and rx.search(text):
                        assert admits(gate, text.lower()), (sig.id, rx.pattern, gate, text)
    assert gated > 1000


def test_gated_alternation_finds_what_the_alternation_finds() -> None:
    """For the rows each text triggers (and every row on its own examples), the engine's gated search gives
    the span of `re.search("(?:p1)|(?:p2)|…")` and the gated `found` its truth."""
    eng = engine()
    text_rows = eng._text_rows
    by_id = {sig.id: i for i, sig in enumerate(text_rows)}
    joined: dict[int, list[tuple[re.Pattern[str], Alternation]]] = {}
    checked = 0
    for text in _texts():
        triggered = {i for lit in eng.literal_ids(text) for kind, i in eng._units[lit] if kind == "row"}
        for i in triggered | {by_id[s.id] for s in text_rows if text in s.examples}:
            if i not in joined:
                sig, row = text_rows[i], eng._row(i)
                joined[i] = [
                    (re.compile(ascii_words("|".join(f"(?:{p})" for p in pats)), FLAGS), alt)
                    for pats, alt in ((sig.phrases, row.phrase), (sig.unless, row.unless))
                    if pats and alt is not None
                ]
            lower = text.lower() if text.isascii() else None
            for joined_rx, alt in joined[i]:
                want = joined_rx.search(text)
                got = alt.search(text, lower)
                assert (got.span() if got else None) == (want.span() if want else None), (text_rows[i].id, text)
                assert alt.found(text, lower) == bool(want), (text_rows[i].id, text)
                checked += 1
    assert checked > 3000
