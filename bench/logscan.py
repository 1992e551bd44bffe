"""Benchmark of `capdoctor logs` against ripgrep on the same generated files, in one run.

For each error density — none, 1 line in 10,000, 1 in 200, 1 in 100 (256 MiB each by default) and 1 in 10 (a
quarter of that) — it writes a client log whose ordinary lines are those of an agent's day (`LINES`: client
chatter, the words incident-time logs carry, and `AGENT`: JSON request logs with statuses and latencies,
local-server and localhost URLs with their ports, `context window` fields, 404 access lines, `No such file or
directory` from tool calls), with an error line from some signature row's examples at that density, plus "1/100
unique", whose error lines all differ (a number in each), where the scanner's memo cannot help. For each file it
times the whole `capdoctor logs FILE --json` command (start-up included) against `rg -c -i -F -f` with the
engine's own prefilter literals and `rg -c -F -f` with a user's 100 common error strings (`COMMON_ERRORS`), in
turn, `--repeat` rounds, the best of each counted, and prints the share of lines holding a literal (the
candidates), MB/s, the two ratios and the memory. With `--compare SRC`, the capdoctor of another source tree
(e.g. a checkout of main) is timed on the same files in the same rounds, so before and after share a shell. It
checks that every planted error line was counted (exactly) and exits 1 when this tree misses a target (up to 1 in
100: <= 1.0x rg with the literals, <= 4x rg with the 100 strings up to 1 in 200 and <= 6x above; at 1 in 10:
<= 1.5x and <= 6x; memory <= 150 MB) or a count is wrong. Memory is the process tree's peak PSS (forked workers
share the parent's pages; the RSS sum is shown beside it), sampled every 20 ms in a run of its own. `--huge` also
scans a 1 GB line without a newline once. Not a test: nothing in the test suite asserts a timing.

    .venv/bin/python bench/logscan.py [--size 256M] [--repeat 3] [--compare ../base/src] [--out bench/out/logscan.txt]
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
AGENT = (
    '{{"level":"info","ts":"{ts}","msg":"request","method":"POST","url":"https://api.anthropic.com/v1/messages",'
    '"status":{st},"latency_ms":{ms},"model":"claude-sonnet-4-5","input_tokens":{n}}}\n',
    '{{"ts":"{ts}","event":"http_response","status":{st},"elapsed":"{ms}ms","path":"/v1/responses","bytes":{n}}}\n',
    "{ts} DEBUG provider: using local server http://127.0.0.1:{port}/v1 (model qwen2.5-coder:{m}b)\n",
    "{ts} INFO  ollama: GET http://localhost:11434/api/tags -> 200 in {ms}ms\n",
    "{ts} DEBUG lmstudio: GET http://localhost:1234/v1/models -> 200 ({ms} ms)\n",
    "{ts} INFO  vllm: serving on http://0.0.0.0:8000, max_model_len={n}\n",
    '{{"ts":"{ts}","model":"gpt-5.5","context_window":{n},"max_output_tokens":{ms},"used":{m}}}\n',
    "{ts} DEBUG session: context window 200000 tokens, {n} used ({m}%)\n",
    '{ip} - - [30/Nov/2026:10:{m:02d}:00 +0000] "GET /favicon.ico HTTP/1.1" 404 0 "-" "curl/8.5.0"\n',
    '{ts} INFO  127.0.0.1:{port} - "GET /api/v1/health HTTP/1.1" 404 Not Found\n',
    "{ts} DEBUG tool: exec `cat src/missing_{n}.py` exited 1: cat: src/missing_{n}.py: No such file or directory\n",
    "{ts} INFO  tool: ls build/{n} -> exit 2: ls: cannot access 'build/{n}': No such file or directory\n",
)
"""An agent's realistic day (issue 33): JSON request logs with statuses and latencies, local-server URLs with their
ports, localhost URLs, `context window` fields, 404 access lines, `No such file or directory` from tool calls."""
LINES = NORMAL + ORDINARY + AGENT
COMMON_ERRORS = (
    "error",
    "Error",
    "ERROR",
    "failed",
    "Failed",
    "FAILED",
    "failure",
    "exception",
    "Exception",
    "Traceback",
    "panic",
    "fatal",
    "FATAL",
    "timeout",
    "timed out",
    "Timeout",
    "refused",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "EPIPE",
    "ENOTFOUND",
    "EAI_AGAIN",
    "reset by peer",
    "broken pipe",
    "unreachable",
    "429",
    "500",
    "502",
    "503",
    "504",
    "529",
    "401",
    "403",
    "Too Many Requests",
    "Internal Server Error",
    "Bad Gateway",
    "Service Unavailable",
    "Gateway Timeout",
    "Unauthorized",
    "Forbidden",
    "rate limit",
    "rate_limit",
    "RateLimitError",
    "overloaded",
    "Overloaded",
    "overloaded_error",
    "capacity",
    "at capacity",
    "quota",
    "insufficient_quota",
    "exceeded",
    "throttl",
    "Throttl",
    "busy",
    "unavailable",
    "Unavailable",
    "invalid_api_key",
    "Invalid API key",
    "authentication",
    "AuthenticationError",
    "permission denied",
    "PermissionDenied",
    "invalid_request_error",
    "BadRequestError",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "InternalServerError",
    "ServiceUnavailableError",
    "connection error",
    "Connection error",
    "ConnectionError",
    "SSL",
    "certificate",
    "CERTIFICATE_VERIFY_FAILED",
    "handshake",
    "DNS",
    "getaddrinfo",
    "context_length_exceeded",
    "maximum context length",
    "out of memory",
    "OOM",
    "CUDA",
    "killed",
    "Killed",
    "Segmentation fault",
    "abort",
    "crash",
    "stack trace",
    "unexpected",
    "Unexpected",
    "cannot",
    "could not",
    "unable to",
    "denied",
    "not allowed",
    "retry",
    "Retrying",
    "giving up",
)
"""A user's own `rg -F -f` list: 100 common error strings (case as written; no capdoctor literal list)."""


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
    """One ordinary line (NORMAL, ORDINARY and AGENT alike)."""
    return ordinary_kind(rng, ts, i)[1]


