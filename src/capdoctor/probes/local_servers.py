"""Local model servers: find Ollama, LM Studio, vLLM, llama.cpp and TGI on loopback and read their state.

Contract: `candidates()` lists the base URLs worth probing; `probe_server()` identifies what answers there with a
few tiny GETs, and names a server no runtime's answer identifies by the API shape it answered in (OpenAI,
Anthropic or Gemini), never calling an Anthropic or Gemini answer OpenAI-compatible; `ollama_load()` asks Ollama
to load the target model with an empty chat (no tokens), which is where "model requires more system memory"
appears. Must not probe anything but the given bases, generate tokens, raise for a closed port or a malformed
answer, or judge the error texts it returns (the hardware check classifies them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from capdoctor.probes.hosts import hostname, is_loopback, url_port_open
from capdoctor.target import urls

if TYPE_CHECKING:
    import httpx

    from capdoctor.run.context import Target

OLLAMA_DEFAULT = "http://127.0.0.1:11434"


@dataclass(frozen=True)
class ServerKind:
    """A local runtime: its id, display name and the port it listens on by default."""

    id: str
    name: str
    default_port: int


SERVERS: tuple[ServerKind, ...] = (
    ServerKind("ollama", "Ollama", 11434),
    ServerKind("lmstudio", "LM Studio", 1234),
    ServerKind("vllm", "vLLM", 8000),
    ServerKind("llamacpp", "llama.cpp server", 8080),
    ServerKind("tgi", "text-generation-inference", 3000),
)
"""Default ports (platform-facts E.1–E.5; TGI's launcher port is unconfirmed, Docker maps it anywhere)."""

SHAPE_NAMES = {
    "openai-compatible": "OpenAI-compatible local server",
    "anthropic-compatible": "Anthropic-compatible local server",
    "gemini-compatible": "Gemini-API-compatible local server",
}
"""An unidentified server, named by the API shape it answered in (a relay, a gateway, a fake provider)."""

KIND_NAMES = {k.id: k.name for k in SERVERS} | SHAPE_NAMES

OTHER_LOCAL_HOSTS = frozenset({"0.0.0.0", "host.docker.internal"})
"""Hosts that are this machine without being loopback names (see `capdoctor.probes.hosts` for those)."""


@dataclass(frozen=True)
class LoadedModel:
    """A model a server holds in memory; `size_vram` < `size` means part of it runs from system RAM."""

    name: str
    size: int | None
    size_vram: int | None
    context_length: int | None = None

    @property
    def gpu_share(self) -> float | None:
        """Fraction of the model in GPU memory (None when the server does not say)."""
        if not self.size or self.size_vram is None:
            return None
        return max(0.0, min(1.0, self.size_vram / self.size))


@dataclass
class ServerInfo:
    """What answered at one base URL."""

    kind: str
    base_url: str
    version: str | None = None
    state: str = "ready"  # "ready", "loading", "error"
    models: list[LoadedModel] = field(default_factory=list)
    available_models: list[str] = field(default_factory=list)
    is_target: bool = False
    error: str | None = None  # error text the server returned (load failure, health message)

    @property
    def name(self) -> str:
        """Display name of the runtime."""
        return KIND_NAMES.get(self.kind, self.kind)


def _num(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_ollama_ps(body: Any) -> list[LoadedModel]:
    """Loaded models from Ollama `GET /api/ps` (`{"models": [{name, size, size_vram, context_length}]}`)."""
    models = body.get("models") if isinstance(body, dict) else None
    out: list[LoadedModel] = []
    for m in models if isinstance(models, list) else []:
        if not isinstance(m, dict):
            continue
        name = m.get("name") or m.get("model")
        if not isinstance(name, str):
            continue
        out.append(LoadedModel(name, _num(m.get("size")), _num(m.get("size_vram")), _num(m.get("context_length"))))
    return out


def error_text(body: Any, raw: str) -> str:
    """The human error of a JSON error body (`{"error": "..."}` or `{"error": {"message": ...}}`), else raw."""
    if isinstance(body, dict):
        err = body.get("error", body.get("message", body.get("detail")))
        if isinstance(err, dict):
            err = err.get("message") or err.get("type")
        if isinstance(err, str):
            return err
    return raw.strip()[:500]


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def normalize_ollama_host(value: str) -> str:
    """An OLLAMA_HOST value (`0.0.0.0`, `host:port`, `http://host:port`) as a base URL to connect to."""
    raw = value.strip()
    if "://" not in raw:
        raw = "http://" + raw
    parts = urlsplit(raw)
    host = parts.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 11434)
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def api_root(base_url: str) -> str:
    """A server's root from an OpenAI-style base URL: `http://h:11434/v1` → `http://h:11434`."""
    return urls.root(base_url, ("/v1",))


def is_local(base_url: str) -> bool:
    """True when the URL's host is this machine: loopback, 0.0.0.0, or Docker's alias for the host."""
    return is_loopback(base_url) or hostname(base_url) in OTHER_LOCAL_HOSTS


def looks_like_ollama(base_url: str) -> bool:
    """Whether a target base URL names an Ollama by its shape: path `/ollama` or port 11434."""
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return False
    return "/ollama" in parts.path.rstrip("/").removesuffix("/v1") or port == 11434


def candidates(
    env: Mapping[str, str], options: Mapping[str, Any], target: Target | None
) -> list[tuple[str | None, str]]:
    """(kind hint, base URL) pairs to probe, target and Ollama first, one per host:port+path."""
    out: list[tuple[str | None, str]] = []
    if target is not None and is_local(target.base_url):
        hint = "ollama" if looks_like_ollama(target.base_url) else None
        out.append((hint, api_root(target.base_url)))
    if options.get("ollama_url"):
        out.append(("ollama", api_root(str(options["ollama_url"]))))
    elif env.get("OLLAMA_HOST"):
        out.append(("ollama", normalize_ollama_host(env["OLLAMA_HOST"])))
    else:
        out.append(("ollama", OLLAMA_DEFAULT))
    if options.get("local_scan_default_ports", True):
        out += [(k.id, f"http://127.0.0.1:{k.default_port}") for k in SERVERS if k.id != "ollama"]
    seen: set[str] = set()
    unique: list[tuple[str | None, str]] = []
    for hint, url in out:
        key = url.rstrip("/")
        if key not in seen:
            seen.add(key)
            unique.append((hint, key))
    return unique


def port_open(base_url: str, timeout: float) -> bool:
    """A TCP connect to the URL's host and port succeeds (cheap filter before any HTTP)."""
    return url_port_open(base_url, timeout) is True


def probe_server(client: httpx.Client, hint: str | None, base: str) -> ServerInfo | None:
    """Identify the runtime at `base` and read its state, or None when nothing model-like answers.

    HTML or other non-JSON answers never identify a server (a captive portal answers 200 everywhere), and a
    first request that gets no HTTP answer at all ends the probe (a black hole must not cost three timeouts).
    """
    import httpx

    def get(path: str) -> httpx.Response | None:
        try:
            return client.get(urls.join(base, path))
        except httpx.HTTPError:
            return None

    resp = get("/api/version")
    if resp is None:
        return None
    body = _json(resp) if resp.status_code == 200 else None
    if isinstance(body, dict) and isinstance(body.get("version"), str):
        info = ServerInfo("ollama", base, version=body["version"])
        ps = get("/api/ps")
        if ps is not None and ps.status_code == 200:
            info.models = parse_ollama_ps(_json(ps))
        return info
    health = get("/health")
    if health is not None and health.status_code in (200, 503):
        hbody = _json(health)
        text = error_text(hbody, health.text)
        if health.status_code == 503 and (hbody is not None or "loading" in text.lower()):
            kind = "llamacpp" if "loading model" in text.lower() or hint == "llamacpp" else (hint or "vllm")
            return ServerInfo(kind, base, state="loading" if "loading" in text.lower() else "error", error=text)
        if health.status_code == 200 and isinstance(hbody, dict) and hbody.get("status") == "ok":
            return ServerInfo("llamacpp", base, available_models=_model_ids(get("/v1/models")))
        if health.status_code == 200 and not health.content.strip():  # vLLM and TGI answer 200 with no body
            tgi = get("/info")
            tbody = _json(tgi) if tgi is not None and tgi.status_code == 200 else None
            if isinstance(tbody, dict) and "model_id" in tbody:
                version = tbody.get("version")
                return ServerInfo(
                    "tgi",
                    base,
                    version=version if isinstance(version, str) else None,
                    available_models=[str(tbody["model_id"])],
                )
            kind = hint if hint in ("vllm", "lmstudio") else "vllm"
            return ServerInfo(kind, base, available_models=_model_ids(get("/v1/models")))
    models = get("/v1/models")
    answer = _json(models) if models is not None else None
    listing = answer if models is not None and models.status_code == 200 else None
    shape = api_shape(listing) if isinstance(listing, dict) else None
    if shape == "openai-compatible":
        kind = hint if hint in ("lmstudio", "vllm") else shape
        return ServerInfo(kind, base, available_models=_model_ids(models))
    if shape == "anthropic-compatible":
        return ServerInfo(shape, base, available_models=_model_ids(models))
    if shape == "gemini-compatible" and isinstance(listing, dict):
        return ServerInfo(shape, base, available_models=_gemini_ids(listing))
    if _anthropic_error(answer):  # Anthropic's error body (`/v1/models` without an `anthropic-version` header)
        return ServerInfo("anthropic-compatible", base)
    if models is not None and models.status_code == 404:  # Gemini's API lists its models under v1beta
        beta = get("/v1beta/models")
        blisting = _json(beta) if beta is not None and beta.status_code == 200 else None
        if isinstance(blisting, dict) and api_shape(blisting) == "gemini-compatible":
            return ServerInfo("gemini-compatible", base, available_models=_gemini_ids(blisting))
    return None


def api_shape(listing: Mapping[str, Any]) -> str | None:
    """The API shape of a model listing: `openai-compatible` (`data`, `object: list`), `anthropic-compatible`
    (`data` of `type: model` entries, `has_more`), `gemini-compatible` (`models` named `models/…`), else None."""
    data = listing.get("data")
    if isinstance(data, list):
        typed = any(isinstance(m, dict) and m.get("type") == "model" for m in data)
        if "has_more" in listing or "first_id" in listing or (typed and "object" not in listing):
            return "anthropic-compatible"
        return "openai-compatible"
    entries = listing.get("models")
    if isinstance(entries, list) and any(
        isinstance(m, dict) and str(m.get("name", "")).startswith("models/") for m in entries
    ):
        return "gemini-compatible"
    return None


def _anthropic_error(body: Any) -> bool:
    """Whether `body` is Anthropic's error object: `{"type": "error", "error": {"type": …, "message": …}}`."""
    return isinstance(body, dict) and body.get("type") == "error" and isinstance(body.get("error"), dict)


def _gemini_ids(listing: Mapping[str, Any]) -> list[str]:
    entries = listing.get("models")
    rows = entries if isinstance(entries, list) else []
    return [
        str(m["name"]).removeprefix("models/") for m in rows if isinstance(m, dict) and isinstance(m.get("name"), str)
    ]


def _model_ids(resp: httpx.Response | None) -> list[str]:
    body = _json(resp) if resp is not None and resp.status_code == 200 else None
    data = body.get("data") if isinstance(body, dict) else None
    return [str(m["id"]) for m in data or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def ollama_load(client: httpx.Client, base: str, model: str, timeout: float) -> str | None:
    """Ask Ollama to load `model` (empty chat: loads it, generates nothing); the error text, or None if it loaded.

    Why: Ollama checks memory only when it loads a model, so "model requires more system memory" or a
    CUDA out-of-memory appears here and not in `/api/ps`.
    """
    import httpx

    try:
        resp = client.post(
            urls.join(base, "api/chat"),
            content=json.dumps({"model": model, "messages": [], "stream": False}),
            headers={"content-type": "application/json"},
            timeout=timeout,
        )
    except httpx.HTTPError as exc:
        return f"load request failed: {type(exc).__name__}: {exc}"
    if resp.status_code == 200:
        return None
    return f"HTTP {resp.status_code}: {error_text(_json(resp), resp.text)}"
