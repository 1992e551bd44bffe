"""Combine the corpus parts, validate, dedupe and split them (stratified by label) into tune/holdout."""
import hashlib, json, re, sys
from collections import Counter
from pathlib import Path

LABELS = {"capacity", "quota", "account", "network", "hardware", "client"}
excluded = {l.strip().lower() for l in Path("/work/corpus/excluded-repos.txt").read_text().splitlines() if l.strip()}
excluded |= {"ggerganov/llama.cpp"}
rows, seen = [], set()
for part in sys.argv[2:]:
    for n, line in enumerate(Path(part).read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        repo = (r.get("source") or "").split("#")[0].lower()
        m = re.match(r"https://github\.com/([^/]+/[^/]+)", r.get("url") or "")
        if m:
            repo = m.group(1).lower()
        if repo in excluded:
            print("drop excluded", r["id"], repo); continue
        if r["label"] not in LABELS:
            print("drop label", r["id"], r["label"]); continue
        key = " ".join(r["text"].lower().split())
        if key in seen:
            print("drop dup", r["id"]); continue
        seen.add(key)
        rows.append(r)
by = {}
for r in rows:
    by.setdefault(r["label"], []).append(r)
tune, hold = [], []
for label, items in sorted(by.items()):
    items.sort(key=lambda r: hashlib.sha256(("capdoctor-corpus-v1:" + r["id"]).encode()).hexdigest())
    for i, r in enumerate(items):
        (tune if i % 2 == 0 else hold).append(r)
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
for name, part in (("tune", tune), ("holdout", hold)):
    part.sort(key=lambda r: r["id"])
    (out / f"{name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), "utf-8")
    print(name, len(part), dict(Counter(r["label"] for r in part)), "decidable", sum(bool(r.get("decidable", True)) for r in part))
