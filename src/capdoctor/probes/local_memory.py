"""System memory (RAM and swap via psutil) and Apple Silicon's GPU working-set limit (via sysctl).

Contract: `memory_facts()` always answers on a supported OS (psutil); `parse_sysctl_number()` and
`apple_gpu_limit()` are pure and tested on captured output; `apple_memory()` runs one `sysctl` command
with a short timeout. Must not judge the numbers (thresholds live in the hardware check) and must not
raise: an unreadable value is None.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

GIB = 1024**3
MIB = 1024**2

APPLE_DEFAULT_GPU_SHARE: tuple[tuple[int, float], ...] = ((36 * GIB, 2 / 3), (1 << 62, 3 / 4))
"""Estimated default Metal working-set share of RAM by RAM size (≈2/3 up to 36 GiB, ≈3/4 above).

The exact formula is unconfirmed upstream (platform-facts E.7: "~65–75 % of RAM"), so the result is
labelled an estimate; `iogpu.wired_limit_mb`, when the user set it, is exact.
"""


@dataclass(frozen=True)
class MemoryFacts:
    """RAM and swap, in bytes (swap_total 0 when there is no swap)."""

    total: int
    available: int
    swap_total: int
    swap_used: int

    @property
    def available_share(self) -> float:
        """Available RAM as a share of total (0..1)."""
        return self.available / self.total if self.total else 0.0

    @property
    def swap_share(self) -> float:
        """Used swap as a share of swap (0..1; 0 without swap)."""
        return self.swap_used / self.swap_total if self.swap_total else 0.0


def memory_facts() -> MemoryFacts | None:
    """RAM and swap now, or None if psutil cannot read them on this OS."""
    try:
        import psutil

        vm = psutil.virtual_memory()
        sw = psutil.swap_memory()
        return MemoryFacts(int(vm.total), int(vm.available), int(sw.total), int(sw.used))
    except Exception:  # psutil raises various errors on exotic systems; report "unknown"
        return None


def parse_sysctl_number(text: str) -> int | None:
    """The integer of a `sysctl -n` line (`17179869184`) or a `name: value` line, else None."""
    m = re.search(r"(?:^|[:=]\s*)(-?\d+)\s*$", text.strip())
    return int(m.group(1)) if m else None


def parse_sysctl_lines(text: str) -> dict[str, int]:
    """`{name: value}` from `sysctl hw.memsize iogpu.wired_limit_mb` output (`name: value` lines)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if not sep:
            name, sep, value = line.partition("=")
        number = parse_sysctl_number(value) if sep else None
        if number is not None:
            out[name.strip()] = number
    return out


@dataclass(frozen=True)
class AppleGpuLimit:
    """How much of unified memory the GPU may wire, and whether that is the user's setting or an estimate."""

    ram: int
    limit: int
    source: str  # "iogpu.wired_limit_mb" or "estimate"


def apple_gpu_limit(values: Mapping[str, int]) -> AppleGpuLimit | None:
    """The GPU working-set limit from `hw.memsize` and `iogpu.wired_limit_mb` (0 or absent = default)."""
    ram = values.get("hw.memsize")
    if not ram or ram <= 0:
        return None
    wired = values.get("iogpu.wired_limit_mb", 0)
    if wired and wired > 0:
        return AppleGpuLimit(ram, wired * MIB, "iogpu.wired_limit_mb")
    share = next(s for limit, s in APPLE_DEFAULT_GPU_SHARE if ram <= limit)
    return AppleGpuLimit(ram, int(ram * share), "estimate")


def apple_memory(env: Mapping[str, str], timeout: float) -> AppleGpuLimit | None:
    """Run `sysctl hw.memsize iogpu.wired_limit_mb` (macOS) and derive the GPU limit; None when unavailable."""
    from capdoctor.probes.local_commands import run_command

    out = run_command(["/usr/sbin/sysctl", "hw.memsize", "iogpu.wired_limit_mb"], env, timeout)
    # sysctl exits non-zero when one name is unknown (Intel Macs lack iogpu.*) but still prints the others
    return apple_gpu_limit(parse_sysctl_lines(out.text)) if out.error is None else None
