"""capdoctor's own configuration files: `capdoctor.toml` in the project and in the user config dir, read once.

Contract: `read_config_files(cwd, home, env, platform)` returns the files that exist, in precedence order, each
parsed (`ConfigError` with file and line otherwise); `load_options` turns their `[options]` and the flags into
checked `Options`; `config_warnings` names what they hold that nothing reads. Discovery reads their `[target]`.
A module of its own because every command reads these files first, and `capdoctor logs` needs nothing more:
target discovery imports every provider adapter (~15 ms a start).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capdoctor.errors import ConfigError
from capdoctor.run.context import user_dir
from capdoctor.target.client_settings import line_of, parse_toml, read_text, show
from capdoctor.target.options import Given, Options, file_layer, flag_layer, resolve, unknown_keys

CONFIG_NAME = "capdoctor.toml"
TARGET_KEYS = ("provider", "base_url", "model", "alt_models", "api_key_env", "wire_api", "api_version")
"""The keys of the `[target]` table (or of the file's top level): what `discovery` resolves."""


def config_files(cwd: Path, home: Path, env: Mapping[str, str], platform: str) -> list[Path]:
    """The capdoctor.toml files in precedence order: project (cwd), then the user config dir."""
    return [cwd / CONFIG_NAME, user_dir("config", env, home, platform) / CONFIG_NAME]


@dataclass(frozen=True)
class ConfigFile:
    """One capdoctor.toml that exists: its shown path, its document, and its text (for line numbers)."""

    source: str
    doc: dict[str, Any]
    text: str


def read_config_files(cwd: Path, home: Path, env: Mapping[str, str], platform: str) -> list[ConfigFile]:
    """The capdoctor.toml files that exist, in precedence order; `ConfigError` (file, line) for a bad one."""
    out: list[ConfigFile] = []
    for path in config_files(cwd, home, env, platform):
        text = read_text(path, home)
        if text is not None:
            src = show(path, home)
            out.append(ConfigFile(src, parse_toml(text, src), text))
    return out


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"models": {"max_attempts": 3}}` (TOML's dotted keys and sub-tables) as `{"models.max_attempts": 3}`."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _options_table(file: ConfigFile) -> dict[str, Any]:
    opts = file.doc.get("options", {})
    if not isinstance(opts, dict):
        raise ConfigError(f"{file.source}: [options] must be a table")
    return _flatten(opts)


def _key_line(text: str, key: str) -> int | None:
    """The line that sets option `key`, written bare, quoted or as the last part of a dotted key."""
    for form in (key, f'"{key}"', f"'{key}'", key.rsplit(".", 1)[-1]):
        line = line_of(text, form)
        if line:
            return line
    return None


def load_options(files: list[ConfigFile], flags: Mapping[str, Any], env: Mapping[str, str]) -> Options:
    """The run's options: flags, then each capdoctor.toml's `[options]` (project first), then env, then defaults.

    Every value is checked once, here; a bad one raises `OptionError` naming it and its file and line.
    """
    layers = [flag_layer(flags)]
    for file in files:
        table = _options_table(file)
        layer = file_layer(table, file.source)
        for key, given in layer.items():
            line = _key_line(file.text, key)
            layer[key] = Given(given.value, f"{file.source}:{line}" if line else file.source)
        layers.append(layer)
    return resolve(layers, env=env)


def config_warnings(files: list[ConfigFile]) -> list[str]:
    """One line per key or table of capdoctor.toml that nothing reads (`[optoins]`), with the closest name."""
    out: list[str] = []
    for file in files:
        doc = dict(file.doc)
        if isinstance(doc.get("options"), dict):
            doc["options"] = _flatten(doc["options"])
        out += [f"{file.source}: {problem}" for problem in unknown_keys(doc, TARGET_KEYS)]
    return out


__all__ = [
    "CONFIG_NAME",
    "TARGET_KEYS",
    "ConfigFile",
    "config_files",
    "config_warnings",
    "load_options",
    "read_config_files",
]
