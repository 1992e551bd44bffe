"""The `hardware` check and its probes: NVML through a recorded-device seam (and for real on this GPU-less
machine), Apple sysctl parsers on captured output, and local servers as real loopback HTTP servers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from capdoctor.checks.hardware import HardwareCheck, memory_error
from capdoctor.model import Cause, Status, Strength
from capdoctor.probes.local_memory import MemoryFacts, apple_gpu_limit, parse_sysctl_lines, parse_sysctl_number
from capdoctor.probes.local_nvml import load_nvml, read_gpus
from capdoctor.probes.local_servers import (
    candidates,
    looks_like_ollama,
    normalize_ollama_host,
    parse_ollama_ps,
)
from capdoctor.run.context import Context, Target
from tests.setups.local import JsonServer

DATA = Path(__file__).parents[1] / "data" / "local"
GIB = 1024**3


def make_ctx(
    home: Path, *, target: Target | None = None, options: dict[str, Any] | None = None, no_inference: bool = False
) -> Context:
    opts = {"local_scan_default_ports": False, **(options or {})}
    return Context(
        env=dict(os.environ),
        home=home,
        cwd=home,
        target=target,
        options=opts,
        no_inference=no_inference,
        deadline=time.monotonic() + 30,
    )


# -- NVML through the seam ----------------------------------------------------------------------------------


class FakeNvml:
    """Stands in for the `pynvml` module with recorded device values (an H200 shared with another job)."""

    class NVMLError(Exception):
        pass

    class NVMLError_NotSupported(NVMLError):
        pass

    class NVMLError_LibraryNotFound(NVMLError):
        pass

    class NVMLLibraryMismatchError(Exception):
        pass

    def __init__(
        self, device: dict[str, Any], *, init_error: type[Exception] | None = None, v3_missing: bool = False
    ) -> None:
        self.device = device
        self.init_error = init_error
        self.v3_missing = v3_missing
        self.shutdown = False

    def nvmlInit(self) -> None:
        if self.init_error:
            raise self.init_error("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        self.shutdown = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return self.device["driver"].encode()

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, i: int) -> str:
        return f"h{i}"

    def nvmlDeviceGetName(self, h: str) -> str:
        return str(self.device["name"])

    def nvmlDeviceGetMemoryInfo(self, h: str) -> SimpleNamespace:
        return SimpleNamespace(**self.device["memory"])

    def nvmlDeviceGetUtilizationRates(self, h: str) -> SimpleNamespace:
        raise self.NVMLError_NotSupported("Not Supported")  # as on WSL

    def nvmlDeviceGetComputeRunningProcesses(self, h: str) -> list[SimpleNamespace]:
        if self.v3_missing:
            raise self.NVMLLibraryMismatchError("Unversioned function called and the pyNVML version does not match")
        return [SimpleNamespace(**p) for p in self.device["processes"]]

    def nvmlDeviceGetComputeRunningProcesses_v2(self, h: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(**p) for p in self.device["processes"]]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: str) -> list[SimpleNamespace]:
        return []


def recorded(name: str) -> dict[str, Any]:
    return dict(json.loads((DATA / name).read_text(encoding="utf-8")))


def test_nvml_snapshot_from_recorded_device_wraps_each_call() -> None:
    nvml = FakeNvml(recorded("nvml_h200_busy.json"))
    snap = read_gpus(nvml, {4242: "python3", 777: "ollama"}.get)
    assert snap.available and snap.driver == "580.95.05"
    gpu = snap.gpus[0]
    assert gpu.name == "NVIDIA H200" and gpu.total == 150_754_820_096 and gpu.free == 2_147_483_648
    assert gpu.util_gpu is None  # NotSupported on this call only
    assert any("utilisation" in w and "not supported" in w for w in snap.warnings)
    assert [(p.pid, p.name, p.used) for p in gpu.processes] == [
        (4242, "python3", 120_259_084_288),
        (777, "ollama", 25_769_803_776),
    ]
    assert nvml.shutdown


def test_nvml_old_driver_falls_back_to_v2_processes() -> None:
    snap = read_gpus(FakeNvml(recorded("nvml_h200_busy.json"), v3_missing=True))
    assert [p.pid for p in snap.gpus[0].processes] == [4242, 777]


def test_nvml_library_not_found_is_a_reason_not_an_error() -> None:
    snap = read_gpus(FakeNvml({}, init_error=FakeNvml.NVMLError_LibraryNotFound))
    assert not snap.available and snap.reason is not None and snap.reason.startswith("NVML library not found")


def test_nvml_for_real_on_this_machine() -> None:
    snap = read_gpus(load_nvml())
    if snap.available:  # pragma: no cover - only on a machine with an NVIDIA driver
        assert all(g.total for g in snap.gpus)
    else:
        assert snap.reason is not None and "NVML library not found" in snap.reason


def test_gpu_held_by_another_process_is_hardware_evidence(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    import capdoctor.probes.local_nvml as local_nvml

    monkeypatch.setattr(local_nvml, "load_nvml", lambda: FakeNvml(recorded("nvml_h200_busy.json")))
    monkeypatch.setattr(local_nvml, "process_name", {4242: "python3", 777: "ollama"}.get)
    with JsonServer(ollama_routes(loaded=())) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="llama3.2:3b")
        result = HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": server.url}))
    gpu = [f for f in result.findings if "GPU 0" in f.message]
    assert gpu and gpu[0].strength is Strength.MODERATE and gpu[0].data["pids"] == [4242]
    assert "python3 (pid 4242" in gpu[0].next_steps[0].text  # ollama itself is not "another process"
    assert result.data["gpu"]["devices"][0]["name"] == "NVIDIA H200"


# -- Apple unified memory (captured sysctl output) ---------------------------------------------------------


def test_sysctl_parsers_on_captured_output() -> None:
    values = parse_sysctl_lines((DATA / "sysctl_m3_16g.txt").read_text(encoding="utf-8"))
    assert values == {"hw.memsize": 17_179_869_184, "iogpu.wired_limit_mb": 0}
    limit = apple_gpu_limit(values)
    assert limit is not None and limit.source == "estimate"
    assert 10.5 * GIB < limit.limit < 11.1 * GIB  # ~2/3 of 16 GiB (Apple reports 11.84 GB = 11.0 GiB)
    raised = apple_gpu_limit(parse_sysctl_lines((DATA / "sysctl_m5max_128g_raised.txt").read_text()))
    assert raised is not None and raised.source == "iogpu.wired_limit_mb" and raised.limit == 120_000 * 1024**2
    intel = parse_sysctl_lines("hw.memsize: 34359738368\nsysctl: unknown oid 'iogpu.wired_limit_mb'\n")
    assert intel == {"hw.memsize": 34_359_738_368}
    assert parse_sysctl_number("17179869184\n") == 17_179_869_184
    assert parse_sysctl_number("garbage") is None
    assert apple_gpu_limit({}) is None


# -- local servers: pure parts -----------------------------------------------------------------------------


def test_parse_ollama_ps_and_gpu_share() -> None:
    models = parse_ollama_ps(json.loads((DATA / "ollama_ps_partial.json").read_text()))
    assert [(m.name, m.context_length) for m in models] == [("llama3.1:70b", 8192)]
    assert models[0].gpu_share == pytest.approx(23_622_320_128 / 42_520_412_160)
    assert parse_ollama_ps({"models": [{"size": 1}, "junk"]}) == []
    assert parse_ollama_ps(None) == []


@pytest.mark.parametrize(
    ("text", "memory"),
    [
        ("Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)", "ram"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity", "vram"),
        ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", "kv-cache"),
        (
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out "
            "of memory",
            "vram",
        ),
        ("ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "vram"),
        ("Not enough resources to load the model with the current settings", "vram"),
    ],
)
def test_memory_error_field_cases(text: str, memory: str) -> None:
    match = memory_error(text)
    assert match is not None and match.signature.memory == memory and match.signature.remedy
    assert match.signature.cause is Cause.HARDWARE


@pytest.mark.parametrize(
    "text",
    [
        # what the check's private table used to catch (Ollama llm/status.go outOfMemorySubstrings and the
        # vLLM / llama.cpp / LM Studio messages), now served by the signature table; texts written for this test
        "Error: llama runner process has terminated: CUDA error: out of memory",
        "load failed: unable to load full model on GPU",
        "hipMalloc failed: out of memory while loading layer 41",
        "ggml_vulkan: VK_ERROR_OUT_OF_DEVICE_MEMORY while creating the KV buffer",
        "Metal: out of device memory",
        "llama_model_load: insufficient memory - required allocations: 12.3 GiB",
        "runner: not enough memory to load tensors",
        "failed to allocate 4096.00 MiB for the compute graph",
        "RuntimeError: out of memory",
        "The model's KV cache (8.0 GiB) is larger than the available KV cache memory (2.1 GiB).",
        "kernel: Out of memory: Killed process 911 (ollama_llama_server)",
    ],
)
def test_memory_error_covers_the_old_markers(text: str) -> None:
    match = memory_error(text)
    assert match is not None and match.signature.cause is Cause.HARDWARE, text


def test_memory_error_comes_from_the_one_table() -> None:
    from capdoctor.classifier.signatures import by_id

    match = memory_error("HTTP 500: model requires more system memory (39.4 GiB) than is available (30.0 GiB)")
    assert match is not None and match.signature is by_id()[match.signature.id]  # a table row, not a private one
    assert match.signature.id == "local.system_memory" and match.signature.memory == "ram"


@pytest.mark.parametrize(
    "text",
    [
        "model 'llama2' not found, try pulling it first",
        "server busy, please try again.  maximum pending requests exceeded",
        "",
    ],
)
def test_memory_error_ignores_other_errors(text: str) -> None:
    assert memory_error(text) is None


def test_memory_error_ignores_the_weak_crash_symptom() -> None:
    # "the connection dropped" is only *likely* a crash: a load error must say that memory ran out
    assert memory_error("Error: error reading llm response: unexpected EOF") is None


def test_ollama_host_forms_and_target_shapes() -> None:
    assert normalize_ollama_host("0.0.0.0") == "http://127.0.0.1:11434"
    assert normalize_ollama_host("127.0.0.1:11500") == "http://127.0.0.1:11500"
    assert normalize_ollama_host("http://localhost:11434/") == "http://localhost:11434"
    assert looks_like_ollama("http://127.0.0.1:5000/ollama/v1") and looks_like_ollama("http://h:11434/v1")
    assert not looks_like_ollama("https://api.openai.com/v1")
    cands = candidates({"OLLAMA_HOST": "0.0.0.0:11500"}, {}, None)
    assert cands[0] == ("ollama", "http://127.0.0.1:11500")
    assert ("vllm", "http://127.0.0.1:8000") in cands
    local = Target(provider="openai-compatible", base_url="http://127.0.0.1:11434/v1", model="m")
    assert candidates({}, {"local_scan_default_ports": False}, local) == [("ollama", "http://127.0.0.1:11434")]


# -- the check against loopback servers --------------------------------------------------------------------

OOM = "model requires more system memory (39.4 GiB) than is available (30.0 GiB)"


def ollama_routes(
    loaded: tuple[dict[str, Any], ...], chat: tuple[int, Any] = (200, {"done": True})
) -> dict[tuple[str, str], tuple[int, Any]]:
    return {
        ("GET", "/api/version"): (200, {"version": "0.12.6"}),
        ("GET", "/api/ps"): (200, {"models": list(loaded)}),
        ("POST", "/api/chat"): chat,
    }


def test_local_ollama_that_cannot_load_the_target_model(home: Path) -> None:
    with JsonServer(ollama_routes(loaded=(), chat=(500, {"error": OOM}))) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="llama3.1:70b")
        result = HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": server.url}))
        load = json.loads(server.bodies[-1])
    assert load == {"model": "llama3.1:70b", "messages": [], "stream": False}  # loads, generates nothing
    oom = [f for f in result.findings if f.data.get("memory") == "ram"]
    assert oom and oom[0].cause is Cause.HARDWARE and oom[0].strength is Strength.STRONG
    assert any("quantization" in s.text for s in oom[0].next_steps)
    assert oom[0].data["signature"] == "local.system_memory"
    assert result.status is Status.FAIL
    assert result.data["servers"][0]["is_target"] and result.data["target_is_local"]


def test_no_inference_skips_the_load_probe(home: Path) -> None:
    with JsonServer(ollama_routes(loaded=(), chat=(500, {"error": OOM}))) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="llama3.1:70b")
        HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": server.url}, no_inference=True))
        assert ("POST", "/api/chat") not in server.seen


def test_cloud_target_makes_local_hardware_context_only(home: Path) -> None:
    partial = json.loads((DATA / "ollama_ps_partial.json").read_text())["models"]
    with JsonServer(ollama_routes(loaded=tuple(partial))) as server:
        target = Target(provider="openai", base_url="https://api.openai.com/v1", model="gpt-5.5")
        result = HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": server.url}))
        assert ("POST", "/api/chat") not in server.seen  # not the target: never asked to load anything
    offload = [f for f in result.findings if "in GPU memory" in f.message]
    assert offload and all(f.strength is Strength.CONTEXT for f in result.findings)
    assert result.status is Status.WARN and "context only" in result.summary


def test_partly_offloaded_target_model(home: Path) -> None:
    partial = json.loads((DATA / "ollama_ps_partial.json").read_text())["models"]
    with JsonServer(ollama_routes(loaded=tuple(partial))) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="llama3.1:70b")
        result = HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": server.url}))
    offload = [f for f in result.findings if "in GPU memory" in f.message]
    assert offload and offload[0].strength is Strength.MODERATE and "56%" in offload[0].message
    assert result.status is Status.FAIL


def test_llama_cpp_still_loading(home: Path) -> None:
    routes = {
        ("GET", "/health"): (503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
    }
    with JsonServer(routes) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="qwen")
        result = HardwareCheck().run(make_ctx(home, target=target))
    servers = result.data["servers"]
    assert servers[0]["kind"] == "llamacpp" and servers[0]["state"] == "loading"
    assert any("still loading" in d for d in result.details)


def test_nothing_local_passes_with_ram_facts(home: Path) -> None:
    result = HardwareCheck().run(make_ctx(home, options={"ollama_url": "http://127.0.0.1:9"}))
    assert result.status in (Status.PASS, Status.WARN)
    assert result.data["memory"]["total"] > 0 and result.data["servers"] == []
    assert "no local model server" in result.summary or result.findings


def test_memory_thresholds() -> None:
    details: list[str] = []
    low = HardwareCheck._memory_findings(MemoryFacts(32 * GIB, 1 * GIB, 8 * GIB, 6 * GIB), details)
    assert [f.strength for f in low] == [Strength.MODERATE, Strength.WEAK]  # nearly exhausted + swapping
    assert "heavy swapping" in low[1].message
    ok = HardwareCheck._memory_findings(MemoryFacts(32 * GIB, 16 * GIB, 8 * GIB, 6 * GIB), [])
    assert ok == []


# -- the simulator's Ollama shape --------------------------------------------------------------------------


@pytest.mark.scenario("local-oom")
def test_simulator_local_oom(sim: Any, home: Path) -> None:
    base = sim.base_url("ollama")
    assert base == sim.url + "/ollama"
    target = Target(provider="openai-compatible", base_url=sim.base_url("openai-compatible"), model="llama3.1:70b")
    result = HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": base}))
    assert result.status is Status.FAIL
    server = result.data["servers"][0]
    assert server["kind"] == "ollama" and server["is_target"] and server["version"]
    causes = {(f.cause, f.strength) for f in result.findings}
    assert (Cause.HARDWARE, Strength.STRONG) in causes  # "model requires more system memory"
    assert any("in GPU memory" in f.message for f in result.findings)  # size_vram < size


HTML = "<html><head><meta http-equiv='refresh' content='0; url=http://portal.test/login'></head></html>"


@pytest.mark.parametrize(
    ("routes", "kind"),
    [
        ({("GET", "/health"): (200, ""), ("GET", "/v1/models"): (200, {"data": [{"id": "Qwen/Qwen3-8B"}]})}, "vllm"),
        (
            {
                ("GET", "/health"): (200, ""),
                ("GET", "/info"): (200, {"model_id": "bigscience/bloom", "version": "3.3"}),
            },
            "tgi",
        ),
        ({("GET", "/health"): (200, {"status": "ok"})}, "llamacpp"),
        ({("GET", "/v1/models"): (200, {"object": "list", "data": [{"id": "gpt-5.5"}]})}, "openai-compatible"),
        (
            {
                ("GET", "/v1/models"): (
                    200,
                    {"data": [{"type": "model", "id": "claude-opus-4-7"}], "has_more": False, "first_id": "c"},
                )
            },
            "anthropic-compatible",
        ),
        (
            {
                ("GET", "/v1/models"): (
                    400,
                    {"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic-version"}},
                )
            },
            "anthropic-compatible",
        ),
        ({("GET", "/v1/models"): (200, {"models": [{"name": "models/gemini-2.5-pro"}]})}, "gemini-compatible"),
        ({("GET", "/v1beta/models"): (200, {"models": [{"name": "models/gemini-2.5-pro"}]})}, "gemini-compatible"),
        ({("GET", p): (200, HTML) for p in ("/api/version", "/health", "/info", "/v1/models")}, None),
        ({("GET", "/health"): (503, HTML)}, None),
    ],
    ids=[
        "vllm",
        "tgi",
        "llamacpp",
        "relay",
        "anthropic-list",
        "anthropic-error",
        "gemini-v1",
        "gemini-v1beta",
        "captive-portal",
        "html-503",
    ],
)
def test_probe_identifies_runtimes_and_ignores_html(routes: dict[tuple[str, str], Any], kind: str | None) -> None:
    import httpx

    from capdoctor.probes.local_servers import probe_server

    with JsonServer(routes) as server, httpx.Client(timeout=5) as client:
        info = probe_server(client, None, server.url)
    assert (info.kind if info else None) == kind
    if info is not None and kind != "openai-compatible":  # the shape it saw, never "OpenAI-compatible" (#34)
        assert "OpenAI" not in info.name
    if kind == "gemini-compatible":
        assert info is not None and info.available_models == ["gemini-2.5-pro"]


def test_local_relay_target_keeps_local_facts_as_context(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import capdoctor.probes.local_memory as local_memory

    monkeypatch.setattr(local_memory, "memory_facts", lambda: MemoryFacts(32 * GIB, 1 * GIB, 0, 0))
    with JsonServer({("GET", "/v1/models"): (200, {"data": [{"id": "gpt-5.5"}]})}) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="gpt-5.5")
        result = HardwareCheck().run(make_ctx(home, target=target))
    assert result.data["servers"][0]["kind"] == "openai-compatible" and result.data["servers"][0]["is_target"]
    low = [f for f in result.findings if "nearly exhausted" in f.message]
    assert low and low[0].strength is Strength.CONTEXT  # a relay to the cloud: local RAM is not the cause


def test_each_finding_carries_only_its_own_remedy(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo used to say "use a smaller model or quantization" three times: each finding carried the
    generic hardware steps too. Now a finding carries at most its specific remedy, and the verdict adds the
    generic ones once."""
    import capdoctor.probes.local_memory as local_memory
    from capdoctor.verdict.advice import CAUSE_TEXT
    from capdoctor.verdict.decision import decide

    monkeypatch.setattr(local_memory, "memory_facts", lambda: MemoryFacts(32 * GIB, 1 * GIB, 8 * GIB, 6 * GIB))
    partial = json.loads((DATA / "ollama_ps_partial.json").read_text())["models"]
    with JsonServer(ollama_routes(loaded=tuple(partial), chat=(500, {"error": OOM}))) as server:
        target = Target(provider="openai-compatible", base_url=server.url + "/v1", model="llama3.1:70b")
        result = HardwareCheck().run(make_ctx(home, target=target, options={"ollama_url": server.url}))
    generic = {s.text for s in CAUSE_TEXT[Cause.HARDWARE.value].steps}
    assert len(result.findings) >= 4  # load error, offload, low RAM, swapping
    for f in result.findings:
        assert len(f.next_steps) <= 1 and not {s.text for s in f.next_steps} & generic, f
    verdict = decide([result])
    texts = [s.text.lower() for s in verdict.next_steps]
    assert len(texts) == len(set(texts))
    assert sum("smaller" in t for t in texts) == 1, texts  # the generic step, once
    ram = [f for f in result.findings if f.data.get("memory") == "ram" or "nearly exhausted" in f.message]
    assert len({f.next_steps[0].text for f in ram}) == 1  # one wording for "free RAM", from the table


def test_model_wholly_on_cpu_points_at_the_gpu_setup() -> None:
    from capdoctor.probes.local_servers import LoadedModel, ServerInfo

    on_cpu = LoadedModel("qwen3:8b", 5 * GIB, 0)
    server = ServerInfo("ollama", "http://127.0.0.1:11434", models=[on_cpu], is_target=True)
    findings = HardwareCheck._server_findings([server], [])
    assert len(findings) == 1 and "0% in GPU memory" in findings[0].message
    assert [s.text for s in findings[0].next_steps] == [findings[0].next_steps[0].text]
    assert "sees the GPU" in findings[0].next_steps[0].text
