"""Exit codes: a documented contract (README), pinned by a test. Only `cli.py` turns outcomes into them."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The process exit status of every capdoctor command."""

    OK = 0  # nothing wrong found
    INTERNAL = 1  # capdoctor itself broke (or `demo` reached the wrong verdict)
    USAGE = 2  # bad arguments or unreadable input: one line on stderr
    CAPACITY = 3
    QUOTA = 4
    ACCOUNT = 5
    NETWORK = 6
    HARDWARE = 7
    CLIENT = 8
    INCONCLUSIVE = 9
    NO_FALLBACK = 10  # `fallback`: nothing to build a pool from (nothing probed, no alternative answered)


def for_verdict(cause: str) -> ExitCode:
    """The exit code for a verdict cause (`"none"`, `"inconclusive"` or a `Cause` value)."""
    if cause == "none":
        return ExitCode.OK
    try:
        return ExitCode[cause.upper()]
    except KeyError:
        return ExitCode.INCONCLUSIVE
