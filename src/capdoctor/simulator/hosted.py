"""Hosted OpenAI-compatible providers in the simulator, as data: one `HostedShape` row per provider.

Contract: a hosted shape speaks OpenAI's chat completions and model list under its own path prefix, with its
own response headers and model catalogue. When a scenario writes no reply for it, it answers what the
scenario answers the OpenAI shape — unless the row carries the provider's own words for that situation
(`own`, keyed by the OpenAI reply's error `code`, e.g. `server_is_overloaded`): so every scenario plays on
every hosted shape without the scenarios knowing about it. Adding a hosted provider to the simulator means
adding its row (and its literal bodies) here; routes, the index, `Simulator.base_url` and the demo read
`HOSTED`. Data only: no I/O, and (like the rest of the simulator) no import of capdoctor.classifier.signatures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from capdoctor.simulator import payloads
from capdoctor.simulator.replies import Reply


def _no_headers() -> dict[str, str]:
    return {}


def _no_rate_headers(now: datetime) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class HostedShape:
    """One hosted OpenAI-compatible provider as the simulator plays it.

    `name` is both the wire shape (a key in scenario replies) and the capdoctor provider; `prefix` is where its
    base URL lives on the simulator's port; `catalog` is (primary, alternatives).
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


def _groq_headers() -> dict[str, str]:
    return {"x-request-id": payloads.new_request_id(), "cf-ray": payloads.new_cf_ray()}


def _groq_rate(now: datetime) -> dict[str, str]:
    """Groq's success headers: requests per day and tokens per minute, Go-style resets (its docs' example)."""
    return {
        "x-ratelimit-limit-requests": "14400",
        "x-ratelimit-limit-tokens": "6000",
        "x-ratelimit-remaining-requests": "14370",
        "x-ratelimit-remaining-tokens": "5997",
        "x-ratelimit-reset-requests": "2m59.56s",
        "x-ratelimit-reset-tokens": "7.66s",
    }


GROQ = HostedShape(
    "groq",
    "/groq/openai/v1",
    ("llama-3.3-70b-versatile", ("llama-3.1-8b-instant",)),
    "cloudflare",
    _groq_headers,
    _groq_rate,
    {
        # The over-capacity sentence as field reports quote it; the `type` value is approximate.
        "server_is_overloaded": Reply(
            503,
            {
                "error": {
                    "message": "{model} is currently over capacity. Please try again and back off exponentially. Visit "
                    "https://groqstatus.com to see if there is an active incident.",
                    "type": "service_unavailable",
                }
            },
        ),
        "invalid_api_key": Reply(
            401, {"error": {"message": "Invalid API Key", "type": "invalid_request_error", "code": "invalid_api_key"}}
        ),
        "rate_limit_exceeded": Reply(
            429,
            {
                "error": {
                    "message": "Rate limit reached for model `{model}` in organization `org_01simulatorgroq0000000000` "
                    "service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5974, Requested 351. "
                    "Please try again in 1s. Visit https://console.groq.com/docs/rate-limits for more "
                    "information.",
                    "type": "tokens",
                    "code": "rate_limit_exceeded",
                }
            },
            {
                "retry-after": "1",
                "x-ratelimit-limit-tokens": "6000",
                "x-ratelimit-remaining-tokens": "0",
                "x-ratelimit-reset-tokens": "1s",
            },
        ),
    },
)

HOSTED: tuple[HostedShape, ...] = (GROQ,)
"""Every hosted OpenAI-compatible shape the simulator plays."""

BY_NAME: Mapping[str, HostedShape] = {h.name: h for h in HOSTED}
