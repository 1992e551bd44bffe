"""Benchmark of the log scanner against ripgrep and grep on the same generated file, in the same run.

Generates a realistic client log (default 1 GiB; `--size 64M` to shrink): access-log lines, JSON-lines
session events, debug chatter, with error lines from every signature row's examples (~110 signatures)
sprinkled in. Then it times `capdoctor`'s scan (in a child process, whose whole process tree's RSS is
sampled for the peak), `rg -c -i -F -f LITERALS` and `grep -c -i -F -f LITERALS` with the same literals,
and prints MB/s, peak RSS and the wall-time ratios. Not a test: nothing here asserts a timing.

    .venv/bin/python bench/logscan.py --size 1G
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NORMAL = (
    '{ts} INFO  http: POST https://api.openai.com/v1/responses -> 200 OK in {ms}ms (model=gpt-5.5, '
    'tokens={n})\n',
    '{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"agent_message","message":"Edited src/app/'
    'module_{n}.py: renamed helper and updated {ms} call sites"}}}}\n',
    '{ts} DEBUG tool: exec `pytest -q tests/test_mod{n}.py` exited 0 after {ms} ms\n',
    '{ts} INFO  session: turn {n} completed, input_tokens={ms} output_tokens={n}, cache hit ratio 0.{n}\n',
    '{ts} TRACE sse: event response.output_text.delta len={n}\n',
    '{ts} INFO  mcp: server filesystem listed {n} tools in {ms}ms\n',
    '{ts} DEBUG fs: watcher picked up change in docs/guide_{n}.md ({ms} bytes)\n',
    '{{"timestamp":"{ts}","type":"response_item","payload":{{"role":"assistant","content":"Here is the '
    'diff for file {n}; tests pass locally and the lint is clean."}}}}\n',
)


def parse_size(text: str) -> int:
    """`1G`, `64M`, `500K` or a byte count."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def error_lines() -> list[str]:
    """One line per example of every signature row: the errors a real log would contain."""
    from capdoctor.signatures import rows

    out = []
    for sig in rows():
        for ex in sig.examples:
            out.append(" ".join(ex.split()))
    return out


def generate(path: Path, size: int, seed: int = 7, error_every: int = 2000) -> tuple[int, int]:
    """Write the log; returns (lines, error lines)."""
    rng = random.Random(seed)
    errors = error_lines()
    lines = errs = 0
    written = 0
    t0 = 1764460800  # 2025-11-30T00:00:00Z
    with open(path, "w", encoding="utf-8") as fh:
        batch: list[str] = []
        while written < size:
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + lines // 50)) + f".{lines % 1000:03d}Z"
            if rng.randrange(error_every) == 0:
                line = f"{ts} ERROR {rng.choice(errors)}\n"
                errs += 1
            else:
                line = rng.choice(NORMAL).format(ts=ts, ms=rng.randrange(5, 9000), n=rng.randrange(1, 99999))
            batch.append(line)
            written += len(line.encode())
            lines += 1
            if len(batch) >= 10000:
                fh.write("".join(batch))
                batch.clear()
        fh.write("".join(batch))
    return lines, errs


SCAN_CHILD = r"""
import json, sys, time
from capdoctor.logscan import sources
from capdoctor.logscan.scanner import ScanOptions, scan
t0 = time.perf_counter()
srcs, _ = sources.expand([sys.argv[1]])
res = scan(srcs, ScanOptions(engine=sys.argv[2] or None))
wall = time.perf_counter() - t0
print(json.dumps({"wall": wall, "engine": res.engine, "records": len(res.events) + res.events_dropped,
                  "lines": sum(f.lines for f in res.files),
                  "signatures": len(res.stats), "matches": sum(s.count for s in res.stats.values())}))
"""


def run_sampled(cmd: list[str]) -> tuple[float, int, str]:
    """Run `cmd`, sampling the RSS of its whole process tree; returns (wall s, peak RSS bytes, stdout)."""
    import psutil

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in procs if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.05)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.strip()[:300]}")
    return wall, peak, out


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Wall time and stdout of `cmd` (exit 1 = 'no match' for grep tools is fine)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
    return time.perf_counter() - t0, proc.stdout.strip()


def main() -> None:
    """Generate, run the three scanners on the same file, print the comparison."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1G", help="log size, e.g. 1G, 256M (default 1G)")
    ap.add_argument("--path", default=None, help="where to write the log (default: a temp file, removed after)")
    ap.add_argument("--engine", default="", help="force the prefilter engine ('python' for the fallback)")
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    args = ap.parse_args()
    size = parse_size(args.size)
    tmpdir = Path(tempfile.mkdtemp(prefix="capdoctor-bench-"))
    path = Path(args.path) if args.path else tmpdir / "client.log"
    try:
        t0 = time.perf_counter()
        lines, errs = generate(path, size)
        real = path.stat().st_size
        print(f"generated {real / 1e6:.0f} MB, {lines} lines, {errs} error lines "
              f"({len(error_lines())} signature examples) in {time.perf_counter() - t0:.1f} s")
        from capdoctor.signatures import engine as classifier

        lits = tmpdir / "literals.txt"
        lits.write_text("\n".join(classifier().literals()) + "\n", encoding="utf-8")
        # Warm the page cache so every tool reads from memory, then measure in the same run.
        with open(path, "rb") as fh:
            while fh.read(1 << 24):
                pass
        wall, peak, out = run_sampled([sys.executable, "-c", SCAN_CHILD, str(path), args.engine])
        facts = json.loads(out)
        mbps = real / 1e6 / facts["wall"]
        print(f"capdoctor [{facts['engine']}]: {facts['wall']:.2f} s scan ({wall:.2f} s with start-up), "
              f"{mbps:.0f} MB/s, peak RSS {peak / 1e6:.0f} MB (process tree), "
              f"{facts['records']} error records, {facts['signatures']} signatures, lines {facts['lines']}")
        env = dict(os.environ, LC_ALL="C")
        if shutil.which("rg"):
            rg_wall, rg_out = timed(["rg", "-c", "-i", "-F", "-f", str(lits), str(path)], env)
            print(f"rg -c -i -F -f: {rg_wall:.2f} s, {rg_out} matching lines; "
                  f"capdoctor/rg wall-time ratio {facts['wall'] / rg_wall:.2f}")
        else:
            print("rg: not installed (apt-get install ripgrep) - no ripgrep ratio in this run")
        gr_wall, gr_out = timed(["grep", "-c", "-i", "-F", "-f", str(lits), str(path)], env)
        print(f"grep -c -i -F -f: {gr_wall:.2f} s, {gr_out} matching lines; "
              f"capdoctor/grep wall-time ratio {facts['wall'] / gr_wall:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(tmpdir, ignore_errors=True)
            if args.path and not args.keep:
                Path(args.path).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
