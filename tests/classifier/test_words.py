"""The words layer: its model comes only from the tuning material, it speaks last, and only on an error."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from capdoctor.classifier.signatures import classify
from capdoctor.classifier.tables import Layer, load
from capdoctor.classifier.words import CAUSES, WordModel, from_document, model, tokens
from capdoctor.logscan.explain import explain, to_json
from capdoctor.logscan.scanner import scan_bytes
from tests.support.scripts import load_script


def _trainer() -> ModuleType:
    return load_script("tests/data/corpus/train_words.py")


def test_the_packaged_counts_are_what_the_tuning_sets_give() -> None:
    """words.json is generated, never edited: recounting the training files gives it byte for byte."""
    trainer = _trainer()
    assert "holdout" not in trainer.TRAINING  # the held-out half is only ever scored
    assert trainer.render(trainer.document()) == trainer.OUT.read_text("utf-8")


def test_the_held_out_half_leaves_no_trace_in_the_counts() -> None:
    """Every kept token is in at least two training excerpts: a held-out-only word can't be in the model."""
    trainer = _trainer()
    doc = json.loads(trainer.OUT.read_text("utf-8"))
    training = [tokens(item["text"]) for item in trainer.excerpts()]
    for tok in list(doc["counts"])[::25]:
        assert sum(tok in toks for toks in training) >= 2, tok
    assert doc["docs"] == {c: sum(1 for i in trainer.excerpts() if i["label"] == c) for c in CAUSES}


def test_tokens_split_names_and_chinese() -> None:
    assert {"rate", "limit", "error"} <= tokens("openai.RateLimitError: slow down")
    assert {"显存", "存不", "不足"} <= tokens("报错：显存不足")
    assert "a1b2c3d4e5f6" not in tokens("request a1b2c3d4e5f6 failed")  # ids say nothing of a cause
    assert tokens("ok to go") == frozenset()  # short words are dropped


def test_a_spread_reading_says_nothing() -> None:
    """Below the threshold the words name no cause: two causes with the same vocabulary stay undecided."""
    counts = {"slow": [5, 5, 0, 0, 0, 0], "key": [0, 0, 10, 0, 0, 0]}
    m = WordModel(dict.fromkeys(CAUSES, 10), counts, alpha=0.5, threshold=0.8)
    assert m.judge("slow slow") is None
    said = m.judge("bad key")
    assert said is not None and said.cause == "account" and said.words == ("key",)
    assert m.judge("nothing known here") is None
    faint = WordModel(
        dict.fromkeys(CAUSES, 10), {f"w{i}x": [3, 2, 2, 2, 2, 2] for i in range(30)}, alpha=0.5, threshold=0.8
    )
    text = " ".join(f"w{i}x" for i in range(30))
    assert max(faint.scores(text)[0]) == faint.scores(text)[0][0]  # thirty faint leanings to capacity add up…
    assert faint.judge(text) is None  # …to no word a reader could check: no reading


def test_a_malformed_document_is_refused() -> None:
    with pytest.raises(ValueError, match="causes"):
        from_document({"causes": ["capacity"], "docs": {}, "counts": {}}, alpha=0.5, threshold=0.8)
    with pytest.raises(ValueError, match="numbers"):
        from_document({"causes": list(CAUSES), "docs": {}, "counts": {"x": [1]}}, alpha=0.5, threshold=0.8)


def test_words_rows_are_never_strong_and_one_per_cause() -> None:
    words = load().words
    assert words is not None and set(words.rows) == set(CAUSES)
    assert all(sig.layer is Layer.WORDS and sig.strength.value in ("weak", "moderate") for sig in words.rows.values())
    assert words.rows["capacity"].strength.value == "weak"  # vocabulary alone never names capacity
    assert len(model(words.alpha, words.threshold, words.min_tokens)) > 500


@pytest.mark.parametrize(
    "text, cause",
    [
        ("Error: the tool definition for 'search' is malformed: parameters must declare a properties object", "client"),
        ("failed to start: upgrade the cli, this version of the client is no longer supported", "client"),
    ],
)
def test_wording_no_row_knows_is_read_by_its_words(text: str, cause: str) -> None:
    found = classify(text, origin="log")
    assert [m.signature.id for m in found] == [f"words.{cause}"]
    assert found[0].excerpt.startswith("words: ")
    expl = explain(text)
    assert expl.verdict.cause == cause
    assert to_json(expl, "x")["evidence"][0]["layer"] == "words"


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30T10:00:00Z INFO account settings loaded; proxy disabled; daily summary sent",
        "    at isRateLimitError (retry.js:12:7)",
        'INFO:     10.0.0.1:5000 - "GET /v1/models HTTP/1.1" 404 Not Found',
        '{"level":"debug","msg":"tool schema properties validated for the client"}',
        '{"type":"agent_message","message":"Edited src/app/module_11434.py: renamed helper, updated 7001 call sites"}',
    ],
)
def test_chatter_is_not_read_as_an_error(text: str) -> None:
    """A record logged at INFO/DEBUG, a stack frame, an access line or a line whose only literal is a number
    (Ollama's port inside a file name) is no error, whatever its words."""
    assert classify(text, origin="log") == []
    assert not scan_bytes(text.encode()).stats


def test_a_row_that_reads_the_text_speaks_before_the_words() -> None:
    """The words are the last word: a moderate row of another layer leaves them out of the record."""
    found = classify("Error code: 429 - rate limit exceeded for this tool schema", origin="log")
    assert found and all(m.layer is not Layer.WORDS for m in found)


def test_in_a_log_the_rows_outrank_the_words_of_other_records() -> None:
    """A words reading in one record is context when a row of moderate strength spoke in another."""
    text = (
        "2026-11-30T10:00:00Z ERROR upstream: connection reset by peer\n"
        "2026-11-30T10:00:01Z ERROR failed: the tool definition for 'search' is malformed: parameters must "
        "declare a properties object\n"
    )
    expl = explain(text)
    assert expl.verdict.cause == "network"
    words = [e for e in expl.evidence if e.layer == "words"]
    assert words and all(e.strength == "context" for e in words)


def test_error_marks_are_what_error_words_miss() -> None:
    """Exception class names, failure negations and shortages mark an error (`words.toml` error_marks), so a
    record with none of the status layer's error words can still be read; ordinary prose is not marked."""
    from capdoctor.classifier.signatures import engine

    marked = engine()._error_marked  # the gate's own predicate, tested alone
    for text in ("TypeError: terminated", "ServiceUnavailableException", "the model does not exist", "余额不足"):
        assert marked(text), text
    for text in ("Edited module_11434.py", "renamed helper and updated call sites", "ErrorBoundary rendered"):
        assert not marked(text), text
    found = classify("InsufficientUserQuota: the allowance for this user is used up for today", origin="log")
    assert [m.signature.cause.value for m in found] == ["quota"] and found[0].layer is Layer.WORDS
