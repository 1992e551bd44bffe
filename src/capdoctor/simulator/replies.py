"""The simulator's literal provider responses: `Reply`, and each provider's error bodies, written as data.

Copied from the real providers' error shapes (shared/reference/signatures.md and platform-facts.md); the
scenarios (`scenarios.py`) say which requests get which. Placeholders in string values are filled per response by
the server: `{model}` (the requested model), `{request_id}` (the response's request id), `{reset_epoch}` (now +
1 h, Unix seconds), `{now_epoch}` and `{reset_rfc3339}` (now + 1 s, RFC 3339). A string that is exactly an
integer placeholder becomes an integer. Reply keys are wire shapes (`openai`, `anthropic`, `gemini`, `ollama`,
`compat`, `openrouter`) or `shape:route` for one route only (routes: `chat`, `responses`, `messages`,
`generate`, `models`, `key`). It must not import any classifier, and must not do I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from capdoctor.simulator.payloads import SHAPES


@dataclass(frozen=True)
class Reply:
    """One literal HTTP response: status, body (JSON value, or `str` sent as-is), extra headers."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


def _compat(status: int, message: str) -> Reply:
    """Ollama's OpenAI-compatible error envelope (ollama/openai NewError: type by status, null code)."""
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    return Reply(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})


def _relayed(openai: Reply, status: int | None = None, provider_name: str = "OpenAI") -> Reply:
    """OpenRouter passing an upstream error on: "Provider returned error" with the raw upstream body."""
    code = status or openai.status
    raw = openai.body if isinstance(openai.body, str) else json.dumps(openai.body, separators=(",", ":"))
    return Reply(
        code,
        {
            "error": {
                "message": "Provider returned error",
                "code": code,
                "metadata": {"raw": raw, "provider_name": provider_name},
            }
        },
    )


def everywhere(
    openai: Reply,
    anthropic: Reply | None = None,
    gemini: Reply | None = None,
    ollama: Reply | None = None,
    compat: Reply | None = None,
    openrouter: Reply | None = None,
) -> dict[str, Reply]:
    """Replies for every shape: the ones given, with Ollama and OpenRouter derived from the OpenAI body.

    The derivations are the real envelopes those servers put around a message: Ollama native
    `{"error": "…"}`, Ollama compat `{"error": {message, type, param, code}}`, OpenRouter's relayed error.
    """
    message = openai.body["error"]["message"] if isinstance(openai.body, dict) else str(openai.body)
    out = {
        "openai": openai,
        "ollama": ollama or Reply(openai.status, {"error": message}),
        "compat": compat or _compat(openai.status, message),
        "openrouter": openrouter or _relayed(openai),
    }
    if anthropic is not None:
        out["anthropic"] = anthropic
    if gemini is not None:
        out["gemini"] = gemini
    return out


# ------------------------------------------------------------------------------------------- literal bodies

OPENAI_OVERLOADED = Reply(
    503,
    {
        "error": {
            "message": "Our servers are currently overloaded. Please try again later.",
            "type": "service_unavailable_error",
            "param": None,
            "code": "server_is_overloaded",
        }
    },
)
ANTHROPIC_OVERLOADED = Reply(
    529,
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "{request_id}"},
    {"x-should-retry": "true"},
)
GEMINI_OVERLOADED = Reply(
    503,
    {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}},
)
OLLAMA_BUSY_TEXT = "server busy, please try again.  maximum pending requests exceeded"

CAPACITY = everywhere(
    OPENAI_OVERLOADED,
    ANTHROPIC_OVERLOADED,
    GEMINI_OVERLOADED,
    ollama=Reply(503, {"error": OLLAMA_BUSY_TEXT}),
    compat=_compat(503, OLLAMA_BUSY_TEXT),
    openrouter=_relayed(OPENAI_OVERLOADED, 502),
)

OPENAI_QUOTA = Reply(
    429,
    {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing details. For more "
            "information on this error, read the docs: "
            "https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    },
)
ANTHROPIC_CREDIT = Reply(
    400,
    {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
            "upgrade or purchase credits.",
        },
        "request_id": "{request_id}",
    },
)
GEMINI_QUOTA = Reply(
    429,
    {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing details. For more "
            "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To "
            "monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: "
            "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: {model}"
            "\nPlease retry in 20.04466179s.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": "{model}"},
                            "quotaValue": "0",
                        }
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [
                        {
                            "description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"},
            ],
        }
    },
)
OPENROUTER_CREDITS = Reply(
    402,
    {
        "error": {
            "code": 402,
            "message": "This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but "
            "can only afford 3919. To increase, visit https://openrouter.ai/settings/credits and upgrade to "
            "a paid account",
            "metadata": {"limit_source": "openrouter_credits"},
        }
    },
)

