"""Benchmark of `capdoctor logs` against ripgrep and grep on the same generated files, in one run.

For each error density — none, 1 line in 10,000, 1 in 100 (256 MiB each by default) and 1 in 10 (a quarter of
that: 64 MiB) — it writes a client log whose ordinary lines are full of the words incident-time logs carry
(account, proxy, daily, 404, retry, token, timeout; `bench/candidate_rate.py`'s lines), with an error line from
some signature row's examples at that density, plus two variants at 1 in 100: "unique text", whose error lines all
differ (a number in each), where the scanner's memo cannot help, and "burst", whose error lines all fall in the
file's second half, as an incident's do (a worker given a fixed half would do all of their work). For each file
it times the whole `capdoctor logs FILE --json` command (start-up included),
`rg -c -i -F -f LITERALS` and `grep -c -i -F -f LITERALS` with the engine's own prefilter literals (the three
in turn, `--repeat` rounds, the best of each counted: a VM whose speed drifts affects all three alike; each timed
alone, nothing else running), and prints
MB/s, the cost per candidate line (wall time less start-up, over the lines holding a literal: the scan of the
whole file included), the memory and the two wall-time ratios. It checks that every planted error line
was counted (exactly: the engine judges each planted line once, the scan must count the same number), and exits
1 when a ratio misses its target (capdoctor/rg <= 1.0 up to 1 in 100, <= 1.5 at 1 in 10, memory <= 150 MB) or
a count is wrong. Memory is the process tree's peak PSS (forked workers share the parent's pages: PSS counts
them once; the RSS sum, which counts them in every process, is shown beside it), sampled every 20 ms in a run of
its own after the timed rounds: reading `/proc/PID/smaps` of every process that often takes CPU time the scan
would otherwise have (~0.2 s of a 1.3 s run on two cores), so a sampled run is not a timed one (its wall time is
shown too). `--huge` also scans a 1 GB line without a newline once (bounded memory). Not a test: nothing in the
test suite asserts a timing.

    .venv/bin/python bench/logscan.py [--size 256M] [--huge] [--out bench/out/logscan.txt]
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
from typing import Any

NORMAL = (
    "{ts} INFO  http: POST https://api.openai.com/v1/responses -> 200 OK in {ms}ms (model=gpt-5.5, tokens={n})\n",
    '{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"agent_message","message":"Edited src/app/'
    'module_{n}.py: renamed helper and updated {ms} call sites"}}}}\n',
    "{ts} DEBUG tool: exec `pytest -q tests/test_mod{n}.py` exited 0 after {ms} ms\n",
    "{ts} INFO  session: turn {n} completed, input_tokens={ms} output_tokens={n}, cache hit ratio 0.{n}\n",
    "{ts} TRACE sse: event response.output_text.delta len={n}\n",
    "{ts} INFO  mcp: server filesystem listed {n} tools in {ms}ms\n",
    "{ts} DEBUG fs: watcher picked up change in docs/guide_{n}.md ({ms} bytes)\n",
    '{{"timestamp":"{ts}","type":"response_item","payload":{{"role":"assistant","content":"Here is the '
    'diff for file {n}; tests pass locally and the lint is clean."}}}}\n',
)
ORDINARY = (
    '{ip} - - [30/Nov/2026:10:{m:02d}:00 +0000] "GET /static/app.{n}.js HTTP/1.1" 404 153 "-" "Mozilla/5.0"\n',
    'INFO:     {ip}:{port} - "GET /v1/models HTTP/1.1" 404 Not Found\n',
    '{{"level":"info","ts":"{ts}","method":"POST","path":"/v1/chat/completions",'
    '"status":200,"duration_ms":{ms},"model":"gpt-5.5","tokens":{n}}}\n',
    "{ts} INFO  account {n}: daily usage report sent ({ms} requests, 0 errors)\n",
    "{ts} DEBUG proxy: using HTTPS_PROXY from the environment for api.openai.com\n",
    "{ts} INFO  token refresh scheduled in {ms} s; model list cached ({n} models)\n",
    "{ts} DEBUG connection pool: {n} idle connections, timeout={ms}ms, keepalive on\n",
    "method=GET path=/health status=200 duration={ms}ms request_id=req_{n}\n",
    "{ts} INFO  retrying in 2s (attempt 1/5) after a slow first byte\n",
    "{ts} INFO  session {n}: user switched model to claude-sonnet-4-5; cache hit 0.{n}\n",
)
"""Ordinary lines full of the words incident-time logs carry (404s, account, daily, proxy, token, retry): none
is an error, some contain prefilter literals."""


def parse_size(text: str) -> int:
    """`1G`, `64M`, `500K` or a byte count."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def error_lines() -> list[str]:
    """One line per example of every signature row that the engine judges an error as a log line."""
    from capdoctor.classifier.signatures import classify, rows

    out = []
    for sig in rows():
        for ex in sig.examples:
            line = " ".join(ex.split())
            if classify(f"2025-11-30T00:00:00.000Z ERROR {line}", origin="log"):
                out.append(line)
    return out


