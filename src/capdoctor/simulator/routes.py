"""Request routing for the simulator: one incoming request + the scenario -> one outgoing response.

Contract: `respond()` is pure apart from the clock, random ids and the `attempt` counter it is handed; it
turns a parsed request into an `Outgoing` (status, headers, body or stream frames, or a transport action such
as "hang" or "reset") and never touches sockets. It decides *which* literal reply of the scenario applies
(primary vs alternative model, flaky pattern, stream vs plain); it never classifies errors and must not
import capdoctor.classifier.signatures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from capdoctor.simulator import payloads, statuspage
from capdoctor.simulator.hosted import BY_NAME as HOSTED
from capdoctor.simulator.replies import DEFAULT_PS, MODEL_NOT_FOUND, NO_KEY, OPENROUTER_KEY_OK, Reply
from capdoctor.simulator.scenarios import SCENARIOS, Scenario

# Where each client-facing provider lives on the one port (the client appends its own paths).
PREFIXES: Mapping[str, str] = {
    "openai": "/v1",
    "anthropic": "/anthropic",
    "gemini": "/gemini",
    "ollama": "/ollama",
    "openai-compatible": "/ollama/v1",
    "openrouter": "/openrouter/api/v1",
    **{h.name: h.prefix for h in HOSTED.values()},
}
PROVIDER_SHAPE: Mapping[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
    "openai-compatible": "compat",
    "openrouter": "openrouter",
    **{name: name for name in HOSTED},
}
SSE_TYPE = "text/event-stream; charset=utf-8"
JSON_TYPE = "application/json"
OLLAMA_VERSION = "0.12.6"
CAPTIVE_HTML = (
    '<html><head><meta http-equiv="refresh" content="0; url=http://10.0.0.1/login?dst={dst}">'
    "<title>Wi-Fi login</title></head><body>Redirecting to the Wi-Fi login page...</body></html>\n"
)


@dataclass(frozen=True)
class Incoming:
    """A parsed request: method, path (no query), query parameters, lower-cased headers, raw body."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes


