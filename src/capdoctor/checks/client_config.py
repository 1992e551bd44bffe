"""Client configuration findings: what the clients' settings files say, judged against the target.

Contract: `assess_configs(configs, env, target, available, port_open)` turns the `ClientConfig` rows of
`probes.local_clients.read_client_configs` into findings and detail lines (a config that does not parse, a key
variable named but unset, a model the provider does not offer, shell and settings disagreeing, a loopback base
URL where nothing listens); a problem about another provider than the target is context only. It is pure but for
the loopback connect (`port_open`, passed in) and never shows a secret (rows carry none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from capdoctor.model import Cause, Finding, NextStep, Strength
from capdoctor.probes.hosts import ANY_ADDRESS, is_loopback_host
from capdoctor.providers.catalog import adapters

if TYPE_CHECKING:
    from capdoctor.probes.local_clients import ClientConfig
    from capdoctor.run.context import Target

MODEL_ALIASES = frozenset({"opus", "sonnet", "haiku", "opusplan", "default", "best", "auto"})
"""Client-side aliases resolved by the client itself: never compared with the provider's model list."""

PROVIDER_CLIENTS: Mapping[str, tuple[str, ...]] = {a.name: a.clients for a in adapters() if a.clients}
"""Which clients talk to which provider family (others: all of them), from each provider's `clients`."""

CLIENT_ONLY_BASE_URL_ENV: tuple[str, ...] = ("COPILOT_PROVIDER_BASE_URL",)
"""Base-URL variables of clients that may point at any provider (no provider family of their own)."""

ENV_FAMILY: Mapping[str, str] = {
    var: a.name
    for a in reversed(adapters())  # catalogue order wins: OPENAI_BASE_URL is openai's, not openai-compatible's
    for var in (*a.base_url_envs, *a.client_base_url_envs, *a.model_envs)
}
"""Which provider family a shell variable steers (variables not listed may concern any target)."""

BASE_URL_ENV: tuple[str, ...] = tuple(
    dict.fromkeys(
        [v for a in adapters() for v in (*a.base_url_envs, *a.client_base_url_envs)] + list(CLIENT_ONLY_BASE_URL_ENV)
    )
)
"""Shell variables that redirect a client to a gateway or relay."""

OFF_TARGET = " (context: not the endpoint being diagnosed)"
"""Appended to a setup problem that concerns another provider than the target: it cannot explain the error."""


def _norm_url(url: str) -> str:
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{parts.port or ''}{path}"


def _applies(cfg: ClientConfig, target: Target) -> bool:
    """Whether a client config is about the target: same base URL, or the provider's default endpoint."""
    if cfg.base_url:
        return _norm_url(cfg.base_url) == _norm_url(target.base_url)
    family = next((p for p, clients in PROVIDER_CLIENTS.items() if cfg.client in clients), None)
    return cfg.provider in (family, None) and family == target.provider


def _base_urls(
    configs: Sequence[ClientConfig], env: Mapping[str, str], target: Target | None
) -> list[tuple[str, str, bool]]:
    """(where it is set, URL, whether it concerns the target) for every base URL a client would use."""
    found = [(f"env {name}", env[name], _env_relevant(target, name)) for name in BASE_URL_ENV if env.get(name)]
    found += [(f"{c.source} ({c.client})", c.base_url, _cfg_relevant(target, c)) for c in configs if c.base_url]
    return found


def _env_relevant(target: Target | None, name: str) -> bool:
    """Whether a shell variable can affect requests to the target (always, when there is no target)."""
    if target is None:
        return True
    family = ENV_FAMILY.get(name)
    provider = "openai" if target.provider == "openai-compatible" else target.provider
    return family is None or family == provider