QUOTA = everywhere(OPENAI_QUOTA, ANTHROPIC_CREDIT, GEMINI_QUOTA, openrouter=OPENROUTER_CREDITS)

OPENAI_RATE = Reply(
    429,
    {
        "error": {
            "message": "Rate limit reached for {model} in organization org-simulator-test on requests per min (RPM): "
            "Limit 500, Used 500, Requested 1. Please try again in 1s. Visit "
            "https://platform.openai.com/account/rate-limits to learn more.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    },
    {
        "retry-after": "1",
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "1s",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "29980",
        "x-ratelimit-reset-tokens": "40ms",
    },
)
ANTHROPIC_RATE = Reply(
    429,
    {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "This request would exceed your organization's rate limit of 50 requests per minute "
            "(org: 00000000-0000-4000-8000-00000000fa4e, model: {model}). For details, refer to: "
            "https://docs.claude.com/en/api/rate-limits. You can see the response headers for current "
            "usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
        },
        "request_id": "{request_id}",
    },
    {
        "retry-after": "1",
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "{reset_rfc3339}",
        "anthropic-ratelimit-tokens-limit": "40000",
        "anthropic-ratelimit-tokens-remaining": "39000",
        "anthropic-ratelimit-tokens-reset": "{reset_rfc3339}",
    },
)
GEMINI_RATE = Reply(
    429,
    {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing details. For more "
            "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To "
            "monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: "
            "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 5, model: {model}"
            "\nPlease retry in 1.204566179s.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": "{model}"},
                            "quotaValue": "5",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"},
            ],
        }
    },
)
OPENROUTER_RATE = Reply(
    429,
    {
        "error": {
            "message": "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model "
            "requests per day",
            "code": 429,
            "metadata": {
                "headers": {
                    "X-RateLimit-Limit": "50",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": "{reset_epoch}000",
                }
            },
        }
    },
    {"X-RateLimit-Limit": "50", "X-RateLimit-Remaining": "0", "retry-after": "1"},
)

RATE_LIMIT = everywhere(OPENAI_RATE, ANTHROPIC_RATE, GEMINI_RATE, openrouter=OPENROUTER_RATE)

AUTH = everywhere(
    Reply(
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-test-****fake. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    Reply(
        401,
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            "request_id": "{request_id}",
        },
    ),
    Reply(
        400,
        {
            "error": {
                "code": 400,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                        "domain": "googleapis.com",
                        "metadata": {"service": "generativelanguage.googleapis.com"},
                    },
                    {
                        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                        "locale": "en-US",
                        "message": "API key not valid. Please pass a valid API key.",
                    },
                ],
            }
        },
    ),
    ollama=Reply(401, {"error": "unauthorized"}),
    openrouter=Reply(401, {"error": {"message": "User not found.", "code": 401}}),
)

REGION = everywhere(
    Reply(
        403,
        {
            "error": {
                "code": "unsupported_country_region_territory",
                "message": "Country, region, or territory not supported",
                "param": None,
                "type": "request_forbidden",
            }
        },
    ),
    # Anthropic's region refusal as field reports quote it (not in the shared reference: approximate).
    Reply(
        403,
        {
            "type": "error",
            "error": {"type": "forbidden", "message": "Request not allowed"},
            "request_id": "{request_id}",
        },
    ),
    Reply(
        400,
        {
            "error": {
                "code": 400,
                "message": "User location is not supported for the API use.",
                "status": "FAILED_PRECONDITION",
            }
        },
    ),
    openrouter=Reply(
        403,
        {
            "error": {
                "message": "Provider returned error",
                "code": 403,
                "metadata": {
                    "raw": '{"error":{"code":"unsupported_country_region_territory","message":"Country, '
                    'region, or territory not supported","param":null,"type":"request_forbidden"}}',
                    "provider_name": "OpenAI",
                },
            }
        },
    ),
)

