"""The context a check runs in: environment, paths, the target, the deadline, options, earlier results.

Checks read *everything* about the outside world through a `Context` (env mapping, home directory, platform,
clock, HTTP client factory), never from `os.environ` or `Path.home()` directly, so tests build one with a
temporary home and a fake environment. Building a context does no I/O and imports nothing heavy.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from capdoctor.model import CheckResult
    from capdoctor.run.budget import RunBudget


@dataclass(frozen=True)
class Target:
    """The provider endpoint being diagnosed, with where each value came from.

    `api_key` holds the secret itself; it is excluded from `repr` and `to_dict`, and the redactor scrubs it from
    every output. `sources` maps a field name to a human source (`env OPENAI_BASE_URL`, `~/.codex/config.toml`).
    `wire_api` is `"chat"` or `"responses"` when known. `client` names the AI client whose own settings supplied
    values (`codex`, `claude`, `gemini`), None when flags, the environment or capdoctor.toml named it all.
    """

    provider: str
    base_url: str
    model: str
    alt_models: tuple[str, ...] = ()
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    wire_api: str | None = None
    logs: tuple[Path, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    client: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report's `target` object; never contains the key, only whether one is present and its source."""
        return {
            "provider": self.provider,
            "base_url": self.base_url,
            "model": self.model,
            "alt_models": list(self.alt_models),
            "wire_api": self.wire_api,
            "api_key_present": bool(self.api_key),
            "api_key_env": self.api_key_env,
            "sources": dict(self.sources),
            "client": self.client,
        }


def user_dir(kind: str, env: Mapping[str, str], home: Path, platform: str) -> Path:
    """The platform's per-user directory of `kind` ("config", "cache" or "data") for capdoctor."""
    if platform == "win32":
        base = env.get("APPDATA" if kind == "config" else "LOCALAPPDATA")
        root = Path(base) if base else home / "AppData" / ("Roaming" if kind == "config" else "Local")
        return root / "capdoctor" / ("Cache" if kind == "cache" else "")
    if platform == "darwin":
        sub = {"config": "Application Support", "cache": "Caches", "data": "Application Support"}[kind]
        return home / "Library" / sub / "capdoctor"
    var, default = {
        "config": ("XDG_CONFIG_HOME", home / ".config"),
        "cache": ("XDG_CACHE_HOME", home / ".cache"),
        "data": ("XDG_DATA_HOME", home / ".local" / "share"),
    }[kind]
    value = env.get(var)
    return (Path(value) if value else default) / "capdoctor"


@dataclass
class Context:
    """Everything a check may read. One per run; the runner adds finished results to `results`.

    `deadline` is a `time.monotonic()` instant shared by the whole run: checks size their timeouts with
    `remaining()` so that nothing outlives it. `options` are the checked option values, defaults filled in (a
    plain dict given here is checked the same way). `budget` is the run's one request budget, shared by every
    copy of the context (the runner's per-check copies keep the same object), so it bounds the whole run.
    """

    env: Mapping[str, str]
    home: Path
    cwd: Path
    target: Target | None = None
    deadline: float = field(default_factory=lambda: time.monotonic() + 30.0)
    no_inference: bool = False
    verbose: bool = False
    platform: str = sys.platform
    options: Mapping[str, Any] = field(default_factory=dict)
    results: dict[str, CheckResult] = field(default_factory=dict)
    now: Callable[[], datetime] = field(default=lambda: datetime.now(timezone.utc))
    budget: RunBudget | None = None
    selected: frozenset[str] = frozenset()
    """The ids of the checks this run runs (empty: not said). A check that reads another's result can tell "not
    part of this run" (run alone: do the least it needs itself) from "part of it, but no result yet"."""

    def __post_init__(self) -> None:
        from capdoctor.run.budget import RunBudget, origin_of
        from capdoctor.target.options import Options, from_mapping

        if not isinstance(self.options, Options):  # a caller's plain dict (demo, tests): checked, defaults filled
            self.options = from_mapping(self.options, "caller", self.env)
        if self.budget is None:
            self.budget = RunBudget(
                self.options["run.max_provider_requests"],
                self.options["run.max_output_tokens"],
                origin_of(self.target.base_url) if self.target is not None else None,
                tuple(str(self.options[k]) for k in ("status_url", "reference_url") if self.options.get(k)),
            )

    @property
    def provider_budget(self) -> RunBudget:
        """The run's request budget (always set after construction; typed without the Optional)."""
        assert self.budget is not None
        return self.budget

    def remaining(self) -> float:
        """Seconds left before the run's deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def timeout(self, wanted: float) -> float:
        """`wanted` seconds, cut to what is left of the deadline (at least 0.05 s so calls fail, not hang)."""
        return max(0.05, min(wanted, self.remaining()))

    @property
    def config_dir(self) -> Path:
        """Where the user's `capdoctor.toml` lives on this platform."""
        return user_dir("config", self.env, self.home, self.platform)

    @property
    def cache_dir(self) -> Path:
        """Where capdoctor caches status pages and latest-version lookups."""
        return user_dir("cache", self.env, self.home, self.platform)

    @property
    def data_dir(self) -> Path:
        """Where capdoctor keeps last-seen facts between runs (e.g. the OS version)."""
        return user_dir("data", self.env, self.home, self.platform)

    def http_client(
        self, *, timeout: float = 10.0, trust_env: bool = False, check: str | None = None, **kwargs: Any
    ) -> httpx.Client:
        """An httpx client bounded by the deadline, with capdoctor's User-Agent.

        Every request ends by its own timeout cut to the run's deadline, whole, however slowly a server answers
        (`probes.http_deadline`), and every request to the provider is counted against the run's budget and
        refused once it is spent (`probes.http_budget`; `check` names whose requests those are). `trust_env` is
        False so that a probe takes exactly the path the check chose; a check wanting the user's proxy passes `proxy=`.
        """
        import httpx

        from capdoctor import __version__
        from capdoctor.probes.http_budget import budget_hook
        from capdoctor.probes.http_deadline import DeadlineTransport
        from capdoctor.run.budget import UNPLANNED

        headers = {"user-agent": f"capdoctor/{__version__}"}
        headers.update(kwargs.pop("headers", {}) or {})
        hooks = dict(kwargs.pop("event_hooks", None) or {})
        hooks["request"] = [budget_hook(self.provider_budget, check or UNPLANNED), *hooks.get("request", [])]
        t = self.timeout(timeout)
        transport = httpx.HTTPTransport(
            verify=kwargs.pop("verify", True), proxy=kwargs.pop("proxy", None), trust_env=trust_env
        )
        client = httpx.Client(
            timeout=httpx.Timeout(t, connect=min(t, 5.0)),
            trust_env=trust_env,
            headers=headers,
            transport=DeadlineTransport(transport, lambda: self.deadline),
            event_hooks=hooks,
            **kwargs,
        )
        mounts = getattr(client, "_mounts", {})  # proxies from the environment (trust_env) get their own
        for pattern, mounted in list(mounts.items()):
            if mounted is not None:
                mounts[pattern] = DeadlineTransport(mounted, lambda: self.deadline)
        return client