def ordinary_kind(rng: random.Random, ts: str, i: int) -> tuple[int, str]:
    """One ordinary line and the index of its kind in `LINES`."""
    kind = rng.randrange(len(LINES))
    return kind, LINES[kind].format(
        ts=ts,
        ms=rng.randrange(5, 9000),
        n=rng.randrange(1, 99999),
        m=i % 60,
        ip=f"10.0.{rng.randrange(255)}.{rng.randrange(255)}",
        port=rng.randrange(1024, 65536),
        st=rng.choice((200, 200, 200, 201, 204, 304)),
    )


def generate(path: Path, size: int, error_every: int | None, unique: bool = False, seed: int = 7) -> tuple[int, int]:
    """Write a log of about `size` bytes with one error line in `error_every` (None: none); returns (lines,
    error lines). `unique`: every error line carries its own sequence number, so no two are the same text."""
    rng = random.Random(seed)
    errors = error_lines()
    lines = errs = written = 0
    t0 = 1764460800  # 2025-11-30T00:00:00Z
    with open(path, "w", encoding="utf-8") as fh:
        batch: list[str] = []
        while written < size:
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + lines // 50)) + f".{lines % 1000:03d}Z"
            if error_every and rng.randrange(error_every) == 0:
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


CPU: dict[str, float] = {}
"""The CPU seconds (user + system, the process and the children it waited for) of the last `timed` run of each
tool, by its first argument after the interpreter: a second measure where the machine is shared (wall time then
counts the other users' work too)."""


