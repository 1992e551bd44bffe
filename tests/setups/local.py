"""Setups and loopback servers for the local stages (`client`, `hardware`).

`SETUPS` (read by tests/e2e/test_field_scenarios.py) prepares a client-side situation in the isolated HOME:
fake client executables first on PATH, or a Codex config naming a model the provider does not offer.
`JsonServer` is a real HTTP server on 127.0.0.1 that answers fixed JSON per (method, path); the client and
hardware tests use it as an npm registry, a PyPI JSON API or an Ollama/llama.cpp server. Nothing here
listens on a non-loopback address.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.setups import SetupEnv

FAKEBIN = Path(__file__).resolve().parents[1] / "fakebin"

Route = tuple[int, Any]  # (status, JSON body or str)


class JsonServer:
    """A loopback HTTP server answering `routes[(method, path)]`; records every request path it saw."""

    def __init__(self, routes: Mapping[tuple[str, str], Route]) -> None:
        self.routes = dict(routes)
        self.seen: list[tuple[str, str]] = []
        self.bodies: list[bytes] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                server.bodies.append(self.rfile.read(length) if length else b"")
                server.seen.append((self.command, self.path))
                status, body = server.routes.get((self.command, self.path), (404, {"error": "not found"}))
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "text/plain" if isinstance(body, str) else "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = _answer
            do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        """Root URL, e.g. http://127.0.0.1:43121."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> JsonServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def registry_routes(npm: Mapping[str, str], pypi: Mapping[str, str]) -> dict[tuple[str, str], Route]:
    """Routes shaped like the npm registry (`GET /<@scope%2Fname>`) and PyPI (`GET /pypi/<name>/json`)."""
    routes: dict[tuple[str, str], Route] = {}
    for name, version in npm.items():
        routes[("GET", "/" + name.replace("/", "%2F"))] = (200, {"name": name, "dist-tags": {"latest": version}})
    for name, version in pypi.items():
        routes[("GET", f"/pypi/{name}/json")] = (200, {"info": {"name": name, "version": version}})
    return routes


def with_path(*dirs: Path) -> str:
    """PATH with `dirs` first, then the current PATH (so the CLI still finds the real tools)."""
    return os.pathsep.join([*(str(d) for d in dirs), os.environ.get("PATH", "")])


@contextlib.contextmanager
def old_codex_on_path(env: SetupEnv) -> Iterator[dict[str, Any]]:
    """An outdated `codex` (0.150.0) first on PATH: what the provider's "requires a newer version" is about."""
    yield {"env": {"PATH": with_path(FAKEBIN / "old")}}


@contextlib.contextmanager
def codex_config_missing_model(env: SetupEnv) -> Iterator[dict[str, Any]]:
    """A ~/.codex/config.toml whose provider is the simulator but whose model the simulator does not list."""
    codex = env.home / ".codex"
    codex.mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(
        'model = "gpt-4.5-preview"\n'
        'model_provider = "sim"\n\n'
        "[model_providers.sim]\n"
        'name = "simulator"\n'
        f'base_url = "{env.sim.base_url("openai")}"\n'
        'env_key = "SIM_FAKE_KEY"\n'
        'wire_api = "responses"\n',
        encoding="utf-8",
    )
    yield {"env": {"SIM_FAKE_KEY": "sk-test-fake-0000"}}


SETUPS: dict[str, Callable[[SetupEnv], contextlib.AbstractContextManager[dict[str, Any]]]] = {
    "old-codex-on-path": old_codex_on_path,
    "codex-config-missing-model": codex_config_missing_model,
}
