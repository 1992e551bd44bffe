"""Shared parts of the `capdoctor fallback` tests: hand-built pools and reports, live reports, the client runner.

`live_report` runs the real models check against the simulator (real HTTP on loopback) and returns the
report the `fallback` command builds from. `run_client` starts `tests/support/clientrun.py` — a real LiteLLM Router or
a generated SDK snippet — in a subprocess whose every non-loopback connection is refused and reported.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from capdoctor.fallback.pool import Candidate, Pool

CLIENTRUN = Path(__file__).with_name("clientrun.py")
FAST = {"models.backoff_s": 0.01, "models.max_backoff_s": 0.05}
PLANTED = {"OPENAI_API_KEY": "sk-test-planted-openai-7f3a9c2e", "ANTHROPIC_API_KEY": "sk-ant-test-planted-5d1b8e4a"}
"""Keys planted in the environment of the runs: they must reach the simulator and appear nowhere generated."""
OFFLINE = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
}
"""LiteLLM's switches for its bundled data instead of downloads (the runner's guard blocks any left over)."""

SHAPES: dict[str, tuple[str, str, str]] = {
    "openai": ("gpt-5.5", "gpt-5.4-mini", "OPENAI_API_KEY"),
    "anthropic": ("claude-opus-4-7", "claude-haiku-4-5", "ANTHROPIC_API_KEY"),
}
"""Simulator shape → (primary, alternative, key variable): the primary answers 503 / 529 under `capacity`."""

PRIMARY = Candidate("gpt-5.5", "openai", "primary", "fail", 0, 3, None, "HTTP 503 openai.server_is_overloaded")
ALTS = (
    Candidate("gpt-5.4-mini", "openai", "alternative", "ok", 3, 3, 240),
    Candidate("gpt-5-mini", "openai", "alternative", "ok", 2, 3, 90),
)


def pool(
    provider: str = "openai",
    base_url: str = "http://127.0.0.1:9/v1",
    key_env: str = "OPENAI_API_KEY",
    primary: Candidate = PRIMARY,
    alts: tuple[Candidate, ...] = ALTS,
    **extra: Any,
) -> Pool:
    """A hand-built pool (for the unit tests of formats and merge)."""
    return Pool(
        provider,
        base_url,
        key_env,
        primary,
        alts,
        created="2026-11-20T10:00:00+00:00",
        version="0.1.0",
        verdict="capacity",
        **extra,
    )


ANTHROPIC = pool(
    "anthropic",
    "http://127.0.0.1:9/anthropic/v1",
    "ANTHROPIC_API_KEY",
    Candidate("claude-opus-4-7", "anthropic", "primary", "fail", 0, 3, None, "HTTP 529"),
    (
        Candidate("claude-sonnet-4-6", "anthropic", "alternative", "ok", 3, 3, 400),
        Candidate("claude-haiku-4-5", "anthropic", "alternative", "ok", 3, 3, 150),
    ),
)


def attempt(ok: bool, latency: int = 100, status: int | None = None, signature: str | None = None) -> dict[str, Any]:
    if ok:
        return {"status": 200, "kind": "ok", "latency_ms": latency, "cause": None, "signature": None}
    return {
        "status": status or 503,
        "kind": "http_error",
        "latency_ms": latency,
        "cause": "capacity",
        "signature": signature or "openai.server_is_overloaded",
    }


def model_run(model: str, role: str, *attempts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    oks = sum(a["kind"] == "ok" for a in attempts)
    outcome = "ok" if oks == len(attempts) else "flaky" if oks else "fail"
    return {"model": model, "role": role, "outcome": outcome, "attempts": list(attempts), **extra}


def report(*models: dict[str, Any], provider: str = "openai", **target: Any) -> dict[str, Any]:
    return {
        "schema": "capdoctor/report-v1",
        "version": "0.1.0",
        "created": "2026-11-20T10:00:00+00:00",
        "target": {
            "provider": provider,
            "base_url": "http://127.0.0.1:9/v1",
            "model": "gpt-5.5",
            "alt_models": [],
            "wire_api": None,
            "api_key_present": True,
            "api_key_env": None,
            "sources": {},
            **target,
        },
        "checks": [
            {"id": "models", "status": "fail", "summary": "…", "findings": [], "data": {"models": list(models)}}
        ],
        "verdict": {"cause": "capacity"},
    }


def live_report(sim: Any, shape: str, home: Path) -> dict[str, Any]:
    """The report of a real models-only diagnosis of the simulator's `shape` (what `fallback` builds from)."""
    from capdoctor.checks import registry
    from capdoctor.run.context import Target
    from capdoctor.run.diagnosis import RunRequest, diagnose

    primary, alt, key_env = SHAPES[shape]
    target = Target(
        provider=shape,
        base_url=sim.base_url(shape),
        model=primary,
        alt_models=(alt,),
        api_key_env=key_env,
        api_key=PLANTED[key_env],
        sources={"model": "flag --model", "key": f"env {key_env}"},
    )
    request = RunRequest(
        target=target,
        env=dict(PLANTED),
        home=home,
        cwd=home,
        timeout=20,
        options=dict(FAST),
        checks=registry.select(["models"], None),
    )
    return diagnose(request).report


def client_env() -> dict[str, str]:
    """The environment of a real client run: the test's (isolated) one, the planted keys, LiteLLM offline."""
    return {**os.environ, **PLANTED, **OFFLINE}


class ClientRun:
    """A `clientrun.py` subprocess answering one request per `ask()` (so the test can change the scenario between)."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CLIENTRUN), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=client_env(),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def ask(self, timeout: float = 90.0) -> dict[str, Any]:
        """Send one request through the client; its JSON answer (a clear failure if it dies or hangs)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        try:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"the client gave no answer within {timeout} s") from None
        if not line:
            raise AssertionError(f"the client exited: {self.stderr()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stderr(self) -> str:
        """Everything the client wrote on stderr (after stopping it)."""
        self.close()
        assert self.proc.stderr is not None
        return self.proc.stderr.read()[-4000:]

    def close(self) -> None:
        """End the client (EOF on stdin), killing it if it does not go."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