def timed(cmd: list[str], env: dict[str, str] | None = None, repeat: int = 1) -> tuple[float, str]:
    """Best wall time of `repeat` runs and the stdout of `cmd` (exit 1 = 'no match' for grep tools is fine, and
    capdoctor's exit code is its verdict's when it printed its document); the CPU time of the best run in `CPU`."""
    import resource

    best, out = float("inf"), ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1) and not proc.stdout.startswith("{"):
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
        if wall < best:
            CPU["last"] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best, out = min(best, wall), proc.stdout.strip()
    return best, out


def warm(path: Path) -> None:
    """Read the file once so every tool reads it from the page cache."""
    with open(path, "rb") as fh:
        while fh.read(1 << 24):
            pass


def capdoctor_cmd(path: Path) -> list[str]:
    """The whole `capdoctor logs PATH --json` command."""
    return [sys.executable, "-m", "capdoctor", "logs", str(path), "--json"]


def src_env(src: str | None) -> dict[str, str] | None:
    """The environment that runs capdoctor from the source tree `src` (another checkout; None: this one)."""
    if not src:
        return None
    return dict(os.environ, PYTHONPATH=str(Path(src).resolve()))


CASES = (
    # name, error_every, size divisor, unique text, target ratio to rg -i -F -f literals, to rg -F -f 100 errors
    ("0", None, 1, False, 1.0, 4.0),
    ("1/10000", 10_000, 1, False, 1.0, 4.0),
    ("1/200", 200, 1, False, 1.0, 4.0),
    ("1/100", 100, 1, False, 1.0, 6.0),
    ("1/100 unique", 100, 1, True, 1.0, 6.0),
    ("1/10", 10, 4, False, 1.5, 6.0),
)
RSS_TARGET = 150e6


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--size", default="256M", help="size of the density 0..1/100 logs (1/10: a quarter); default 256M")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool and file, the best counted (default 1)")
    ap.add_argument("--only", default="", help="comma-separated case names to run (default: all)")
    ap.add_argument("--compare", default="", help="also time the capdoctor of this source tree (e.g. main's src/)")
    ap.add_argument("--huge", action="store_true", help="also scan a 1 GB line without a newline, once")
    ap.add_argument("--out", default="", help="also write the report to this file")
    return ap.parse_args()


def _case(say: Any, tmpdir: Path, args: argparse.Namespace, case: tuple[Any, ...], lits: Path, errs: Path) -> bool:
    """Generate one case's log, time every tool on it and print its rows; False when a target is missed."""
    name, every, div, unique, target, target100 = case
    env = dict(os.environ, LC_ALL="C")
    path = tmpdir / "client.log"
    _, planted = generate(path, parse_size(args.size) // div, every, unique)
    real = path.stat().st_size
    warm(path)
    trees = [("this", None)] + ([("compare", args.compare)] if args.compare else [])
    walls = {tree: float("inf") for tree, _ in trees}
    cpus = {tree: float("inf") for tree, _ in trees} | {"rg": float("inf"), "rg100": float("inf")}
    docs: dict[str, dict[str, Any]] = {}
    rg_wall = rg100_wall = float("inf")
    for _ in range(args.repeat):  # interleaved: a machine that slows down mid-run slows all alike
        for tree, src in trees:
            run_wall, out = timed(capdoctor_cmd(path), src_env(src))
            walls[tree], docs[tree] = min(walls[tree], run_wall), json.loads(out)
            cpus[tree] = min(cpus[tree], CPU["last"])
        rg_wall = min(rg_wall, timed(["rg", "-c", "-i", "-F", "-f", str(lits), str(path)], env)[0])
        cpus["rg"] = min(cpus["rg"], CPU["last"])
        rg100_wall = min(rg100_wall, timed(["rg", "-c", "-F", "-f", str(errs), str(path)], env)[0])
        cpus["rg100"] = min(cpus["rg100"], CPU["last"])
    cands = int(timed(["rg", "-c", "-i", "-F", "-f", str(lits), str(path)], env)[1] or 0)
    ok_all = True
    for tree, src in trees:
        sampled, peak, pss, _ = run_sampled_env(capdoctor_cmd(path), src_env(src))
        records = sum(docs[tree]["by_cause"].values())
        counted_ok = records == planted
        wall = walls[tree]
        ratio, ratio100 = wall / rg_wall, wall / rg100_wall
        ok = ratio <= target and ratio100 <= target100 and pss <= RSS_TARGET and counted_ok
        ok_all &= ok or tree != "this"
        say(
            f"| {name} | {tree} | {real / 1e6:.0f} MB | {planted} | {cands / max(1, lines_of(path)):.2%} | "
            f"{wall:.2f} | {real / 1e6 / wall:.0f} | {rg_wall:.2f} | {rg100_wall:.2f} | {ratio:.2f}x (≤{target}) | "
            f"{ratio100:.2f}x (≤{target100}) | {cpus[tree]:.2f} / {cpus['rg']:.2f} / {cpus['rg100']:.2f} | "
            f"{pss / 1e6:.0f} MB ({peak / 1e6:.0f}; {sampled:.2f} s) | "
            f"{'ok' if ok else 'MISSED'} | {records}/{planted} {'exact' if counted_ok else 'WRONG'} |"
        )
    path.unlink()
    return ok_all


def lines_of(path: Path) -> int:
    """The number of lines in `path`."""
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))


