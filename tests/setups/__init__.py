"""Named setups for the field scenarios (tests/data/scenarios/): each area registers context managers in its own module.

A setup receives a `SetupEnv` and yields a dict with optional "env" (extra environment) and "args" (extra CLI
arguments), e.g. a real proxy started on loopback with HTTPS_PROXY pointing at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class SetupEnv:
    """What a setup can use: the running simulator, the isolated HOME and a scratch directory."""

    sim: Any
    home: Path
    tmp: Path
