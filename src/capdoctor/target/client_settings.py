"""The AI clients' own configuration files: the one place that knows where they are and how they are written.

Contract: pure `parse_*` functions turn a file's text into a frozen dataclass whose values each carry their
source (`~/.codex/config.toml [model_providers.relay] env_key`); `read_*` turn a path into the same, `None` when
the file does not exist, or a `ClientConfigError` (a `ConfigError`) naming the file and line when it cannot be
read or parsed. Files: Codex `$CODEX_HOME/config.toml` and `.env`, Claude Code `settings.json` (user, project,
project local), Gemini CLI `~/.gemini/settings.json` and the `.gemini/.env` it loads; and capdoctor's own file.

Why values of the wrong type are not parse errors: the clients mostly ignore them, so the parsers keep them
out of the values and record them in `problems`; strict callers (discovery) raise them with `raise_problems`,
lenient ones (the `client` and `proxy` checks) ignore them.

It must not read credential files (auth.json, ~/.claude.json), print, or decide about the target. Values are
what the files say, secrets included, so callers decide what may be shown; `Setting` keeps its value out of repr.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capdoctor.errors import ConfigError


class ClientConfigError(ConfigError):
    """A configuration file that cannot be read (`kind` "read") or parsed (`kind` "parse").

    The message is the complete sentence discovery shows (`~/.claude/settings.json:4: invalid JSON: …`);
    `file`, `line` and `detail` (the reader's or parser's own words) let other callers phrase their own.
    """

    def __init__(self, message: str, *, file: str, detail: str, kind: str = "parse", line: int | None = None):
        super().__init__(message)
        self.file = file
        self.detail = detail
        self.kind = kind
        self.line = line


@dataclass(frozen=True)
class Setting:
    """One value a client's file sets: its name, the value as text, and where it is (file, place, line)."""

    name: str
    value: str = field(repr=False)  # may be a secret (a key in a settings `env` block)
    file: str
    where: str = ""  # the place inside the file: "env", "[model_providers.relay] env_key", …
    line: int | None = None

    @property
    def source(self) -> str:
        """The human source: the file, then the place inside it (`~/.claude/settings.json env`)."""
        return f"{self.file} {self.where}" if self.where else self.file


def _raise_first(problems: Mapping[str, str], keys: tuple[str, ...]) -> None:
    for key in keys or tuple(problems):
        if key in problems:
            raise ConfigError(problems[key])


@dataclass(frozen=True)
class CodexProvider:
    """The active `[model_providers.<id>]` table of a Codex config (string values only)."""

    id: str
    base_url: Setting | None = None
    env_key: Setting | None = None
    wire_api: Setting | None = None
    api_version: Setting | None = None  # query_params."api-version" (Azure)


@dataclass(frozen=True)
class CodexConfig:
    """What a Codex `config.toml` says about where requests go.

    `provider_id` is `model_provider` ("openai" when unset). `provider` is its `[model_providers.*]` table,
    None for the built-in `openai` (Codex ignores a table that re-uses that id) or when there is no table.
    `problems` maps a key (`model`, `model_provider`, `model_providers`, `openai_base_url`) to the message
    for a value of the wrong type.
    """

    file: str
    provider_id: str = "openai"
    model: Setting | None = None
    provider: CodexProvider | None = None
    openai_base_url: Setting | None = None
    problems: Mapping[str, str] = field(default_factory=dict)

    def raise_problems(self, *keys: str) -> None:
        """Raise `ConfigError` for the first of `keys` (all keys when none given) with a problem."""
        _raise_first(self.problems, keys)


@dataclass(frozen=True)
class ClaudeSettings:
    """What a Claude Code `settings.json` says: its `env` block (scalar values, file order) and `model`.

    `problems` has `env` when the `env` block is not an object.
    """

    file: str
    env: tuple[Setting, ...] = ()
    model: Setting | None = None
    problems: Mapping[str, str] = field(default_factory=dict)

    def env_map(self) -> dict[str, Setting]:
        """The `env` block by variable name."""
        return {s.name: s for s in self.env}

    def raise_problems(self, *keys: str) -> None:
        """Raise `ConfigError` for the first of `keys` (all keys when none given) with a problem."""
        _raise_first(self.problems, keys)


