"""How often ordinary log lines become prefilter candidates, and how much one candidate costs the engine.

    .venv/bin/python bench/candidate_rate.py [--lines 20000]

Generates ordinary lines — client logs (bench/logscan.py's background) and the lines incident-time logs are
full of: access lines with 404s, words such as "account", "proxy", "daily", "token", "model", "timeout" — and
prints, for the engine's prefilter literals, the share of lines selected as candidates, the share the engine
then judges as an error (should be 0), and the mean classification time per candidate. With `--base REF` it
prints the same for the literal table of a git ref (e.g. `main`) for comparison. A benchmark, not a test:
nothing asserts a time.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from logscan import NORMAL

ORDINARY = (
    '{ip} - - [30/Nov/2026:10:{m:02d}:00 +0000] "GET /static/app.{n}.js HTTP/1.1" 404 153 "-" "Mozilla/5.0"\n',
    'INFO:     {ip}:5{n:04d} - "GET /v1/models HTTP/1.1" 404 Not Found\n',
    '{{"level":"info","ts":"2026-11-30T10:{m:02d}:00Z","method":"POST","path":"/v1/chat/completions",'
    '"status":200,"duration_ms":{ms},"model":"gpt-5.5","tokens":{n}}}\n',
    "2026-11-30T10:{m:02d}:00Z INFO  account {n}: daily usage report sent ({ms} requests, 0 errors)\n",
    "2026-11-30T10:{m:02d}:00Z DEBUG proxy: using HTTPS_PROXY from the environment for api.openai.com\n",
    "2026-11-30T10:{m:02d}:00Z INFO  token refresh scheduled in {ms} s; model list cached ({n} models)\n",
    "2026-11-30T10:{m:02d}:00Z DEBUG connection pool: {n} idle connections, timeout={ms}ms, keepalive on\n",
    "method=GET path=/health status=200 duration={ms}ms request_id=req_{n}\n",
    "2026-11-30T10:{m:02d}:00Z INFO  retrying in 2s (attempt 1/5) after a slow first byte\n",
    "2026-11-30T10:{m:02d}:00Z INFO  session {n}: user switched model to claude-sonnet-4-5; cache hit 0.{n}\n",
)


def lines(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    pool = NORMAL + ORDINARY
    out = []
    for i in range(n):
        out.append(
            rng.choice(pool).format(
                ts="2026-11-30T10:00:00Z",
                ms=rng.randrange(5, 9000),
                n=rng.randrange(1, 99999),
                m=i % 60,
                ip=f"10.0.{rng.randrange(255)}.{rng.randrange(255)}",
            )
        )
    return out


def base_literals(ref: str) -> list[str]:
    """The prefilter literals of the flat signature table at `ref` (before the layered engine)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    text = subprocess.run(
        ["git", "show", f"{ref}:src/capdoctor/signatures.toml"], capture_output=True, text=True, check=True
    ).stdout
    rows = tomllib.loads(text)["signature"]
    return sorted({str(x).lower() for r in rows for x in (*r.get("literals", ()), *r.get("codes", ()))})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--base", help="also measure the literal table of this git ref (e.g. main)")
    args = parser.parse_args()
    from capdoctor.signatures import engine

    eng = engine()
    sample = lines(args.lines)
    lits = eng.literals()
    candidates = [ln for ln in sample if eng.literal_ids(ln)]
    t0 = time.perf_counter()
    judged = sum(bool(eng.classify(ln, origin="log")) for ln in candidates)
    per = (time.perf_counter() - t0) / max(1, len(candidates)) * 1e6
    print(
        f"engine: {len(lits)} literals; {len(candidates)}/{len(sample)} ordinary lines are candidates "
        f"({len(candidates) / len(sample):.1%}); judged as errors: {judged}; {per:.0f} µs per candidate "
        "(literal search + classification)"
    )
    if args.base:
        old = base_literals(args.base)
        hits = sum(any(lit in ln.lower() for lit in old) for ln in sample)
        print(
            f"{args.base}: {len(old)} literals; {hits}/{len(sample)} ordinary lines are candidates "
            f"({hits / len(sample):.1%})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
