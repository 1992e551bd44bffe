"""Where the AI coding clients keep their logs and session files, per platform: data, plus one lookup.

Contract: `discover(env, home, platform, since_ts)` returns the `(client, path)` pairs that exist, directories
included; the scanner walks directories and keeps only recent files. Gemini CLI writes a failure only to an
error report in the temporary folder (`$TMPDIR/gemini-client-error-<where>-<time>.json`), never to its chats:
those are listed file by file, only the ones written within the window and at most `REPORTS_KEPT`, since the
temporary folder itself is never walked. It lists and tests existence only: it never reads file contents or
looks at credentials (`auth.json`, `.credentials.json` are excluded by name).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

LOG_SUFFIXES = (".log", ".jsonl", ".json", ".txt", ".out", ".err", ".gz", ".zst", ".zstd")
"""In discovered directories only these files are read (session stores also hold SQLite and images)."""

SECRET_NAMES = frozenset(
    {
        "auth.json",
        ".credentials.json",
        "credentials.json",
        "oauth_creds.json",
        "config.json",
        "settings.json",
        "mcp-config.json",
    }
)
"""Never read, even if they match a suffix: they hold tokens or settings, not logs."""


GEMINI_REPORT_GLOB = "gemini-client-error-*.json"
"""Gemini CLI's error reports in the temporary folder (`reportError` in its core package)."""

REPORTS_KEPT = 50
"""The newest error reports read at most: a temporary folder may hold months of them."""


def temp_dir(env: Mapping[str, str], platform: str) -> Path:
    """The temporary folder a Node client writes to (`os.tmpdir()`): TMPDIR, TMP, TEMP, else the OS default."""
    names = ("TEMP", "TMP") if platform == "win32" else ("TMPDIR", "TMP", "TEMP")
    for name in names:
        value = env.get(name)
        if value:
            return Path(value.rstrip("/\\") or value)
    if platform == "win32":
        return Path(env.get("SystemRoot") or "C:\\Windows") / "temp"
    return Path("/tmp")


def gemini_reports(env: Mapping[str, str], platform: str, since_ts: float | None = None) -> list[Path]:
    """Gemini CLI's error reports written since `since_ts` (all when None), the newest `REPORTS_KEPT`, oldest
    first."""
    found: list[tuple[float, Path]] = []
    try:
        paths = list(temp_dir(env, platform).glob(GEMINI_REPORT_GLOB))
    except OSError:
        return []
    for path in paths:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if (since_ts is None or mtime >= since_ts) and path.is_file():
            found.append((mtime, path))
    found.sort()
    return [p for _, p in found[-REPORTS_KEPT:]]


def _root(env: Mapping[str, str], var: str, default: Path) -> Path:
    value = env.get(var)
    return Path(value).expanduser() if value else default


def candidates(env: Mapping[str, str], home: Path, platform: str) -> list[tuple[str, Path]]:
    """Every place a client may keep logs on `platform`, existing or not (tests and `-v` show them)."""
    from capdoctor.target.client_settings import claude_dir, codex_home

    codex = codex_home(env, home)
    claude = claude_dir(env, home)
    copilot = _root(env, "COPILOT_HOME", home / ".copilot")
    out = [
        ("codex", codex / "log"),
        ("codex", codex / "sessions"),
        ("claude-code", claude / "projects"),
        ("claude-code", claude / "debug"),
        ("gemini-cli", home / ".gemini" / "tmp"),
        ("copilot-cli", copilot / "logs"),
        ("ollama", home / ".ollama" / "logs"),
    ]
    if platform == "darwin":
        out.append(("cursor", home / "Library" / "Application Support" / "Cursor" / "logs"))
    elif platform == "win32":
        appdata = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
        local = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else home / "AppData" / "Local"
        out.append(("cursor", appdata / "Cursor" / "logs"))
        out.append(("ollama", local / "Ollama"))
    else:
        config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        out.append(("cursor", config / "Cursor" / "logs"))
    return out


def discover(
    env: Mapping[str, str], home: Path, platform: str, since_ts: float | None = None
) -> list[tuple[str, Path]]:
    """The client log locations that exist here, then Gemini CLI's error reports written since `since_ts`."""
    found = [(client, path) for client, path in candidates(env, home, platform) if path.exists()]
    return found + [("gemini-cli", path) for path in gemini_reports(env, platform, since_ts)]


def wanted(path: str) -> bool:
    """Whether a file found while walking a discovered directory is a log worth reading."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name not in SECRET_NAMES and name.endswith(LOG_SUFFIXES)
