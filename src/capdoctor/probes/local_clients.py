"""The AI clients capdoctor knows (as data) and readers for their settings files.

Contract: `CLIENTS` and `SDK_PACKAGES` are the tables the `client` check walks; `read_client_configs()` reads
the few settings files that decide where a client sends requests (model, base URL, key variable) and
returns `ClientConfig` rows with the file each value came from. Parsing is pure (`parse_codex_config`,
`parse_claude_settings`, `parse_gemini_settings` take text). Must not read credential files (auth.json,
~/.claude.json), never returns secret values (only whether a key is set), and never raises on a malformed
file: the row carries `error` instead.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found]


@dataclass(frozen=True)
class ClientSpec:
    """One client: how to ask its version, where its latest release is published, how to update it."""

    id: str
    name: str
    executable: str
    version_args: tuple[str, ...] = ("--version",)
    package: str | None = None  # registry key, e.g. "npm:@openai/codex"
    update_command: str = ""
    process_names: tuple[str, ...] = ()  # executable basenames / npm package paths seen in running processes
    min_node_major: int | None = None  # npm-installed clients that need Node.js
    far_behind: Mapping[str, int] = field(default_factory=dict)  # overrides FAR_BEHIND_DEFAULT


CLIENTS: tuple[ClientSpec, ...] = (
    ClientSpec(
        "codex",
        "Codex CLI",
        "codex",
        package="npm:@openai/codex",
        update_command="npm install -g @openai/codex@latest",
        process_names=("codex", "@openai/codex"),
        min_node_major=18,
        far_behind={"minor": 10},
    ),
    ClientSpec(
        "claude",
        "Claude Code",
        "claude",
        package="npm:@anthropic-ai/claude-code",
        update_command="claude update",
        process_names=("claude", "@anthropic-ai/claude-code"),
        min_node_major=18,
        far_behind={"minor": 2, "patch": 40},
    ),
    ClientSpec(
        "gemini",
        "Gemini CLI",
        "gemini",
        package="npm:@google/gemini-cli",
        update_command="npm install -g @google/gemini-cli@latest",
        process_names=("gemini", "@google/gemini-cli"),
        min_node_major=20,
        far_behind={"minor": 10},
    ),
    ClientSpec(
        "copilot",
        "GitHub Copilot CLI",
        "copilot",
        package="npm:@github/copilot",
        update_command="npm install -g @github/copilot@latest",
        process_names=("copilot", "@github/copilot"),
        min_node_major=22,
        far_behind={"patch": 40},
    ),
    ClientSpec(
        "aider",
        "Aider",
        "aider",
        package="pypi:aider-chat",
        update_command="python -m pip install -U aider-chat",
        process_names=("aider",),
        far_behind={"minor": 3},
    ),
)
"""Command-line clients, in report order. Node.js is looked up separately, only when one of these needs it."""

NODE = ClientSpec("node", "Node.js", "node")

SDK_PACKAGES: tuple[str, ...] = ("openai", "anthropic", "google-genai")
"""Python SDKs whose installed version (in the user's `python3`) the check reports and compares with PyPI."""

HTTP_STACK_PACKAGES: tuple[str, ...] = ("httpx", "httpx2", "httpcore", "httpcore2", "requests", "aiohttp")
"""The HTTP libraries under those SDKs (openai 3.x uses httpx2): reported as context, never compared."""

SDK_UPDATE = "python -m pip install -U {package}"

SDK_PROBE_SCRIPT = (
    "import json,importlib.metadata as m\n"
    "out={}\n"
    "for p in __PACKAGES__:\n"
    "    try: out[p]=m.version(p)\n"
    "    except Exception: pass\n"
    "print(json.dumps(out))\n"
)
"""Run with the user's `python3 -c`: capdoctor's own interpreter (often pipx) is not where their SDKs live."""


def sdk_probe_script(packages: tuple[str, ...]) -> str:
    """The `python3 -c` program that prints `{package: version}` for the installed ones among `packages`."""
    return SDK_PROBE_SCRIPT.replace("__PACKAGES__", repr(tuple(packages)))


@dataclass(frozen=True)
class ClientConfig:
    """What one client's settings say about where requests go. `source` names the file or variable."""

    client: str
    source: str
    provider: str | None = None  # provider family: "openai", "anthropic", "gemini", or a custom id
    model: str | None = None
    base_url: str | None = None
    key_env: str | None = None  # variable the config says holds the key
    env_overrides: Mapping[str, str] = field(default_factory=dict)  # non-secret vars the settings set
    error: str | None = None


SECRET_ENV_NAMES = ("KEY", "TOKEN", "SECRET", "PASSWORD", "HEADER", "AUTH", "COOKIE", "CREDENTIAL")
"""Settings `env` entries whose names contain these are never copied (only their presence is noted)."""


def _is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_ENV_NAMES)


