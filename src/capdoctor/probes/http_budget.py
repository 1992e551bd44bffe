"""The request hook that makes the run's request budget (`capdoctor.run.budget`) hold whatever a check does.

Contract: `budget_hook(budget)` returns an httpx `request` event hook that every client capdoctor makes for the
network carries, so it sees each request just before it is sent, whatever transport or proxy follows. A request
to the target's API origin is counted by `RunBudget.on_send`; one the budget refuses raises `BudgetSpent` (an
`httpx.RequestError`, so callers report it as a request not sent) and nothing leaves the machine. It never reads
headers (the key travels in them); it reads the JSON body only for the output cap of an unplanned generation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from capdoctor.run.budget import UNPLANNED, RunBudget

TOKEN_FIELDS = ("max_tokens", "max_output_tokens", "max_completion_tokens")


class BudgetSpent(httpx.RequestError):
    """A provider request the run's budget refused: it was not sent."""


def requested_output_tokens(body: Any) -> int:
    """The output cap a generation body asks for (OpenAI, Anthropic, Gemini and Ollama spellings), 0 if none."""
    if not isinstance(body, dict):
        return 0
    total = sum(v for k in TOKEN_FIELDS if isinstance(v := body.get(k), int) and not isinstance(v, bool))
    for nest, key in (("generationConfig", "maxOutputTokens"), ("options", "num_predict")):
        inner = body.get(nest)
        value = inner.get(key) if isinstance(inner, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            total += value
    return total


def _tokens(request: httpx.Request) -> int:
    if "json" not in request.headers.get("content-type", ""):
        return 0
    try:
        return requested_output_tokens(json.loads(request.content or b"null"))
    except (ValueError, httpx.RequestNotRead):
        return 0


def budget_hook(budget: RunBudget, check: str = UNPLANNED) -> Callable[[httpx.Request], None]:
    """The `event_hooks["request"]` entry that counts provider requests and refuses those over the budget;
    `check` names whose client this is, for the requests it sends without taking from the budget first."""

    def hook(request: httpx.Request) -> None:
        url = str(request.url)
        if not budget.is_provider(url):
            return
        if not budget.on_send(url, _tokens(request), check):
            raise BudgetSpent(budget.spent_text(check) + ": not sent", request=request)

    return hook
