"""The AI clients capdoctor knows (as data) and readers for their settings files.

Contract: `CLIENTS` and `SDK_PACKAGES` are the tables the `client` check walks; `read_client_configs()` reads
the few settings files that decide where a client sends requests (model, base URL, key variable) and
returns `ClientConfig` rows with the file each value came from. Reading and parsing the files is
`capdoctor.target.client_settings`'s job; this module only turns what it parsed into rows (`client_config` takes
text). Must not read credential files (auth.json, ~/.claude.json), never returns secret values (only
whether a key is set), and never raises on a malformed file: the row carries `error` instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capdoctor.target.client_settings import (
    ClaudeSettings,
    ClientConfigError,
    CodexConfig,
    GeminiSettings,
    claude_dir,
    codex_config_path,
    gemini_settings_path,
    parse_claude_settings,
    parse_codex_config,
    parse_gemini_settings,
    read_text,
    show,
)


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


def codex_row(cfg: CodexConfig) -> ClientConfig:
    """The row for a Codex config: model, provider id, its base URL and `env_key`.

    Built-in `openai` keeps its own base URL (overridden only by OPENAI_BASE_URL), even if the file has a
    `[model_providers.openai]` table, as Codex does; its key is always OPENAI_API_KEY.
    """
    table = cfg.provider
    key_env = (
        "OPENAI_API_KEY" if cfg.provider_id == "openai" else (table.env_key.value if table and table.env_key else None)
    )
    return ClientConfig(
        "codex",
        cfg.file,
        provider=cfg.provider_id,
        model=cfg.model.value if cfg.model else None,
        base_url=table.base_url.value if table and table.base_url else None,
        key_env=key_env,
    )


def claude_row(settings: ClaudeSettings) -> ClientConfig:
    """The row for Claude Code settings: gateway URL, model, and the non-secret `env` entries.

    Secret-looking entries are dropped; their names are listed under `_secret_vars_set`.
    """
    safe = {s.name: s.value for s in settings.env if not _is_secret_name(s.name)}
    secret_names = sorted(s.name for s in settings.env if _is_secret_name(s.name))
    model = settings.model.value if settings.model else safe.get("ANTHROPIC_MODEL")
    if secret_names:
        safe["_secret_vars_set"] = ",".join(secret_names)
    return ClientConfig(
        "claude",
        settings.file,
        provider="anthropic",
        model=model,
        base_url=safe.get("ANTHROPIC_BASE_URL"),
        env_overrides=safe,
    )


def gemini_row(settings: GeminiSettings) -> ClientConfig:
    """The row for Gemini CLI settings: the model."""
    return ClientConfig(
        "gemini", settings.file, provider="gemini", model=settings.model.value if settings.model else None
    )


def client_config(client: str, text: str, source: str) -> ClientConfig:
    """The row for one client's settings `text` (`client` is "codex", "claude" or "gemini"); never raises:
    a file that does not parse gives a row with `error` set."""
    try:
        if client == "codex":
            return codex_row(parse_codex_config(text, source))
        if client == "claude":
            return claude_row(parse_claude_settings(text, source))
        return gemini_row(parse_gemini_settings(text, source))
    except ClientConfigError as exc:
        return ClientConfig(client, source, error=f"cannot parse {source}: {exc.detail}")


def config_paths(env: Mapping[str, str], home: Path) -> list[tuple[str, Path]]:
    """The settings files to read, per client: `$CODEX_HOME/config.toml`, `~/.claude/settings.json`, …"""
    return [
        ("codex", codex_config_path(env, home)),
        ("claude", claude_dir(env, home) / "settings.json"),
        ("gemini", gemini_settings_path(home)),
    ]


def read_client_configs(env: Mapping[str, str], home: Path) -> list[ClientConfig]:
    """Every client settings file that exists, parsed; unreadable files come back with `error` set."""
    out: list[ClientConfig] = []
    for client, path in config_paths(env, home):
        source = show(path, home)
        try:
            if not path.is_file():
                continue
            text = read_text(path, home, strict=False)
        except ClientConfigError as exc:
            out.append(ClientConfig(client, source, error=f"cannot read {source}: {exc.detail}"))
            continue
        except OSError as exc:
            out.append(ClientConfig(client, source, error=f"cannot read {source}: {exc.strerror or exc}"))
            continue
        if text is not None:
            out.append(client_config(client, text, source))
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
