"""Target discovery: which provider, base URL, model and key a diagnosis should use, and where each came from.

Contract: `discover(flags, env, home, cwd, platform)` resolves every field of a `Target` in one fixed order —
flags → `capdoctor.toml` (project, then user) → environment → the clients' own config (Codex, Claude Code,
Gemini CLI) → the provider's defaults — and records a human source for each (`env ANTHROPIC_BASE_URL`).
`describe()` reports the values with their sources for `capdoctor config`, the key's variable and shape (never
its value), and findings such as a dead loopback base URL, a relay, a stale `*_BASE_URL` from a shell profile,
or an unreadable client file. The files are read by `configfile` and `client_settings`; this module only
decides what they mean for the target and in which order.

What stops a run: a bad value the user gave capdoctor itself (a flag, capdoctor.toml, a variable capdoctor reads)
raises `UsageError`/`ConfigError` naming it (exit 2, before any request). A client's own broken file is the
diagnosis, not a reason to stop: discovery goes on without it and the `client` check reports it.

It must not take a key from the command line, print anything, or put a key's value into what `describe()`
returns. Only `describe()` does network I/O (one short loopback connect per local base URL).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capdoctor.errors import ConfigError, UsageError
from capdoctor.probes.hosts import is_loopback, url_port_open
from capdoctor.providers.base import host_of
from capdoctor.providers.catalog import (
    PROVIDER_NAMES,
    adapter_for,
    canonical,
    env_markers,
    is_official,
    provider_for_host,
    provider_for_model,
)
from capdoctor.run.context import Target
from capdoctor.target.client_settings import (
    ClientConfigError,
    Setting,
    claude_dir,
    claude_settings_paths,
    codex_config_path,
    gemini_env_paths,
    gemini_settings_path,
    line_of,
    read_claude_settings,
    read_codex_config,
    read_dotenv,
    read_gemini_settings,
    show,
    type_problem,
)
from capdoctor.target.configfile import (
    TARGET_KEYS,
    ConfigFile,
    config_files,
    read_config_files,
)
from capdoctor.target.keys import describe_key, problem_text, shape_text
from capdoctor.target.options import Options, text_problem
from capdoctor.target.urls import url_problem

if TYPE_CHECKING:
    from capdoctor.providers.base import Adapter
    from capdoctor.target.keys import KeyFacts

WIRE_APIS = ("chat", "responses")

CODEX_BUILTIN: dict[str, tuple[str, str]] = {
    "ollama": ("openai-compatible", "http://localhost:11434/v1"),
    "lmstudio": ("openai-compatible", "http://localhost:1234/v1"),
}
"""Codex's built-in local providers: (capdoctor provider, default base URL)."""

