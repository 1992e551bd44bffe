"""Shared test fixtures: an isolated home and environment, the simulator as a real server, a CLI runner.

Every test runs with HOME pointed at a temporary directory and with provider keys, base URLs and proxy
variables removed, so nothing on the developer's machine (a real key, a real ~/.codex) leaks into a test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ISOLATED_PREFIXES = (
    "OPENAI_",
    "ANTHROPIC_",
    "GEMINI_",
    "GOOGLE_",
    "OPENROUTER_",
    "AZURE_OPENAI",
    "CODEX_",
    "CLAUDE_",
    "OLLAMA_",
    "CAPDOCTOR_",
    "DEEPSEEK_",
    "MOONSHOT_",
)
PROXY_VARS = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME and XDG dirs, no provider keys, no proxies, no colour, fixed terminal width."""
    from capdoctor.providers.catalog import env_vars

    home = tmp_path_factory.mktemp("home")
    provider_vars = set(env_vars())  # every provider's key/base-URL/model variables, from the catalogue
    for name in list(os.environ):
        if name.startswith(ISOLATED_PREFIXES) or name in PROXY_VARS or name in provider_vars:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for var in ("TMP", "TEMP"):  # a client's temporary folder holds its error reports (Gemini CLI): none here
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path_factory.mktemp("tmpdir")))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"), ("XDG_DATA_HOME", ".local/share")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("CAPDOCTOR_NO_NETWORK_LOOKUPS", "1")
    return home


@pytest.fixture
def home(isolated_env: Path) -> Path:
    """The isolated home directory of this test."""
    return isolated_env


@pytest.fixture
def sim(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A running simulator on a free loopback port; `@pytest.mark.scenario("name")` picks the scenario."""
    from capdoctor.simulator.server import Simulator

    marker = request.node.get_closest_marker("scenario")
    scenario = marker.args[0] if marker else "healthy"
    server = Simulator(scenario=scenario)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def run_cli(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    cwd: str | Path | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m capdoctor ARGS` as a real subprocess with the test's (isolated) environment."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "capdoctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
        input=stdin,
        check=False,
    )


@pytest.fixture
def cli() -> Any:
    """The `run_cli` helper as a fixture."""
    return run_cli


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers the suite uses."""
    config.addinivalue_line("markers", "scenario(name): simulator scenario for the `sim` fixture")
    config.addinivalue_line("markers", "realclients: runs the real npm clients (tests/e2e/test_real_clients.py)")


def free_port() -> int:
    """A loopback TCP port that nothing listens on: bound to port 0, read back, closed.

    The one helper for a dead base URL or a dead proxy (a stopped local relay, a proxy client that is not
    running). Another process could take the port before the test uses it; on loopback that is rare
    enough for a test, and a test that needs a listener should bind its own socket instead.
    """
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
