"""The words layer: the last, weakest reading of an error text, for wording that no row of the tables knows.

Why it exists: the hand-written rows of the other layers, scored on real excerpts nobody here had seen, stayed
right about four times in five, and most misses were "no problem found": wording that names its cause plainly
("Invalid schema for function", "爆显存") in words no row was written for. Across the labelled excerpts each
cause has its vocabulary, so this layer is a naive Bayes model over word tokens, counted from the labelled
tuning sets only (`words.json`, from `tests/data/corpus/train_words.py`; the held-out half is never read).

Contract: `model()` loads the counts once. `WordModel.judge(text)` returns the cause, its posterior and the
tokens that pushed most towards it, or None when no cause reaches `threshold` or no token is known. The engine
consults it only as the last word, for an error text nothing (or only something weak) read; its rows are never
strong and its layer is the least specific, so any row of another layer speaks first. Pure after the load.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from capdoctor.model import Cause

CAUSES = tuple(c.value for c in Cause)
"""The causes the model can name, in the order of the count vectors in `words.json`."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+|[\u3040-\u30ff\u4e00-\u9fff]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_HEXISH = re.compile(r"[0-9a-f]*\d[0-9a-f]*")
SHOWN_PULL = 0.5
"""A token decides (and is shown) when it is at least e**0.5 (~1.6) times as likely under the cause as under any
other: "the" and "error" count a little everywhere and explain nothing to a reader."""
MIN_CHARS = 3
MAX_CHARS = 24


def tokens(text: str) -> frozenset[str]:
    """The distinct word tokens of `text`: ASCII words split at `_` and camelCase (`RateLimitError` is
    rate, limit, error), lower-case, 3 to 24 characters, hex-like ids dropped; CJK runs as character pairs
    (Chinese has no spaces: `显存不足` gives 显存, 存不, 不足). Presence counts, not frequency: a stack trace
    repeating one word must not outvote the message."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        if word[0] >= "\u3040":
            out.update(word[i : i + 2] for i in range(max(1, len(word) - 1)))
            continue
        for seg in word.split("_"):
            for part in _CAMEL.sub(" ", seg).split():
                low = part.lower()
                if MIN_CHARS <= len(low) <= MAX_CHARS and not _HEXISH.fullmatch(low):
                    out.add(low)
    return frozenset(out)


@dataclass(frozen=True)
class WordVerdict:
    """What the words say: the cause, how sure the model is (posterior, 0..1) and the deciding tokens."""

    cause: str
    posterior: float
    words: tuple[str, ...]


class WordModel:
    """Token counts per cause (how many labelled excerpts of each cause contain the token) and the numbers
    of excerpts per cause: a naive Bayes model over token presence, with additive smoothing `alpha`."""

    def __init__(
        self,
        docs: Mapping[str, int],
        counts: Mapping[str, Sequence[int]],
        *,
        alpha: float,
        threshold: float,
        min_tokens: int = 1,
    ) -> None:
        self.threshold = threshold
        self.min_tokens = min_tokens
        n = sum(docs.values())
        self._prior = tuple(math.log((docs.get(c, 0) + 1) / (n + len(CAUSES))) for c in CAUSES)
        denominators = tuple(docs.get(c, 0) + 2 * alpha for c in CAUSES)
        self._logp: dict[str, tuple[float, ...]] = {
            tok: tuple(math.log((k + alpha) / d) for k, d in zip(row, denominators, strict=True))
            for tok, row in counts.items()
        }

    def __len__(self) -> int:
        return len(self._logp)

    def scores(self, text: str) -> tuple[list[float], list[str]]:
        """The log score of each cause (CAUSES order) and the known tokens of `text`."""
        known = sorted(t for t in tokens(text) if t in self._logp)
        scores = list(self._prior)
        for tok in known:
            for i, lp in enumerate(self._logp[tok]):
                scores[i] += lp
        return scores, known

    def judge(self, text: str) -> WordVerdict | None:
        """The cause the words of `text` lean towards, when its posterior reaches the threshold and some word
        leans towards it clearly (`SHOWN_PULL`: the evidence shown is what decided); else None."""
        scores, known = self.scores(text)
        if len(known) < self.min_tokens:
            return None
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        best = max(range(len(CAUSES)), key=lambda i: scores[i])
        posterior = weights[best] / sum(weights)
        if posterior < self.threshold:
            return None

        def pull(tok: str) -> float:  # how much more likely the token is under the cause than under the next
            lp = self._logp[tok]
            return lp[best] - max(v for i, v in enumerate(lp) if i != best)

        deciding = sorted((t for t in known if pull(t) >= SHOWN_PULL), key=lambda t: (-pull(t), t))[:5]
        if not deciding:  # many faint leanings add up to nothing a reader could check: no reading
            return None
        return WordVerdict(CAUSES[best], posterior, tuple(deciding))


def from_document(doc: Mapping[str, object], *, alpha: float, threshold: float, min_tokens: int = 1) -> WordModel:
    """A model from the `words.json` document (`causes`, `docs`, `counts`); a mismatch is a ValueError."""
    causes = doc.get("causes")
    if not isinstance(causes, list) or tuple(causes) != CAUSES:
        raise ValueError(f"words.json: causes must be {list(CAUSES)}")
    docs = doc.get("docs")
    counts = doc.get("counts")
    if not isinstance(docs, dict) or not isinstance(counts, dict):
        raise ValueError("words.json: docs and counts must be objects")
    if any(not isinstance(v, list) or len(v) != len(CAUSES) for v in counts.values()):
        raise ValueError(f"words.json: every count row must have {len(CAUSES)} numbers")
    return WordModel(docs, counts, alpha=alpha, threshold=threshold, min_tokens=min_tokens)


@lru_cache(maxsize=1)
def model(alpha: float, threshold: float, min_tokens: int) -> WordModel:
    """The packaged model (the counts in `words.json`) with the settings of `words.toml` (declared there only),
    loaded once per process on first use."""
    text = resources.files("capdoctor.classifier").joinpath("words.json").read_text("utf-8")
    return from_document(json.loads(text), alpha=alpha, threshold=threshold, min_tokens=min_tokens)
