"""What one exchange shows as it passes through the proxy: read on the way, kept small, never the content.

Contract: `Watch` is fed by the forwarder — the request's facts, then the response's status and headers, then
every body chunk as it is forwarded — and `finish(outcome)` returns an `Observed`: who asked (client and
version from the User-Agent), for which model (the JSON body's `model`, or the path: Gemini's
`/models/X:generateContent`, Azure's `/deployments/X/`), the status, request ids, rate-limit and `retry-after`
headers, time to first byte and in all, how the body ended, for a failure only the provider's error text
(an error body's first `MAX_ERROR_BYTES`, or a stream's error event), and for a client that gave up before any
answer how long the upstream had been silent (`gave_up`). The prompt is read only for its model name and
whether it asks for a stream; the completion only for error events. Nothing here is stored or printed:
`recording` classifies, redacts and bounds what it keeps. `secrets` carries the request's credential values, in
memory only, so that redaction can remove them exactly. Pure: no I/O, no aiohttp, no clock (times are passed in).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from capdoctor.probes.sse import Event, SSEDecoder

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded either way."""

MAX_ERROR_BYTES = 16 * 1024
"""The most of an error body (or of a 2xx body's head, to find an error object in it) held for classification."""
MAX_MODEL_BODY = 1024 * 1024
"""Bodies up to this size are parsed as JSON for their `model`; bigger ones are searched in their head."""
ID_HEADERS = ("x-request-id", "request-id", "cf-ray", "x-oai-request-id", "x-goog-request-id", "apim-request-id")
RATELIMIT_RE = re.compile(r"^(?:x-ratelimit-|anthropic-ratelimit-|ratelimit|retry-after|x-ratelimit)", re.IGNORECASE)
MAX_HEADER_VALUE = 200
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "proxy-authorization")

_KNOWN_CLIENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bclaude-cli/(\S+)", re.IGNORECASE), "claude-code"),
    (re.compile(r"\bcodex[_-]cli[_-]rs/(\S+)", re.IGNORECASE), "codex"),
    (re.compile(r"\bcodex_exec/(\S+)", re.IGNORECASE), "codex"),
    (re.compile(r"\bGeminiCLI/(\S+)", re.IGNORECASE), "gemini-cli"),
    (re.compile(r"\bOpenAI/Python\s+(\S+)", re.IGNORECASE), "openai-python"),
    (re.compile(r"\bOpenAI/JS\s+(\S+)", re.IGNORECASE), "openai-node"),
    (re.compile(r"\bAnthropic/Python\s+(\S+)", re.IGNORECASE), "anthropic-python"),
    (re.compile(r"\bAnthropic/JS\s+(\S+)", re.IGNORECASE), "anthropic-node"),
    (re.compile(r"\bpython-httpx/(\S+)", re.IGNORECASE), "httpx"),
    (re.compile(r"\blitellm/(\S+)", re.IGNORECASE), "litellm"),
)
_PRODUCT_RE = re.compile(r"^([A-Za-z][A-Za-z0-9._-]{0,39})(?:/([0-9][0-9A-Za-z.+_-]{0,31}))?")
_VERSION_RE = re.compile(r"[0-9][0-9A-Za-z.+_-]{0,31}")
_MODEL_PATH_RE = re.compile(r"/models/([^/:?]+):|/deployments/([^/?]+)/")
_MODEL_FIELD_RE = re.compile(rb'"model"\s*:\s*"([^"\\]{1,200})"')
_STREAM_FIELD_RE = re.compile(rb'"stream"\s*:\s*true\b')
GAVE_UP_SILENCE_S = 1.0
"""An upstream silent this long when the client hung up before any answer is a measured network failure.

Why 1 s: it is TCP's initial retransmission timeout (RFC 6298 §2), the time after which the network itself
counts an unanswered packet as lost, so a connection not up by then had its handshake go unanswered at least
once; and a provider answers a request for a stream with its status line as soon as it takes the request, before
the model's first token, in a fraction of that from anywhere. Whoever hung up — a client's timeout (the shortest
the real-client tests set, Claude Code's `API_TIMEOUT_MS`, is 2 s) or a person — the upstream's silence past it
is what was measured; a cancel sooner (Ctrl-C after 0.3 s) measured nothing and names no cause. A request that
does not ask for a stream gets its status line only once the whole completion is written, so for it only the
connection that never came up counts."""


def client_of(user_agent: str | None) -> tuple[str | None, str | None]:
    """(client, version) from a User-Agent: the known coding clients and SDKs by name, else its first product
    token (bounded, letters and digits only: a User-Agent is free text and could hold anything)."""
    if not user_agent:
        return None, None
    for pattern, name in _KNOWN_CLIENTS:
        m = pattern.search(user_agent)
        if m:
            v = _VERSION_RE.match(m.group(1))
            return name, v.group(0) if v else None
    m = _PRODUCT_RE.match(user_agent.strip())
    if not m:
        return None, None
    return m.group(1).lower(), m.group(2)


