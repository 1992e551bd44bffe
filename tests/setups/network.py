"""Named setups for the network field scenarios (tests/data/scenarios/network-*.toml): a real proxy on loopback.

Each setup starts a `ForwardProxy` (tests/support/netfixtures.py) in one mode and points both HTTP_PROXY and
HTTPS_PROXY at it (the simulator is plain http, so HTTP_PROXY is the variable clients use), or points them at a
loopback port nothing listens on. Everything stays on 127.0.0.1 and is stopped when the scenario ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from typing import Any

from tests.conftest import free_port
from tests.setups import SetupEnv
from tests.support.netfixtures import running_proxy


def _proxy_env(url: str) -> dict[str, str]:
    return {"HTTP_PROXY": url, "HTTPS_PROXY": url}


def _with_proxy(mode: str) -> Callable[[SetupEnv], ContextManager[dict[str, Any]]]:
    @contextlib.contextmanager
    def setup(env: SetupEnv) -> Iterator[dict[str, Any]]:
        with running_proxy(mode) as proxy:
            yield {"env": _proxy_env(proxy.url)}

    setup.__doc__ = f"A real loopback proxy in mode {mode!r}, with HTTP(S)_PROXY pointing at it."
    return setup


@contextlib.contextmanager
def dead_proxy_port(env: SetupEnv) -> Iterator[dict[str, Any]]:
    """HTTP(S)_PROXY at a loopback port that was just bound and closed: the proxy client is not running."""
    port = free_port()
    yield {"env": _proxy_env(f"http://127.0.0.1:{port}")}


SETUPS: dict[str, Callable[[SetupEnv], ContextManager[dict[str, Any]]]] = {
    "proxy-ok": _with_proxy("ok"),
    "proxy-reset": _with_proxy("reset"),
    "proxy-502": _with_proxy("502"),
    "proxy-407": _with_proxy("407"),
    "proxy-hang": _with_proxy("hang"),
    "proxy-portal": _with_proxy("portal"),
    "proxy-dead-port": dead_proxy_port,
}
