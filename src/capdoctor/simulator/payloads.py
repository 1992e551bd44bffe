"""Success payloads, headers and stream framing of the simulated providers, as pure functions.

Contract: every function here is pure apart from reading `now` and drawing random ids; it builds the JSON
bodies, header sets and event sequences that the real providers send on success (shapes copied from the
providers' API references and recorded responses), and the model catalogues per wire shape. It does no I/O,
knows nothing of sockets, and never imports capdoctor.classifier.signatures or any classifier: errors are not built here
but written as literal data in `scenarios.py`.

Wire shapes: "openai" (/v1), "anthropic", "gemini", "ollama" (native /api), "compat" (Ollama's OpenAI-compatible
/v1), "openrouter".
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

Event = tuple[str | None, Any]
"""One stream event: an SSE event name (None for data-only frames) and its JSON payload (or a raw string)."""

SHAPES = ("openai", "anthropic", "gemini", "ollama", "compat", "openrouter")

# Per wire shape: (primary model, lighter alternatives that keep working when the primary is at capacity).
CATALOG: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "openai": ("gpt-5.5", ("gpt-5.4-mini",)),
    "anthropic": ("claude-opus-4-7", ("claude-haiku-4-5",)),
    "gemini": ("gemini-2.5-pro", ("gemini-2.5-flash",)),
    "ollama": ("llama3.1:70b", ("llama3.2:3b",)),
    "compat": ("llama3.1:70b", ("llama3.2:3b",)),
    "openrouter": ("openai/gpt-5.5", ("openai/gpt-5.4-mini",)),
}
ALSO_SERVED: Mapping[str, tuple[str, ...]] = {"anthropic": ("claude-sonnet-4-6",)}
"""Models a shape also serves (as primaries): the ones `capdoctor diagnose` picks for that provider when no
--model is given, so following the simulator's printed lines without one still reaches the scenario's verdict
(a test pins them to the provider adapters' defaults; the simulator itself never imports capdoctor's engine)."""

DISPLAY_NAMES: Mapping[str, str] = {
    "claude-opus-4-7": "Claude Opus 4.7",
    "claude-haiku-4-5": "Claude Haiku 4.5",
    "gemini-2.5-pro": "Gemini 2.5 Pro",
    "gemini-2.5-flash": "Gemini 2.5 Flash",
}

REPLY_TEXT = "pong"
CREATED = 1_754_000_000  # a fixed `created` stamp for model lists (real lists carry old creation dates)


def _hex(n: int) -> str:
    return secrets.token_hex(n // 2)


def new_request_id() -> str:
    """An OpenAI-style request id (`req_` + 32 hex), distinct per response so logs can quote it."""
    return f"req_{_hex(32)}"


def new_anthropic_request_id() -> str:
    """An Anthropic-style request id (`req_011C…`), used in the `request-id` header and error bodies."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
    return "req_011C" + "".join(secrets.choice(alphabet) for _ in range(20))


def new_cf_ray(colo: str = "SJC") -> str:
    """A Cloudflare ray id shaped like `9c84b52ce87fbe62-SJC`."""
    return f"{_hex(16)}-{colo}"


def rfc3339(at: datetime) -> str:
    """`at` as the RFC 3339 UTC instant Anthropic uses in `*-reset` headers."""
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def openai_headers(processing_ms: int = 142) -> dict[str, str]:
    """The headers every api.openai.com response carries (behind Cloudflare)."""
    return {
        "x-request-id": new_request_id(),
        "openai-processing-ms": str(processing_ms),
        "openai-version": "2020-10-01",
        "openai-organization": "org-simulator-test",
        "cf-ray": new_cf_ray(),
        "cf-cache-status": "DYNAMIC",
        "strict-transport-security": "max-age=31536000; includeSubDomains; preload",
        "x-content-type-options": "nosniff",
    }


OPENAI_SUCCESS_RATE: Mapping[str, str] = {
    "x-ratelimit-limit-requests": "10000",
    "x-ratelimit-limit-tokens": "30000000",
    "x-ratelimit-remaining-requests": "9999",
    "x-ratelimit-remaining-tokens": "29999988",
    "x-ratelimit-reset-requests": "6ms",
    "x-ratelimit-reset-tokens": "0s",
}


def anthropic_headers() -> dict[str, str]:
    """The headers every api.anthropic.com response carries."""
    return {
        "request-id": new_anthropic_request_id(),
        "anthropic-organization-id": "00000000-0000-4000-8000-00000000fa4e",
        "cf-ray": new_cf_ray(),
        "via": "1.1 google",
        "x-robots-tag": "none",
    }


