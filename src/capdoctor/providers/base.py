"""What every provider adapter knows, and the shapes they share: requests to send, errors and events read.

Contract: one provider = one adapter class in one module, the only place capdoctor writes down what it knows
about the provider (hosts, key and base-URL variables, key prefixes, wire APIs, rate-limit headers
(`HeaderFamily`), status page (`StatusPage`), light models, the client's switch command, its words in a log).
Everything else reads these attributes through `capdoctor.providers.catalog`; no per-provider table elsewhere.

An adapter is data plus small pure functions: it builds `ProbeRequest`s (cheapest first) and reads what comes
back (`read_body`, `read_event`) into an `Outcome`. Adapters never do I/O, never classify causes (that is
`capdoctor.classifier.signatures`), and never hold a key beyond the request headers they return.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from capdoctor.target import urls
from capdoctor.text import shorten

if TYPE_CHECKING:
    from capdoctor.probes.sse import Event
    from capdoctor.run.context import Target

PROBE_PROMPT = "ping"
OUTPUT_TOKENS = 16
"""The output cap of one probe generation (the Responses API rejects less than 16)."""

REQUEST_ID_HEADERS: tuple[str, ...] = (
    "x-request-id",
    "x-oai-request-id",
    "request-id",
    "apim-request-id",
    "x-goog-request-id",
    "x-amzn-requestid",
)
"""Response headers that carry the provider's request id, in preference order (cf-ray is kept apart).
Header names whose values are never stored are `capdoctor.redact.SECRET_HEADERS` (one list for every output)."""


@dataclass(frozen=True)
class ProbeRequest:
    """One HTTP request an adapter wants sent. `route` names it (`models`, `chat`, `responses`, ...).

    `output_tokens` is the most output the request may generate (0 for the spend-nothing calls): the
    prober adds them up against its token budget.
    """

    method: str
    url: str
    route: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    stream: bool = False
    output_tokens: int = 0


@dataclass(frozen=True)
class HeaderFamily:
    """How one provider spells its rate-limit headers, as data for `capdoctor.probes.ratelimit`.

    `template` builds a header name from a field and a window (`anthropic-ratelimit-{window}-{field}`); `fields`
    pairs what capdoctor reads (`limit`, `remaining`, `reset`, …) with the provider's word for it; `reset_format`
    is `duration` (Go-style `6m0s`) or `instant` (RFC 3339, HTTP-date or epoch). `reset_after` is plain seconds.
    """

    name: str
    template: str
    windows: tuple[str, ...]
    reset_format: str = "duration"
    fields: tuple[tuple[str, str], ...] = (("limit", "limit"), ("remaining", "remaining"), ("reset", "reset"))

    def header(self, role: str, window: str) -> str | None:
        """The header name that carries `role` for `window`, or None when this family has no such field."""
        word = dict(self.fields).get(role)
        return self.template.format(field=word, window=window) if word else None


X_RATELIMIT = HeaderFamily("openai", "x-ratelimit-{field}-{window}", ("requests", "tokens", "tokens_usage_based"))
"""OpenAI's spelling (`x-ratelimit-remaining-requests`, Go-style resets), copied by many compatible APIs."""


@dataclass(frozen=True)
class StatusPage:
    """Where a provider reports incidents.

    `feed` is a Statuspage-v2-compatible JSON feed ('' when the provider publishes none that capdoctor
    reads), `human` the page to open, `components` lower-case substrings of component names that concern
    API users (an incident on another component is context only).
    """

    human: str = ""
    feed: str = ""
    components: tuple[str, ...] = ("api",)


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
    return value if isinstance(value, str) else json.dumps(value) if not isinstance(value, (int, float)) else str(value)


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
    """`path` under `base`, the base's query kept (see `capdoctor.target.urls.join`, the one joining rule)."""
    return urls.join(base, path)


