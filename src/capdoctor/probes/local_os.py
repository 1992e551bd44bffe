"""OS facts for the report, and whether the OS changed since capdoctor last ran here.

Contract: `os_facts()` reads the stdlib `platform` module (name, version, architecture); `remember_os()`
compares with the facts kept in the data dir and stores the new ones. "It started after the upgrade" is a
client/compatibility pattern, so a change is worth a line. Must not raise on an unwritable data dir and
must not store anything but these few non-identifying facts.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

STATE_FILE = "last-seen-os.json"


@dataclass(frozen=True)
class OsFacts:
    """Name ('Linux', 'Darwin', 'Windows'), a human version string, kernel release and machine type."""

    name: str
    version: str
    release: str
    arch: str


def os_facts() -> OsFacts:
    """The running OS, described the way users recognise it (macOS 15.1, Ubuntu 24.04, Windows 11…)."""
    name = platform.system() or "unknown"
    release = platform.release()
    version = release
    try:
        if name == "Darwin":
            mac = platform.mac_ver()[0]
            version = f"macOS {mac}" if mac else release
        elif name == "Windows":
            win = platform.win32_ver()
            version = f"Windows {win[0]} ({win[1]})" if win[0] else platform.version()
        elif name == "Linux":
            info = platform.freedesktop_os_release()
            version = info.get("PRETTY_NAME") or info.get("NAME", release)
    except OSError:
        pass
    return OsFacts(name=name, version=version, release=release, arch=platform.machine() or "unknown")


@dataclass(frozen=True)
class OsChange:
    """The OS facts last seen (and when), when they differ from now."""

    before: OsFacts
    seen_at: str


def parse_state(text: str) -> tuple[OsFacts, str] | None:
    """The stored facts and timestamp, or None for a missing or damaged file."""
    try:
        data = json.loads(text)
        facts = OsFacts(**{k: str(data["facts"][k]) for k in ("name", "version", "release", "arch")})
        return facts, str(data.get("seen_at", ""))
    except (ValueError, KeyError, TypeError):
        return None


def remember_os(data_dir: Path, now: OsFacts, when: datetime) -> OsChange | None:
    """Store `now` as the last-seen OS; return what was seen before when the version or release changed."""
    path = data_dir / STATE_FILE
    before: tuple[OsFacts, str] | None = None
    try:
        before = parse_state(path.read_text(encoding="utf-8"))
    except OSError:
        before = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"facts": asdict(now), "seen_at": when.isoformat()}), encoding="utf-8")
    except OSError:
        pass
    if before is None:
        return None
    old, seen_at = before
    if (old.version, old.release) != (now.version, now.release):
        return OsChange(old, seen_at)
    return None


def facts_dict(facts: OsFacts) -> Mapping[str, str]:
    """The facts as the JSON object the check puts in its data."""
    return asdict(facts)