def model_of(path: str, body: bytes, content_type: str | None) -> str | None:
    """The model a request names: Gemini's and Azure's in the path, else the JSON body's top-level `model`."""
    m = _MODEL_PATH_RE.search(path)
    if m:
        from urllib.parse import unquote

        return unquote(m.group(1) or m.group(2))[:200]
    if not body or (content_type and "json" not in content_type.lower()):
        return None
    if len(body) <= MAX_MODEL_BODY:
        try:
            obj = json.loads(body)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            model = obj.get("model")
            return model[:200] if isinstance(model, str) and model else None
    found = _MODEL_FIELD_RE.search(body[:65536])
    return found.group(1).decode("utf-8", "replace") if found else None


def asks_stream(path: str, body: bytes) -> bool:
    """Whether a request asks for a stream: Gemini's `:streamGenerateContent` path, or `"stream": true`."""
    return ":streamGenerateContent" in path or _STREAM_FIELD_RE.search(body) is not None


def secrets_of(headers: Iterable[tuple[str, str]], query: str) -> tuple[str, ...]:
    """The request's credential values (whole, and after an auth scheme), and `key=` in its query."""
    out: list[str] = []
    for name, value in headers:
        if name.lower() in CREDENTIAL_HEADERS and value:
            out.append(value)
            scheme, _, rest = value.partition(" ")
            if rest and scheme.lower() in ("bearer", "basic", "token"):
                out.append(rest.strip())
            if name.lower() == "cookie":
                out += [c.partition("=")[2].strip() for c in value.split(";") if "=" in c]
    if query:
        from urllib.parse import parse_qsl

        out += [v for k, v in parse_qsl(query, keep_blank_values=False) if k.lower() in ("key", "api_key", "token")]
    return tuple(s for s in out if len(s) >= 6)


END_EVENTS = frozenset({"message_stop", "response.completed", "response.done"})
"""Event types that end a successful stream (Anthropic, the Responses API); OpenAI's chat streams end on
`data: [DONE]`."""


def _ends_stream(event: Event) -> bool:
    """Whether a stream event is the provider's last one of a stream that succeeded."""
    return event.data.strip() == "[DONE]" or (event.event or "") in END_EVENTS


def _error_event(event: Event) -> bool:
    """Whether a stream event is a failure: `event: error`, `response.failed`, or a JSON object with `error`."""
    if event.event in ("error", "response.failed"):
        return True
    if '"error"' not in event.data and '"response.failed"' not in event.data:
        return False
    obj = event.json()
    return isinstance(obj, dict) and (bool(obj.get("error")) or obj.get("type") in ("error", "response.failed"))


@dataclass(frozen=True)
class Observed:
    """One finished exchange as the proxy saw it (in memory only; `recording` decides what is kept)."""

    started: float
    method: str
    path: str
    prefix: str
    upstream: str
    provider: str | None
    local: bool
    client: str | None
    client_version: str | None
    model: str | None
    status: int | None
    stream: bool
    outcome: str
    bytes: int
    ttfb_ms: float | None
    total_ms: float
    request_ids: Mapping[str, str] = field(default_factory=dict)
    ratelimit: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = ""
    error_body: str | None = None
    error_event: str | None = None
    detail: str | None = None
    failure_kind: str | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)