SHELL_FILES = (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv", ".config/fish/config.fish")
SHELL_EXPORT = re.compile(r"^\s*(?:export\s+|set\s+-[gxU]+\s+)?([A-Z][A-Z0-9_]*_(?:BASE_URL|API_BASE))[=\s]")


@dataclass
class DiscoveryFlags:
    """What the command line said about the target (the key itself is never a flag)."""

    provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    alt_models: tuple[str, ...] = ()
    api_key_env: str | None = None
    logs: tuple[Path, ...] = ()
    wire_api: str | None = None


@dataclass
class Layer:
    """One configuration source's values for the target fields, with the source label for each."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: Any, source: str) -> None:
        """Record `value` for `key` unless it is empty."""
        if value not in (None, "", (), []):
            self.values[key] = value
            self.sources[key] = source


def _str(file: str, text: str, table: Mapping[str, Any], key: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(type_problem(file, text, key, value))
    problem = value_problem(key, value)
    if problem:
        raise ConfigError(f"{_at(file, text, key)}: {key} {value!r} {problem}")
    return value


def _at(file: str, text: str, key: str) -> str:
    line = line_of(text, key)
    return f"{file}:{line}" if line else file


def value_problem(key: str, value: str) -> str | None:
    """Why `value` cannot be the target's `key` (`is empty`, `contains a line feed`, …), or None.

    What a flag, capdoctor.toml or a variable gives is refused with it (exit 2); what a client's file gives is
    left out and reported.
    """
    if key == "base_url":
        return url_problem(value)
    problem = text_problem(value)
    if problem:
        return problem
    if key in ("api_key_env", "provider", "wire_api") and any(c.isspace() for c in value.strip()):
        return "contains a blank"
    return None


FLAG_NAMES = {
    "provider": "--provider",
    "base_url": "--base-url",
    "model": "--model",
    "alt_models": "--alt-model",
    "api_key_env": "--api-key-env",
    "wire_api": "--wire-api",
}


def _flag_layer(flags: DiscoveryFlags) -> Layer:
    """The flags as a layer; an empty or unusable value is a usage error (never replaced by a default)."""
    layer = Layer()
    for key, name in FLAG_NAMES.items():
        value = getattr(flags, key)
        for one in value if isinstance(value, tuple) else (value,):
            if one is None:
                continue
            problem = value_problem(key, one)
            if problem:
                raise UsageError(f"{name} {one!r} (flag {name}) {problem}")
        layer.set(
            key,
            tuple(v.strip() for v in value) if isinstance(value, tuple) else value.strip() if value else value,
            f"flag {name}",
        )
    return layer


def _toml_layer(file: ConfigFile) -> Layer:
    text, src, doc = file.text, file.source, file.doc
    layer = Layer()
    table = doc.get("target", doc)
    if not isinstance(table, dict):
        raise ConfigError(f"{src}: [target] must be a table")
    for key in TARGET_KEYS:
        if key == "alt_models":
            alts = table.get(key)
            if alts is None:
                continue
            if isinstance(alts, str):
                alts = [a.strip() for a in alts.split(",") if a.strip()]
            if not isinstance(alts, list) or not all(isinstance(a, str) and not value_problem(key, a) for a in alts):
                raise ConfigError(f"{_at(src, text, key)}: 'alt_models' must be a list of model names")
            layer.set(key, tuple(alts), src)
        else:
            layer.set(key, _str(src, text, table, key), src)
    return layer


def _codex_layer(env: Mapping[str, str], home: Path) -> Layer:
    """Codex's model, provider (as capdoctor names it), base URL, key variable and wire API."""
    layer = Layer()
    try:
        cfg = read_codex_config(codex_config_path(env, home), home)
    except ClientConfigError:
        return layer  # the client check and `capdoctor config` report the broken file
    if cfg is None:
        return layer
    src, pid, custom = cfg.file, cfg.provider_id, cfg.provider
    provider: str | None
    if custom is not None:
        host = host_of(custom.base_url.value) if custom.base_url else ""
        provider = (provider_for_host(host) if host else None) or "openai-compatible"
        table_src = f"{src} [model_providers.{pid}]"
        for key, setting in (
            ("base_url", custom.base_url),
            ("api_key_env", custom.env_key),
            ("api_version", custom.api_version),
        ):
            if setting is not None and not value_problem(key, setting.value):
                layer.set(key, setting.value, setting.source)
        # Codex's default wire API for a custom provider is Chat Completions
        layer.set("wire_api", custom.wire_api.value if custom.wire_api else "chat", table_src)
    elif pid in CODEX_BUILTIN:
        provider, base = CODEX_BUILTIN[pid]
        layer.set("base_url", base, f"{src} (model_provider = {pid})")
        layer.set("wire_api", "chat", f"{src} (model_provider = {pid})")
    else:
        provider = "openai"
        if cfg.openai_base_url is not None and not value_problem("base_url", cfg.openai_base_url.value):
            layer.set("base_url", cfg.openai_base_url.value, cfg.openai_base_url.source)
        layer.set("wire_api", "responses", f"{src} (Codex speaks the Responses API)")
    if cfg.model is not None and not value_problem("model", cfg.model.value):
        layer.set("model", cfg.model.value, src)
    layer.set("provider", provider, src)
    return layer


CLIENT_MODEL_ALIASES = frozenset({"opus", "sonnet", "haiku", "opusplan", "default", "best", "auto"})
"""Model names a client resolves itself (Claude Code's `sonnet`, Gemini CLI's `auto`): never a target model,
since the provider knows no such model; the provider's default stands in."""


CLIENT_MODEL_SUFFIX = re.compile(r"\[[\w.-]{1,16}\]$")
"""A client's option written after the model (Claude Code's `claude-sonnet-4-6[1m]`: the 1M-token context)."""


def _client_model(setting: Setting | None) -> Setting | None:
    """A client file's `model` setting when it names a model the provider can be asked about (a client's
    option suffix such as `[1m]` dropped, since the provider knows the model without it)."""
    if setting is None or value_problem("model", setting.value):
        return None
    name = CLIENT_MODEL_SUFFIX.sub("", setting.value.strip())
    if not name or name.lower() in CLIENT_MODEL_ALIASES:
        return None
    return setting if name == setting.value else replace(setting, value=name)


def _claude_layer(env: Mapping[str, str], home: Path, cwd: Path) -> tuple[Layer, dict[str, Setting]]:
    """Claude Code's settings files (user, project, project local): their `env` blocks and `model`; returns the
    layer and the key entries.

    The model is Claude Code's own order: `ANTHROPIC_MODEL` (an `env` block) before the `model` setting, the
    later file winning within each.
    """
    merged: dict[str, Setting] = {}
    model: Setting | None = None
    for path in claude_settings_paths(env, home, cwd):
        try:
            settings = read_claude_settings(path, home)
        except ClientConfigError:
            continue  # reported by the client check and `capdoctor config`
        if settings is None:
            continue
        merged.update(settings.env_map())
        model = _client_model(settings.model) or model
    layer = Layer()
    anthropic = [s for name, s in merged.items() if name.startswith("ANTHROPIC_")]
    if anthropic:
        layer.set("provider", "anthropic", anthropic[0].source)
    elif model is not None:
        layer.set("provider", "anthropic", model.source)
    for key, name in (("base_url", "ANTHROPIC_BASE_URL"), ("model", "ANTHROPIC_MODEL")):
        if name in merged and not value_problem(key, merged[name].value):
            layer.set(key, merged[name].value, merged[name].source)
    if "model" not in layer.values and model is not None:
        layer.set("model", model.value, model.source)
    return layer, {k: s for k, s in merged.items() if k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}


GEMINI_KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""The key variables Gemini CLI reads, also from its `.gemini/.env`."""


def _gemini_layer(home: Path, cwd: Path) -> tuple[Layer, dict[str, Setting]]:
    """Gemini CLI's `~/.gemini/settings.json` model (`model.name`, or a legacy `model` string) and the base URL
    and key of the `.gemini/.env` it loads (the first that exists); returns the layer and the key entries."""
    layer = Layer()
    dotenv: dict[str, Setting] = {}
    for path in gemini_env_paths(home, cwd):
        try:
            found = read_dotenv(path, home, strict=False)
        except ClientConfigError:
            continue
        if found is not None:
            dotenv = {s.name: s for s in found}
            break
    base = dotenv.get("GOOGLE_GEMINI_BASE_URL")
    if base is not None and not value_problem("base_url", base.value):
        layer.set("base_url", base.value, base.source)
    keys = {k: s for k, s in dotenv.items() if k in GEMINI_KEY_ENVS and s.value}
    try:
        settings = read_gemini_settings(gemini_settings_path(home), home)
    except ClientConfigError:
        settings = None  # reported by the client check and `capdoctor config`
    model = _client_model(settings.model if settings is not None else None)
    if model is not None:
        layer.set("provider", "gemini", model.source)
        layer.set("model", model.value, model.source)
    elif keys:
        first = next(iter(keys.values()))
        layer.set("provider", "gemini", first.source)
    return layer, keys


def _guess_from_key_env(name: str | None) -> str | None:
    if not name:
        return None
    return next((p for p, variables in env_markers() if any(v.split("_")[0] in name for v in variables)), None)


def _first(*pairs: tuple[Any, str]) -> tuple[Any, str]:
    for value, source in pairs:
        if value not in (None, "", (), []):
            return value, source
    return None, ""


def _canonical_or_error(name: str, source: str) -> str:
    found = canonical(name)
    if found is None:
        raise UsageError(f"unknown provider {name!r} ({source}); known: {', '.join(PROVIDER_NAMES)}")
    return found


def _pick(key: str, layers: list[Layer]) -> tuple[Any, str]:
    """The first layer's value for `key`, with its source (None, "" when no layer has one)."""
    return _first(*[(lay.values.get(key), lay.sources.get(key, "")) for lay in layers])


@dataclass(frozen=True)
class _Clients:
    """What the clients' own files say: a layer per client, and the key entries Claude Code and Gemini CLI hold."""

    codex: Layer
    claude: Layer
    claude_keys: dict[str, Setting]
    gemini: Layer
    gemini_keys: dict[str, Setting]

    def speaking_for(self, provider: str) -> list[Layer]:
        """The layers that configure `provider`: Codex's when it names it (or a base URL for an OpenAI-compatible
        target), Claude Code's for anthropic, Gemini CLI's for gemini."""
        codex_provider = self.codex.values.get("provider")
        speaks = codex_provider == provider or (
            codex_provider and provider == "openai-compatible" and self.codex.values.get("base_url")
        )
        own = {"anthropic": self.claude, "gemini": self.gemini}.get(provider)
        return [*([self.codex] if speaks else []), *([own] if own else [])]

    def stored_key(self, provider: str) -> tuple[str, str, str] | None:
        """(variable, key, source) from the provider's client files, when the environment has no key."""
        found = {
            "anthropic": [(v, self.claude_keys.get(v)) for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")],
            "gemini": [(v, self.gemini_keys.get(v)) for v in GEMINI_KEY_ENVS],
        }.get(provider, [])
        return next(((var, s.value, s.source) for var, s in found if s is not None and s.value), None)

    def client_of(self, sources: Mapping[str, str]) -> str | None:
        """The client whose files supplied any of the target's values (the first: codex, claude, gemini)."""
        used = set(sources.values())
        files = (
            ("codex", set(self.codex.sources.values())),
            ("claude", {*self.claude.sources.values(), *(s.source for s in self.claude_keys.values())}),
            ("gemini", {*self.gemini.sources.values(), *(s.source for s in self.gemini_keys.values())}),
        )
        return next((cid for cid, found in files if used & found), None)


def _provider(explicit: list[Layer], env: Mapping[str, str], clients: _Clients) -> tuple[str | None, str]:
    """The provider and its source: named explicitly (checked), else guessed from the explicit base URL, model
    or key variable, a provider's key in the environment, a client's files, or an unknown host's base URL."""
    provider, p_src = _pick("provider", explicit)
    if provider:
        return _canonical_or_error(str(provider), p_src), p_src
    url, url_src = _pick("base_url", explicit)
    model, model_src = _pick("model", explicit)
    key_env, key_src = _pick("api_key_env", explicit)
    host = host_of(url) if url else ""
    provider, p_src = _first(
        (provider_for_host(host) if host else None, f"{url_src} (host)"),
        (provider_for_model(model) if model else None, f"{model_src} (name)"),
        (_guess_from_key_env(key_env), f"{key_src} (name)"),
    )
    if provider:
        return str(provider), p_src
    codex, codex_key = clients.codex, clients.codex.values.get("api_key_env")
    if codex.values.get("provider") and codex.values.get("base_url") and codex_key and env.get(codex_key):
        # the variable Codex's own provider names (`env_key`) is its key, not a sign of OpenAI (a loopback relay)
        return str(codex.values["provider"]), codex.sources["provider"]
    hit = next(((name, v) for name, variables in env_markers() for v in variables if env.get(v)), None)
    if hit:
        return hit[0], f"env {hit[1]}"
    for layer in (clients.codex, clients.claude, clients.gemini):
        if layer.values.get("provider"):
            return str(layer.values["provider"]), layer.sources["provider"]
    if url or model:
        return "openai-compatible", "inferred (base URL of an unknown host)"
    return None, ""


def _env_layer(adapter: Adapter, env: Mapping[str, str]) -> Layer:
    """The provider's own variables: its base URL (the first set), model and API version. A bad value is a
    usage error: these are variables capdoctor reads itself."""
    layer = Layer()
    for var in adapter.base_url_envs:
        value = env.get(var)
        problem = value_problem("base_url", value) if value else None
        if problem:
            raise UsageError(f"base URL {value!r} (env {var}) {problem}")
        layer.set("base_url", adapter.base_url_from_env(value) if value else None, f"env {var}")
        if value:
            break
    for var in adapter.model_envs:
        value = env.get(var)
        problem = value_problem("model", value) if value else None
        if problem:
            raise UsageError(f"model {value!r} (env {var}) {problem}")
        layer.set("model", value, f"env {var}")
    for var in adapter.api_version_envs:
        layer.set("api_version", env.get(var), f"env {var}")
    return layer


def _key(
    provider: str, adapter: Adapter, env: Mapping[str, str], layers: list[Layer], clients: _Clients
) -> tuple[str | None, str | None, dict[str, str]]:
    """(key variable, key, sources): the variable a layer names (set or not), else the provider's first key
    variable that is set, else a key stored in the provider's client files."""
    key_env, key_src = _pick("api_key_env", layers)
    if key_env:
        api_key = env.get(str(key_env)) or None
        set_ = "" if api_key else " (not set)"
        return str(key_env), api_key, {"key": f"env {key_env}{set_}", "api_key_env": key_src}
    var = next((v for v in adapter.key_envs if env.get(v)), None)
    if var:
        return var, env[var], {"key": f"env {var}"}
    stored = clients.stored_key(provider)
    return (stored[0], stored[1], {"key": stored[2]}) if stored else (None, None, {})


def discover(
    flags: DiscoveryFlags,
    env: Mapping[str, str],
    home: Path,
    cwd: Path,
    platform: str,
    files: list[ConfigFile] | None = None,
) -> Target | None:
    """The target to diagnose, or None when nothing names one (no flags, config, keys or client configs).

    `files` are the capdoctor.toml files when the caller has read them already (`read_config_files`).
    """
    flag = _flag_layer(flags)
    if files is None:
        files = read_config_files(cwd, home, env, platform)
    explicit = [flag, *[_toml_layer(f) for f in files]]
    clients = _Clients(_codex_layer(env, home), *_claude_layer(env, home, cwd), *_gemini_layer(home, cwd))
    provider, p_src = _provider(explicit, env, clients)
    if not provider:
        return None
    adapter = adapter_for(provider)
    client_layers = clients.speaking_for(provider)
    env_layer = _env_layer(adapter, env)
    order = [*explicit, env_layer, *client_layers]
    sources: dict[str, str] = {"provider": p_src}
    base_url, sources["base_url"] = _pick("base_url", order)
    if not base_url:
        base_url, sources["base_url"] = adapter.default_base_url, "default"
    model, sources["model"] = _pick("model", order)
    if not model:
        model, sources["model"] = adapter.default_model, "default"
    alts, alt_src = _pick("alt_models", explicit)
    if alts:
        sources["alt_models"] = alt_src
    wire, wire_src = _pick("wire_api", [*explicit, *client_layers])
    if wire:
        if wire not in WIRE_APIS:
            raise UsageError(f"wire_api must be one of {', '.join(WIRE_APIS)}, not {wire!r} ({wire_src})")
        sources["wire_api"] = wire_src
    api_version, v_src = _pick("api_version", [*explicit, env_layer, *client_layers])
    if api_version:
        sources["api_version"] = v_src
    key_env, api_key, key_sources = _key(provider, adapter, env, [*explicit, *client_layers], clients)
    sources.update(key_sources)
    problem = url_problem(str(base_url))
    if problem:  # every source was checked on the way in; this guards the defaults and future sources
        raise UsageError(f"base URL {base_url!r} ({sources['base_url']}) {problem}")
    return Target(
        provider=provider,
        base_url=str(base_url),
        model=str(model),
        alt_models=tuple(alts or ()),
        api_key_env=key_env,
        api_key=api_key,
        wire_api=wire,
        logs=tuple(flags.logs),
        sources=sources,
        extra={"api_version": api_version} if api_version else {},
        client=clients.client_of(sources),
    )


def shell_exports(home: Path) -> list[dict[str, Any]]:
    """`*_BASE_URL` / `*_API_BASE` variables exported from shell profiles: file, line, variable (no value)."""
    out: list[dict[str, Any]] = []
    for rel in SHELL_FILES:
        path = home / rel
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for i, line in enumerate(lines, 1):
            m = SHELL_EXPORT.match(line)
            if m:
                out.append({"file": show(path, home), "line": i, "variable": m.group(1)})
    return out


def client_file_problems(env: Mapping[str, str], home: Path, cwd: Path) -> list[dict[str, Any]]:
    """The clients' config files that cannot be read or parsed, or hold values discovery had to leave out.

    One finding per problem, naming the file (and line where known): discovery went on without it.
    """
    out: list[dict[str, Any]] = []

    def broken(source: str, message: str) -> None:
        tail = " — the client may refuse to start or ignore the setting; capdoctor went on without it."
        out.append(_finding("client_config_broken", "client", source, message + tail))

    readers: list[tuple[Path, Any]] = [(codex_config_path(env, home), read_codex_config)]
    readers += [(path, read_claude_settings) for path in claude_settings_paths(env, home, cwd)]
    readers.append((gemini_settings_path(home), read_gemini_settings))
    for path, reader in readers:
        try:
            cfg = reader(path, home)
        except ClientConfigError as exc:
            broken(exc.file, str(exc))
            continue
        for message in getattr(cfg, "problems", {}).values():
            broken(getattr(cfg, "file", show(path, home)), message)
        for setting in _client_settings(cfg):
            key = "base_url" if setting.name.endswith(("BASE_URL", "base_url")) else "model"
            problem = value_problem(key, setting.value)
            if problem:
                where = f"{setting.file}:{setting.line}" if setting.line else setting.source
                broken(where, f"{where}: {setting.name} {setting.value!r} {problem}")
    return out


def _client_settings(cfg: Any) -> list[Setting]:
    """The settings of a parsed client file that discovery would use as target values."""
    found: list[Setting | None] = [getattr(cfg, "model", None), getattr(cfg, "openai_base_url", None)]
    provider = getattr(cfg, "provider", None)
    if provider is not None:
        found.append(provider.base_url)
    env_map = getattr(cfg, "env_map", None)
    if env_map is not None:
        settings = env_map()
        found += [settings.get("ANTHROPIC_BASE_URL"), settings.get("ANTHROPIC_MODEL")]
    return [s for s in found if s is not None]


def _finding(kind: str, cause: str, source: str | None, message: str) -> dict[str, Any]:
    """One finding of `describe`, in the shape `capdoctor config` shows."""
    return {"kind": kind, "cause": cause, "source": source, "message": message}


def _files(env: Mapping[str, str], home: Path, cwd: Path, platform: str) -> list[dict[str, Any]]:
    """The configuration files discovery reads, each shown with whether it exists."""
    paths = [(p, "capdoctor") for p in config_files(cwd, home, env, platform)]
    paths += [
        (codex_config_path(env, home), "codex"),
        (claude_dir(env, home) / "settings.json", "claude-code"),
        (gemini_settings_path(home), "gemini-cli"),
    ]
    return [{"path": show(p, home), "kind": kind, "exists": p.exists()} for p, kind in paths]


def _settings(target: Target, facts: KeyFacts) -> dict[str, dict[str, Any]]:
    """Each effective value with its source; the key only as its state, names and shape."""
    src = target.sources
    key = f"set ({facts.names()}, {shape_text(facts)})" if facts.present else f"{facts.state} ({facts.names()})"
    return {
        "provider": {"value": target.provider, "source": src.get("provider", "")},
        "base_url": {"value": target.base_url, "source": src.get("base_url", "")},
        "model": {"value": target.model, "source": src.get("model", "")},
        "alt_models": {"value": list(target.alt_models), "source": src.get("alt_models", "default (provider table)")},
        "wire_api": {"value": target.wire_api, "source": src.get("wire_api", "default (adapter)")},
        "key": {"value": key, "source": src.get("key") or facts.name_source},
    }


def _endpoint_findings(target: Target, adapter: Adapter) -> list[dict[str, Any]]:
    """A loopback base URL where nothing listens (network), or a host that is not the provider's own (a relay)."""
    source = target.sources.get("base_url")
    if is_loopback(target.base_url):
        if url_port_open(target.base_url, 0.3) is not False:
            return []
        message = (
            f"Nothing listens at {target.base_url} (from {source}): a stale base URL or a stopped local "
            "server/relay makes every request fail with 'connection refused'."
        )
        return [_finding("dead_loopback", "network", source, message)]
    if not adapter.official_hosts or is_official(adapter, target.base_url):
        return []
    message = (
        f"The base URL host {host_of(target.base_url)} is not {target.provider}'s own host: a relay or gateway "
        "is in the path; its errors and limits apply."
    )
    return [_finding("relay", "client", source, message)]


def _key_findings(target: Target, adapter: Adapter, facts: KeyFacts) -> list[dict[str, Any]]:
    """A key that is missing where one is needed (`no_key`), or present in a shape the provider never issues."""
    missing = facts.problem in ("unset", "empty")
    if facts.problem is None or (missing and not (facts.explicit or adapter.key_required)):
        return []
    return [
        {
            "kind": "no_key" if missing else "key_shape",
            "cause": "client",
            "variable": facts.names(),
            "source": facts.name_source if missing else target.sources.get("key"),
            "message": problem_text(facts),
        }
    ]


def describe(
    target: Target | None, env: Mapping[str, str], home: Path, cwd: Path, platform: str, options: Options | None = None
) -> dict[str, Any]:
    """Every effective value with its source, the options with theirs, key presence and source (never the
    value), and findings (the clients' broken config files among them)."""
    findings: list[dict[str, Any]] = client_file_problems(env, home, cwd)
    files = _files(env, home, cwd, platform)
    exports = shell_exports(home)
    out: dict[str, Any] = {
        "target": None,
        "settings": {},
        "key": {"present": False, "env": None, "source": None},
        "options": {},
        "files": files,
        "shell_exports": exports,
        "findings": findings,
    }
    if options is not None:
        out["options"] = {
            spec.name: {"value": list(v.value) if isinstance(v.value, tuple) else v.value, "source": v.source}
            for spec, v in options.rows()
            if spec.user
        }
    if target is None:
        findings.append(
            {
                "kind": "no_target",
                "message": "No target found: pass --provider/--base-url/--model, set a provider key "
                "(e.g. OPENAI_API_KEY), or configure Codex, Claude Code or Gemini CLI.",
            }
        )
        return out
    out["target"] = target.to_dict()
    facts = describe_key(target, env)
    out["settings"] = _settings(target, facts)
    key = {"present": facts.present, "env": target.api_key_env, "source": target.sources.get("key")}
    out["key"] = {**key, **facts.to_dict()}
    adapter = adapter_for(target.provider)
    findings += _endpoint_findings(target, adapter)
    findings += [  # a `*_BASE_URL` exported from a shell profile: every shell and tool inherits it
        _finding(
            "shell_export",
            "client",
            f"{e['file']}:{e['line']}",
            f"{e['variable']} is exported in {e['file']}:{e['line']}: every shell (and every tool started from it) "
            "inherits it; make sure it is still wanted.",
        )
        for e in exports
    ]
    findings += _key_findings(target, adapter, facts)
    return out