def ordinary(rng: random.Random, ts: str, i: int) -> str:
    """One ordinary line (NORMAL and ORDINARY alike)."""
    return rng.choice(NORMAL + ORDINARY).format(
        ts=ts,
        ms=rng.randrange(5, 9000),
        n=rng.randrange(1, 99999),
        m=i % 60,
        ip=f"10.0.{rng.randrange(255)}.{rng.randrange(255)}",
        port=rng.randrange(1024, 65536),
    )


def generate(
    path: Path, size: int, error_every: int | None, unique: bool = False, burst: bool = False, seed: int = 7
) -> tuple[int, int]:
    """Write a log of about `size` bytes with one error line in `error_every` (None: none); returns (lines,
    error lines). `unique`: every error line carries its own sequence number, so no two are the same text.
    `burst`: the errors come as an incident's do, all in the second half, twice as dense there."""
    rng = random.Random(seed)
    errors = error_lines()
    lines = errs = written = 0
    t0 = 1764460800  # 2025-11-30T00:00:00Z
    with open(path, "w", encoding="utf-8") as fh:
        batch: list[str] = []
        while written < size:
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + lines // 50)) + f".{lines % 1000:03d}Z"
            every = error_every // 2 if error_every and burst else error_every
            if every and (not burst or 2 * written >= size) and rng.randrange(every) == 0:
                tail = f" [seq {errs}]" if unique else ""
                line = f"{ts} ERROR {rng.choice(errors)}{tail}\n"
                errs += 1
            else:
                line = ordinary(rng, ts, lines)
            batch.append(line)
            written += len(line)
            lines += 1
            if len(batch) >= 10000:
                fh.write("".join(batch))
                batch.clear()
        fh.write("".join(batch))
    return lines, errs


def generate_huge(path: Path, size: int) -> None:
    """One line of `size` bytes without a newline: ordinary words with an error phrase every 64 MiB."""
    block = ("retry account daily proxy 404 token timeout " * 1500)[: 1 << 16]
    with open(path, "w", encoding="ascii") as fh:
        written = 0
        while written < size:
            fh.write(block)
            written += len(block)
            if written % (64 << 20) < len(block):
                fh.write(" Error code: 429 rate_limit_exceeded ")


def tree_memory(procs: list[Any]) -> tuple[int, int]:
    """(RSS summed, PSS summed) of `procs`: forked workers share the parent's pages, which the RSS sum counts
    once per process and PSS (proportional set size, Linux) splits between them, i.e. counts once in all."""
    rss = pss = 0
    for p in procs:
        try:
            full = p.memory_full_info()
        except Exception:  # the process ended between the listing and the read
            continue
        rss += full.rss
        pss += getattr(full, "pss", full.rss)
    return rss, pss


