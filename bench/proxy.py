"""Proxy benchmark: the same calls direct to the simulator and through `capdoctor proxy`, in one run, on loopback.

Measured (not asserted; a benchmark, not a timed test):
  1. small calls: a non-streamed chat completion, alternating direct and proxied over one keep-alive client each;
     the added latency is proxied minus direct, at the median and at p99 (targets: <= 1 ms and <= 5 ms);
  2. first streamed byte: a streamed completion, time to its first body chunk, direct and proxied (target: <= 2 ms
     later);
  3. 200 concurrent streams through the proxy, in rounds: the proxy process's CPU (user + system seconds over the
     wall time, in cores; target under one core) and its peak RSS (target under 150 MB), sampled with psutil.
The simulator and the proxy each run as their own process (`capdoctor simulate`, `capdoctor proxy`), so the
proxy's CPU and memory are its own; the client runs here. The simulator sends a stream's frames at once, so a
stream is short: the concurrency figure is CPU per stream at 200 open at once, not 200 idle connections.
Usage: python bench/proxy.py [--calls N] [--streams N] [--concurrent N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil

CHAT = {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "ping"}], "max_tokens": 16}
HEADERS = {"authorization": "Bearer sk-test-" + "b" * 30}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(cmd: list[str], marker: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if marker in line:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
            return proc, line
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit(f"could not start: {' '.join(cmd)}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def small_calls(direct: str, proxied: str, n: int) -> tuple[list[float], list[float]]:
    """Latency (ms) of `n` non-streamed calls each way, alternating so that drift hits both alike."""
    out_d: list[float] = []
    out_p: list[float] = []
    with httpx.Client() as cd, httpx.Client() as cp:
        for client, base in ((cd, direct), (cp, proxied)):  # warm-up: connections, the engine's first use
            for _ in range(20):
                client.post(base + "/v1/chat/completions", json=CHAT, headers=HEADERS)
        for i in range(n):
            order = (
                ((cd, direct, out_d), (cp, proxied, out_p)) if i % 2 else ((cp, proxied, out_p), (cd, direct, out_d))
            )
            for client, base, out in order:
                t0 = time.perf_counter()
                r = client.post(base + "/v1/chat/completions", json=CHAT, headers=HEADERS)
                out.append((time.perf_counter() - t0) * 1000)
                assert r.status_code == 200, r.status_code
    return out_d, out_p


def first_bytes(direct: str, proxied: str, n: int) -> tuple[list[float], list[float]]:
    """Time (ms) to the first body chunk of a streamed completion, each way, alternating."""
    out_d: list[float] = []
    out_p: list[float] = []
    body = {**CHAT, "stream": True}
    with httpx.Client() as cd, httpx.Client() as cp:
        for i in range(n + 10):
            for client, base, out in ((cd, direct, out_d), (cp, proxied, out_p))[:: 1 if i % 2 else -1]:
                t0 = time.perf_counter()
                with client.stream("POST", base + "/v1/chat/completions", json=body, headers=HEADERS) as r:
                    chunks = r.iter_raw()
                    next(chunks)
                    ms = (time.perf_counter() - t0) * 1000
                    for _ in chunks:
                        pass
                if i >= 10:
                    out.append(ms)
    return out_d, out_p


async def _streams(base: str, concurrent: int, rounds: int) -> int:
    body = {**CHAT, "stream": True}
    limits = httpx.Limits(max_connections=concurrent + 10, max_keepalive_connections=concurrent + 10)
    done = 0
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def one() -> int:
            async with client.stream("POST", base + "/v1/chat/completions", json=body, headers=HEADERS) as r:
                n = 0
                async for chunk in r.aiter_raw():
                    n += len(chunk)
                return n

        for _ in range(rounds):
            sizes = await asyncio.gather(*(one() for _ in range(concurrent)))
            done += sum(1 for s in sizes if s)
    return done


def concurrency(proxied: str, pid: int, concurrent: int, rounds: int) -> tuple[float, float, float, int]:
    """(wall s, proxy CPU s, proxy peak RSS MB, streams completed) for `rounds` x `concurrent` streams."""
    proc = psutil.Process(pid)
    peak = [proc.memory_info().rss]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak[0] = max(peak[0], proc.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    cpu0 = proc.cpu_times()
    t0 = time.perf_counter()
    sampler.start()
    done = asyncio.run(_streams(proxied, concurrent, rounds))
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    cpu1 = proc.cpu_times()
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    return wall, cpu, peak[0] / 2**20, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    py = sys.executable
    sim_port = _free_port()
    sim, _ = _start([py, "-m", "capdoctor", "simulate", "--scenario", "healthy", "--port", str(sim_port)], "listening")
    direct = f"http://127.0.0.1:{sim_port}"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        proxy, line = _start(
            [
                py,
                "-m",
                "capdoctor",
                "proxy",
                "--upstream",
                direct,
                "--provider",
                "openai",
                "--listen",
                "127.0.0.1:0",
                "--db",
                str(db),
                "--no-network-checks",
            ],
            "listening on",
        )
        proxied = line.split("listening on ", 1)[1].split(";", 1)[0]
        try:
            print(f"cores on this machine: {os.cpu_count()}; python {sys.version.split()[0]}")
            d, p = small_calls(direct, proxied, args.calls)
            print(f"small calls ({args.calls} each way, non-streamed chat completion, keep-alive):")
            print(f"  direct   median {statistics.median(d):6.3f} ms   p99 {_pct(d, 0.99):6.3f} ms")
            print(f"  proxied  median {statistics.median(p):6.3f} ms   p99 {_pct(p, 0.99):6.3f} ms")
            added_med = statistics.median(p) - statistics.median(d)
            added_p99 = _pct(p, 0.99) - _pct(d, 0.99)
            print(
                f"  added    median {added_med:6.3f} ms (target <= 1)   p99 {added_p99:6.3f} ms (target <= 5)   "
                f"ratio of medians {statistics.median(p) / statistics.median(d):4.2f}x"
            )
            d, p = first_bytes(direct, proxied, args.streams)
            print(f"first streamed byte ({args.streams} streams each way):")
            print(f"  direct   median {statistics.median(d):6.3f} ms   p99 {_pct(d, 0.99):6.3f} ms")
            print(f"  proxied  median {statistics.median(p):6.3f} ms   p99 {_pct(p, 0.99):6.3f} ms")
            print(f"  later by median {statistics.median(p) - statistics.median(d):6.3f} ms (target <= 2)")
            wall, cpu, rss, done = concurrency(proxied, proxy.pid, args.concurrent, args.rounds)
            print(f"{args.concurrent} concurrent streams through the proxy, {args.rounds} rounds ({done} completed):")
            print(
                f"  wall {wall:6.2f} s   proxy CPU {cpu:6.2f} s = {cpu / wall:4.2f} cores (target < 1)   "
                f"proxy peak RSS {rss:6.1f} MB (target < 150)   {done / wall:7.1f} streams/s"
            )
        finally:
            proxy.terminate()
            proxy.wait(30)
            sim.terminate()
            sim.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