@dataclass(frozen=True)
class GeminiSettings:
    """What a Gemini CLI `settings.json` says: the model (nested `model.name` since 2025-09, or a string)."""

    file: str
    model: Setting | None = None


# -- where the files are --------------------------------------------------------------------------------------


def show(path: Path, home: Path) -> str:
    """`path` with the home directory written as `~` (for sources and messages)."""
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def codex_home(env: Mapping[str, str], home: Path) -> Path:
    """$CODEX_HOME, else ~/.codex."""
    value = env.get("CODEX_HOME")
    return Path(value).expanduser() if value else home / ".codex"


def codex_config_path(env: Mapping[str, str], home: Path) -> Path:
    """Codex's `config.toml`."""
    return codex_home(env, home) / "config.toml"


def codex_env_path(env: Mapping[str, str], home: Path) -> Path:
    """Codex's `.env` (variables Codex loads at start, proxies among them)."""
    return codex_home(env, home) / ".env"


def claude_dir(env: Mapping[str, str], home: Path) -> Path:
    """$CLAUDE_CONFIG_DIR, else ~/.claude."""
    value = env.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else home / ".claude"


def claude_settings_paths(env: Mapping[str, str], home: Path, cwd: Path) -> list[Path]:
    """Claude Code's settings files in increasing precedence: user ($CLAUDE_CONFIG_DIR or ~/.claude), project,
    project local."""
    return [
        claude_dir(env, home) / "settings.json",
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    ]


def gemini_settings_path(home: Path) -> Path:
    """Gemini CLI's user settings."""
    return home / ".gemini" / "settings.json"


def gemini_env_paths(home: Path, cwd: Path) -> list[Path]:
    """The `.gemini/.env` files Gemini CLI loads, in the order it looks (the first that exists is loaded; a
    variable already set in the environment is kept): the project's, then the user's."""
    return [cwd / ".gemini" / ".env", home / ".gemini" / ".env"]


# -- pure parsers ---------------------------------------------------------------------------------------------


def line_of(text: str, key: str) -> int | None:
    """The first line of TOML `text` that assigns `key` (`key = …`), for messages; None if none does."""
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return i
    return None


def type_problem(file: str, text: str, key: str, value: object, wanted: str = "a string") -> str:
    """The message for a TOML `key` whose value has the wrong type, with the line when it can be found."""
    line = line_of(text, key)
    where = f"{file}:{line}" if line else file
    return f"{where}: '{key}' must be {wanted}, not {type(value).__name__}"


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """The TOML document in `text`; `ClientConfigError` naming `file` (and the line, in the detail) if invalid."""
    try:
        doc: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClientConfigError(
            f"{file}: invalid TOML: {exc}", file=file, detail=str(exc), line=getattr(exc, "lineno", None)
        ) from None
    return doc


