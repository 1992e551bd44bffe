"""`capdoctor demo` and `capdoctor config`: the glue behind two commands, kept out of `cli.py`.

The demo starts the simulator on a free loopback port, points a target at it, runs the full diagnosis and
compares the verdict with the scenario's known cause: it is a demonstration and a self-test at once, and
it needs no key and no internet. The demo's environment drops the user's proxy variables and provider keys:
the simulated provider lives on loopback, and the user's own setup must not decide a self-test.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capdoctor.errors import UsageError

if TYPE_CHECKING:
    from capdoctor.render.view import View

DEMO_DROPPED_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "OLLAMA_HOST")
"""Dropped besides every provider's own variables (keys, base URLs, models: `catalog.env_vars()`)."""
TARGET_PROVIDER = {"ollama": "openai-compatible"}
"""Simulator shapes that a client reaches through the OpenAI-compatible adapter."""


DEMO_KEY_ENV = "CAPDOCTOR_DEMO_KEY"


def demo_key(provider: str) -> str:
    """A fake key in `provider`'s shape: the demo plays a configured user (the simulator checks no key)."""
    from capdoctor.providers.catalog import adapter_for

    prefixes = adapter_for(provider).key_prefixes
    return (prefixes[0] if prefixes else "") + "capdoctor-demo-not-a-real-key-0000"


def client_target(sim: Any, shape: str) -> tuple[str, str]:
    """(provider, base URL) a client uses to reach the simulator's `shape` (Ollama through its `/v1`)."""
    provider = TARGET_PROVIDER.get(shape, shape)
    return provider, sim.base_url(provider)


def scenario_or_error(name: str) -> Any:
    """The simulator scenario called `name`, or a usage error listing the known ones."""
    from capdoctor.simulator.scenarios import SCENARIOS

    if name not in SCENARIOS:
        raise UsageError(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
    return SCENARIOS[name]


def demo_env(environ: dict[str, str]) -> dict[str, str]:
    """The user's environment without proxy variables and provider variables (upper- and lower-case)."""
    from capdoctor.providers.catalog import env_vars

    dropped = {n.lower() for n in (*DEMO_DROPPED_ENV, *env_vars())}
    return {k: v for k, v in environ.items() if k.lower() not in dropped}


def run_demo(
    scenario: str, timeout: float, view: View, run: Callable[[Any, View, str], int], started: float | None = None
) -> int:
    """Diagnose against the simulator; 0 when the verdict matches the scenario's known cause, else 1."""
    from capdoctor import __version__
    from capdoctor.cli.exitcodes import ExitCode, for_verdict
    from capdoctor.fallback.default_format import DEMO_SOURCE
    from capdoctor.run.context import Target
    from capdoctor.run.diagnosis import RunRequest
    from capdoctor.simulator.server import Simulator

    sc = scenario_or_error(scenario)
    shape = getattr(sc, "provider", "openai")
    with Simulator(scenario=scenario) as sim:
        provider, base_url = client_target(sim, shape)
        target = Target(
            provider=provider,
            base_url=base_url,
            model=sc.primary_model,
            alt_models=tuple(sc.alt_models),
            api_key=None if sc.requires_key else demo_key(provider),  # the no-key scenario is played without one
            api_key_env=None if sc.requires_key else DEMO_KEY_ENV,
            sources={
                "provider": "demo scenario",
                "base_url": DEMO_SOURCE.format(scenario=scenario),
                "model": "demo scenario",
                **({} if sc.requires_key else {"api_key_env": "demo scenario", "key": "demo (a fake key)"}),
            },
        )
        options: dict[str, Any] = {
            "status_url": sim.status_url,
            "reference_url": sim.url + "/cdn-cgi/trace",
            "discover_logs": False,
            "demo": True,
        }
        if shape == "ollama":  # only a local-model scenario has a local server to find
            options["ollama_url"] = sim.base_url("ollama")
        request = RunRequest(
            target=target,
            env=demo_env(dict(os.environ)),
            home=Path.home(),
            cwd=Path.cwd(),
            timeout=timeout,
            verbose=view.verbose,
            options=options,
            demo={"scenario": scenario, "description": sc.description},
            started=started,
        )
        header = f"capdoctor {__version__} demo — scenario '{scenario}': {sc.description}"
        code = run(request, view, header)
    expected = for_verdict(sc.expected_cause)
    if code == expected:
        if view.human and not view.quiet:
            print(f"demo: verdict matches the scenario's known cause ({sc.expected_cause}).")
        return int(ExitCode.OK)
    print(f"demo: expected verdict {sc.expected_cause!r} (exit {int(expected)}), got exit {code}", file=sys.stderr)
    return int(ExitCode.INTERNAL)


def print_config(target: Any, options: Any, json_out: bool) -> int:
    """Print the discovered target and options and where each value came from; secrets are never shown."""
    import json

    from capdoctor.redact import redact
    from capdoctor.run.diagnosis import env_secrets
    from capdoctor.target.discovery import describe
    from capdoctor.target.options import shown as spell

    env = dict(os.environ)
    described = describe(target, env, Path.home(), Path.cwd(), sys.platform, options)
    shown = redact(described, env_secrets(env), str(Path.home()))
    if json_out:
        print(json.dumps(shown, indent=2, ensure_ascii=False, default=str))
        return 0
    from rich import box as boxes
    from rich.table import Table

    from capdoctor.render.console import console_for, is_tty

    box = boxes.HEAVY_HEAD if is_tty(sys.stdout) else None  # a pipe: plain columns, no boxes, never wrapped
    table = Table(title="capdoctor config", show_lines=False, box=box)
    table.add_column("setting")
    table.add_column("value")
    table.add_column("source", style="dim")
    for key, row in (shown.get("settings") or {}).items():
        if isinstance(row, dict):
            table.add_row(key, str(row.get("value", "")), str(row.get("source", "")))
        else:
            table.add_row(key, str(row), "")
    console = console_for(sys.stdout)
    if table.row_count:
        console.print(table)
    opts = Table(title="options (capdoctor.toml \\[options], flags, environment)", show_lines=False, box=box)
    for column in ("option", "value", "source"):
        opts.add_column(column, style="dim" if column == "source" else None)
    for name, row in (shown.get("options") or {}).items():
        opts.add_row(name, spell(row.get("value")), str(row.get("source", "")))
    if opts.row_count:
        console.print(opts)
    for f in shown.get("files") or []:
        if isinstance(f, dict) and f.get("exists"):
            console.print(f"  read {f.get('path')} ({f.get('kind')})", style="dim")
    for line in shown.get("findings") or []:
        console.print(f"! {line.get('message', line) if isinstance(line, dict) else line}")
    return 0
