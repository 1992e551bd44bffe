"""What every provider adapter knows, and the shapes they share: requests to send, errors and events read.

Contract: an adapter is data plus small pure functions. It builds `ProbeRequest`s (cheapest first: the
model list, then the smallest valid generation) and reads what comes back (`read_body`, `read_event`) into
an `Outcome`: output seen, a failure with the provider's own code/type/message, or nothing decisive yet.
Adapters never do I/O, never classify causes (that is `capdoctor.signatures`), and never hold a key
beyond putting it into the request headers they return.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from capdoctor.text import shorten

if TYPE_CHECKING:
    from capdoctor.context import Target
    from capdoctor.probes.sse import Event

PROBE_PROMPT = "ping"

REQUEST_ID_HEADERS: tuple[str, ...] = (
    "x-request-id", "x-oai-request-id", "request-id", "apim-request-id", "x-goog-request-id",
    "x-amzn-requestid",
)
"""Response headers that carry the provider's request id, in preference order (cf-ray is kept apart)."""

SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie",
})
"""Header names whose values are never stored, in requests or responses."""


@dataclass(frozen=True)
class ProbeRequest:
    """One HTTP request an adapter wants sent. `route` names it (`models`, `chat`, `responses`, ...)."""

    method: str
    url: str
    route: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    stream: bool = False


@dataclass(frozen=True)
class ErrorInfo:
    """The provider's own words for a failure: machine code, type, message (any may be missing)."""

    code: str | None = None
    type: str | None = None
    message: str | None = None

    def text(self, width: int | None = None) -> str:
        """One line for humans: `code (type): message`, skipping what is absent; the message cut at a word
        boundary to `width` characters when given."""
        head = " ".join(p for p in (self.code, f"({self.type})" if self.type else None) if p)
        msg = " ".join((self.message or "").split())
        msg = shorten(msg, width) if width else msg
        return f"{head}: {msg}" if head and msg else head or msg

    def short(self) -> str:
        """`text()` with the message cut to 200 characters."""
        return self.text(200)


@dataclass(frozen=True)
class Outcome:
    """What a body or one stream event says: `ok` (output seen), `done` (terminal event), `error`, or nothing.

    A stream probe reads on after the first output until a terminal event, so that a stream cut mid-answer
    (no `response.completed` / `[DONE]`) is seen as the network failure it is.
    """

    ok: bool = False
    error: ErrorInfo | None = None
    done: bool = False

    @property
    def decisive(self) -> bool:
        """True once the probe can stop reading."""
        return self.ok or self.error is not None or self.done


UNDECIDED = Outcome()
OK = Outcome(ok=True)
FINISHED = Outcome(ok=True, done=True)
"""A terminal success event (`response.completed`, `finish_reason`, `message_stop`)."""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value) if not isinstance(value, (int, float)) \
        else str(value)


def error_fields(obj: Any) -> ErrorInfo | None:
    """Find the error inside any provider's error JSON, or None when the object is not an error.

    Shapes read: OpenAI/Gemini/OpenRouter `{"error":{message,type,code,status}}`, Anthropic
    `{"type":"error","error":{type,message,details:{error_code}}}`, Responses `response.failed`
    (`response.error`), Codex `{"detail": ...}`, relays' `{"error":"text","message":...}`.
    """
    if not isinstance(obj, dict):
        return None
    if obj.get("type") == "response.failed" or (
        isinstance(obj.get("response"), dict) and obj["response"].get("status") == "failed"
    ):
        resp = obj.get("response") or {}
        inner = resp.get("error") if isinstance(resp, dict) else None
        if isinstance(inner, dict):
            return ErrorInfo(_text(inner.get("code")), _text(inner.get("type")), _text(inner.get("message")))
        return ErrorInfo("response.failed", None, None)
    if obj.get("status") == "failed" and isinstance(obj.get("error"), dict):
        inner = obj["error"]
        return ErrorInfo(_text(inner.get("code")), _text(inner.get("type")), _text(inner.get("message")))
    err = obj.get("error")
    if isinstance(err, dict):
        code = err.get("code")
        details = err.get("details")
        if isinstance(details, dict) and details.get("error_code"):
            code = details.get("error_code")
        typ = err.get("type") or err.get("status")
        if isinstance(code, int) and isinstance(err.get("status"), str):
            code = err["status"]  # Gemini: numeric code duplicates the HTTP status; status is the name
        return ErrorInfo(_text(code), _text(typ), _text(err.get("message")))
    if isinstance(err, str):
        return ErrorInfo(None, err, _text(obj.get("message")) or err)
    if obj.get("type") == "error":
        return ErrorInfo(None, "error", _text(obj.get("message")))
    if "detail" in obj and len(obj) <= 3:
        return ErrorInfo(None, None, _text(obj.get("detail")))
    return None


def join(base: str, path: str) -> str:
    """`base` + `/path` with exactly one slash between them."""
    return base.rstrip("/") + "/" + path.lstrip("/")