MODEL_NOT_FOUND = everywhere(
    Reply(
        404,
        {
            "error": {
                "message": "The model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        },
    ),
    Reply(
        404,
        {
            "type": "error",
            "error": {"type": "not_found_error", "message": "model: {model}"},
            "request_id": "{request_id}",
        },
    ),
    Reply(
        404,
        {
            "error": {
                "code": 404,
                "message": "models/{model} is not found for API version v1beta, or is not supported for "
                "generateContent. Call ListModels to see the list of available models and their supported "
                "methods.",
                "status": "NOT_FOUND",
            }
        },
    ),
    ollama=Reply(404, {"error": "model '{model}' not found, try pulling it first"}),
    compat=_compat(404, 'model "{model}" not found, try pulling it first'),
    openrouter=Reply(404, {"error": {"message": "No endpoints found for {model}.", "code": 404}}),
)

CF_CHALLENGE_HTML = (
    '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
    '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
    '<meta http-equiv="X-UA-Compatible" content="IE=Edge"><meta name="robots" content="noindex,nofollow">'
    '<meta name="viewport" content="width=device-width,initial-scale=1"></head><body>'
    '<div class="main-wrapper" role="main"><div class="main-content"><noscript><div class="h2">'
    '<span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></noscript>'
    "</div></div><script>(function(){window._cf_chl_opt={cvId: '3',cType: 'managed'};}());</script>"
    "</body></html>"
)
CF_BLOCK = Reply(
    403,
    CF_CHALLENGE_HTML,
    {"cf-mitigated": "challenge", "cache-control": "private, max-age=0, no-store, no-cache, must-revalidate"},
    "text/html; charset=UTF-8",
)
CLOUDFLARE = {shape: CF_BLOCK for shape in SHAPES}

CLIENT_OUTDATED = {
    "openai": Reply(
        400,
        {
            "error": {
                "message": "The '{model}' model requires a newer version of Codex. Please upgrade to the latest app or "
                "CLI and try again.",
                "type": "invalid_request_error",
                "param": "model",
                "code": None,
            }
        },
    ),
    "anthropic": Reply(
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "Claude Code 2.1.224 does not support this model; version 2.1.251 or newer is required. Run "
                "'claude update', or update the Claude desktop app, then try again.",
                "details": {"error_code": "claude_code_version_too_old"},
            },
            "request_id": "{request_id}",
        },
    ),
}

MOONSHOT_OVERLOADED = Reply(
    429,
    {
        "error": {
            "message": "The engine is currently overloaded, please try again later",
            "type": "engine_overloaded_error",
        }
    },
)
ENGINE_OVERLOADED = everywhere(
    MOONSHOT_OVERLOADED,
    openrouter=Reply(
        429,
        {
            "error": {
                "message": "Provider returned error",
                "code": 429,
                "metadata": {
                    "raw": "moonshotai/kimi-k2 is temporarily rate-limited upstream. Please retry shortly, or "
                    "add your own key to accumulate your rate limits: "
                    "https://openrouter.ai/settings/integrations",
                    "provider_name": "Moonshot AI",
                },
            }
        },
    ),
)

SPEND_LIMIT = everywhere(
    # The code is OpenAI's documented one; the message wording is ours (none is quoted in the reference).
    Reply(
        429,
        {
            "error": {
                "message": "You have reached your organization's spend limit. Raise the limit at "
                "https://platform.openai.com/settings/organization/limits to continue.",
                "type": "insufficient_quota",
                "param": None,
                "code": "organization_spend_limit_exceeded",
            }
        },
    ),
    # Anthropic: the documented error_code; no retry-after on purpose (do not retry until the 1st).
    Reply(
        429,
        {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "You have reached your organization's monthly spend limit for its usage tier. "
                "Access resumes at 00:00 UTC on the 1st of next month.",
                "details": {"error_code": "enforced_spend_limit_reached"},
            },
            "request_id": "{request_id}",
        },
    ),
    GEMINI_QUOTA,
    openrouter=OPENROUTER_CREDITS,
)

CODEX_USAGE = everywhere(
    Reply(
        429,
        {
            "error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": "{reset_epoch}",
                "resets_in_seconds": 3600,
            }
        },
        {
            "x-codex-primary-used-percent": "100",
            "x-codex-primary-window-minutes": "300",
            "x-codex-primary-reset-at": "{reset_epoch}",
            "x-codex-secondary-used-percent": "38",
            "x-codex-secondary-window-minutes": "10080",
            "x-codex-secondary-reset-at": "{reset_epoch}",
            "x-codex-credits-has-credits": "False",
            "x-codex-credits-unlimited": "False",
            "x-codex-active-limit": "codex",
        },
    ),
    Reply(
        429,
        {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "This request would exceed your account's rate limit. Please try again later.",
            },
            "request_id": "{request_id}",
        },
        {
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": "{reset_epoch}",
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
        },
    ),
)