def host_of(url: str) -> str:
    """The lower-case host of `url` ('' when unparsable)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


class Adapter:
    """Base adapter with OpenAI-shaped defaults; subclasses override data and the few functions that differ.

    Every class attribute below is one fact about the provider (see the module docstring); a subclass
    states the ones that differ from these defaults.
    """

    name = "openai"
    aliases: tuple[str, ...] = ()
    """Other spellings users type for `--provider`."""
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-5.5"
    light_models: tuple[str, ...] = ("gpt-5.4-mini", "gpt-5-mini")
    """The default alternatives for "switch the model"."""
    official_hosts: tuple[str, ...] = ("api.openai.com",)
    """The provider's own API hosts (`.suffix` matches subdomains); any other host is a relay or local server."""
    url_hosts: tuple[str, ...] = ()
    """Host suffixes that name this provider in a base URL (default: `official_hosts` without leading dots)."""
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)
    """Variables that hold the key, in the order the clients read them."""
    key_prefixes: tuple[str, ...] = ()
    """How the provider's keys begin (the key's "shape"); empty when its keys have no recognisable prefix."""
    key_required = True
    """False for servers that commonly run without a key (local model servers)."""
    base_url_envs: tuple[str, ...] = ()
    """Variables that set the base URL, in the order the clients read them."""
    client_base_url_envs: tuple[str, ...] = ()
    """Further variables some clients read for this provider's base URL (steer a client, not capdoctor)."""
    model_envs: tuple[str, ...] = ()
    """Variables that set the model."""
    api_version_envs: tuple[str, ...] = ()
    """Variables that set an API version (Azure)."""
    claims_env = True
    """Whether this provider's variables alone imply it when nothing more explicit names a provider."""
    model_prefixes: tuple[str, ...] = ()
    """Model-name prefixes that imply this provider (`claude-` → anthropic)."""
    routes: tuple[str, ...] = ("chat",)
    """Generation routes (wire APIs) in preference order when the target does not name its wire API."""
    ratelimit_headers: tuple[HeaderFamily, ...] = ()
    """The rate-limit header spellings its responses carry."""
    status_page = StatusPage()
    switch_command: str | None = None
    """How the provider's own coding client switches model (`{model}` is filled in), for a next step."""
    log_hints = ""
    """A regular expression (case-insensitive) whose match near an error in a log names this provider."""
    clients: tuple[str, ...] = ()
    """Coding clients that talk to this provider by default."""

    def base_url_from_env(self, value: str) -> str:
        """The base URL a client derives from a `base_url_envs` value (Azure appends its path)."""
        return value

    def env_vars(self) -> tuple[str, ...]:
        """Every variable this provider reads (keys, base URL, model, API version), without repeats."""
        names = (
            *self.key_envs,
            *self.base_url_envs,
            *self.client_base_url_envs,
            *self.model_envs,
            *self.api_version_envs,
        )
        return tuple(dict.fromkeys(names))

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
        return ProbeRequest(
            "GET", join(target.base_url, "models"), "models", self.base_headers(target), params=self.query(target)
        )

    def key_request(self, target: Target) -> ProbeRequest | None:
        """A spend-nothing call that describes the key's own limits (OpenRouter's `GET /key`), if any."""
        return None

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
        headers = {**self.base_headers(target), "content-type": "application/json", "accept": "text/event-stream"}
        body: dict[str, Any]
        if route == "responses":
            path = "responses"
            body = {
                "model": model,
                "input": PROBE_PROMPT,
                "max_output_tokens": OUTPUT_TOKENS,
                "stream": True,
                "store": False,
            }
        else:
            path = "chat/completions"
            body = {
                "model": model,
                "messages": [{"role": "user", "content": PROBE_PROMPT}],
                "stream": True,
                **self.token_limit(model),
            }
        return ProbeRequest(
            "POST",
            join(target.base_url, path),
            route,
            headers,
            body,
            self.query(target),
            stream=True,
            output_tokens=OUTPUT_TOKENS,
        )

    def token_limit(self, model: str) -> dict[str, int]:
        """The chat output cap: `max_completion_tokens` (reasoning models reject `max_tokens`)."""
        return {"max_completion_tokens": OUTPUT_TOKENS}

    def read_body(self, route: str, obj: Any) -> Outcome:
        """Read a complete (non-stream) JSON body: output, or the error inside even an HTTP 200."""
        err = error_fields(obj)
        if err is not None:
            return Outcome(error=err)
        if isinstance(obj, dict) and (
            obj.get("choices")
            or obj.get("output") is not None
            or obj.get("status") in ("completed", "incomplete")
            or obj.get("content") is not None
            or obj.get("candidates")
        ):
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
        if name in (
            "response.output_text.delta",
            "response.output_item.added",
            "response.reasoning_summary_text.delta",
        ):
            return OK
        choices = obj.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if choice.get("finish_reason"):
                return FINISHED
            if isinstance(delta, dict) and any(
                delta.get(k) for k in ("content", "reasoning", "reasoning_content", "tool_calls")
            ):
                return OK
        return UNDECIDED
