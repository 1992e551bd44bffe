"""When this process started, as a `time.monotonic()` instant: `--timeout` counts from there.

Why: the timeout promises when the *process* ends, and start-up (the interpreter, the imports) can take a second
or more on a loaded machine. Linux: `/proc/self/stat` against `CLOCK_BOOTTIME`; macOS and Windows: psutil's
creation time against `time.time()`; else the time the `capdoctor` package was imported. Nothing here may raise:
a clock that cannot be read gives the fallback.
"""

from __future__ import annotations

import sys
import time

import capdoctor

MAX_PLAUSIBLE_AGE_S = 120.0
"""An age beyond this is not start-up (capdoctor embedded in a long-lived process): count from the import."""


def parse_stat_starttime(text: str) -> int | None:
    """Field 22 of `/proc/<pid>/stat` (start time, clock ticks since boot), or None when unreadable.

    The command name (field 2) is in parentheses and may itself hold blanks and parentheses, so fields are
    counted after the *last* `)`.
    """
    _, sep, rest = text.rpartition(")")
    fields = rest.split()
    if not sep or len(fields) < 20:
        return None
    try:
        return int(fields[19])  # fields[0] is field 3 (state), so field 22 is fields[19]
    except ValueError:
        return None


def _linux_age() -> float | None:
    import os

    try:
        with open("/proc/self/stat", encoding="ascii", errors="replace") as fh:
            ticks = parse_stat_starttime(fh.read())
        hz = os.sysconf("SC_CLK_TCK")
        now = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, ValueError, AttributeError):
        return None
    return None if ticks is None or hz <= 0 else now - ticks / hz


def _psutil_age() -> float | None:
    try:
        import psutil

        created = float(psutil.Process().create_time())
    except Exception:  # no psutil wheel, no permission: fall back
        return None
    return time.time() - created


def process_age() -> float | None:
    """Seconds since this process started, or None when the OS does not say."""
    return _linux_age() if sys.platform.startswith("linux") else _psutil_age()


def process_started() -> float:
    """The process start as a `time.monotonic()` instant (the package import time when unknown)."""
    now = time.monotonic()
    age = process_age()
    if age is None or not 0.0 <= age <= MAX_PLAUSIBLE_AGE_S:
        return min(capdoctor.IMPORTED_AT, now)
    return now - age