def run_sampled_env(cmd: list[str], env: dict[str, str] | None) -> tuple[float, int, int, str]:
    """`run_sampled` in the environment `env`."""
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.update(env)
        return run_sampled(cmd)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> int:
    """Generate each case, run the tools on the same file, print the table; 1 when a target is missed."""
    args = _args()
    report: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        report.append(line)

    import platform

    from capdoctor.classifier.signatures import engine

    if shutil.which("rg") is None:
        raise SystemExit("rg: not installed (apt-get install ripgrep)")
    tmpdir = Path(tempfile.mkdtemp(prefix="capdoctor-bench-"))
    lits = tmpdir / "literals.txt"
    lits.write_text("\n".join(engine().literals()) + "\n", encoding="utf-8")
    errs = tmpdir / "errors.txt"
    errs.write_text("\n".join(COMMON_ERRORS) + "\n", encoding="utf-8")
    say(f"# capdoctor logs vs ripgrep — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    say(
        f"machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f} at start; {len(engine().literals())} literals; "
        f"{len(COMMON_ERRORS)} common error strings; {len(error_lines())} planted error texts"
    )
    one = tmpdir / "one.log"
    one.write_text("2025-11-30T00:00:00.000Z ERROR Error code: 429 - rate_limit_exceeded\n", encoding="utf-8")
    say(f"capdoctor start-up (a one-line log, best of 3): {timed(capdoctor_cmd(one), repeat=3)[0]:.2f} s")
    say()
    say(
        "| density | tree | size | error lines | candidates (rg -i lines) | capdoctor s | MB/s | "
        "rg -i -F -f literals s | rg -F -f 100 errors s | vs rg literals | vs rg 100 errors | "
        "CPU s (capdoctor / rg literals / rg 100) | peak PSS (RSS sum; that run's s) | target | counts |"
    )
    say("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    only = {c.strip() for c in args.only.split(",") if c.strip()}
    try:
        for case in CASES:
            if not only or case[0] in only:
                failed |= not _case(say, tmpdir, args, case, lits, errs)
        if args.huge:
            path = tmpdir / "huge.log"
            generate_huge(path, 1 << 30)
            wall, peak, pss, out = run_sampled(capdoctor_cmd(path))
            ok = pss <= RSS_TARGET
            failed |= not ok
            say()
            say(
                f"1 GiB line without a newline: {wall:.1f} s, peak PSS {pss / 1e6:.0f} MB (RSS sum {peak / 1e6:.0f}) "
                f"({'ok' if ok else 'MISSED'}), {sum(json.loads(out)['by_cause'].values())} error record(s)"
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