def host_of(url: str) -> str:
    """The lower-case host of `url` ('' when unparsable)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


class Adapter:
    """Base adapter with OpenAI-shaped defaults; subclasses override data and the few functions that differ.

    Data attributes: `name`, `default_base_url`, `default_model`, `light_models` (the default alternatives
    for "switch the model"), `official_hosts` (anything else is a relay or a local server), `key_envs`.
    """

    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-5.5"
    light_models: tuple[str, ...] = ("gpt-5.4-mini", "gpt-5-mini")
    official_hosts: tuple[str, ...] = ("api.openai.com",)
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)
    routes: tuple[str, ...] = ("chat",)
    """Generation routes in preference order when the target does not name its wire API."""

    def auth_headers(self, target: Target) -> dict[str, str]:
        """Headers that carry the key (Bearer by default); empty when there is no key."""
        return {"authorization": f"Bearer {target.api_key}"} if target.api_key else {}

    def base_headers(self, target: Target) -> dict[str, str]:
        """Headers every request to this provider carries."""
        return {"accept": "application/json", **self.auth_headers(target)}

    def query(self, target: Target) -> dict[str, str]:
        """Query parameters every request carries (Azure's `api-version`)."""
        return {}

    def list_request(self, target: Target) -> ProbeRequest:
        """The spend-nothing call: the model list."""
        return ProbeRequest("GET", join(target.base_url, "models"), "models", self.base_headers(target),
                            params=self.query(target))

    def parse_models(self, obj: Any) -> list[str] | None:
        """Model ids from the list response (`{"data":[{"id"}]}`), or None when the shape is unknown."""
        if isinstance(obj, dict) and isinstance(obj.get("data"), list):
            return [str(m.get("id")) for m in obj["data"] if isinstance(m, dict) and m.get("id")]
        if isinstance(obj, dict) and isinstance(obj.get("models"), list):  # Ollama /api/tags and Gemini
            out = []
            for m in obj["models"]:
                if isinstance(m, dict):
                    ident = m.get("name") or m.get("id") or m.get("model")
                    if ident:
                        out.append(str(ident).removeprefix("models/"))
            return out
        return None

    def route_order(self, target: Target) -> tuple[str, ...]:
        """Generation routes to try: the target's wire API first, then the others this adapter knows."""
        wanted = {"chat": "chat", "responses": "responses"}.get(target.wire_api or "")
        if wanted and wanted in self.routes:
            return (wanted, *[r for r in self.routes if r != wanted])
        return self.routes

    def generate_request(self, target: Target, model: str, route: str) -> ProbeRequest:
        """The smallest valid generation for `model` on `route`, streamed so in-stream failures show."""
        headers = {**self.base_headers(target), "content-type": "application/json",
                   "accept": "text/event-stream"}
        if route == "responses":
            body: dict[str, Any] = {"model": model, "input": PROBE_PROMPT, "max_output_tokens": 16,
                                    "stream": True, "store": False}
            return ProbeRequest("POST", join(target.base_url, "responses"), route, headers, body,
                                self.query(target), stream=True)
        body = {"model": model, "messages": [{"role": "user", "content": PROBE_PROMPT}],
                "stream": True, **self.token_limit(model)}
        return ProbeRequest("POST", join(target.base_url, "chat/completions"), route, headers, body,
                            self.query(target), stream=True)

    def token_limit(self, model: str) -> dict[str, int]:
        """The chat output cap: `max_completion_tokens` (reasoning models reject `max_tokens`)."""
        return {"max_completion_tokens": 16}

    def read_body(self, route: str, obj: Any) -> Outcome:
        """Read a complete (non-stream) JSON body: output, or the error inside even an HTTP 200."""
        err = error_fields(obj)
        if err is not None:
            return Outcome(error=err)
        if isinstance(obj, dict) and (obj.get("choices") or obj.get("output") is not None
                                      or obj.get("status") in ("completed", "incomplete")
                                      or obj.get("content") is not None or obj.get("candidates")):
            return OK
        return UNDECIDED

    def read_event(self, route: str, event: Event) -> Outcome:
        """Read one stream event: first output token or completion is ok; a failure event is an error."""
        if event.data.strip() == "[DONE]":
            return Outcome(done=True)
        obj = event.json()
        name = event.event or (obj.get("type") if isinstance(obj, dict) else None)
        failed = isinstance(obj, dict) and bool(obj.get("error"))
        if name in ("error", "response.failed") or failed:
            return Outcome(error=error_fields(obj) or ErrorInfo(None, name, event.data[:200]))
        if not isinstance(obj, dict):
            return UNDECIDED
        if name in ("response.completed", "response.incomplete"):
            return FINISHED
        if name in ("response.output_text.delta", "response.output_item.added",
                    "response.reasoning_summary_text.delta"):
            return OK
        choices = obj.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if choice.get("finish_reason"):
                return FINISHED
            if (isinstance(delta, dict) and any(
                    delta.get(k) for k in ("content", "reasoning", "reasoning_content", "tool_calls"))):
                return OK
        return UNDECIDED