def _cfg_relevant(target: Target | None, cfg: ClientConfig) -> bool:
    """Whether a client's settings concern the target: same endpoint, or the target provider's own client."""
    if target is None:
        return True
    if cfg.base_url and _norm_url(cfg.base_url) == _norm_url(target.base_url):
        return True
    # the provider's own client counts even when its settings send it elsewhere (a gateway): that detour
    # is then the likeliest reason the client fails while the provider is fine
    return cfg.client in PROVIDER_CLIENTS.get(target.provider, ())


def _weigh(relevant: bool, strength: Strength, message: str) -> tuple[Strength, str]:
    """The finding's strength and message: unchanged when it concerns the target, else context only."""
    return (strength, message) if relevant else (Strength.CONTEXT, message + OFF_TARGET)


def assess_configs(
    configs: Sequence[ClientConfig],
    env: Mapping[str, str],
    target: Target | None,
    available: Sequence[str] | None,
    port_open: Callable[[str, int], bool],
) -> tuple[list[Finding], list[str]]:
    """The findings about client configurations, and detail lines describing each. Pure but for `port_open`."""
    out: list[Finding] = []
    details: list[str] = []
    for cfg in configs:
        if cfg.error:
            details.append(cfg.error)
            out.append(_unreadable(cfg, target))
            continue
        details.append(_describe(cfg))
        out += _key_unset(cfg, env, target) + _model_not_offered(cfg, target, available)
    out += _disagreements(configs, env, target)
    out += _dead_base_urls(configs, env, target, port_open)
    return out, details


def _describe(cfg: ClientConfig) -> str:
    """One detail line: what the config sets (model, endpoint, provider)."""
    bits = [
        f"model {cfg.model}" if cfg.model else "",
        f"base URL {cfg.base_url}" if cfg.base_url else "",
        f"provider {cfg.provider}" if cfg.provider else "",
    ]
    return f"{cfg.source}: " + (", ".join(b for b in bits if b) or "no model or endpoint set")


def _unreadable(cfg: ClientConfig, target: Target | None) -> Finding:
    """A config that does not parse: the client may ignore it or refuse to start."""
    strength, message = _weigh(
        _cfg_relevant(target, cfg), Strength.MODERATE, f"{cfg.error} — the client may ignore it or refuse to start"
    )
    return Finding(
        Cause.CLIENT,
        strength,
        message,
        data={"path": cfg.source, "client": cfg.client, "unreadable": True},
        next_steps=(NextStep(f"Fix the syntax of {cfg.source} (or move it aside to test)"),),
    )


def _key_unset(cfg: ClientConfig, env: Mapping[str, str], target: Target | None) -> list[Finding]:
    """A config that names its key variable for an endpoint of its own, while that variable is unset."""
    if not (cfg.key_env and not env.get(cfg.key_env) and cfg.base_url):
        return []
    strength, message = _weigh(
        _cfg_relevant(target, cfg),
        Strength.MODERATE,
        f"{cfg.source} says the key is in ${cfg.key_env}, but that variable is not set",
    )
    step = NextStep(f"export {cfg.key_env}=… in the shell that starts the client, or fix env_key in {cfg.source}")
    return [
        Finding(Cause.CLIENT, strength, message, data={"path": cfg.source, "variable": cfg.key_env}, next_steps=(step,))
    ]


def _model_not_offered(cfg: ClientConfig, target: Target | None, available: Sequence[str] | None) -> list[Finding]:
    """A config naming a model the target does not list (client-side aliases are never compared)."""
    if (
        available is None
        or target is None
        or not cfg.model
        or cfg.model.lower() in MODEL_ALIASES
        or not _applies(cfg, target)
        or any(a == cfg.model or a.startswith(cfg.model + "-") for a in available)
    ):
        return []
    sample = ", ".join(available[:6]) + (" …" if len(available) > 6 else "")
    # an explicit base URL equal to the target's is certain; matching only by provider family is
    # not (a Codex ChatGPT login offers models that the API key's list does not show)
    return [
        Finding(
            Cause.CLIENT,
            Strength.MODERATE if cfg.base_url else Strength.WEAK,
            f"{cfg.source} names model {cfg.model!r}, which {target.base_url} does not offer "
            f"(it lists: {sample or 'nothing'})",
            data={"path": cfg.source, "model": cfg.model, "client": cfg.client},
            next_steps=(
                NextStep(
                    f"Set model in {cfg.source} to one the provider lists"
                    + (f", e.g. {available[0]!r}" if available else "")
                ),
            ),
        )
    ]