def anthropic_rate_headers(now: datetime, remaining_requests: int = 3999) -> dict[str, str]:
    """Anthropic's `anthropic-ratelimit-*` headers with RFC 3339 resets (one minute windows)."""
    reset = rfc3339(now + timedelta(seconds=1))
    out: dict[str, str] = {}
    for kind, limit, remaining in (
        ("requests", 4000, remaining_requests),
        ("tokens", 2_000_000, 2_000_000),
        ("input-tokens", 2_000_000, 2_000_000),
        ("output-tokens", 400_000, 400_000),
    ):
        out[f"anthropic-ratelimit-{kind}-limit"] = str(limit)
        out[f"anthropic-ratelimit-{kind}-remaining"] = str(remaining)
        out[f"anthropic-ratelimit-{kind}-reset"] = reset
    return out


def gemini_headers() -> dict[str, str]:
    """Headers of generativelanguage.googleapis.com (Google front end: no request id, no rate limits)."""
    return {
        "vary": "Origin, X-Origin, Referer",
        "server-timing": "gfet4t7; dur=412",
        "x-xss-protection": "0",
        "x-frame-options": "SAMEORIGIN",
        "x-content-type-options": "nosniff",
    }


def openrouter_headers() -> dict[str, str]:
    """Headers of openrouter.ai (behind Cloudflare)."""
    return {"x-request-id": new_request_id(), "cf-ray": new_cf_ray(), "access-control-allow-origin": "*"}


SERVER_NAMES: Mapping[str, str] = {
    "openai": "cloudflare",
    "anthropic": "cloudflare",
    "openrouter": "cloudflare",
    "gemini": "scaffolding on HTTPServer2",
    "ollama": "",
    "compat": "",
}


def base_headers(shape: str) -> dict[str, str]:
    """The per-provider headers every response of `shape` carries (Ollama sends none of these)."""
    if shape == "openai":
        return openai_headers()
    if shape == "anthropic":
        return anthropic_headers()
    if shape == "gemini":
        return gemini_headers()
    if shape == "openrouter":
        return openrouter_headers()
    return {}


def success_headers(shape: str, now: datetime) -> dict[str, str]:
    """Rate-limit headers a successful generation carries: OpenAI and Anthropic only."""
    if shape == "openai":
        return dict(OPENAI_SUCCESS_RATE)
    if shape == "anthropic":
        return anthropic_rate_headers(now)
    return {}


# ---------------------------------------------------------------------------------------------------- lists


def model_list(shape: str, models: list[str]) -> Any:
    """The body of the shape's list-models endpoint for `models`."""
    if shape in ("openai", "compat"):
        owner = "library" if shape == "compat" else "system"
        return {
            "object": "list",
            "data": [{"id": m, "object": "model", "created": CREATED, "owned_by": owner} for m in models],
        }
    if shape == "anthropic":
        data = [
            {"type": "model", "id": m, "display_name": DISPLAY_NAMES.get(m, m), "created_at": "2026-08-05T00:00:00Z"}
            for m in models
        ]
        return {
            "data": data,
            "has_more": False,
            "first_id": models[0] if models else None,
            "last_id": models[-1] if models else None,
        }
    if shape == "gemini":
        return {
            "models": [
                {
                    "name": f"models/{m}",
                    "version": "2.5",
                    "displayName": DISPLAY_NAMES.get(m, m),
                    "description": f"{DISPLAY_NAMES.get(m, m)} (simulated)",
                    "inputTokenLimit": 1_048_576,
                    "outputTokenLimit": 65_536,
                    "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent"],
                    "temperature": 1,
                    "topP": 0.95,
                    "topK": 64,
                    "maxTemperature": 2,
                    "thinking": True,
                }
                for m in models
            ]
        }
    if shape == "openrouter":
        return {
            "data": [
                {
                    "id": m,
                    "canonical_slug": m,
                    "name": m.split("/", 1)[-1],
                    "created": CREATED,
                    "context_length": 400_000,
                    "pricing": {"prompt": "0.00000125", "completion": "0.00001", "request": "0"},
                    "top_provider": {"context_length": 400_000, "max_completion_tokens": 128_000, "is_moderated": True},
                }
                for m in models
            ]
        }
    raise ValueError(f"no model list for shape {shape!r}")


def ollama_tags(models: list[str]) -> Any:
    """The body of Ollama's `GET /api/tags`: installed models."""
    return {
        "models": [
            {
                "name": m,
                "model": m,
                "modified_at": "2026-11-02T09:14:03.123456789Z",
                "size": _ollama_size(m),
                "digest": _hex(64),
                "details": _ollama_details(m),
            }
            for m in models
        ]
    }


def _ollama_size(model: str) -> int:
    return 42_520_412_160 if "70b" in model else 2_019_393_189


