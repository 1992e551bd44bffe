"""Named setups for the provider-probe field scenarios (tests/data/scenarios/probe-*.toml).

`dead-base-url`: a loopback port that was just bound and closed, so nothing listens there; the scenario's
base URL is replaced with it (what a stale ANTHROPIC_BASE_URL or a stopped local relay looks like).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from tests.conftest import free_port
from tests.setups import SetupEnv


@contextlib.contextmanager
def dead_base_url(env: SetupEnv) -> Iterator[dict[str, Any]]:
    """Point --base-url at a dead loopback port (the last --base-url on the command line wins)."""
    yield {"args": ["--base-url", f"http://127.0.0.1:{free_port()}"]}


SETUPS: dict[str, Callable[[SetupEnv], AbstractContextManager[dict[str, Any]]]] = {
    "dead-base-url": dead_base_url,
}