def _disagreements(configs: Sequence[ClientConfig], env: Mapping[str, str], target: Target | None) -> list[Finding]:
    """A variable set both in the shell and in a settings `env` block to different values; Codex ignoring
    OPENAI_BASE_URL because its provider has its own base URL."""
    out: list[Finding] = []
    for cfg in configs:
        if cfg.error:
            continue
        for name, value in cfg.env_overrides.items():
            if name.startswith("_") or name not in env or env[name] == value:
                continue
            strength, message = _weigh(
                _env_relevant(target, name),
                Strength.WEAK,
                f"${name} differs between the shell ({env[name]}) and {cfg.source} ({value}); "
                "which one wins depends on the client version",
            )
            out.append(
                Finding(
                    Cause.CLIENT,
                    strength,
                    message,
                    data={"variable": name, "path": cfg.source},
                    next_steps=(
                        NextStep(
                            f"Keep {name} in one place: unset it in your shell rc or remove it "
                            f"from the env block of {cfg.source}"
                        ),
                    ),
                )
            )
        if (
            cfg.client == "codex"
            and cfg.base_url
            and env.get("OPENAI_BASE_URL")
            and (_norm_url(cfg.base_url) != _norm_url(env["OPENAI_BASE_URL"]))
        ):
            out.append(
                Finding(
                    Cause.CLIENT,
                    Strength.CONTEXT,
                    f"OPENAI_BASE_URL is set, but Codex uses model_provider {cfg.provider!r} "
                    "with its own base URL "
                    f"from {cfg.source}, so the variable has no effect on Codex",
                    data={"variable": "OPENAI_BASE_URL", "path": cfg.source},
                )
            )
    return out


def _dead_base_urls(
    configs: Sequence[ClientConfig],
    env: Mapping[str, str],
    target: Target | None,
    port_open: Callable[[str, int], bool],
) -> list[Finding]:
    """Loopback base URLs (shell variables, client settings) where nothing listens."""
    out: list[Finding] = []
    checked: dict[tuple[str, int], bool] = {}
    for where, url, relevant in _base_urls(configs, env, target):
        try:
            parts = urlsplit(url if "://" in url else f"http://{url}")
            host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            continue
        if not (is_loopback_host(host) or host == ANY_ADDRESS):
            continue
        key = (host, port)
        if key not in checked:
            checked[key] = port_open("127.0.0.1" if host == "0.0.0.0" else host, port)
        if not checked[key]:
            strength, message = _weigh(
                relevant,
                Strength.MODERATE,
                f"{where} points at {url}, but nothing listens on {host}:{port} (connection refused): a "
                "stopped relay or gateway makes the client fail with connection or capacity errors",
            )
            out.append(
                Finding(
                    Cause.NETWORK,  # the verdict's `local_refused` reading, like the paths and models checks'
                    strength,
                    message,
                    data={"path" if "/" in where else "variable": where, "base_url": url},
                    next_steps=(
                        NextStep(
                            f"Start the local relay/gateway on port {port}, or remove the base URL setting ({where})"
                        ),
                    ),
                )
            )
    return out


def config_data(cfg: ClientConfig) -> dict[str, Any]:
    """A config row as `result.data["configs"]` shows it (rows hold no secret values)."""
    return {
        "client": cfg.client,
        "source": cfg.source,
        "provider": cfg.provider,
        "model": cfg.model,
        "base_url": cfg.base_url,
        "key_env": cfg.key_env,
        "error": cfg.error,
    }
