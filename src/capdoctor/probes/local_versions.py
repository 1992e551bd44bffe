"""Version strings of local clients: parse what `--version` prints, compare, and say how far behind it is.

Contract: pure functions over strings and tuples, no I/O, no clock. Output of `--version` drifts between
releases (`codex-cli 0.155.1`, `2.1.278 (Claude Code)`, `v22.3.0`, `aider 0.86.2`), so parsing takes the
first dotted number and tolerates anything around it; garbage gives None, never an exception.
Must not run commands or talk to registries (that is `local_commands` and `local_registry`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION_RE = re.compile(r"(?<![\w.])v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,9}))?(?:[-+.]?([0-9A-Za-z][0-9A-Za-z.-]*))?")


@dataclass(frozen=True, order=True)
class Version:
    """A parsed version: numeric core plus a pre-release tag (which sorts before the plain release)."""

    major: int
    minor: int
    patch: int
    is_release: bool = True
    tag: str = ""

    def __str__(self) -> str:
        """The dotted form, e.g. `0.169.0` or `1.2.0-beta.1`."""
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core if self.is_release else f"{core}-{self.tag}"


def parse_version(text: str) -> Version | None:
    """The first version number in `text` (a `--version` line or a registry value), or None if there is none.

    Build metadata after `+` is ignored; a suffix such as `-beta.1` or `rc1` marks a pre-release.
    """
    for m in _VERSION_RE.finditer(text or ""):
        major, minor, patch, tag = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        raw = m.group(0)
        if "+" in raw:  # build metadata: not a pre-release
            tag = ""
        # "(Claude Code)" or trailing words are separated by a space and never captured; a tag glued to the
        # number ("1.2.3-beta.1", "0.1.0rc1") is a pre-release.
        return Version(int(major), int(minor), int(patch or 0), is_release=not tag, tag=tag)
    return None


@dataclass(frozen=True)
class Lag:
    """How far `installed` is behind `latest`, by the most significant component that differs."""

    level: str  # "current", "ahead", "major", "minor", "patch"
    distance: int  # difference in that component (0 when current)

    @property
    def behind(self) -> bool:
        """True when an update is available."""
        return self.level in ("major", "minor", "patch")


def lag(installed: Version, latest: Version) -> Lag:
    """Compare an installed version with the latest release."""
    if (installed.major, installed.minor, installed.patch) == (latest.major, latest.minor, latest.patch):
        return Lag("current", 0)
    if installed > latest:
        return Lag("ahead", 0)
    if installed.major != latest.major:
        return Lag("major", latest.major - installed.major)
    if installed.minor != latest.minor:
        return Lag("minor", latest.minor - installed.minor)
    return Lag("patch", latest.patch - installed.patch)


FAR_BEHIND_DEFAULT: dict[str, int] = {"major": 1, "minor": 5, "patch": 1_000_000}
"""How big a lag counts as "far behind", per component (data; a client row may override it)."""


def far_behind(the_lag: Lag, thresholds: dict[str, int] | None = None) -> bool:
    """True when the lag reaches the threshold for its component (e.g. 5 minor releases)."""
    limits = thresholds or FAR_BEHIND_DEFAULT
    return the_lag.behind and the_lag.distance >= limits.get(the_lag.level, 1_000_000)