def parse_codex_config(text: str, source: str) -> ClientConfig:
    """The active provider of a Codex `config.toml`: model, provider id, its base URL and `env_key`.

    Built-in `openai` keeps its own base URL (overridden only by OPENAI_BASE_URL), even if the file has a
    `[model_providers.openai]` table, as Codex does.
    """
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return ClientConfig("codex", source, error=f"cannot parse {source}: {exc}")
    model = data.get("model")
    provider_id = data.get("model_provider") or "openai"
    base_url = key_env = None
    providers = data.get("model_providers")
    if isinstance(providers, dict) and provider_id not in ("openai",):
        table = providers.get(provider_id)
        if isinstance(table, dict):
            base_url = table.get("base_url") if isinstance(table.get("base_url"), str) else None
            key_env = table.get("env_key") if isinstance(table.get("env_key"), str) else None
    if provider_id == "openai":
        key_env = "OPENAI_API_KEY"
    return ClientConfig(
        "codex",
        source,
        provider=str(provider_id),
        model=model if isinstance(model, str) else None,
        base_url=base_url,
        key_env=key_env,
    )


def parse_claude_settings(text: str, source: str) -> ClientConfig:
    """The `env` block and `model` of a Claude Code `settings.json`: gateway URL, model, key presence."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return ClientConfig("claude", source, error=f"cannot parse {source}: {exc}")
    if not isinstance(data, dict):
        return ClientConfig("claude", source, error=f"cannot parse {source}: not a JSON object")
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    assert isinstance(env, dict)
    safe = {str(k): str(v) for k, v in env.items() if not _is_secret_name(str(k)) and isinstance(v, (str, int))}
    secret_names = sorted(str(k) for k in env if _is_secret_name(str(k)))
    model = data.get("model") if isinstance(data.get("model"), str) else safe.get("ANTHROPIC_MODEL")
    if secret_names:
        safe["_secret_vars_set"] = ",".join(secret_names)
    return ClientConfig(
        "claude",
        source,
        provider="anthropic",
        model=model,
        base_url=safe.get("ANTHROPIC_BASE_URL"),
        env_overrides=safe,
    )


def parse_gemini_settings(text: str, source: str) -> ClientConfig:
    """The model of a Gemini CLI `settings.json` (nested `model.name` since 2025-09, or a legacy string)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return ClientConfig("gemini", source, error=f"cannot parse {source}: {exc}")
    if not isinstance(data, dict):
        return ClientConfig("gemini", source, error=f"cannot parse {source}: not a JSON object")
    model_field = data.get("model")
    model = model_field.get("name") if isinstance(model_field, dict) else model_field
    return ClientConfig("gemini", source, provider="gemini", model=model if isinstance(model, str) else None)


def _display(path: Path, home: Path) -> str:
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def config_paths(env: Mapping[str, str], home: Path) -> list[tuple[str, Path]]:
    """The settings files to read, per client: `$CODEX_HOME/config.toml`, `~/.claude/settings.json`, …"""
    codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    claude_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    return [
        ("codex", codex_home / "config.toml"),
        ("claude", claude_dir / "settings.json"),
        ("gemini", home / ".gemini" / "settings.json"),
    ]


PARSERS = {"codex": parse_codex_config, "claude": parse_claude_settings, "gemini": parse_gemini_settings}


def read_client_configs(env: Mapping[str, str], home: Path) -> list[ClientConfig]:
    """Every client settings file that exists, parsed; unreadable files come back with `error` set."""
    out: list[ClientConfig] = []
    for client, path in config_paths(env, home):
        source = _display(path, home)
        try:
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            out.append(ClientConfig(client, source, error=f"cannot read {source}: {exc.strerror or exc}"))
            continue
        out.append(PARSERS[client](text, source))
    return out


def parse_sdk_probe(text: str) -> dict[str, str]:
    """The `{package: version}` JSON printed by `SDK_PROBE_SCRIPT`; anything else gives `{}`."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data: Any = json.loads(line)
            except ValueError:
                return {}
            if isinstance(data, dict):
                return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
    return {}