@dataclass
class Outgoing:
    """What the server should do: send `body`, or stream `frames` (chunked), or `hang` / `reset`.

    `cut` drops the connection after the frames without the terminating chunk (a truncated stream).
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    frames: list[bytes] | None = None
    cut: bool = False
    action: str = "reply"
    server: str = ""


@dataclass(frozen=True)
class Call:
    """What a route needs besides the request: the scenario, the public base URL, the flaky counter."""

    scenario: Scenario
    base_url: str
    attempt: Callable[[], int]
    now: datetime = field(default_factory=payloads.now_utc)


# ------------------------------------------------------------------------------------------------- helpers


def fill(value: Any, values: Mapping[str, str | int]) -> Any:
    """Replace `{name}` placeholders in every string of `value` (a whole-string integer placeholder -> int)."""
    if isinstance(value, str):
        for name, sub in values.items():
            token = "{" + name + "}"
            if value == token:
                return sub
            if token in value:
                value = value.replace(token, str(sub))
        return value
    if isinstance(value, dict):
        return {k: fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, values) for v in value]
    return value


def _json_bytes(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _out(
    shape: str,
    status: int,
    body: Any,
    call: Call,
    model: str = "",
    extra: Mapping[str, str] | None = None,
    content_type: str = JSON_TYPE,
) -> Outgoing:
    """Assemble a response of `shape`: provider headers, filled extra headers, body bytes."""
    hosted = HOSTED.get(shape)
    headers = hosted.headers() if hosted else payloads.base_headers(shape)
    request_id = headers.get("x-request-id") or headers.get("request-id") or payloads.new_request_id()
    values: dict[str, str | int] = {
        "model": model,
        "request_id": request_id,
        "reset_epoch": int(call.now.timestamp()) + 3600,
        "now_epoch": int(call.now.timestamp()),
        "reset_rfc3339": payloads.rfc3339(call.now + timedelta(seconds=1)),
    }
    for key, val in (extra or {}).items():
        headers[key] = str(fill(val, values))
    headers["content-type"] = content_type
    filled = fill(body, values)
    data = filled.encode() if isinstance(filled, str) else _json_bytes(filled)
    return Outgoing(status, headers, data, server=hosted.server if hosted else payloads.SERVER_NAMES.get(shape, ""))


def _from_reply(reply: Reply, shape: str, call: Call, model: str) -> Outgoing:
    return _out(shape, reply.status, reply.body, call, model, reply.headers, reply.content_type)


def _stream(
    shape: str,
    call: Call,
    events: list[payloads.Event],
    framing: str,
    cut: bool,
    extra: Mapping[str, str] | None = None,
) -> Outgoing:
    """A 200 streamed response of `shape`; `framing` is "sse", "ndjson" or "json-array" (Gemini without alt=sse)."""
    out = _out(shape, 200, "", call, extra=extra)
    if framing == "sse":
        out.headers["content-type"] = SSE_TYPE
        out.headers["cache-control"] = "no-cache"
        # Google's API ends a failing stream with its error object bare (the @google/genai SDK reads it so)
        frames = [_json_bytes(e[1]) + b"\n" if _bare_error(shape, e) else payloads.sse(e) for e in events]
    elif framing == "ndjson":
        out.headers["content-type"] = "application/x-ndjson"
        frames = [payloads.ndjson(e) for e in events]
    else:
        frames = [("[" if i == 0 else ",\r\n").encode() + _json_bytes(e[1]) for i, e in enumerate(events)]
        if not cut:
            frames.append(b"]")
    out.body = b""
    out.frames = frames
    out.cut = cut
    return out


def _bare_error(shape: str, event: payloads.Event) -> bool:
    """Whether this stream event is sent as a bare JSON object rather than an SSE frame (Gemini's error)."""
    return shape == "gemini" and isinstance(event[1], dict) and "error" in event[1]


def _catalog(shape: str) -> tuple[str, tuple[str, ...]]:
    hosted = HOSTED.get(shape)
    return hosted.catalog if hosted else payloads.CATALOG["ollama" if shape == "compat" else shape]


def _alternatives(sc: Scenario) -> set[str]:
    catalogs = [*payloads.CATALOG.values(), *(h.catalog for h in HOSTED.values())]
    return {m for _, shape_alts in catalogs for m in shape_alts} | set(sc.alt_models)


def _failing(call: Call, model: str) -> bool:
    """Whether this generation request for `model` takes the scenario's failure (ticks the flaky counter)."""
    sc = call.scenario
    if sc.fails == "none":
        return False
    if sc.fails == "primary" and model in _alternatives(sc):
        return False
    return sc.pattern[call.attempt() % len(sc.pattern)]


def _reply(sc: Scenario, shape: str, route: str) -> Reply | None:
    reply = sc.replies.get(f"{shape}:{route}") or sc.replies.get(shape)
    hosted = HOSTED.get(shape)
    if reply is None and hosted is not None:  # a hosted shape plays the OpenAI reply, in its own words if it has them
        return hosted.translate(sc.replies.get(f"openai:{route}") or sc.replies.get("openai"))
    return reply


def _stream_error(sc: Scenario, shape: str) -> Any:
    error = sc.stream_errors.get(shape)
    return sc.stream_errors.get("openai") if error is None and shape in HOSTED else error


def _models_for(sc: Scenario, shape: str) -> list[str]:
    """The models a list endpoint shows: the shape's catalogue plus the scenario's own models.

    The scenario's models are offered on every shape, so a scenario can be played through any client.
    """
    primary, alts = _catalog(shape)
    models = [primary, *payloads.ALSO_SERVED.get(shape, ()), *alts]
    models += [m for m in (sc.primary_model, *sc.alt_models) if m not in models]
    if sc.unlisted_primary:
        keep = _alternatives(sc)
        models = [m for m in models if m in keep]
    return models


def _bad_request(shape: str, call: Call, message: str) -> Outgoing:
    """A 400 in the shape's own error envelope (bad JSON, missing model)."""
    if shape == "anthropic":
        body: Any = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
            "request_id": "{request_id}",
        }
    elif shape == "gemini":
        body = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    elif shape == "ollama":
        body = {"error": message}
    elif shape == "openrouter":
        body = {"error": {"code": 400, "message": message}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return _out(shape, 400, body, call)


def _parse(req: Incoming) -> dict[str, Any] | None:
    try:
        body = json.loads(req.body.decode("utf-8") or "{}")
    except (UnicodeDecodeError, ValueError):
        return None
    return body if isinstance(body, dict) else None


# -------------------------------------------------------------------------------------------- generation


def _generate(
    call: Call,
    shape: str,
    route: str,
    model: str,
    stream: bool,
    success: Callable[[], Any],
    events: Callable[[Any, bool], list[payloads.Event]],
    framing: str,
) -> Outgoing:
    """The one generation flow: failure (stream error or literal reply) if this request fails, else success."""
    sc = call.scenario
    hosted = HOSTED.get(shape)
    extra = hosted.rate_headers(call.now) if hosted else payloads.success_headers(shape, call.now)
    if sc.everywhere and sc.fails != "none":  # refused before the model is even looked at (auth, region, WAF)
        reply = _reply(sc, shape, route)
        if reply is not None:
            return _from_reply(reply, shape, call, model)
    if model not in _models_for(sc, shape) and model != sc.primary_model:  # (unlisted_primary drops it)
        missing = MODEL_NOT_FOUND.get(shape) or HOSTED[shape].translate(MODEL_NOT_FOUND["openai"])
        if missing is not None:  # a model this provider does not have
            return _from_reply(missing, shape, call, model)
    if _failing(call, model):
        stream_error = _stream_error(sc, shape)
        if stream and stream_error is not None:
            return _stream(shape, call, events(fill(stream_error, {"model": model}), False), framing, False, extra)
        reply = _reply(sc, shape, route)
        if reply is not None:
            return _from_reply(reply, shape, call, model)
    if stream:
        return _stream(shape, call, events(None, sc.stream_cut), framing, sc.stream_cut, extra)
    return _out(shape, 200, success(), call, model, extra)


def _openai_like(req: Incoming, call: Call, shape: str, route: str) -> Outgoing:
    body = _parse(req)
    if body is None:
        return _bad_request(
            shape,
            call,
            "We could not parse the JSON body of your request. (HINT: This likely "
            "means you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
            "payload, but what was sent was not valid JSON.)",
        )
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return _bad_request(shape, call, "you must provide a model parameter")
    stream = bool(body.get("stream"))
    t = payloads.now_epoch()
    if route == "responses":
        return _generate(
            call,
            shape,
            route,
            model,
            stream,
            lambda: payloads.openai_response(model, t),
            lambda err, cut: payloads.openai_responses_stream(model, t, err, cut),
            "sse",
        )
    make = payloads.openrouter_chat if shape == "openrouter" else payloads.openai_chat
    return _generate(
        call,
        shape,
        route,
        model,
        stream,
        lambda: make(model, t),
        lambda err, cut: payloads.openai_chat_stream(model, t, err, cut),
        "sse",
    )


def _anthropic_messages(req: Incoming, call: Call) -> Outgoing:
    body = _parse(req)
    if body is None:
        return _bad_request("anthropic", call, "There was an error parsing the body of your request.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return _bad_request("anthropic", call, "model: Field required")
    if "max_tokens" not in body:
        return _bad_request("anthropic", call, "max_tokens: Field required")
    return _generate(
        call,
        "anthropic",
        "messages",
        model,
        bool(body.get("stream")),
        lambda: payloads.anthropic_message(model),
        lambda err, cut: payloads.anthropic_stream(model, err, cut),
        "sse",
    )


def _gemini_generate(req: Incoming, call: Call, model: str, verb: str) -> Outgoing:
    body = _parse(req)
    if body is None or "contents" not in body:
        return _bad_request("gemini", call, "* GenerateContentRequest.contents: contents is not specified\n")
    stream = verb == "streamGenerateContent"
    framing = "sse" if req.query.get("alt") == "sse" else "json-array"
    return _generate(
        call,
        "gemini",
        "generate",
        model,
        stream,
        lambda: payloads.gemini_content(model),
        lambda err, cut: payloads.gemini_stream(model, err, cut),
        framing,
    )


def _ollama_generate(req: Incoming, call: Call, route: str) -> Outgoing:
    body = _parse(req)
    if body is None:
        return _bad_request("ollama", call, "invalid character 'x' looking for beginning of value")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return _bad_request("ollama", call, "model is required")
    t = payloads.now_epoch()
    return _generate(
        call,
        "ollama",
        route,
        model,
        body.get("stream", True) is not False,
        lambda: payloads.ollama_final(route, model, t),
        lambda err, cut: payloads.ollama_stream(route, model, t, err, cut),
        "ndjson",
    )


# ------------------------------------------------------------------------------------------- other routes


def _listing(shape: str, call: Call, body: Callable[[], Any], route: str = "models") -> Outgoing:
    sc = call.scenario
    if sc.everywhere and sc.fails != "none":
        reply = _reply(sc, shape, route)
        if reply is not None:
            return _from_reply(reply, shape, call, "")
    return _out(shape, 200, body(), call)


def _anthropic_version_missing(req: Incoming, call: Call) -> Outgoing | None:
    if req.headers.get("anthropic-version"):
        return None
    return _bad_request("anthropic", call, "anthropic-version: header is required")


def _index(call: Call) -> Outgoing:
    sc = call.scenario
    body = {
        "simulator": "capdoctor",
        "scenario": sc.name,
        "description": sc.description,
        "expected_cause": sc.expected_cause,
        "provider": sc.provider,
        "primary_model": sc.primary_model,
        "alt_models": list(sc.alt_models),
        "base_urls": {p: call.base_url + prefix for p, prefix in PREFIXES.items()},
        "status_url": call.base_url + "/status",
        "scenarios": sorted(SCENARIOS),
    }
    return _out("", 200, body, call)


def _status(call: Call, doc: str) -> Outgoing:
    sc = call.scenario
    url = call.base_url + "/status"
    if sc.status_page == "broken":
        return _out("", 500, statuspage.BROKEN_HTML, call, content_type="text/html")
    builders: Mapping[str, Callable[[str, str, datetime], Any]] = {
        "summary": statuspage.summary_json,
        "status": statuspage.status_json,
        "components": statuspage.components_json,
        "incidents": statuspage.incidents_json,
        "incidentio": statuspage.incidentio_feed,
    }
    out = _out("", 200, builders[doc](sc.status_page, url, call.now), call)
    out.headers["access-control-allow-origin"] = "*"
    return out


def _not_found(req: Incoming, call: Call) -> Outgoing:
    path = req.path
    hosted = next((h.name for h in HOSTED.values() if path.startswith(h.prefix)), None)
    if path.startswith("/v1") or path.startswith("/openrouter") or hosted:
        shape = hosted or ("openrouter" if path.startswith("/openrouter") else "openai")
        body: Any = {
            "error": {
                "message": f"Invalid URL ({req.method} {path})",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
        return _out(shape, 404, body, call)
    if path.startswith("/anthropic"):
        body = {
            "type": "error",
            "error": {"type": "not_found_error", "message": "Not Found"},
            "request_id": "{request_id}",
        }
        return _out("anthropic", 404, body, call)
    if path.startswith("/ollama"):
        return _out("ollama", 404, "404 page not found", call, content_type="text/plain")
    return _out("", 404, {"error": f"no such route: {req.method} {path}"}, call)


Handler = Callable[[Incoming, Call, re.Match[str]], Outgoing]


def _trace(r: Incoming, c: Call, m: re.Match[str]) -> Outgoing:
    """Cloudflare's `/cdn-cgi/trace`: where the request appears to come from (the paths check reads it)."""
    trace = payloads.cloudflare_trace(r.headers.get("user-agent", ""), payloads.now_epoch())
    return _out("", 200, trace, c, content_type="text/plain")


def _ollama_tags(r: Incoming, c: Call, m: re.Match[str]) -> Outgoing:
    """Ollama's installed models."""
    return _listing("ollama", c, lambda: payloads.ollama_tags(_models_for(c.scenario, "ollama")), "tags")


def _ollama_ps(r: Incoming, c: Call, m: re.Match[str]) -> Outgoing:
    """Ollama's loaded models, with the memory each takes (the hardware check reads it)."""
    return _out("ollama", 200, payloads.ollama_ps(list(c.scenario.ollama_ps or DEFAULT_PS), c.now), c)


def _openrouter_key(r: Incoming, c: Call, m: re.Match[str]) -> Outgoing:
    """OpenRouter's key endpoint: the key's credit limit and usage (the quota check reads it)."""
    return _listing("openrouter", c, lambda: {"data": dict(c.scenario.openrouter_key or OPENROUTER_KEY_OK)}, "key")


def _routes() -> list[tuple[str, re.Pattern[str], Handler]]:
    def gen(shape: str, route: str) -> Handler:
        return lambda r, c, m: _openai_like(r, c, shape, route)

    def lst(shape: str) -> Handler:
        wire = "openai" if shape in HOSTED else shape  # hosted shapes list models the OpenAI way
        return lambda r, c, m: _listing(shape, c, lambda: payloads.model_list(wire, _models_for(c.scenario, shape)))

    def anthropic(handler: Handler) -> Handler:
        return lambda r, c, m: _anthropic_version_missing(r, c) or handler(r, c, m)

    def status(doc: str) -> Handler:
        return lambda r, c, m: _status(c, doc)

    table: list[tuple[str, str, Handler]] = [
        ("GET", r"/", lambda r, c, m: _index(c)),
        ("GET", r"/cdn-cgi/trace", _trace),
        ("GET", r"/status/api/v2/summary\.json", status("summary")),
        ("GET", r"/status/api/v2/status\.json", status("status")),
        ("GET", r"/status/api/v2/components\.json", status("components")),
        ("GET", r"/status/api/v2/incidents(/unresolved)?\.json", status("incidents")),
        ("GET", r"/status/proxy/status", status("incidentio")),
        ("GET", r"/v1/models", lst("openai")),
        ("GET", r"/v1/models/(?P<model>[^/]+)", lambda r, c, m: _model_one(c, "openai", m["model"])),
        ("POST", r"/v1/chat/completions", gen("openai", "chat")),
        ("POST", r"/v1/responses", gen("openai", "responses")),
        ("GET", r"/anthropic/v1/models", anthropic(lst("anthropic"))),
        ("POST", r"/anthropic/v1/messages", anthropic(lambda r, c, m: _anthropic_messages(r, c))),
        ("GET", r"/gemini/v1beta/models", lst("gemini")),
        (
            "POST",
            r"/gemini/v1beta/models/(?P<model>[^/:]+):(?P<verb>generateContent|streamGenerateContent)",
            lambda r, c, m: _gemini_generate(r, c, m["model"], m["verb"]),
        ),
        ("GET", r"/ollama", lambda r, c, m: _out("ollama", 200, "Ollama is running", c, content_type="text/plain")),
        ("GET", r"/ollama/api/version", lambda r, c, m: _out("ollama", 200, {"version": OLLAMA_VERSION}, c)),
        ("GET", r"/ollama/api/tags", _ollama_tags),
        ("GET", r"/ollama/api/ps", _ollama_ps),
        ("POST", r"/ollama/api/chat", lambda r, c, m: _ollama_generate(r, c, "chat")),
        ("POST", r"/ollama/api/generate", lambda r, c, m: _ollama_generate(r, c, "generate")),
        ("GET", r"/ollama/v1/models", lst("compat")),
        ("POST", r"/ollama/v1/chat/completions", gen("compat", "chat")),
        # what `diagnose --provider ollama --base-url …/ollama` (Ollama's root, as OLLAMA_HOST names it) sends
        ("GET", r"/ollama/models", lst("compat")),
        ("POST", r"/ollama/chat/completions", gen("compat", "chat")),
        ("GET", r"/openrouter/api/v1/models", lst("openrouter")),
        ("POST", r"/openrouter/api/v1/chat/completions", gen("openrouter", "chat")),
        ("GET", r"/openrouter/api/v1/(auth/)?key", _openrouter_key),
    ]
    for h in HOSTED.values():
        table += [
            ("GET", re.escape(h.prefix) + r"/models", lst(h.name)),
            ("POST", re.escape(h.prefix) + r"/chat/completions", gen(h.name, "chat")),
        ]
    return [(method, re.compile(pattern + r"/?\Z"), handler) for method, pattern, handler in table]


def _model_one(call: Call, shape: str, model: str) -> Outgoing:
    listed = _models_for(call.scenario, shape)
    if model not in listed:
        body = {
            "error": {
                "message": f"The model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        }
        return _out(shape, 404, body, call)
    return _out(shape, 200, payloads.model_list(shape, [model])["data"][0], call)


ROUTES = _routes()
KEY_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
"""Where a client puts its key (any of them counts as "a key was sent")."""


def _no_key(req: Incoming, call: Call) -> Outgoing | None:
    """The missing-key refusal of the shape whose prefix `req.path` is under (None: no API route, or no auth)."""
    provider = max(
        (p for p, prefix in PREFIXES.items() if req.path.startswith(prefix)),
        key=lambda p: len(PREFIXES[p]),
        default=None,
    )
    shape = PROVIDER_SHAPE.get(provider or "")
    if shape is None:
        return None
    hosted = HOSTED.get(shape)
    reply = hosted.translate(NO_KEY["openai"]) if hosted else NO_KEY.get(shape)
    return _from_reply(reply, shape, call, "") if reply is not None else None


def respond(req: Incoming, call: Call) -> Outgoing:
    """The response to `req` under `call.scenario`: transport behaviour first, then the matching route."""
    sc = call.scenario
    if sc.transport == "blackhole":
        return Outgoing(action="hang")
    if sc.transport == "reset":
        return Outgoing(action="reset")
    if sc.transport == "captive":
        dst = quote("http://" + req.headers.get("host", "127.0.0.1") + req.path, safe="")
        html = CAPTIVE_HTML.replace("{dst}", dst)
        return Outgoing(
            200, {"content-type": "text/html", "cache-control": "no-cache"}, html.encode(), server="lighttpd/1.4.59"
        )
    if sc.requires_key and not KEY_HEADERS & set(req.headers):
        refusal = _no_key(req, call)
        if refusal is not None:
            return refusal
    method = "GET" if req.method == "HEAD" else req.method
    for want, pattern, handler in ROUTES:
        match = pattern.match(req.path)
        if match and want == method:
            return handler(req, call, match)
    return _not_found(req, call)
