"""The `hardware` check: local model servers, GPU memory (NVML), unified memory (Apple) and RAM/swap.

Contract: finds local runtimes on loopback and which one the target points at; reads RAM and swap (psutil),
NVIDIA GPUs through NVML (no driver is reported, not an error) and the Apple GPU working-set limit. When the
target is not local every finding is `context`: local hardware cannot explain a cloud provider's error. A
server's error text is read by the one signature table (hardware rows), which gives the remedy and memory kind;
the verdict appends the generic hardware steps. Must not generate tokens (the Ollama load probe is an empty
chat), probe non-loopback hosts, keep its own error-text table, or raise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from capdoctor.checks.base import Need
from capdoctor.checks.registry import Registered
from capdoctor.model import Cause, Finding, NextStep, Status, Strength, result_of
from capdoctor.run.threads import map_parallel
from capdoctor.target.urls import join

if TYPE_CHECKING:
    from capdoctor.classifier.signatures import Match
    from capdoctor.model import CheckResult
    from capdoctor.probes.local_memory import AppleGpuLimit, MemoryFacts
    from capdoctor.probes.local_nvml import GpuSnapshot
    from capdoctor.probes.local_servers import ServerInfo
    from capdoctor.run.context import Context

GIB = 1024**3

THRESHOLDS: dict[str, float] = {
    "ram_available_low": 0.10,  # available RAM below this share of total: weak evidence
    "ram_available_critical": 0.05,  # below this: moderate evidence
    "swap_heavy": 0.50,  # swap used above this share while RAM is low: heavy swapping
    "gpu_free_low": 0.05,  # free GPU memory below this share of total
    "gpu_other_process_gib": 1.0,  # another process holding at least this much GPU memory matters
    "offload_gpu_share": 0.95,  # a loaded model with less of itself on the GPU is partly on the CPU
}
"""When memory facts become findings (shares of total unless named otherwise)."""

SERVER_PROCESS_NAMES = ("ollama", "llama-server", "llama_server", "vllm", "lms", "lm studio", "text-generation")
"""GPU processes with these names are the model servers themselves, not "another process"."""

RUNTIME_KINDS = frozenset({"ollama", "lmstudio", "vllm", "llamacpp", "tgi"})
"""Identified local model runtimes (an unidentified OpenAI-compatible server may be a relay to the cloud)."""


RAM_ROW = "local.system_memory"
"""The table row whose remedy also answers low RAM and heavy swapping: one wording, shared with the probes
and the log scanner, so the verdict shows it once."""


def memory_error(text: str) -> Match | None:
    """The out-of-memory match in a local server's error text (best first), or None when it is about
    something else. Its row gives the remedy and, where the text says, the memory kind (`memory`). Only
    rows that say memory ran out count: not the weak symptom rows (a dropped connection that is only
    *likely* a crash), nor what a bare 5xx of a local server means."""
    from capdoctor.classifier.signatures import Layer, classify

    serious = (Strength.STRONG, Strength.MODERATE)
    found = (
        [
            m
            for m in classify(text, local=True)
            if m.signature.cause is Cause.HARDWARE and m.signature.strength in serious and m.layer is not Layer.STATUS
        ]
        if text
        else []
    )
    return found[0] if found else None


def _offload_step(model: str, size_vram: int | None) -> NextStep:
    """The remedy specific to a partly offloaded model: the size that fits, or a GPU the runtime cannot use."""
    if not size_vram:
        return NextStep(
            f"None of {model} is in GPU memory: check that the runtime sees the GPU (driver, "
            "CUDA/ROCm/Metal libraries, the runtime's GPU settings)."
        )
    return NextStep(
        f"Aim for a model plus context under {_gib(size_vram)}: that is how much of {model} fits in GPU memory now."
    )


def _ram_step() -> NextStep:
    from capdoctor.classifier.signatures import by_id

    return NextStep(by_id()[RAM_ROW].remedy)


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / GIB:.1f} GiB"


def _servers(ctx: Context) -> list[ServerInfo]:
    """Probe the candidate bases in parallel; mark the target's; ask the target Ollama to load the model.

    The load probe runs even when /api/ps lists the model: for a loaded model it answers at once, and a
    runner that crashed or was evicted reports its memory error only there.
    """
    from capdoctor.probes.local_servers import (
        api_root,
        candidates,
        is_local,
        ollama_load,
        port_open,
        probe_server,
    )

    cands = candidates(ctx.env, ctx.options, ctx.target)
    timeout = ctx.timeout(ctx.options["local_probe_timeout"])
    open_flags = map_parallel(lambda c: port_open(c[1], timeout), cands, timeout + 0.2, False, "port")
    live = [c for c, ok in zip(cands, open_flags, strict=True) if ok]
    if not live:
        return []
    target_root = api_root(ctx.target.base_url) if ctx.target and is_local(ctx.target.base_url) else None
    # a target that is a local server is the provider: reading it comes out of the run's request budget
    with ctx.http_client(timeout=max(timeout, 1.0), check="hardware") as client:
        probed = map_parallel(lambda c: probe_server(client, c[0], c[1]), live, ctx.remaining(), None, "server")
        found = [s for s in probed if s is not None]
        for server in found:
            server.is_target = _serves_target(server, target_root, ctx.target.model if ctx.target else "")
            if (
                server.is_target
                and server.kind == "ollama"
                and ctx.target is not None
                and ctx.target.model
                and not ctx.no_inference
            ):
                load_timeout = ctx.timeout(ctx.options["ollama_load_timeout"])
                server.error = ollama_load(client, server.base_url, ctx.target.model, load_timeout)
                if server.error is None:
                    from capdoctor.probes.local_servers import parse_ollama_ps

                    try:
                        resp = client.get(join(server.base_url, "api/ps"))
                        server.models = parse_ollama_ps(resp.json()) if resp.status_code == 200 else server.models
                    except Exception:  # the load worked; a failed re-read only loses the offload figure
                        pass
    return found


def _serves_target(server: ServerInfo, target_root: str | None, model: str) -> bool:
    """Whether `server` is what the (local) target talks to: same root, or an Ollama on the same host:port
    (it serves its OpenAI-compatible API there too), or a server holding the target model right now."""
    from urllib.parse import urlsplit

    if target_root is None:
        return False
    if server.base_url.rstrip("/") == target_root.rstrip("/"):
        return True
    same_port = urlsplit(server.base_url).netloc == urlsplit(target_root).netloc
    holds = bool(model) and any(_same_model(m.name, model) for m in server.models)
    return (server.kind == "ollama" and same_port) or holds


def _same_model(a: str, b: str) -> bool:
    norm = [m if ":" in m else m + ":latest" for m in (a, b)]
    return norm[0] == norm[1]


class HardwareCheck(Registered, check_id="hardware"):
    """Local GPU and memory: whether the machine can hold the local model the target points at."""

    needs: frozenset[Need] = frozenset()
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """Look at local servers and memory; findings weigh only when the target is a local server."""
        from capdoctor.probes.local_memory import apple_memory, memory_facts
        from capdoctor.probes.local_nvml import load_nvml, process_name, read_gpus
        from capdoctor.probes.local_servers import is_local

        refused_before = ctx.provider_budget.refused.get(self.id, 0)
        servers = _servers(ctx)
        refused = ctx.provider_budget.refused.get(self.id, 0) - refused_before
        mem = memory_facts()
        gpus = read_gpus(load_nvml(), process_name) if ctx.platform != "darwin" else None
        apple = apple_memory(ctx.env, ctx.timeout(2.0)) if ctx.platform == "darwin" else None
        if mem is None and not servers and (gpus is None or not gpus.available) and apple is None:
            return result_of(self, Status.SKIP, "nothing to look at: no memory facts, GPU or local model server")

        local_target = ctx.target is not None and is_local(ctx.target.base_url)
        runtimes = [s for s in servers if s.kind in RUNTIME_KINDS]
        # local facts weigh only when a local model runtime serves the target (a relay on 127.0.0.1 that
        # forwards to a cloud API does not count), or when there is no target and a runtime is running
        weighs = any(s.is_target for s in runtimes) or (ctx.target is None and bool(runtimes))
        raw: list[Finding] = []
        details: list[str] = []
        raw += self._server_findings(servers, details)
        raw += self._memory_findings(mem, details)
        raw += self._gpu_findings(gpus, details)
        if apple is not None:
            details.append(
                f"Apple unified memory {_gib(apple.ram)}; GPU may wire {_gib(apple.limit)} "
                f"({'iogpu.wired_limit_mb' if apple.source != 'estimate' else 'estimated default'})"
            )
            raw += self._apple_findings(apple, servers)

        findings = raw if weighs else [self._as_context(f) for f in raw]
        serious = any(f.strength in (Strength.STRONG, Strength.MODERATE) for f in raw)
        if not raw:
            status = Status.PASS
        elif serious and weighs:
            status = Status.FAIL
        else:
            status = Status.WARN
        summary = self._summary(raw, servers, mem, gpus, weighs)
        if refused > 0:  # never silently: reading a target that is a local server comes out of the run's budget
            note = ctx.provider_budget.spent_text(self.id, refused, "request")
            summary, details = f"{summary} ({note})", [*details, f"run budget: {note}"]
        data = {
            "servers": [self._server_data(s) for s in servers],
            "memory": None if mem is None else asdict(mem),
            "gpu": self._gpu_data(gpus),
            "apple": None if apple is None else {"ram": apple.ram, "gpu_limit": apple.limit, "source": apple.source},
            "target_is_local": local_target,
        }
        return result_of(self, status, summary, findings, details, data)

    # -- servers ---------------------------------------------------------------------------------------

    @staticmethod
    def _server_findings(servers: Sequence[ServerInfo], details: list[str]) -> list[Finding]:
        out: list[Finding] = []
        for s in servers:
            tag = " (the target)" if s.is_target else ""
            version = f" {s.version}" if s.version else ""
            details.append(f"{s.name}{version} at {s.base_url}{tag}: {s.state}")
            for m in s.models:
                share = m.gpu_share
                where = "" if share is None else f", {share:.0%} on GPU"
                details.append(f"  loaded: {m.name} {_gib(m.size)}{where}")
                if share is not None and share < THRESHOLDS["offload_gpu_share"] and m.size:
                    cpu = m.size - (m.size_vram or 0)
                    out.append(
                        Finding(
                            Cause.HARDWARE,
                            Strength.MODERATE if s.is_target else Strength.WEAK,
                            f"{s.name} holds {m.name} ({_gib(m.size)}) with only {share:.0%} in GPU memory; "
                            f"{_gib(cpu)} runs from system RAM on the CPU, which is slow and can time out",
                            data={"server": s.kind, "model": m.name, "size": m.size, "size_vram": m.size_vram},
                            next_steps=(_offload_step(m.name, m.size_vram),),
                        )
                    )
            if s.error:
                details.append(f"  error: {s.error}")
                match = memory_error(s.error)
                if match is not None:
                    row = match.signature
                    # A load error from the server itself is direct evidence, whatever the row's strength in
                    # logs of unknown origin: strong for the target's server, moderate for another one.
                    out.append(
                        Finding(
                            Cause.HARDWARE,
                            Strength.STRONG if s.is_target else Strength.MODERATE,
                            f"{s.name} cannot hold the model: {s.error}",
                            data={"server": s.kind, "memory": row.memory, "signature": row.id},
                            next_steps=(NextStep(row.remedy),),
                        )
                    )
                elif s.state == "loading":
                    details.append(f"  {s.name} is still loading its model; requests get 503 until it is ready")
        return out

    # -- memory ----------------------------------------------------------------------------------------

    @staticmethod
    def _memory_findings(mem: MemoryFacts | None, details: list[str]) -> list[Finding]:
        if mem is None:
            details.append("RAM: unknown (psutil cannot read it here)")
            return []
        details.append(
            f"RAM: {_gib(mem.available)} available of {_gib(mem.total)}; "
            + (f"swap {_gib(mem.swap_used)} used of {_gib(mem.swap_total)}" if mem.swap_total else "no swap")
        )
        share = mem.available_share
        out: list[Finding] = []
        if share < THRESHOLDS["ram_available_low"]:
            critical = share < THRESHOLDS["ram_available_critical"]
            out.append(
                Finding(
                    Cause.HARDWARE,
                    Strength.MODERATE if critical else Strength.WEAK,
                    f"system memory is nearly exhausted: {_gib(mem.available)} available of {_gib(mem.total)} "
                    f"({share:.0%})",
                    data={"available": mem.available, "total": mem.total},
                    next_steps=(_ram_step(),),
                )
            )
            if mem.swap_total and mem.swap_share > THRESHOLDS["swap_heavy"]:
                out.append(
                    Finding(
                        Cause.HARDWARE,
                        Strength.WEAK,
                        f"heavy swapping: {_gib(mem.swap_used)} of {_gib(mem.swap_total)} swap in use while RAM "
                        "is low, so a local model crawls",
                        data={"swap_used": mem.swap_used, "swap_total": mem.swap_total},
                        next_steps=(),  # the low-RAM finding above carries the remedy: free RAM
                    )
                )
        return out

    @staticmethod
    def _gpu_findings(gpus: GpuSnapshot | None, details: list[str]) -> list[Finding]:
        if gpus is None:
            return []
        if not gpus.available:
            details.append(f"GPU: {gpus.reason}")
            return []
        if not gpus.gpus:
            details.append("GPU: NVML reports no devices")
        out: list[Finding] = []
        other_min = THRESHOLDS["gpu_other_process_gib"] * GIB
        for g in gpus.gpus:
            util = f", {g.util_gpu}% busy" if g.util_gpu is not None else ""
            details.append(f"GPU {g.index}: {g.name}, {_gib(g.free)} free of {_gib(g.total)}{util}")
            for p in g.processes:
                details.append(f"  pid {p.pid} {p.name or '?'} holds {_gib(p.used)}")
            if g.total and g.free is not None and g.free / g.total < THRESHOLDS["gpu_free_low"]:
                others = [
                    p
                    for p in g.processes
                    if (p.used or 0) >= other_min and not any(n in (p.name or "").lower() for n in SERVER_PROCESS_NAMES)
                ]
                steps: list[NextStep] = []  # the generic "smaller model, shorter context" comes with the verdict
                if others:
                    names = ", ".join(f"{p.name or '?'} (pid {p.pid}, {_gib(p.used)})" for p in others)
                    steps.append(NextStep(f"Stop the other process(es) holding GPU {g.index}: {names}"))
                out.append(
                    Finding(
                        Cause.HARDWARE,
                        Strength.MODERATE if others else Strength.WEAK,
                        f"GPU {g.index} ({g.name}) memory is nearly full: {_gib(g.free)} free of {_gib(g.total)}"
                        + (f"; held by {names}" if others else ""),
                        data={"gpu": g.index, "free": g.free, "total": g.total, "pids": [p.pid for p in others]},
                        next_steps=tuple(steps),
                    )
                )
        for w in gpus.warnings:
            details.append(f"  NVML: {w}")
        return out

    @staticmethod
    def _apple_findings(apple: AppleGpuLimit, servers: Sequence[ServerInfo]) -> list[Finding]:
        out: list[Finding] = []
        for s in servers:
            for m in s.models:
                if m.size and m.size > apple.limit:
                    out.append(
                        Finding(
                            Cause.HARDWARE,
                            Strength.MODERATE if s.is_target else Strength.WEAK,
                            f"{m.name} ({_gib(m.size)}) is larger than the GPU working-set limit "
                            f"({_gib(apple.limit)} of {_gib(apple.ram)} unified memory)",
                            data={"model": m.name, "size": m.size, "gpu_limit": apple.limit},
                            next_steps=(
                                NextStep(
                                    "Raise the limit (at your own risk)",
                                    f"sudo sysctl iogpu.wired_limit_mb={int(apple.ram * 0.85) // (1024 * 1024)}",
                                ),
                            ),
                        )
                    )
        return out

    # -- result ----------------------------------------------------------------------------------------

    @staticmethod
    def _as_context(f: Finding) -> Finding:
        note = " (context only: the target is not served by a local model runtime)"
        return replace(f, strength=Strength.CONTEXT, message=f.message + note)

    @staticmethod
    def _summary(
        raw: Sequence[Finding],
        servers: Sequence[ServerInfo],
        mem: MemoryFacts | None,
        gpus: GpuSnapshot | None,
        weighs: bool,
    ) -> str:
        if raw:
            first = sorted(raw, key=lambda f: ["strong", "moderate", "weak"].index(f.strength.value))[0]
            more = f" (+{len(raw) - 1} more)" if len(raw) > 1 else ""
            return first.message + more + ("" if weighs else " — context only")
        parts = []
        if servers:
            parts.append(", ".join(s.name for s in servers) + " running")
        else:
            parts.append("no local model server")
        if mem is not None:
            parts.append(f"RAM {_gib(mem.available)} free of {_gib(mem.total)}")
        if gpus is not None:
            parts.append(f"{len(gpus.gpus)} GPU(s)" if gpus.available else (gpus.reason or "no GPU"))
        return "; ".join(parts)

    @staticmethod
    def _server_data(s: ServerInfo) -> dict[str, Any]:
        return {
            "kind": s.kind,
            "name": s.name,
            "base_url": s.base_url,
            "version": s.version,
            "state": s.state,
            "is_target": s.is_target,
            "error": s.error,
            "loaded": [
                {"name": m.name, "size": m.size, "size_vram": m.size_vram, "context_length": m.context_length}
                for m in s.models
            ],
            "models": s.available_models,
        }

    @staticmethod
    def _gpu_data(gpus: GpuSnapshot | None) -> dict[str, Any] | None:
        if gpus is None:
            return None
        return {
            "available": gpus.available,
            "reason": gpus.reason,
            "driver": gpus.driver,
            "devices": [
                {
                    "index": g.index,
                    "name": g.name,
                    "total": g.total,
                    "free": g.free,
                    "used": g.used,
                    "util_gpu": g.util_gpu,
                    "util_memory": g.util_memory,
                    "processes": [{"pid": p.pid, "name": p.name, "used": p.used} for p in g.processes],
                }
                for g in gpus.gpus
            ],
            "warnings": list(gpus.warnings),
        }
