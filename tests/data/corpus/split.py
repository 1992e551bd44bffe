"""How the out-of-sample corpus was split, kept for provenance: combine the collected parts, drop rows from
excluded repositories and duplicate texts, then split stratified by label into tune/holdout.

Usage: python split.py OUT_DIR PART.jsonl [PART.jsonl ...]. The order inside each label is a salted SHA-256 of
the row id, so the split depends on nothing a tuner could see; rows alternate between the halves.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

LABELS = {"capacity", "quota", "account", "network", "hardware", "client"}
SALT = "capdoctor-corpus-v1:"
HERE = Path(__file__).resolve().parent


def _repo(row: dict[str, Any]) -> str:
    m = re.match(r"https://github\.com/([^/]+/[^/]+)", row.get("url") or "")
    return m.group(1).lower() if m else (row.get("source") or "").split("#")[0].lower()


def load(parts: list[str]) -> list[dict[str, Any]]:
    """Every usable row of `parts`: label known, repository not excluded, text not seen before."""
    excluded = {ln.strip().lower() for ln in (HERE / "excluded-repos.txt").read_text().splitlines() if ln.strip()}
    excluded.add("ggerganov/llama.cpp")  # the old name of the excluded ggml-org/llama.cpp
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for part in parts:
        for line in Path(part).read_text("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            key = " ".join(row["text"].lower().split())
            if _repo(row) in excluded or row["label"] not in LABELS or key in seen:
                print("dropped", row["id"])
                continue
            seen.add(key)
            rows.append(row)
    return rows


def split(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tune, holdout): per label, rows ordered by the salted hash of their id, alternating."""
    tune: list[dict[str, Any]] = []
    hold: list[dict[str, Any]] = []
    for label in sorted(LABELS):
        items = sorted(
            (r for r in rows if r["label"] == label),
            key=lambda r: hashlib.sha256((SALT + r["id"]).encode()).hexdigest(),
        )
        for i, row in enumerate(items):
            (tune if i % 2 == 0 else hold).append(row)
    return tune, hold


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    tune, hold = split(load(argv[1:]))
    for name, part in (("tune", tune), ("holdout", hold)):
        part.sort(key=lambda r: r["id"])
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part)
        (out / f"{name}.jsonl").write_text(text, "utf-8")
        labels = dict(Counter(r["label"] for r in part))
        print(name, len(part), labels, "decidable", sum(bool(r.get("decidable", True)) for r in part))


if __name__ == "__main__":
    main(sys.argv[1:])
