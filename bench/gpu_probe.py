"""Print what the `hardware` check sees through NVML on this machine (run once on a GPU machine).

Usage: `python bench/gpu_probe.py [--json]` from the repository root (works without installing capdoctor:
it puts src/ on sys.path). It prints the NVML snapshot (driver, each device's name, memory, utilisation,
processes holding memory, and every NVML call that failed), then runs the real `HardwareCheck` with no target
and prints its status, summary, details and findings, plus how long each part took. It starts no model,
sends no request beyond loopback port probes, and changes nothing on the machine.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

GIB = 1024**3


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / GIB:.2f} GiB"


def main() -> int:
    """Snapshot NVML, then run the hardware check; exit 0 when NVML answered, 1 when it did not."""
    import os

    from capdoctor.checks.hardware import HardwareCheck
    from capdoctor.probes.local_nvml import load_nvml, process_name, read_gpus
    from capdoctor.run.context import Context

    t0 = time.perf_counter()
    snap = read_gpus(load_nvml(), process_name)
    t_nvml = time.perf_counter() - t0
    ctx = Context(env=dict(os.environ), home=Path.home(), cwd=Path.cwd(), deadline=time.monotonic() + 20)
    t1 = time.perf_counter()
    result = HardwareCheck().run(ctx)
    t_check = time.perf_counter() - t1

    if "--json" in sys.argv:
        print(
            json.dumps(
                {"nvml": asdict(snap), "nvml_s": t_nvml, "check": result.to_dict(), "check_s": t_check},
                indent=1,
                default=str,
            )
        )
        return 0 if snap.available else 1

    print(f"NVML available: {snap.available}  reason: {snap.reason}  driver: {snap.driver}  ({t_nvml * 1000:.0f} ms)")
    for g in snap.gpus:
        print(
            f"GPU {g.index}: {g.name}  total {_gib(g.total)}  free {_gib(g.free)}  used {_gib(g.used)}  "
            f"util gpu {g.util_gpu}% mem {g.util_memory}%"
        )
        for p in g.processes:
            print(f"    pid {p.pid:>7}  {p.name or '?':<24} {_gib(p.used)}")
    for w in snap.warnings:
        print(f"  NVML call failed: {w}")
    print(f"\nhardware check: {result.status.value} — {result.summary}  ({t_check * 1000:.0f} ms)")
    for line in result.details:
        print(f"  {line}")
    for f in result.findings:
        print(f"  [{f.cause.value}/{f.strength.value}] {f.message}")
    return 0 if snap.available else 1


if __name__ == "__main__":
    raise SystemExit(main())
