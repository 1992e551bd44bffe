"""`capdoctor explain`: the cause of an error text someone pasted, the words that decided it, and what to do.

Contract: `explain(text)` runs the text through exactly the pipeline of `capdoctor logs` (scanner, engine,
findings, verdict), so both reach the same cause on the same text, and adds the evidence as the engine recorded
it (row, layer, strength, the deciding excerpt). `to_json` builds the `capdoctor/explain-v1` document;
`read_text` gets the text from the arguments or stdin. Everything that leaves here is redacted. No network, no
clock beyond the caller's, no printing (the view is `render/explain.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TextIO

from capdoctor.errors import UsageError
from capdoctor.model import NONE, NextStep, Strength, Verdict

SCHEMA = "capdoctor/explain-v1"
MAX_TEXT_BYTES = 16 * 1024 * 1024
"""A paste larger than this is a log: `capdoctor logs` streams it instead of holding it in memory."""
NONE_SUMMARY = "The text holds no error that capdoctor knows: nothing to explain."
NONE_STEPS = (
    NextStep("Paste the whole error, including the status line and the body the client printed."),
    NextStep("Scan the client's own logs around the time of the failure.", "capdoctor logs"),
)


class ExplainStage:
    """The identity of the explain results (what the verdict and the findings are attributed to)."""

    id = "explain"
    title = "Explain"
    stage = 0


@dataclass(frozen=True)
class Evidence:
    """One row that matched: which, the cause it names, the engine layer that decided, its weight, the words."""

    signature: str
    cause: str
    layer: str
    strength: str
    excerpt: str
    title: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one `evidence[]` entry."""
        return {k: v for k, v in vars(self).items() if k != "count"}


@dataclass(frozen=True)
class Explanation:
    """What `explain` found: the verdict (as `logs` reaches it) and the evidence behind it."""

    verdict: Verdict
    evidence: tuple[Evidence, ...]


def explain(text: str, now: datetime | None = None) -> Explanation:
    """Judge `text` as `capdoctor logs` would judge a file holding it, and collect the evidence."""
    from capdoctor.classifier.signatures import by_id
    from capdoctor.logscan.findings import logs_result
    from capdoctor.logscan.patterns import analyse
    from capdoctor.logscan.scanner import ScanOptions, scan_bytes
    from capdoctor.redact import redact_text
    from capdoctor.verdict.decision import decide

    result = scan_bytes(
        text.encode("utf-8", "replace"), name="<text>", options=ScanOptions(now=now or datetime.now(timezone.utc))
    )
    check = logs_result(result, analyse(result.events), stage=ExplainStage())
    verdict = decide([check])
    strengths = {f.data.get("signature"): f.strength for f in check.findings if "count" in f.data}
    rows = by_id()
    evidence = []
    for stat in sorted(result.stats.values(), key=lambda s: (-_rank(strengths.get(s.signature)), -s.count)):
        row = rows[stat.signature]
        evidence.append(
            Evidence(
                row.id,
                row.cause.value,
                row.layer.value,
                (strengths.get(stat.signature) or row.strength).value,
                redact_text(_words(stat.excerpt or stat.example, stat.example)),
                row.title,
                stat.count,
            )
        )
    if verdict.cause == NONE:
        verdict = Verdict(NONE, verdict.confidence, NONE_SUMMARY, verdict.ranking, (), NONE_STEPS)
    return Explanation(verdict, tuple(evidence))


def _words(excerpt: str, record: str) -> str:
    """The engine's excerpt with no half word at either end where it cut a word of `record` (an ellipsis marks
    each cut)."""
    at = record.find(excerpt)
    if at < 0 or not excerpt.strip():
        return excerpt
    end = at + len(excerpt)
    if end < len(record) and record[end].isalnum() and excerpt[-1].isalnum() and " " in excerpt:
        excerpt = excerpt[: excerpt.rfind(" ")].rstrip(" ,;:") + "…"
    if at > 0 and record[at - 1].isalnum() and excerpt[0].isalnum() and " " in excerpt:
        excerpt = "…" + excerpt[excerpt.find(" ") + 1 :]
    return excerpt


def _rank(strength: Strength | None) -> int:
    order = (Strength.STRONG, Strength.MODERATE, Strength.WEAK, Strength.CONTEXT)
    return len(order) - order.index(strength) if strength in order else 0


def to_json(expl: Explanation, version: str) -> dict[str, Any]:
    """The `capdoctor/explain-v1` document (redacted)."""
    from capdoctor.redact import redact

    v = expl.verdict
    doc = {
        "schema": SCHEMA,
        "version": version,
        "verdict": v.to_dict(),
        "evidence": [e.to_dict() for e in expl.evidence],
    }
    redacted: dict[str, Any] = redact(doc)
    return redacted


def read_text(args: Sequence[str], stdin: TextIO, stdin_is_tty: bool) -> str:
    """The text to explain: the arguments joined by spaces, or stdin for `-` (or no argument with a pipe).

    UsageError (one line, exit 2) when there is nothing to read, the text is empty, or it is too large.
    """
    if list(args) == ["-"] or (not args and not stdin_is_tty):
        text = stdin.read(MAX_TEXT_BYTES + 1)
        where = "stdin"
    elif not args:
        raise UsageError("no error text: pass it as an argument (quoted), or pipe it in: … | capdoctor explain")
    else:
        text = " ".join(args)
        where = "the arguments"
    if len(text.encode("utf-8", "replace")) > MAX_TEXT_BYTES:
        raise UsageError(
            f"the text on {where} is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB: scan it "
            "with `capdoctor logs FILE` instead"
        )
    if not text.strip():
        raise UsageError(f"the text on {where} is empty")
    return text
