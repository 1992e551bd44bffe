"""Records that differ only in their digits' values (`Retry in 17s`, `Retry in 42s`) are judged alike exactly when
the engine would judge them alike: `digits.reads_digits` finds every pattern that tells digits apart, a pattern it
calls blind finds the same spans in both texts, and `Engine.reread` accepts a text only when `Engine.read` gives
it the same matches and status."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from capdoctor.classifier.digits import ZEROS, cannot_match, cover, reach, reads_digits
from capdoctor.classifier.signatures import engine as classifier
from capdoctor.classifier.signatures import rows
from capdoctor.classifier.structure import ASCII_BOUNDARY, ascii_words
from capdoctor.classifier.tables import Layer

CORPUS = Path(__file__).parents[1] / "data" / "corpus"
FLAGS = re.IGNORECASE | re.DOTALL


@pytest.mark.parametrize(
    "pattern",
    [
        r"\bretry in \d+s",
        r"[0-9a-f]{16}",
        r"[^0-9]x",
        r"[+-z]",
        r"\w+ \d{3}",
        ASCII_BOUNDARY,
        r"(?i:quota)\b",
        ".",
        r"(?>ab)\d",
    ],
)
def test_patterns_blind_to_digits(pattern: str) -> None:
    assert reads_digits(pattern, FLAGS) is False


@pytest.mark.parametrize(
    "pattern",
    [
        r"HTTP [45]\d\d",
        "error 1302",
        r"\x34",
        r"\N{DIGIT ONE}",
        r"(\w)\1",
        r"(?>a5)",
        r"(?P<a>x)(?P=a)",
        r"[1-9]",
        r"[^5]",
        "(a)?(?(1)b|c)",
    ],
)
def test_patterns_that_read_digits(pattern: str) -> None:
    assert reads_digits(pattern, FLAGS) is True


def _texts() -> list[str]:
    """Every row example and corpus text that has an ASCII digit in it."""
    out = [" ".join(ex.split()) for sig in rows() for ex in sig.examples]
    for half in ("tune", "tune2", "holdout"):
        for line in (CORPUS / f"{half}.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["text"])
    return [t for t in out if re.search("[0-9]", t)]


def _other_digits(text: str, rng: random.Random, keep: float) -> str:
    """`text` with each ASCII digit kept with probability `keep`, else replaced by a random digit."""
    return re.sub("[0-9]", lambda m: m.group(0) if rng.random() < keep else str(rng.randrange(10)), text)


def test_blind_patterns_find_the_same_spans_whatever_the_digits() -> None:
    """For every text with a digit and each row its literals trigger, every phrase, `also` and `unless` pattern
    that `reads_digits` calls blind finds the same spans in the text and in copies with other digits."""
    eng = classifier()
    rng = random.Random(11)
    checked = 0
    for text in _texts():
        rows_hit = {i for lit in eng.literal_ids(text) for kind, i in eng._units[lit] if kind == "row"}
        others = [_other_digits(text, rng, 0.0), _other_digits(text, rng, 0.5)]
        for i in rows_hit:
            sig = eng._text_rows[i]
            for p in (*sig.phrases, *sig.also, *sig.unless):
                if reads_digits(p, FLAGS):
                    continue
                rx = re.compile(ascii_words(p), FLAGS)
                spans = [m.span() for m in rx.finditer(text)]
                for other in others:
                    assert [m.span() for m in rx.finditer(other)] == spans, (p, text, other)
                checked += 1
    assert checked > 1000


def test_reread_accepts_exactly_what_read_would_find() -> None:
    """`reread` of a copy with other digits says yes only when `read` of the copy gives the same matches (rows,
    scores, order) and status, both ways round (the text judged first, or the copy); it says yes for most
    copies, and no for some (a status that changed: a 429 that became a 729)."""
    eng = classifier()
    rng = random.Random(5)
    accepted = refused = worded = 0
    for text in _texts():
        if "\\u" in text:
            continue
        ids = eng.literal_ids(text)
        found, hit, reading = eng.read(text, ids)
        if reading is None:
            continue
        for keep in (0.9, 0.5, 0.0):
            other = _other_digits(text, rng, keep)
            other_ids = eng.literal_ids(other)
            want, want_hit, other_reading = eng.read(other, other_ids)
            pairs = [(other, other_ids, reading, (found, hit), (want, want_hit))]
            if other_reading is not None:  # and the other way round: the copy judged first
                pairs.append((text, ids, other_reading, (want, want_hit), (found, hit)))
            for new, new_ids, old_reading, (old_found, old_hit), (new_found, new_hit) in pairs:
                same, reread_hit = eng.reread(new, new_ids, old_reading)
                if not same:
                    refused += 1
                    continue
                accepted += 1
                worded += any(m.signature.layer == Layer.WORDS for m in old_found)
                assert [(m.signature.id, m.score) for m in new_found] == [
                    (m.signature.id, m.score) for m in old_found
                ], new
                assert (new_hit and (new_hit.status, new_hit.spelling)) == (
                    old_hit and (old_hit.status, old_hit.spelling)
                )
                assert reread_hit == new_hit
    assert accepted > 2000 and refused > 200 and worded > 25, (accepted, refused, worded)


def test_words_layer_readings_only_where_no_known_token_reads_digits() -> None:
    """A text the words layer judged keeps a reading when the word model knows no token of its digits' shape (a
    timestamp's `T13` is no known token), and `reread` accepts it at another hour; where the model knows such a
    token (`gpt4`: `gpt5` would be another), the text keeps none."""
    eng = classifier()
    text = "2026-11-30T13:05:00Z ERROR access denied [seq 17]"
    found, _, reading = eng.read(text, eng.literal_ids(text))
    assert any(m.signature.layer == Layer.WORDS for m in found) and reading is not None
    later = text.replace("T13:05", "T21:47").replace("seq 17", "seq 90")
    assert eng.reread(later, eng.literal_ids(later), reading)[0] is True
    named = text.replace("[seq 17]", "on gpt4 [seq 17]")  # the same rows and words, and one known token more
    found, _, reading = eng.read(named, eng.literal_ids(named))
    assert any(m.signature.layer == Layer.WORDS for m in found) and reading is None


def test_words_layer_readings_only_where_the_vetoes_it_asks_were_read() -> None:
    """The words layer asks the `unless` patterns of every row the text's literals trigger, even one whose phrases
    did not match (so its own evaluation ran none): where such a pattern reads digits (a rate-limit header with
    requests left vetoes a rate reading), a digit decides whether the layer speaks, and the text keeps no reading."""
    eng = classifier()
    text = "2026-11-30T13:05:00Z ERROR usage exhausted for this period, xratelimit-remaining-tokens: 0 [seq 17]"
    found, _, reading = eng.read(text, eng.literal_ids(text))
    assert [m.signature.layer for m in found] == [Layer.WORDS] and reading is None
    left = text.replace("tokens: 0", "tokens: 5")
    assert eng.read(left, eng.literal_ids(left))[0] == []


def test_reread_reads_what_a_status_means_where_addresses_decide_it() -> None:
    """A 503 from a local server (`[::1]`, `0.0.0.0`) is the local server's, from another address the provider's:
    the texts differ only in a digit and hold the same literals, and `reread` refuses the one judged otherwise
    while accepting another port."""
    eng = classifier()
    for host, other in (("[::1]", "[::2]"), ("0.0.0.0", "0.0.0.1")):
        local = f"POST http://{host}:8000/v1/chat/completions returned 503 Service Unavailable"
        found, _, reading = eng.read(local, eng.literal_ids(local))
        assert reading is not None and "http.503.local" in [m.signature.id for m in found]
        remote = local.replace(host, other)
        assert eng.literal_ids(remote) == eng.literal_ids(local)
        assert "http.503.capacity" in [m.signature.id for m in eng.read(remote, eng.literal_ids(remote))[0]]
        assert eng.reread(remote, eng.literal_ids(remote), reading)[0] is False
        other_port = local.replace(":8000", ":8001")
        assert eng.reread(other_port, eng.literal_ids(other_port), reading)[0] is True


COVERED = [
    (r"error 42\b", "an error 42 here"),
    (r"HTTP [45]\d\d", "HTTP 503 x"),
    (r"code[:=] ?(?P<s>[1-5]\d\d)(?!\d)", "code: 429"),
    (r"[^5]x", "3x"),
    (r"[^0-4a]+y", "a59y"),
    (r"(?<!429 )too many", "503 too many"),
    (r"(?<![\d.])(?P<s>403) forbidden", "HTTP 403 forbidden"),
    (r"(?=\d*7)\d\d", "a 17 b"),
    (r"(?>a5|a\d0)x", "a5x"),
    (r"(?:a5)++0", "a5a50"),
    (r"(?P<q>[\"'])?status(?P=q)?: ?5\d\d", '"status": 503'),
    (r"(\d)\1", "x 33 y"),
    (r"x(?:1|2[0-4])*?y", "x1221y"),
    (r"os error (?:61|104|110)\b", "(os error 104)"),
    (r"\N{DIGIT ONE}0", "10 a"),
]


def _mutations(example: str, rng: random.Random) -> list[str]:
    """Copies of `example` with other digits, a character dropped, doubled or changed, a digit added."""
    out = []
    for _ in range(400):
        text = _other_digits(example, rng, rng.random())
        k = rng.randrange(len(text) + 1)
        change = rng.randrange(5)
        if change == 1 and k < len(text):
            text = text[:k] + text[k + 1 :]
        elif change == 2:
            text = text[:k] + rng.choice('0123456789 :.ax"') + text[k:]
        elif change == 3 and k < len(text):
            text = text[:k] + text[k] + text[k:]
        out.append(text)
    return out


@pytest.mark.parametrize(("pattern", "example"), COVERED)
def test_covers_match_wherever_their_patterns_do(pattern: str, example: str) -> None:
    """A pattern's cover (`digits.cover`) finds something in a text's shape (every ASCII digit read as `0`)
    wherever the pattern finds something in the text: copies of an example with other digits and small changes;
    and the cover is no match-all (a shape without the pattern's words is refused)."""
    rx = re.compile(pattern, FLAGS)
    made = cover(pattern, FLAGS)
    assert made is not None and rx.search(example) is not None
    matched = missed = 0
    for text in _mutations(example, random.Random(pattern)):
        found = rx.search(text)
        assert found is None or made.search(text.translate(ZEROS)) is not None, (pattern, text)
        matched += found is not None
        missed += found is None
    assert matched > 20 and missed > 20, (matched, missed)
    assert made.search("the words are elsewhere") is None


def test_no_cover_for_a_conditional_group() -> None:
    """A conditional group may match in fewer ways once what it tests is widened: no cover is made, and nothing
    is said to be out of reach (`cannot_match`)."""
    rx = re.compile(r"(5)?(?(1)x|y)", FLAGS)
    assert cover(rx.pattern, rx.flags) is None
    assert cannot_match(rx, "") is False


def _engine_digit_patterns() -> list[re.Pattern[str]]:
    """Every pattern of the tables that reads digits: rows, status names and spellings."""
    eng = classifier()
    eng.compile_all()
    patterns: set[re.Pattern[str]] = set()
    for i in range(len(eng._text_rows)):
        c = eng._row(i)
        patterns.update(rx for alt in (c.phrase, c.unless) if alt is not None for _, rx in alt.parts)
        patterns.update(rx for rx in (c.token_re, *c.also_re) if rx is not None)
    patterns.update(rx for i in range(len(eng._names)) if (rx := eng._name_re(i)) is not None)
    patterns.update(eng.reader.pattern(i) for i in range(len(eng.reader.spellings)))
    return sorted((rx for rx in patterns if reads_digits(rx.pattern, rx.flags)), key=lambda rx: rx.pattern)


def test_every_engine_pattern_that_reads_digits_has_a_sound_cover() -> None:
    """Every pattern of the tables that reads digits (rows, status names and spellings) has a cover, and for every
    corpus text and copies with other digits (statuses planted among them) the cover finds something in the
    copy's shape wherever the pattern finds something in the copy; most of them find nothing in most shapes."""
    reading = _engine_digit_patterns()
    assert len(reading) > 100
    covers = [(rx, cover(rx.pattern, rx.flags)) for rx in reading]
    assert all(made is not None for _, made in covers), [rx.pattern for rx, made in covers if made is None]
    rng = random.Random(3)
    checked = out_of_reach = 0
    for text in _texts()[::3]:
        for copy in (
            text,
            _other_digits(text, rng, 0.0),
            re.sub("[0-9]{3}", lambda _: rng.choice(("429", "503", "401")), text),
        ):
            shape = copy.translate(ZEROS)
            for rx, made in covers:
                assert made is not None
                if made.search(shape) is None:
                    out_of_reach += 1
                    assert rx.search(copy) is None, (rx.pattern, copy)
                checked += 1
    assert out_of_reach > checked // 2, (out_of_reach, checked)


def _found(rx: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in rx.finditer(text)]


@pytest.mark.parametrize(
    ("pattern", "shape", "want"),
    [
        (r"(?<=a)b\b(?=cd)x{2,5}", None, (6, 1)),  # a lookbehind reads before, a lookahead and `\b` after
        (r"abc", None, (3, 0)),
        (r"a\d+", None, (None, 0)),  # an unbounded repeat
        (r"a\d+", "a0000 b 00", (5, 0)),  # ... of one character: at most its longest run in the shape
        (r"x\s*[:=]\s*y", "x  :   y", (9, 0)),
        (r"[45]+", "x 000 y", (3, 0)),  # (widened: a digit where it takes one takes any)
        (r"(?P<q>[\"'])? ?(?:(?P=q))?", None, (3, 0)),  # a backreference: at most its group's width
        (r"(?:ab)+", "abab", (None, 0)),  # an unbounded repeat of more than one character: no bound
        (r"(?i:[a-z])+", "ABC", (None, 0)),
    ],
)
def test_reach(pattern: str, shape: str | None, want: tuple[int | None, int | None]) -> None:
    """How far a match may read from where it starts (`reach`): what it consumes, its lookarounds and `\\b`."""
    assert reach(pattern, 0, shape) == want


@pytest.mark.parametrize(
    ("pattern", "text", "span", "want"),
    [
        (r"HTTP [45]\d\d", "HTTP 502 bad gateway [seq 1234]", (26, 30), True),  # read elsewhere
        (r"HTTP [45]\d\d", "HTTP 502 bad gateway [seq 1234]", (5, 8), False),  # the status itself
        (r"(?<=seq )\d+", "HTTP 502 bad gateway [seq 1234]", (26, 30), False),
        (r"gateway(?= \[seq 1)", "HTTP 502 bad gateway [seq 1234]", (26, 30), False),  # a lookahead reads it
        (r"code\s*:\s*[45]\d\d", "code :  502 [seq 1234]", (17, 21), True),
        (r"code.*[45]\d\d", "code 502 [seq 1234]", (14, 18), False),  # `.*` may run on into the span
        (r"11434", "error decoding body [seq 11435]", (25, 30), False),  # the sequence may be Ollama's port
        # a model name before the span: its run of name characters ends at the space (`reach` alone bounds the
        # repeat by the longest such run anywhere, here the path, and gave no answer)
        (r"gpt-[\w.:-]*\w", "/srv/models/cache/x.gguf: gpt-4o busy [seq 1234]", (43, 47), True),
        (r"gpt-[\w.:-]*\w", "/srv/models/cache/x.gguf: gpt-4o-1234 busy", (33, 37), False),  # run into it
        (r"busy\w*(?=\D{0,8}9)", "/srv/models/cache/x.gguf: busy [seq 1234]", (36, 40), False),  # lookahead
        (r"busy\w*(?=\D{0,3}9)", "/srv/models/cache/x.gguf: busy [seq 1234]", (36, 40), True),
    ],
)
def test_cannot_match_in_a_span(pattern: str, text: str, span: tuple[int, int], want: bool) -> None:
    """`cannot_match` with a span: whether no match of the pattern in any text of the shape reads a character of
    the span (then the pattern finds the same in every text of the shape differing only there)."""
    rx = re.compile(pattern, FLAGS)
    assert text[span[0] : span[1]].isdigit()
    assert cannot_match(rx, text.translate(ZEROS), span) is want


def test_patterns_find_the_same_where_only_a_span_they_cannot_reach_differs() -> None:
    """For every pattern of the tables that reads digits, every text with a digit (each with a sequence number
    after it) and each of its digit runs: where `cannot_match` says no match can read the run, copies of the text
    with other digits there (statuses, ports and error codes planted among them) give the pattern the same
    matches, spans and groups, one after another (`finditer`); and it says so of many runs where the pattern does
    match, elsewhere in the text."""
    rng = random.Random(29)
    patterns = _engine_digit_patterns()
    covers = [(rx, cover(rx.pattern, rx.flags)) for rx in patterns]
    checked = matched_elsewhere = refused = 0
    for body in _texts()[::4]:
        text = f"{body} [seq {rng.randrange(10**5)}]"
        shape = text.translate(ZEROS)
        runs = [m.span() for m in re.finditer("[0-9]+", text)]
        live = [rx for rx, made in covers if made is not None and made.search(shape) is not None]
        for span in runs:
            width = span[1] - span[0]
            for rx in live:
                if not cannot_match(rx, shape, span):
                    refused += 1
                    continue
                want = _found(rx, text)
                matched_elsewhere += bool(want)
                for planted in ("429", "503", "11434", "1302", str(rng.randrange(10**width))):
                    value = (planted * width)[:width] if len(planted) < width else planted[:width]
                    copy = text[: span[0]] + value + text[span[1] :]
                    assert _found(rx, copy) == want, (rx.pattern, text, copy)
                    checked += 1
    assert checked > 5000 and matched_elsewhere > 200 and refused > 100, (checked, matched_elsewhere, refused)
