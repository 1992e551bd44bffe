"""Named setups for the provider-probe field scenarios (checks/probe-*.toml).

`dead-base-url`: a loopback port that was just bound and closed, so nothing listens there; the scenario's
base URL is replaced with it (what a stale ANTHROPIC_BASE_URL or a stopped local relay looks like).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from tests.setups import SetupEnv


def free_dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@contextlib.contextmanager
def dead_base_url(env: SetupEnv) -> Iterator[dict[str, Any]]:
    """Point --base-url at a dead loopback port (the last --base-url on the command line wins)."""
    yield {"args": ["--base-url", f"http://127.0.0.1:{free_dead_port()}"]}


SETUPS: dict[str, Callable[[SetupEnv], AbstractContextManager[dict[str, Any]]]] = {
    "dead-base-url": dead_base_url,
}
