"""The phrase gates: a gate's literals are in every match of its pattern, and a gated alternation finds exactly
what the one-regex alternation of its patterns finds (the same span), on the tables' own texts in their own
case, upper-case, beside characters that fold to ASCII letters and with letters spelled by such characters; and
`folded` folds each character exactly as the regex engine's IGNORECASE does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from capdoctor.classifier.gates import Alternation, admits, fold_char, folded, required
from capdoctor.classifier.signatures import engine, rows
from capdoctor.classifier.structure import ascii_words

CORPUS = Path(__file__).parents[1] / "data" / "corpus"
FLAGS = re.IGNORECASE | re.DOTALL


def spelled(text: str) -> str:
    """`text` with letters spelled by the characters IGNORECASE takes for them (the long s, the Kelvin sign, the
    dotless i, the dotted capital I): the same text to the regexes, another to `str.lower`."""
    return text.replace("s", "\u017f").replace("k", "\u212a").replace("i", "\u0131").replace("I", "\u0130")


def _texts() -> list[str]:
    texts = [" ".join(ex.split()) for sig in rows() for ex in sig.examples]
    for name in ("tune", "holdout"):
        texts += [json.loads(ln)["text"] for ln in (CORPUS / f"{name}.jsonl").read_text("utf-8").splitlines() if ln]
    return texts + [t.upper() for t in texts] + [f"ſ {t} K" for t in texts[:300]] + list(map(spelled, texts[:300]))


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        ("rate limit(?:ed)? exceeded", ["RATE LIMIT EXCEEDED"], ["rate limits"]),
        ("(?:balance|credits?|quota) (?:is )?(?:empty|low)", ["Quota is empty", "credit low"], ["balance"]),
        ("couldn[\\x27’]t (?:connect|reach)", ["Couldn’t reach", "couldn't connect"], ["could not connect"]),
        ("(?<![a-z])o[134]-mini", ["O3-MINI"], ["o2-mini"]),
        ("(?-i:KeyError): (?:x|)", ["KeyError: "], []),
        ("(?:foo)+bar|baz", ["foofoobar", "BAZ"], ["bar"]),
        ("s", ["ſ"], []),  # IGNORECASE folds the long s to `s`: a lower-case test would miss it
        ("\u212a", ["k"], []),  # and the Kelvin sign to `k`
        ("ſtatus", ["STATUS", "status"], ["statue"]),
        ("ошибка сети", ["ОШИБКА СЕТИ"], ["ошибка"]),
        ("σφάλμα", ["ΣΦΆΛΜΑ", "σφάλμα"], []),
        ("İnvalid", ["invalid", "INVALID", "ınvalid"], []),
        ("内存不足", ["内存不足"], ["out of memory"]),
    ],
)
def test_gate_literals_are_in_every_match(pattern: str, hits: list[str], misses: list[str]) -> None:
    """Every text the pattern matches passes its gate (in any script), and on the texts listed as misses the gate
    or the pattern says no."""
    gate = required(pattern)
    rx = re.compile(pattern, FLAGS)
    for text in hits:
        assert rx.search(text), text
        assert admits(gate, folded(text)), (pattern, gate, text)
    for text in misses:
        assert not rx.search(text)
    assert required("(?:a|)b") == ("b",)  # an alternative without a literal leaves the branch ungated
    assert required("x*") == ()


def test_every_phrase_has_a_gate_its_matches_pass() -> None:
    """Each phrase of the tables is gated (a row's phrases cost a substring test each unless a text can match
    them), its literals are folded (`folded` leaves them as they are), and on every text it matches the gate
    admits the text (the engine's own compiled rows, gates from the build cache or the parse)."""
    eng = engine()
    texts = _texts()
    gated = 0
    for i, sig in enumerate(eng._text_rows):
        row = eng._row(i)
        for alt in (row.phrase, row.unless):
            for gate, rx in alt.parts if alt is not None else ():
                gated += bool(gate)
                assert all(folded(lit) == lit for lit in gate), (sig.id, gate)
                for text in texts:
                    if rx.search(text):
                        assert admits(gate, folded(text)), (sig.id, rx.pattern, gate, text)
    assert gated > 1000


def test_local_hints_and_outcome_conditions_gated_answer_as_their_patterns() -> None:
    """Whether a text names a local server, and whether a status outcome's text condition holds, are searched
    behind their gates (`Engine._is_local`, `_holds`): on every text, and on texts made of each hint or
    condition's own alternatives in other cases and spellings, the answer is the plain pattern's."""
    eng = engine()
    hints = eng.tables.local_hints
    conditions = sorted({o.text for rule in eng.tables.rules for o in rule.outcomes if o.text is not None})
    plain = [re.compile(ascii_words(p), re.IGNORECASE) for p in (hints, *conditions)]
    made = [
        f"POST {w} returned 503" for p in (hints, *conditions) for w in re.sub(r"\\b|\\|\?|\(\?:|\)", "", p).split("|")
    ]
    texts = _texts() + made + [t.upper() for t in made] + list(map(spelled, made))
    said = 0
    for text in texts:
        lower = folded(text)
        assert eng._is_local(text, None) == bool(plain[0].search(text)), text  # (None: searched, no gate)
        assert eng._is_local(text, lower) == bool(plain[0].search(text)), text
        for condition, rx in zip(conditions, plain[1:], strict=True):
            want = bool(rx.search(text))
            assert eng._holds(condition, text, lower) == want, (condition, text)
            said += want
    assert said > 100 and sum(eng._is_local(t, folded(t)) for t in made) > 20


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
            lower = folded(text)
            for joined_rx, alt in joined[i]:
                want = joined_rx.search(text)
                got = alt.search(text, lower)
                assert (got.span() if got else None) == (want.span() if want else None), (text_rows[i].id, text)
                assert alt.found(text, lower) == bool(want), (text_rows[i].id, text)
                checked += 1
    assert checked > 3000


def _engine_fold() -> dict[int, int]:
    """The regex engine's own IGNORECASE rule as a map from each code point to a representative: its one-character
    lower-case form (`_sre.unicode_tolower`), then the smallest of that form's extra case group."""
    _sre = pytest.importorskip("_sre")
    _casefix = pytest.importorskip("re._casefix")  # Python 3.11+: the engine's extra case groups

    return {
        cp: min(((low := _sre.unicode_tolower(cp)), *_casefix._EXTRA_CASES.get(low, ())))
        for cp in range(0x110000)
        if not 0xD800 <= cp < 0xE000
    }


def test_fold_char_is_the_regex_engines_case_folding() -> None:
    """Every character (surrogates aside) folds to what the regex engine's own rule gives, and on the letters of
    the scripts that case (Latin, Greek, Cyrillic, the letter-like symbols) two characters fold alike exactly when
    IGNORECASE matches one with the other."""
    want = _engine_fold()
    wrong = [cp for cp, rep in want.items() if fold_char(chr(cp)) != chr(rep)]
    assert not wrong, [hex(cp) for cp in wrong[:20]]
    by_rep: dict[int, list[int]] = {}
    for cp in [*range(0x41, 0x250), *range(0x370, 0x530), *range(0x1E00, 0x2000), *range(0x2100, 0x2150)]:
        by_rep.setdefault(want[cp], []).append(cp)
    for members in by_rep.values():
        for a in members:
            assert all(re.fullmatch(re.escape(chr(a)), chr(b), re.IGNORECASE) for b in members), hex(a)
    sample = [chr(cp) for cp in (*range(0x41, 0x7B), 0xDF, 0x130, 0x131, 0x17F, 0x3C2, 0x3C3, 0x3A3, 0x212A, 0x1E9E)]
    for a in sample:
        for b in sample:
            assert bool(re.fullmatch(re.escape(a), b, re.IGNORECASE)) == (fold_char(a) == fold_char(b)), (a, b)


@pytest.mark.parametrize(
    "text",
    [
        "Rate Limit Exceeded",
        "İSTANBUL ıstanbul",  # the dotted capital I lowers to two characters in `str.lower`
        "ΣΦΆΛΜΑ ΔΙΚΤΎΟΥ: όριο ρυθμού",  # final sigma: `str.lower` writes ς, the engine σ
        "ſtatus 429 \u212aelvin",
        "Ошибка: превышен лимит запросов (429)",
        "错误：模型已达上限，请稍后重试",
        "emoji 🚦 and a combining e\u0301",
        "",
    ],
)
def test_folded_folds_each_character_in_place(text: str) -> None:
    """`folded` is `fold_char` character by character (one for one, so positions agree), in one C pass where it
    can; an ASCII text is `str.lower()` of it."""
    got = folded(text)
    assert got == "".join(map(fold_char, text))
    assert got is not None and len(got) == len(text)
    if text.isascii():
        assert got == text.lower()


def test_without_the_engines_case_groups_non_ascii_texts_are_not_gated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the regex engine does not list its extra case groups (a Python whose internals differ), a non-ASCII
    text has no folded form, so every gate admits it, and a gate's run stops at a character IGNORECASE may take
    for an ASCII one: what the gates say is then still never less than what the patterns match."""
    from capdoctor.classifier import gates

    monkeypatch.setattr(gates, "_fold", lambda: None)
    assert folded("Ошибка: ſtatus 429") is None
    assert folded("Rate LIMIT") == "rate limit"
    assert admits(("status",), folded("ſtatus"))
    assert required("ſtatus code") == ("tatus code",)
    assert required("ошибка сети") == ("ошибка сети",)
