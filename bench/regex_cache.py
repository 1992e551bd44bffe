"""What the build cache's regex programs save at start-up: median wall time of `explain`, `logs` and `diagnose`
(against the simulator) with the stored programs used, and with them ignored (every pattern `re.compile`d).

    .venv/bin/python bench/regex_cache.py [--runs 11]

Both sides run the same wrapper in a fresh process with a warm build cache (the parsed tables, the gates, the
digit readings and the Hyperscan database stay cached either way); the only difference is whether
`classifier.compiled` makes each pattern from its stored program (`_sre.compile`) or compiles it. Runs of the two
sides alternate, so a machine that slows down slows both; the CPU time (user + system) of each child is printed
beside the wall time, as it says the same with less noise on a shared machine. A benchmark, not a test: nothing
asserts a time; it prints each median and the share of the command's time the programs save.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WRAPPER = """
import sys
if sys.argv.pop(1) == "off":
    from capdoctor.classifier import compiled
    compiled._stored = lambda key, source: None  # every pattern compiled, none made from a stored program
from capdoctor.cli.commands import main
main()
"""

LOG = "\n".join(
    [f"2026-12-07T10:{i % 60:02d}:00Z INFO request ok model=gpt-5.5 id=req_{i}" for i in range(200)]
    + [
        '2026-12-07T11:00:00Z ERROR openai.RateLimitError: Error code: 429 - {"error": {"message": "Selected '
        'model is at capacity. Please try a different model.", "type": "server_error"}}',
        "2026-12-07T11:00:05Z WARN retrying in 17s (attempt 2 of 5)",
        "2026-12-07T11:01:00Z ERROR anthropic.InternalServerError: Error code: 529 overloaded_error",
    ]
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _run(mode: str, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run, in milliseconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, mode, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    _, _, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    proc.returncode = 0  # reaped here
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=11)
    opts = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from capdoctor.classifier import compiled

    if not hasattr(compiled, "_stored"):
        print("no regex-program cache in this tree (removed: it saved 1-5% of each command's CPU time); run this at a")
        print("commit that has one (git log bench/regex_cache.py) to compare, or give a new cache the same switch")
        return 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "client.log"
        log.write_text(LOG + "\n", encoding="utf-8")
        port = _free_port()
        sim = subprocess.Popen(
            [sys.executable, "-m", "capdoctor", "simulate", "--scenario", "capacity", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(100):
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.05)
            target = ["--provider", "openai", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "gpt-5.5"]
            commands = {
                "explain": ["explain", "Error code: 529 - overloaded_error: Overloaded"],
                "logs": ["logs", str(log)],
                "diagnose": ["diagnose", *target, "--no-inference", "--only", "models,logs", "--timeout", "20"],
            }
            # A warm build cache holds every pattern's program: what a big log's scan stores (`Engine.prepare`).
            prepare = (
                "from capdoctor.classifier.signatures import engine; engine().prepare(); assert engine().prepared()"
            )
            subprocess.run([sys.executable, "-c", prepare], check=True, env=env)
            print(f"Python {sys.version.split()[0]}, {opts.runs} runs each, warm build cache (every program stored)")
            for name, args in commands.items():
                for mode in ("on", "off", "on"):  # warm-up: the build cache, bytecode, the page cache
                    _run(mode, args, env)
                wall: dict[str, list[float]] = {"on": [], "off": []}
                cpu: dict[str, list[float]] = {"on": [], "off": []}
                for _ in range(opts.runs):
                    for mode in ("on", "off"):
                        w, c = _run(mode, args, env)
                        wall[mode].append(w)
                        cpu[mode].append(c)
                on, off = statistics.median(wall["on"]), statistics.median(wall["off"])
                con, coff = statistics.median(cpu["on"]), statistics.median(cpu["off"])
                print(
                    f"{name:<9} wall: with programs {on:6.1f} ms, without {off:6.1f} ms, saved {(off - on) / off:6.1%}"
                    f"   cpu: {con:6.1f} ms vs {coff:6.1f} ms, saved {(coff - con) / coff:6.1%}"
                )
        finally:
            sim.terminate()
            sim.wait(5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