def _ollama_details(model: str) -> dict[str, Any]:
    big = "70b" in model
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "llama",
        "families": ["llama"],
        "parameter_size": "70.6B" if big else "3.2B",
        "quantization_level": "Q4_K_M",
    }


def ollama_ps(loaded: list[Mapping[str, Any]], now: datetime) -> Any:
    """The body of Ollama's `GET /api/ps` for loaded models given as `{name, size, size_vram}` dicts."""
    expires = (now + timedelta(minutes=4)).strftime("%Y-%m-%dT%H:%M:%S.000000000Z")
    return {
        "models": [
            {
                "name": m["name"],
                "model": m["name"],
                "size": m["size"],
                "digest": _hex(64),
                "details": _ollama_details(str(m["name"])),
                "expires_at": expires,
                "size_vram": m["size_vram"],
                "context_length": m.get("context_length", 4096),
            }
            for m in loaded
        ]
    }


# ------------------------------------------------------------------------------------------ non-stream bodies


def openai_chat(model: str, now: float) -> Any:
    """A non-streamed `chat.completion` object answering "pong"."""
    return {
        "id": f"chatcmpl-{_hex(28)}",
        "object": "chat.completion",
        "created": int(now),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": REPLY_TEXT, "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 8,
            "completion_tokens": 1,
            "total_tokens": 9,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_" + _hex(10),
    }


def _response_object(
    resp_id: str, msg_id: str, model: str, now: float, status: str, text: str | None, error: Any = None
) -> dict[str, Any]:
    output: list[Any] = []
    if text is not None:
        output = [
            {
                "id": msg_id,
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
            }
        ]
    return {
        "id": resp_id,
        "object": "response",
        "created_at": int(now),
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": 16,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": (
            {
                "input_tokens": 8,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 1,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 9,
            }
            if status == "completed"
            else None
        ),
        "user": None,
        "metadata": {},
    }


def openai_response(model: str, now: float) -> Any:
    """A non-streamed Responses API `response` object (status completed)."""
    return _response_object(f"resp_{_hex(48)}", f"msg_{_hex(48)}", model, now, "completed", REPLY_TEXT)


def anthropic_message(model: str) -> Any:
    """A non-streamed Messages API `message` answering "pong"."""
    return {
        "id": f"msg_01{_hex(22)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": REPLY_TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 8,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
            "service_tier": "standard",
        },
    }


def gemini_content(model: str, text: str = REPLY_TEXT, finish: bool = True) -> Any:
    """A `GenerateContentResponse` (also one chunk of a stream)."""
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": 2,
            "candidatesTokenCount": 1,
            "totalTokenCount": 3,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 2}],
        },
        "modelVersion": model,
        "responseId": _hex(22),
    }


def _ollama_stamp(now: float) -> str:
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def ollama_final(route: str, model: str, now: float, text: str = REPLY_TEXT) -> Any:
    """The last (or only, when `stream: false`) object of Ollama's /api/chat or /api/generate."""
    out: dict[str, Any] = {"model": model, "created_at": _ollama_stamp(now)}
    if route == "chat":
        out["message"] = {"role": "assistant", "content": text}
    else:
        out["response"] = text
    out.update(
        {
            "done": True,
            "done_reason": "stop",
            "total_duration": 412_345_678,
            "load_duration": 21_345_678,
            "prompt_eval_count": 8,
            "prompt_eval_duration": 41_234_567,
            "eval_count": 1,
            "eval_duration": 12_345_678,
        }
    )
    return out


def openrouter_chat(model: str, now: float) -> Any:
    """OpenRouter's chat completion: the OpenAI shape plus `provider`."""
    body = openai_chat(model, now)
    body["id"] = f"gen-{int(now)}-{_hex(20)}"
    body["provider"] = "OpenAI"
    body.pop("service_tier", None)
    return body


# ------------------------------------------------------------------------------------------------- streams


def sse(event: Event) -> bytes:
    """One SSE frame: `event: NAME` (when named) and `data: JSON`, then a blank line."""
    name, data = event
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {payload}\n\n".encode()


def ndjson(event: Event) -> bytes:
    """One newline-delimited JSON line (Ollama's native streaming format)."""
    return (json.dumps(event[1], separators=(",", ":")) + "\n").encode()


def openai_chat_stream(model: str, now: float, error: Any = None, cut: bool = False) -> list[Event]:
    """`chat.completion.chunk` events then `[DONE]`; with `error`, an error object replaces the ending.

    `cut` ends the list after the first content delta (the server then drops the connection).
    """
    cid, fp = f"chatcmpl-{_hex(28)}", "fp_" + _hex(10)

    def chunk(delta: Any, finish: str | None = None) -> Event:
        return (
            None,
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(now),
                "model": model,
                "system_fingerprint": fp,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            },
        )

    events = [chunk({"role": "assistant", "content": "", "refusal": None}), chunk({"content": "po"})]
    if cut:
        return events
    if error is not None:
        return [*events, (None, {"error": error})]
    return [*events, chunk({"content": "ng"}), chunk({}, "stop"), (None, "[DONE]")]


