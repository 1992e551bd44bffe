"""The run's request budget: how many requests one diagnosis may send to the provider, and how much output.

Contract: one `RunBudget` per run (`ctx.budget`), shared by every check and thread, bounds the whole run by
`run.max_provider_requests` requests and `run.max_output_tokens` output tokens (each generation's `max_tokens`).
A check asks before it sends (`take`) so that it can say what it did not send; and every HTTP client capdoctor
makes for the network carries a hook (`probes.http_budget`) that counts what really leaves for the provider and
refuses a request that would exceed the budget — so no check, however written, can send more.

A provider request is any HTTP request to the target's API origin (scheme, host and port of its base URL),
whichever check sends it and whether direct or through a proxy. Other origins (status page, registries, local
servers on other ports) and a configured `status_url` or `reference_url` never count; neither does a bare TCP
connect or TLS handshake. A request that got no answer (refused, reset) still counts: it was sent.

Priority: the models check is the diagnosis. While it runs a reserve is held for it (`models_reserve`); the
checks beside it share what is left beyond that, and the runner releases the reserve when it finishes
(`release`) so the quota check, after it, can use the rest. Simple on purpose: one reserve, one holder, no queue.
No I/O and nothing heavy here (the httpx hook lives in `probes.http_budget`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

PRIORITY_CHECK = "models"
"""The check the reserve is held for."""

UNPLANNED = "unplanned"
"""Whose requests the hook counted without a ticket when the client does not name its check."""

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> tuple[str, str, int] | None:
    """`(scheme, host, port)` of `url`, the host lower-cased and the default port filled in; None when unusable."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    if scheme not in DEFAULT_PORTS or not host:
        return None
    return scheme, host, port or DEFAULT_PORTS[scheme]


def models_reserve(options: Any) -> int:
    """The requests held for the models check while it runs: its model list, the primary's samples and one
    alternative's attempts, within its own cap (`models.max_requests`)."""
    wanted = 1 + int(options["models.primary_attempts"]) + int(options["models.max_attempts"])
    return min(wanted, int(options["models.max_requests"]))


@dataclass
class RunBudget:
    """The run-wide cap on provider requests and output tokens; thread-safe (one lock, tiny critical sections).

    `origin` is the target's API origin (`origin_of(base_url)`); None when there is no target, and then
    nothing is a provider request. `by_check` counts what each check sent, `refused` what it was refused.
    """

    max_requests: int = 12
    max_output_tokens: int = 200
    origin: tuple[str, str, int] | None = None
    exempt: tuple[str, ...] = ()
    """URL prefixes on the provider's origin that are not provider requests: the configured status page and
    reference endpoint (the simulator serves its status page on its API port)."""
    sent: int = 0
    output_tokens: int = 0
    by_check: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    _reserved: int = 0
    _holder: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _tickets: threading.local = field(default_factory=threading.local, repr=False)

    # -- setting up

    def reserve(self, check: str, requests: int) -> None:
        """Hold `requests` of the budget for `check` until it is released (see the module docstring)."""
        with self._lock:
            self._holder, self._reserved = check, max(0, min(requests, self.max_requests))

    def release(self, check: str) -> None:
        """`check` has finished: what it did not use of its reserve goes back to everyone."""
        with self._lock:
            if self._holder == check:
                self._holder, self._reserved = None, 0

    # -- asking

    def is_provider(self, url: str) -> bool:
        """Whether a request to `url` is a provider request (the target's API origin)."""
        if self.origin is None or origin_of(url) != self.origin:
            return False
        return not any(url.startswith(prefix) for prefix in self.exempt)

    def _room(self, check: str) -> int:
        """Requests `check` may still take (the caller holds the lock)."""
        left = self.max_requests - self.sent
        if self._holder is not None and check != self._holder:
            used = self.by_check.get(self._holder, 0)
            left -= max(0, self._reserved - used)
        return left

    def can_take(self, check: str, tokens: int = 0) -> bool:
        """Whether `take(check, tokens)` would succeed now (another thread may take first)."""
        with self._lock:
            return self._room(check) >= 1 and self.output_tokens + tokens <= self.max_output_tokens

    def take(self, check: str, tokens: int = 0) -> bool:
        """Take one request (and `tokens` output tokens) for `check`, to send now from this thread; False when
        the budget (or what the reserve leaves this check) is spent — then send nothing and say so."""
        with self._lock:
            if self._room(check) < 1 or self.output_tokens + tokens > self.max_output_tokens:
                self.refused[check] = self.refused.get(check, 0) + 1
                return False
            self._count(check, tokens)
        self._tickets.n = getattr(self._tickets, "n", 0) + 1
        return True

    def _count(self, check: str, tokens: int) -> None:
        self.sent += 1
        self.output_tokens += tokens
        self.by_check[check] = self.by_check.get(check, 0) + 1

    def on_send(self, url: str, tokens: int = 0, check: str = UNPLANNED) -> bool:
        """Called for every request a capdoctor HTTP client is about to send (the request hook): True when it
        may go. A provider request uses the ticket its check took in this thread; one sent without a ticket
        (a check that did not ask, as the hardware check reading a target that is a local server) is counted
        here for `check`, at the lowest priority, and refused once that is spent."""
        if not self.is_provider(url):
            return True
        n = getattr(self._tickets, "n", 0)
        if n > 0:
            self._tickets.n = n - 1
            return True
        with self._lock:
            if self._room("") < 1 or self.output_tokens + tokens > self.max_output_tokens:
                self.refused[check] = self.refused.get(check, 0) + 1
                return False
            self._count(check, tokens)
        return True

    # -- telling

    def spent_text(self, check: str, not_sent: int = 0, what: str = "attempt") -> str:
        """Why `check` was refused, in the budget's own words, with what it did not send:
        `request budget spent: 12 of 12; 2 planned attempts not sent`."""
        with self._lock:
            if self.sent >= self.max_requests:
                text = f"request budget spent: {self.sent} of {self.max_requests}"
            elif self._room(check) < 1:
                text = (
                    f"request budget: {self.sent} of {self.max_requests} sent, the rest held for the "
                    f"{self._holder} check"
                )
            else:
                text = f"output-token budget spent: {self.output_tokens} of {self.max_output_tokens}"
        if not_sent:
            text += f"; {not_sent} planned {what}{'s' if not_sent != 1 else ''} not sent"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The report's `budget` object: the caps, what was sent and refused, per check."""
        with self._lock:
            return {
                "max_provider_requests": self.max_requests,
                "max_output_tokens": self.max_output_tokens,
                "provider_requests": self.sent,
                "output_tokens": self.output_tokens,
                "by_check": dict(self.by_check),
                "refused": dict(self.refused),
            }