class Watch:
    """Follows one exchange as the forwarder carries it; `finish` returns the `Observed`."""

    def __init__(
        self,
        *,
        started: float,
        t0: float,
        method: str,
        path: str,
        prefix: str,
        upstream: str,
        provider: str | None,
        local: bool,
        user_agent: str | None,
        model: str | None,
        secrets: tuple[str, ...],
        stream_asked: bool = False,
    ) -> None:
        self.started, self.t0 = started, t0
        self.method, self.path, self.prefix, self.upstream = method, path, prefix, upstream
        self.provider, self.local = provider, local
        self.client, self.client_version = client_of(user_agent)
        self.model = model
        self.secrets = secrets
        self.stream_asked = stream_asked
        self.connected: float | None = None
        """When the upstream connection was up (made, TLS included, or taken from the pool): the forwarder's."""
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.content_type = ""
        self.stream = False
        self.bytes = 0
        self.ttfb: float | None = None
        self._head = bytearray()
        self._keep_head = False
        self._decoder: SSEDecoder | None = None
        self._error_event: str | None = None
        self._ended = False
        """The stream's last event has passed: a client that hangs up now has read all it asked for."""
        self.finished: Observed | None = None

    def response(self, status: int, headers: Iterable[tuple[str, str]], now: float, path_streams: bool) -> None:
        """The response's status line and headers arrived (`now`: the monotonic clock)."""
        from capdoctor.probes.http_call import safe_headers

        self.ttfb = now
        self.status = status
        pairs = list(headers)
        self.headers = safe_headers({k: v[:MAX_HEADER_VALUE] for k, v in pairs})
        self.content_type = self.headers.get("content-type", "")
        low = self.content_type.lower()
        self.stream = "text/event-stream" in low or "ndjson" in low or path_streams
        if "text/event-stream" in low:
            self._decoder = SSEDecoder()
        self._keep_head = status >= 400 or not self.stream

    def chunk(self, data: bytes) -> None:
        """One body chunk, on its way to the client."""
        self.bytes += len(data)
        if self._keep_head and len(self._head) < MAX_ERROR_BYTES:
            self._head += data[: MAX_ERROR_BYTES - len(self._head)]
        if self._error_event is not None:
            return
        if self._decoder is not None:
            for event in self._decoder.feed(data):
                self._ended = self._ended or _ends_stream(event)
                if _error_event(event):
                    self._error_event = event.data[:MAX_ERROR_BYTES]
                    self._decoder = None  # the failure is known; the rest passes unread
                    break
            bare = data.find(b'{"error"')
            if self._error_event is None and (bare == 0 or (bare > 0 and data[bare - 1 : bare] in (b"\n", b"\r"))):
                # Google's API ends a failing event stream with its error object bare, outside any `data:` field
                self._error_event = data[bare:][:MAX_ERROR_BYTES].decode("utf-8", "replace")
                self._decoder = None
        elif self.stream and b'"error"' in data:  # NDJSON / JSON-array streams: an error object inside
            start = data.find(b"{", max(0, data.find(b'"error"') - 200))
            self._error_event = data[max(0, start) :][:MAX_ERROR_BYTES].decode("utf-8", "replace")

    def gave_up(self, now: float) -> tuple[str | None, str | None]:
        """(detail, failure kind) of a client that hung up before any answer, from what was measured of the
        upstream (see `GAVE_UP_SILENCE_S`); (None, None) where nothing measured names a cause."""
        if self.ttfb is not None:
            return None, None
        if self.connected is None and now - self.t0 >= GAVE_UP_SILENCE_S:
            return (
                f"{self.upstream} accepted no connection in {now - self.t0:.1f} s before the client gave up",
                "timeout",
            )
        if self.connected is not None and self.stream_asked and now - self.connected >= GAVE_UP_SILENCE_S:
            return f"no byte from {self.upstream} in {now - self.connected:.1f} s before the client gave up", "timeout"
        return None, None

    def finish(self, outcome: str, now: float, detail: str | None = None, failure_kind: str | None = None) -> Observed:
        """The exchange ended: `completed`, `cut` (the upstream broke off), `cancelled` (the client hung up) or
        `upstream_failed` (no answer: `failure_kind` names why); an error event seen turns `completed` into
        `error_event`; a `cancelled` before any answer carries what `gave_up` measured. Idempotent: a second call
        returns the first result."""
        if self.finished is not None:
            return self.finished
        error_body: str | None = None
        if self._head:
            head = self._head.decode("utf-8", "replace")
            if (self.status or 0) >= 400 or (not self.stream and '"error"' in head[:4096] and _json_error(head)):
                error_body = head
        if outcome == "cancelled" and self._ended:  # the client closed on the last event, before the upstream's EOF
            outcome = "completed"
        if outcome == "cancelled" and detail is None:
            detail, failure_kind = self.gave_up(now)
        if outcome == "completed" and (self._error_event is not None or ((self.status or 0) < 400 and error_body)):
            outcome = "error_event"
        self.finished = Observed(
            started=self.started,
            method=self.method,
            path=self.path,
            prefix=self.prefix,
            upstream=self.upstream,
            provider=self.provider,
            local=self.local,
            client=self.client,
            client_version=self.client_version,
            model=self.model,
            status=self.status,
            stream=self.stream,
            outcome=outcome,
            bytes=self.bytes,
            ttfb_ms=None if self.ttfb is None else round((self.ttfb - self.t0) * 1000, 3),
            total_ms=round((now - self.t0) * 1000, 3),
            request_ids={h: self.headers[h] for h in ID_HEADERS if self.headers.get(h)},
            ratelimit={k: v for k, v in self.headers.items() if RATELIMIT_RE.match(k)},
            headers=self.headers,
            content_type=self.content_type,
            error_body=error_body,
            error_event=self._error_event,
            detail=detail,
            failure_kind=failure_kind,
            secrets=self.secrets,
        )
        return self.finished


def _json_error(text: str) -> bool:
    """True when `text` (a 2xx body's head) is a JSON object whose top level holds an `error`."""
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    return isinstance(obj, dict) and bool(obj.get("error"))