PLENTY_OPENAI = {
    "x-ratelimit-limit-requests": "10000",
    "x-ratelimit-remaining-requests": "9998",
    "x-ratelimit-reset-requests": "12ms",
    "x-ratelimit-limit-tokens": "30000000",
    "x-ratelimit-remaining-tokens": "29999950",
    "x-ratelimit-reset-tokens": "0s",
}
PLENTY_ANTHROPIC = {
    "anthropic-ratelimit-requests-limit": "4000",
    "anthropic-ratelimit-requests-remaining": "3998",
    "anthropic-ratelimit-requests-reset": "{reset_rfc3339}",
    "anthropic-ratelimit-tokens-limit": "2000000",
    "anthropic-ratelimit-tokens-remaining": "2000000",
    "anthropic-ratelimit-tokens-reset": "{reset_rfc3339}",
    "anthropic-ratelimit-input-tokens-limit": "2000000",
    "anthropic-ratelimit-input-tokens-remaining": "2000000",
    "anthropic-ratelimit-input-tokens-reset": "{reset_rfc3339}",
    "anthropic-ratelimit-output-tokens-limit": "400000",
    "anthropic-ratelimit-output-tokens-remaining": "400000",
    "anthropic-ratelimit-output-tokens-reset": "{reset_rfc3339}",
}
ACCOUNT_THROTTLED = everywhere(
    Reply(503, OPENAI_OVERLOADED.body, PLENTY_OPENAI),
    Reply(529, ANTHROPIC_OVERLOADED.body, {"x-should-retry": "true", **PLENTY_ANTHROPIC}),
    GEMINI_OVERLOADED,
    ollama=CAPACITY["ollama"],
    compat=CAPACITY["compat"],
    openrouter=CAPACITY["openrouter"],
)

NO_KEY: Mapping[str, Reply] = {
    "openai": Reply(
        401,
        {
            "error": {
                "message": "You didn't provide an API key. You need to provide your API key in an Authorization "
                "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank "
                "username) if you're accessing the API from your browser and are prompted for a username and "
                "password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "anthropic": Reply(
        401,
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "x-api-key header is required"},
            "request_id": "{request_id}",
        },
    ),
    "gemini": Reply(
        403,
        {
            "error": {
                "code": 403,
                "message": "Method doesn't allow unregistered callers (callers without established identity). "
                "Please use API Key or other form of API consumer identity to call this API.",
                "status": "PERMISSION_DENIED",
            }
        },
    ),
    "openrouter": Reply(401, {"error": {"message": "No auth credentials found", "code": 401}}),
    "compat": Reply(401, {"error": "Unauthorized"}),  # vLLM / llama.cpp started with --api-key
}
"""What each shape answers a request without any key (the `requires_key` scenarios); Ollama's native API has none."""

OOM_TEXT = "model requires more system memory (39.4 GiB) than is available (30.0 GiB)"
LOCAL_OOM = {"ollama": Reply(500, {"error": OOM_TEXT}), "compat": _compat(500, OOM_TEXT)}
DEFAULT_PS = ({"name": "llama3.2:3b", "size": 3_393_442_816, "size_vram": 3_393_442_816, "context_length": 4096},)
OOM_PS = ({"name": "llama3.1:70b", "size": 42_520_412_160, "size_vram": 23_622_320_128, "context_length": 8192},)

OPENROUTER_KEY_OK = {
    "label": "sk-or-v1-fake...test",
    "limit": None,
    "limit_remaining": None,
    "limit_reset": None,
    "usage": 1.25,
    "usage_daily": 0.5,
    "usage_weekly": 1.25,
    "usage_monthly": 1.25,
    "byok_usage": 0,
    "include_byok_in_limit": False,
    "is_free_tier": False,
    "is_management_key": False,
    "is_provisioning_key": False,
    "expires_at": None,
    "rate_limit": {"requests": -1, "interval": "10s", "note": "This field is deprecated and safe to ignore."},
}
OPENROUTER_KEY_EMPTY = {
    **OPENROUTER_KEY_OK,
    "limit": 10,
    "limit_remaining": 0,
    "usage": 10.0,
    "usage_monthly": 10.0,
    "limit_reset": "monthly",
}
