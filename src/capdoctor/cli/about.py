"""`capdoctor --version -v`: which capdoctor, on which Python and platform, with which optional accelerators.

Contract: `lines()` returns the lines to print, each a fact a bug report needs and a user cannot easily look up
(`pipx` and `uv tool` pick the newest Python on the machine, not the one a user thinks of). The accelerators
are reported as the commands would find them: the log scanner's multi-pattern engine (Hyperscan, or the
pure-Python prefilter that serves where no wheel exists) and NVML for the hardware check. Must not print
anything itself, and must stay cheap: a tiny Hyperscan database, one NVML init, no provider, no network.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path


def prefilter() -> str:
    """The log scanner's engine here: Hyperscan when it imports and compiles a database, else the fallback."""
    try:
        import hyperscan

        db = hyperscan.Database()
        db.compile(expressions=[b"capacity"], ids=[0], elements=1, flags=[0])
    except ImportError:
        return "pure-Python prefilter (hyperscan is not installed)"
    except Exception as exc:  # a wheel that imports but cannot compile here (an old CPU): what the scanner does
        return f"pure-Python prefilter (Hyperscan does not work here: {type(exc).__name__}: {exc})"
    version = getattr(hyperscan, "__version__", None)
    return f"Hyperscan (python-hyperscan {version})" if version else "Hyperscan"


def nvml() -> str:
    """NVML as the hardware check finds it: the driver and how many GPUs, or why there is none."""
    from capdoctor.probes.local_nvml import load_nvml, read_gpus

    snapshot = read_gpus(load_nvml())
    if not snapshot.available:
        return f"not found: {snapshot.reason}"
    count = len(snapshot.gpus)
    return f"found, driver {snapshot.driver or 'unknown'}, {count} GPU{'s' if count != 1 else ''}"


def _home_as_tilde(path: str) -> str:
    """`path` with the user's home shown as `~` (the output is pasted into tickets)."""
    home = str(Path.home())
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + "/") else path


def lines(version: str) -> list[str]:
    """What `capdoctor --version -v` prints, one fact a line."""
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return [
        f"capdoctor {version}",
        f"python: {python} ({_home_as_tilde(sys.executable)})",
        f"platform: {platform.platform()} ({sys.platform}, {platform.machine() or 'unknown machine'})",
        f"log prefilter: {prefilter()}",
        f"NVML: {nvml()}",
    ]