def run_sampled(cmd: list[str]) -> tuple[float, int, int, str]:
    """Run `cmd`, sampling the memory of its whole process tree; returns (wall s, peak RSS sum, peak PSS sum,
    stdout)."""
    import psutil

    with tempfile.TemporaryFile(mode="w+") as out_f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=subprocess.PIPE, text=True)
        root = psutil.Process(proc.pid)
        peak = peak_pss = 0
        while proc.poll() is None:
            try:
                rss, pss = tree_memory([root, *root.children(recursive=True)])
                peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            except psutil.Error:
                pass
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        err = proc.stderr.read() if proc.stderr else ""
        out_f.seek(0)
        out = out_f.read()
    if proc.returncode not in (0, 1) and not out.startswith("{"):
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.strip()[:300]}")
    return wall, peak, peak_pss, out


def timed(cmd: list[str], env: dict[str, str] | None = None, repeat: int = 1) -> tuple[float, str]:
    """Best wall time of `repeat` runs and the stdout of `cmd` (exit 1 = 'no match' for grep tools is fine, and
    capdoctor's exit code is its verdict's when it printed its document)."""
    best, out = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if proc.returncode not in (0, 1) and not proc.stdout.startswith("{"):
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
        best, out = min(best, time.perf_counter() - t0), proc.stdout.strip()
    return best, out


def warm(path: Path) -> None:
    """Read the file once so every tool reads it from the page cache."""
    with open(path, "rb") as fh:
        while fh.read(1 << 24):
            pass


def capdoctor_logs(path: Path, repeat: int) -> tuple[float, int, int, dict[str, Any]]:
    """Best wall time, peak RSS and PSS sums of `capdoctor logs PATH --json` (a fresh process each time) and its
    document."""
    best, peak, peak_pss, doc = float("inf"), 0, 0, {}
    for _ in range(repeat):
        wall, rss, pss, out = run_sampled([sys.executable, "-m", "capdoctor", "logs", str(path), "--json"])
        best, peak, peak_pss, doc = min(best, wall), max(peak, rss), max(peak_pss, pss), json.loads(out)
    return best, peak, peak_pss, doc


CASES = (
    # name, error_every, size divisor, unique text, in one burst, target ratio to rg
    ("0", None, 1, False, False, 1.0),
    ("1/10000", 10_000, 1, False, False, 1.0),
    ("1/100", 100, 1, False, False, 1.0),
    ("1/100 unique", 100, 1, True, False, 1.0),
    ("1/100 burst", 100, 1, False, True, 1.0),
    ("1/10", 10, 4, False, False, 1.5),
)
RSS_TARGET = 150e6


