"""`capdoctor fallback`'s default format — the one the client in use loads — and the next step that names it.

Contract: which client the user runs is `capdoctor.target.clientuse`'s one answer (the same one the next steps and the
ticket use); `ClientInUse.fallback_format` says which format that client loads. `report_client(report)` reads
it from a saved report (its `client`, else the target the report names); `fallback_step(target)` is the next
step the models rules attach to "the primary is at capacity while an alternative answers": the `capdoctor
fallback` command for that client, with the target flags the user gave (the verdict refits its format once the
client check has said which client is in use). Nothing here reads files or the environment.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from capdoctor.model import NextStep
from capdoctor.target.clientuse import ClientInUse, client_in_use

if TYPE_CHECKING:
    from capdoctor.run.context import Target

FORMATS: tuple[str, ...] = ("litellm", "codex", "claude-code", "openai-python", "anthropic-python", "env")
"""What `capdoctor fallback --format` accepts."""

TARGET_FLAGS: tuple[tuple[str, str], ...] = (
    ("provider", "--provider"),
    ("base_url", "--base-url"),
    ("model", "--model"),
    ("api_key_env", "--api-key-env"),
)


def report_client(report: Mapping[str, Any]) -> ClientInUse:
    """The client in use as a saved report recorded it, else as its target shows it."""
    saved = report.get("client")
    if isinstance(saved, Mapping) and saved.get("id"):
        return ClientInUse(
            str(saved["id"]),
            str(saved.get("name") or saved["id"]),
            saved.get("version"),
            str(saved.get("basis") or ""),
            saved.get("package"),
        )
    target = report.get("target")
    return client_in_use(target if isinstance(target, Mapping) else None, None)


DEMO_SOURCE = "demo simulator (scenario {scenario})"
"""The base URL's source in a demo's target (`demo.run_demo` writes it): the fallback step reads the scenario."""
DEMO_REPORT = "capdoctor-demo.json"


def fallback_command(target: Target) -> str:
    """`capdoctor fallback --format <client in use>` plus the target flags the user passed (so it probes the same).

    After a demo the simulator is gone, and a `fallback` without its target would probe whatever the
    environment names (a real provider, with a real key): the step replays the demo into a saved report and
    builds from that, sending nothing anywhere else.
    """
    import re

    sources = dict(target.sources)
    fmt = client_in_use(target.to_dict(), None).fallback_format
    demo = re.fullmatch(re.escape(DEMO_SOURCE).replace(re.escape("{scenario}"), r"(\S+)"), sources.get("base_url", ""))
    if demo:
        return (
            f"capdoctor demo --scenario {shlex.quote(demo[1])} --quiet --report {DEMO_REPORT} && "
            f"capdoctor fallback --from-report {DEMO_REPORT} --format {fmt}"
        )
    parts = ["capdoctor", "fallback", "--format", fmt]
    for name, flag in TARGET_FLAGS:
        value = getattr(target, name)
        if value and sources.get(name, "").startswith("flag"):
            parts += [flag, shlex.quote(str(value))]
    if sources.get("alt_models", "").startswith("flag"):
        for alt in target.alt_models:
            parts += ["--alt-model", shlex.quote(alt)]
    return " ".join(parts)


def fallback_step(target: Target) -> NextStep:
    """The next step that turns the verdict into configuration the user's client loads."""
    return NextStep(
        "Generate a fallback pool and retry policy for your client from the models that answered.",
        fallback_command(target),
    )
