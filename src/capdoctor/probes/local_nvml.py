"""NVIDIA GPUs through NVML (`pynvml` from nvidia-ml-py): names, memory, utilisation, processes holding memory.

Contract: `read_gpus(nvml)` takes the `pynvml` module (or a test double with the same functions and an
`NVMLError` class) and returns a `GpuSnapshot`; every NVML call is wrapped on its own, because WSL and
old drivers raise on individual calls (`Unknown`, `NotSupported`, `NVMLLibraryMismatchError`) while the
rest still works. No driver gives `available=False` with the reason ("NVML library not found"), never an
exception. `load_nvml()` imports pynvml lazily. Must not judge the numbers (that is the hardware check).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

REASONS: dict[str, str] = {
    "LibraryNotFound": "NVML library not found (no NVIDIA driver on this machine)",
    "DriverNotLoaded": "NVIDIA driver not loaded",
    "NoPermission": "no permission to query NVML",
    "NotSupported": "NVML not supported on this system",
    "FunctionNotFound": "NVML driver too old for this call",
}
"""Human reasons for the NVML errors that mean "no GPU facts here" (keyed by the NVMLError_<name> suffix)."""


@dataclass(frozen=True)
class GpuProcess:
    """A process holding GPU memory; `used` is None where NVML cannot tell (Windows WDDM)."""

    pid: int
    name: str | None
    used: int | None


@dataclass(frozen=True)
class Gpu:
    """One device: memory in bytes, utilisation in percent (None when NVML would not say)."""

    index: int
    name: str
    total: int | None
    free: int | None
    used: int | None
    util_gpu: int | None
    util_memory: int | None
    processes: tuple[GpuProcess, ...] = ()


@dataclass(frozen=True)
class GpuSnapshot:
    """All devices, or why there are none; `warnings` lists individual calls that failed."""

    available: bool
    reason: str | None = None
    driver: str | None = None
    gpus: tuple[Gpu, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)


def load_nvml() -> Any | None:
    """The `pynvml` module, or None when nvidia-ml-py is not installed."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


def _reason(exc: BaseException) -> str:
    cls = type(exc).__name__
    suffix = cls.removeprefix("NVMLError_")
    return REASONS.get(suffix, f"NVML error: {exc}")


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def read_gpus(nvml: Any, process_name: Callable[[int], str | None] | None = None) -> GpuSnapshot:
    """Snapshot every GPU NVML reports, wrapping each call; `process_name` maps a pid to a name."""
    if nvml is None:
        return GpuSnapshot(False, "nvidia-ml-py is not installed (pip install nvidia-ml-py)")
    error_cls: type[BaseException] = getattr(nvml, "NVMLError", Exception)
    warnings: list[str] = []

    def call(what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except error_cls as exc:
            warnings.append(f"{what}: {_reason(exc)}")
            return None
        except Exception as exc:  # a broken binding must not take the check down
            warnings.append(f"{what}: {type(exc).__name__}: {exc}")
            return None

    try:
        nvml.nvmlInit()
    except error_cls as exc:
        return GpuSnapshot(False, _reason(exc))
    except OSError as exc:
        return GpuSnapshot(False, f"NVML could not be loaded: {exc}")
    try:
        driver = call("driver version", nvml.nvmlSystemGetDriverVersion)
        count = call("device count", nvml.nvmlDeviceGetCount)
        gpus: list[Gpu] = []
        for i in range(int(count or 0)):
            handle = call(f"GPU {i} handle", nvml.nvmlDeviceGetHandleByIndex, i)
            if handle is None:
                continue
            name = call(f"GPU {i} name", nvml.nvmlDeviceGetName, handle)
            mem = call(f"GPU {i} memory", nvml.nvmlDeviceGetMemoryInfo, handle)
            util = call(f"GPU {i} utilisation", nvml.nvmlDeviceGetUtilizationRates, handle)
            procs = _processes(nvml, handle, i, call, process_name)
            gpus.append(
                Gpu(
                    index=i,
                    name=_text(name) if name is not None else f"GPU {i}",
                    total=_int(getattr(mem, "total", None)),
                    free=_int(getattr(mem, "free", None)),
                    used=_int(getattr(mem, "used", None)),
                    util_gpu=_int(getattr(util, "gpu", None)),
                    util_memory=_int(getattr(util, "memory", None)),
                    processes=procs,
                )
            )
    finally:
        with contextlib.suppress(Exception):  # shutting down is best effort
            nvml.nvmlShutdown()
    return GpuSnapshot(
        True, driver=_text(driver) if driver is not None else None, gpus=tuple(gpus), warnings=tuple(warnings)
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) else None


def _processes(
    nvml: Any,
    handle: Any,
    index: int,
    call: Callable[..., Any],
    process_name: Callable[[int], str | None] | None,
) -> tuple[GpuProcess, ...]:
    """Compute and graphics processes on one GPU; falls back to `_v2` when the driver lacks `_v3`."""
    seen: dict[int, GpuProcess] = {}
    for kind in ("Compute", "Graphics"):
        fn = getattr(nvml, f"nvmlDeviceGet{kind}RunningProcesses", None)
        mismatch = getattr(nvml, "NVMLLibraryMismatchError", None)
        procs: Any = None
        if fn is not None:
            try:
                procs = fn(handle)
            except Exception as exc:
                if mismatch is not None and isinstance(exc, mismatch):
                    v2 = getattr(nvml, f"nvmlDeviceGet{kind}RunningProcesses_v2", None)
                    procs = call(f"GPU {index} {kind.lower()} processes", v2, handle) if v2 else None
                else:
                    procs = call(f"GPU {index} {kind.lower()} processes", _raise, exc)
        for p in procs or ():
            pid = _int(getattr(p, "pid", None))
            if pid is None or pid in seen:
                continue
            name = None
            if process_name is not None:
                try:
                    name = process_name(pid)
                except Exception:
                    name = None
            seen[pid] = GpuProcess(pid, name, _int(getattr(p, "usedGpuMemory", None)))
    return tuple(seen.values())


def _raise(exc: BaseException) -> None:
    raise exc


def process_name(pid: int) -> str | None:
    """The name of `pid` (psutil), or None when it is gone or hidden (containers, other users)."""
    try:
        import psutil

        return str(psutil.Process(pid).name())
    except Exception:
        return None