def parse_json_object(text: str, file: str) -> dict[str, Any]:
    """The JSON object in `text`; `ClientConfigError` naming `file` and line if invalid or not an object."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClientConfigError(
            f"{file}:{exc.lineno}: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            file=file,
            detail=str(exc),
            line=exc.lineno,
        ) from None
    if not isinstance(obj, dict):
        raise ClientConfigError(
            f"{file}:1: expected a JSON object at the top level", file=file, detail="not a JSON object", line=1
        )
    return dict(obj)


def parse_codex_config(text: str, file: str) -> CodexConfig:
    """The model and active provider of a Codex `config.toml` (see `CodexConfig`)."""
    doc = parse_toml(text, file)
    problems: dict[str, str] = {}

    def string(table: Mapping[str, Any], key: str, where: str = "", problem: str | None = None) -> Setting | None:
        value = table.get(key)
        if isinstance(value, str):
            return Setting(key, value, file, where, line_of(text, key))
        if value is not None and problem is not None:
            problems[problem] = type_problem(file, text, key, value)
        return None

    model = string(doc, "model", problem="model")
    raw_pid = doc.get("model_provider")
    if raw_pid is not None and not isinstance(raw_pid, str):
        problems["model_provider"] = type_problem(file, text, "model_provider", raw_pid)
    pid = str(raw_pid) if raw_pid else "openai"
    tables = doc.get("model_providers") or {}
    if not isinstance(tables, dict):
        problems["model_providers"] = f"{file}: [model_providers] must be a table"
        tables = {}
    provider = None
    table = tables.get(pid) if pid != "openai" else None
    if isinstance(table, dict):
        place = f"[model_providers.{pid}]"
        query = table.get("query_params")
        version = query.get("api-version") if isinstance(query, dict) else None
        provider = CodexProvider(
            pid,
            base_url=string(table, "base_url", place),
            env_key=string(table, "env_key", f"{place} env_key"),
            wire_api=string(table, "wire_api", place),
            api_version=(
                Setting("api-version", version, file, f"{place} query_params") if isinstance(version, str) else None
            ),
        )
    openai_base_url = string(doc, "openai_base_url", "openai_base_url", problem="openai_base_url")
    return CodexConfig(file, pid, model, provider, openai_base_url, problems)


def _scalar(value: object) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) else None  # bool is an int: "True"


def parse_claude_settings(text: str, file: str) -> ClaudeSettings:
    """The `env` block (string, number and boolean values, as text) and `model` of a Claude Code settings file."""
    doc = parse_json_object(text, file)
    block = doc.get("env") or {}
    problems: dict[str, str] = {}
    if not isinstance(block, dict):
        problems["env"] = f"{file}: 'env' must be an object"
        block = {}
    env = tuple(Setting(str(k), v, file, "env") for k, raw in block.items() if (v := _scalar(raw)) is not None)
    model = doc.get("model")
    return ClaudeSettings(
        file, env, Setting("model", model, file, "model") if isinstance(model, str) else None, problems
    )


def parse_gemini_settings(text: str, file: str) -> GeminiSettings:
    """The model of a Gemini CLI `settings.json` (nested `model.name`, or a legacy `model` string)."""
    doc = parse_json_object(text, file)
    field_ = doc.get("model")
    model, where = (field_.get("name"), "model.name") if isinstance(field_, dict) else (field_, "model")
    return GeminiSettings(file, Setting("model", model, file, where) if isinstance(model, str) else None)


def parse_dotenv(text: str, file: str) -> tuple[Setting, ...]:
    """`NAME=value` lines of a `.env` file in order (`export ` prefix and surrounding quotes dropped)."""
    out: list[Setting] = []
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.strip().removeprefix("export ").strip()
        if "=" in line and not line.startswith("#"):
            name, _, value = line.partition("=")
            out.append(Setting(name.strip(), value.strip().strip("'\""), file, "", i))
    return tuple(out)


# -- readers --------------------------------------------------------------------------------------------------


def read_text(path: Path, home: Path, *, label: str | None = None, strict: bool = True) -> str | None:
    """The file's text, None when it does not exist, `ClientConfigError` (kind "read") when unreadable.

    `strict=False` replaces undecodable bytes instead of failing (what the clients' own readers tolerate).
    """
    file = label or show(path, home)
    try:
        return path.read_text(encoding="utf-8", errors="strict" if strict else "replace")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        detail = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        raise ClientConfigError(f"{file}: cannot read: {exc}", file=file, detail=detail, kind="read") from None


def read_codex_config(path: Path, home: Path, *, strict: bool = True) -> CodexConfig | None:
    """`parse_codex_config` over a file; None when it does not exist."""
    text = read_text(path, home, strict=strict)
    return None if text is None else parse_codex_config(text, show(path, home))


def read_claude_settings(path: Path, home: Path, *, strict: bool = True) -> ClaudeSettings | None:
    """`parse_claude_settings` over a file; None when it does not exist."""
    text = read_text(path, home, strict=strict)
    return None if text is None else parse_claude_settings(text, show(path, home))


def read_gemini_settings(path: Path, home: Path, *, strict: bool = True) -> GeminiSettings | None:
    """`parse_gemini_settings` over a file; None when it does not exist."""
    text = read_text(path, home, strict=strict)
    return None if text is None else parse_gemini_settings(text, show(path, home))


def read_dotenv(path: Path, home: Path, *, label: str | None = None, strict: bool = True) -> tuple[Setting, ...] | None:
    """`parse_dotenv` over a file, each value's file shown as `label` when given; None when it does not exist."""
    text = read_text(path, home, label=label, strict=strict)
    return None if text is None else parse_dotenv(text, label or show(path, home))