def openai_responses_stream(model: str, now: float, error: Any = None, cut: bool = False) -> list[Event]:
    """Responses API events: created, in_progress, output_text.delta…, completed (or failed with `error`)."""
    resp_id, msg_id = f"resp_{_hex(48)}", f"msg_{_hex(48)}"
    seq = iter(range(1000))

    def ev(kind: str, **fields: Any) -> Event:
        return (kind, {"type": kind, "sequence_number": next(seq), **fields})

    started = _response_object(resp_id, msg_id, model, now, "in_progress", None)
    events = [ev("response.created", response=started), ev("response.in_progress", response=started)]
    if error is not None:
        failed = _response_object(resp_id, msg_id, model, now, "failed", None, error)
        return [*events, ev("response.failed", response=failed)]
    item = {"id": msg_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    events += [
        ev("response.output_item.added", output_index=0, item=item),
        ev("response.content_part.added", item_id=msg_id, output_index=0, content_index=0, part=part),
        ev("response.output_text.delta", item_id=msg_id, output_index=0, content_index=0, delta="po", logprobs=[]),
    ]
    if cut:
        return events
    done_part = {**part, "text": REPLY_TEXT}
    done_item = {**item, "status": "completed", "content": [done_part]}
    return [
        *events,
        ev("response.output_text.delta", item_id=msg_id, output_index=0, content_index=0, delta="ng", logprobs=[]),
        ev("response.output_text.done", item_id=msg_id, output_index=0, content_index=0, text=REPLY_TEXT, logprobs=[]),
        ev("response.content_part.done", item_id=msg_id, output_index=0, content_index=0, part=done_part),
        ev("response.output_item.done", output_index=0, item=done_item),
        ev("response.completed", response=_response_object(resp_id, msg_id, model, now, "completed", REPLY_TEXT)),
    ]


def anthropic_stream(model: str, error: Any = None, cut: bool = False) -> list[Event]:
    """Messages API events: message_start … message_stop; with `error`, an `error` event after the first delta."""
    message = anthropic_message(model)
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "po"}},
        ),
    ]
    if cut:
        return events
    if error is not None:
        return [*events, ("error", {"type": "error", "error": error})]
    return [
        *events,
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ng"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def gemini_stream(model: str, error: Any = None, cut: bool = False) -> list[Event]:
    """streamGenerateContent chunks (data-only); with `error`, the stream is one `{"error": …}` object.

    The failure comes first and alone: Google's API sends it as a bare JSON object in the stream (not an SSE
    `data:` frame; routes frames it so), and its SDK only sees it when that object is a read of its own,
    which content sent just before could share.
    """
    if error is not None:
        return [(None, {"error": error})]
    events: list[Event] = [(None, gemini_content(model, "po", finish=False))]
    if cut:
        return events
    return [*events, (None, gemini_content(model, "ng", finish=True))]


def ollama_stream(route: str, model: str, now: float, error: Any = None, cut: bool = False) -> list[Event]:
    """Ollama's native NDJSON stream; with `error`, an `{"error": "…"}` line ends it (as Ollama does)."""
    first: dict[str, Any] = {"model": model, "created_at": _ollama_stamp(now), "done": False}
    if route == "chat":
        first["message"] = {"role": "assistant", "content": "po"}
    else:
        first["response"] = "po"
    events: list[Event] = [(None, first)]
    if cut:
        return events
    if error is not None:
        return [*events, (None, {"error": error})]
    return [*events, (None, ollama_final(route, model, now, "ng"))]


# ------------------------------------------------------------------------------------------- odds and ends


def cloudflare_trace(user_agent: str, now: float, client_ip: str = "127.0.0.1") -> str:
    """The text of Cloudflare's `/cdn-cgi/trace` as seen through the simulator."""
    lines = [
        "fl=29f184",
        "h=127.0.0.1",
        f"ip={client_ip}",
        f"ts={now:.3f}",
        "visit_scheme=http",
        f"uag={user_agent}",
        "colo=SIN",
        "sliver=none",
        "http=http/1.1",
        "loc=SG",
        "tls=off",
        "sni=off",
        "warp=off",
        "gateway=off",
        "rbi=off",
        "kex=none",
    ]
    return "\n".join(lines) + "\n"


def now_utc() -> datetime:
    """The current UTC instant (the one clock this module reads)."""
    return datetime.now(timezone.utc)


def now_epoch() -> float:
    """The current Unix time in seconds."""
    return time.time()
