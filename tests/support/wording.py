"""A test fixture that removes the provider's wording from a simulator scenario, keeping status and headers.

`without_wording(scenario)` returns the same scenario whose every reply body and stream error keeps its
shape (JSON keys, numbers such as `"code": 429`) while every string in it — messages, error types and codes,
HTML pages, plain-text bodies — becomes the neutral word "error". Statuses, headers, transports, the status
page and which requests fail are unchanged. Used by tests/e2e/test_mutation.py: what the classifier can still
tell from status, headers and shape alone must be right or `inconclusive`, never a wrong cause.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from capdoctor.simulator.replies import Reply
from capdoctor.simulator.scenarios import Scenario

NEUTRAL = "error"


def strip(value: Any) -> Any:
    """`value` with every string replaced by NEUTRAL (keys and non-string leaves kept)."""
    if isinstance(value, str):
        return NEUTRAL
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strip(v) for v in value]
    return value


def without_wording(scenario: Scenario) -> Scenario:
    """The scenario with the provider's words removed from every reply and stream error."""
    replies = {key: Reply(r.status, strip(r.body), r.headers, r.content_type) for key, r in scenario.replies.items()}
    stream_errors = {shape: strip(err) for shape, err in scenario.stream_errors.items()}
    return replace(scenario, replies=replies, stream_errors=stream_errors)


def has_wording(scenario: Scenario) -> bool:
    """True when the scenario answers with any words to strip (transport-only scenarios have none)."""
    return bool(scenario.replies or scenario.stream_errors)
