"""Hosted OpenAI-compatible providers in the simulator, as data: one `HostedShape` row per provider.

Contract: a hosted shape speaks OpenAI's chat completions and model list under its own path prefix, with its
own response headers and model catalogue. When a scenario writes no reply for it, it answers what the
scenario answers the OpenAI shape — unless the row carries the provider's own words for that situation
(`own`, keyed by the OpenAI reply's error `code`, e.g. `server_is_overloaded`): so every scenario plays on
every hosted shape without the scenarios knowing about it. Adding a hosted provider to the simulator means
adding its row (and its literal bodies) here; routes, the index, `Simulator.base_url` and the demo read
`HOSTED`. Data only: no I/O, and (like the rest of the simulator) no import of capdoctor.signatures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from capdoctor.simulator.scenarios import Reply


def _no_headers() -> dict[str, str]:
    return {}


def _no_rate_headers(now: datetime) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class HostedShape:
    """One hosted OpenAI-compatible provider as the simulator plays it.

    `name` is both the wire shape (a key in scenario replies) and the capdoctor provider a client uses;
    `prefix` is where its base URL lives on the simulator's port; `catalog` is (primary, alternatives);
    `headers()` the headers every response carries, `rate_headers(now)` those of a successful generation.
    """

    name: str
    prefix: str
    catalog: tuple[str, tuple[str, ...]]
    server: str = ""
    headers: Callable[[], dict[str, str]] = _no_headers
    rate_headers: Callable[[datetime], dict[str, str]] = _no_rate_headers
    own: Mapping[str, Reply] = field(default_factory=dict)

    def translate(self, openai: Reply | None) -> Reply | None:
        """This provider's reply for the situation `openai` is the OpenAI reply to (None: healthy)."""
        if openai is None:
            return None
        return self.own.get(_code(openai.body), openai)


def _code(body: Any) -> str:
    err = body.get("error") if isinstance(body, dict) else None
    code = err.get("code") if isinstance(err, dict) else None
    return str(code) if code is not None else ""


HOSTED: tuple[HostedShape, ...] = ()
"""Every hosted OpenAI-compatible shape the simulator plays."""

BY_NAME: Mapping[str, HostedShape] = {h.name: h for h in HOSTED}