def main() -> int:
    """Generate each case, run the three scanners on the same file, print the table; 1 when a target is missed."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--size", default="256M", help="size of the density 0..1/100 logs (1/10: a quarter); default 256M")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool and file, the best counted (default 1)")
    ap.add_argument("--only", default="", help="comma-separated case names to run (default: all)")
    ap.add_argument("--huge", action="store_true", help="also scan a 1 GB line without a newline, once")
    ap.add_argument("--out", default="", help="also write the report to this file")
    args = ap.parse_args()
    size = parse_size(args.size)
    report: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        report.append(line)

    import platform

    from capdoctor.classifier.signatures import engine

    tmpdir = Path(tempfile.mkdtemp(prefix="capdoctor-bench-"))
    lits = tmpdir / "literals.txt"
    lits.write_text("\n".join(engine().literals()) + "\n", encoding="utf-8")
    env = dict(os.environ, LC_ALL="C")
    have_rg = shutil.which("rg") is not None
    cpu = os.cpu_count()
    say(f"# capdoctor logs vs ripgrep/grep — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    say(
        f"machine: {platform.machine()}, {cpu} CPU(s), Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f} at start; {len(engine().literals())} literals; "
        f"{len(error_lines())} planted error texts"
    )
    if not have_rg:
        say("rg: not installed (apt-get install ripgrep) — no ripgrep ratio, which counts as a miss")
    one = tmpdir / "one.log"
    one.write_text("2025-11-30T00:00:00.000Z ERROR Error code: 429 - rate_limit_exceeded\n", encoding="utf-8")
    startup = timed([sys.executable, "-m", "capdoctor", "logs", str(one), "--json"], repeat=3)[0]
    say(f"capdoctor start-up (a one-line log, best of 3): {startup:.2f} s")
    say()
    say(
        "| density | size | error lines | candidates (grep lines) | capdoctor s | MB/s | µs/candidate | "
        "peak PSS (RSS sum; that run's s) | "
        "rg s | grep s | capdoctor/rg | capdoctor/grep | target | counts |"
    )
    say("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    only = {c.strip() for c in args.only.split(",") if c.strip()}
    try:
        for name, every, div, unique, burst, target in CASES:
            if only and name not in only:
                continue
            path = tmpdir / "client.log"
            _, planted = generate(path, size // div, every, unique, burst)
            real = path.stat().st_size
            warm(path)
            wall = rg_wall = gr_wall = float("inf")
            peak = pss = 0
            ours = [sys.executable, "-m", "capdoctor", "logs", str(path), "--json"]
            for _ in range(args.repeat):  # interleaved: a machine that slows down mid-run slows all three alike
                run_wall, out = timed(ours)
                wall, doc = min(wall, run_wall), json.loads(out)
                if have_rg:
                    rg_wall = min(rg_wall, timed(["rg", "-c", "-i", "-F", "-f", str(lits), str(path)], env)[0])
                gr_one, gr_out = timed(["grep", "-c", "-i", "-F", "-f", str(lits), str(path)], env)
                gr_wall = min(gr_wall, gr_one)
            sampled, peak, pss, _ = capdoctor_logs(path, 1)  # memory: a run of its own (see the module's docstring)
            rg_wall = rg_wall if have_rg else float("nan")
            records = sum(doc["by_cause"].values())
            counted_ok = records == planted
            cands = int(gr_out or 0)
            per_cand = (wall - startup) / cands * 1e6 if cands else float("nan")
            ratio_rg = wall / rg_wall if have_rg else float("inf")
            ok = ratio_rg <= target and pss <= RSS_TARGET and counted_ok
            failed |= not ok
            say(
                f"| {name} | {real / 1e6:.0f} MB | {planted} | {cands} | {wall:.2f} | {real / 1e6 / wall:.0f} | "
                f"{per_cand:.1f} | {pss / 1e6:.0f} MB ({peak / 1e6:.0f}; {sampled:.2f} s) | {rg_wall:.2f} | "
                f"{gr_wall:.2f} | {ratio_rg:.2f}x | "
                f"{wall / gr_wall:.2f}x | ≤{target}x, ≤150 MB {'ok' if ok else 'MISSED'} | "
                f"{records}/{planted} {'exact' if counted_ok else 'WRONG'} |"
            )
            path.unlink()
        if args.huge:
            path = tmpdir / "huge.log"
            generate_huge(path, 1 << 30)
            wall, peak, pss, doc = capdoctor_logs(path, 1)
            ok = pss <= RSS_TARGET
            failed |= not ok
            say()
            say(
                f"1 GiB line without a newline: {wall:.1f} s, peak PSS {pss / 1e6:.0f} MB (RSS sum {peak / 1e6:.0f}) "
                f"({'ok' if ok else 'MISSED'}), {sum(doc['by_cause'].values())} error record(s)"
            )
            path.unlink()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    say()
    say(
        f"load average {os.getloadavg()[0]:.2f} at the end; "
        + ("every target met" if not failed else "a target was MISSED (see the target and counts columns)")
    )
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(report) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
