"""The attempt loop of the "switch the model" probe: bounded, sampled, backed-off, honouring Retry-After.

Contract: a `Prober` sends the spend-nothing list call, then generations for one model at a time. The primary
is *sampled* (`Budget.primary_attempts` attempts even after a success: capacity errors are intermittent and one
lucky success proves little); alternatives stop at their first success. It backs off exponentially with jitter,
honouring `Retry-After` but never sleeping past the deadline, and never retries what cannot succeed (401/403/404,
quota, account or client signatures). Requests and output tokens are capped by `Budget.max_requests` and taken
from the run's budget (`ctx.provider_budget`); what a refusal left unsent is recorded (`not_sent`,
`budget_note`). A connection failure that would only repeat (refused, timeout, TLS, DNS), or
`Budget.connection_strikes` in a row, stops everything. It picks the generation route the target answers (a
404 on one route is not a verdict). It records, it does not judge: the models check reads the `ModelRun`s.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capdoctor.probes.http_call import Exchange, send
from capdoctor.probes.ratelimit import parse_retry_after, retry_hint_in_body

if TYPE_CHECKING:
    import httpx

    from capdoctor.providers.base import Adapter, ProbeRequest
    from capdoctor.run.context import Context, Target

STOP_ALL_KINDS = frozenset({"refused", "timeout", "tls", "connect"})
"""Connection failures that the next request would only repeat: probing stops after the first."""

NO_RETRY_STATUSES = frozenset({400, 401, 402, 403, 404, 405, 413, 422})
"""Without a signature saying otherwise, these statuses will not change on a retry."""

CHECK_ID = "models"
"""Whose requests these are, for the run's budget (it holds a reserve for this check)."""

NEVER_RETRY_STATUSES = frozenset({401, 403, 404})
"""Refusals a retry cannot change whatever the body says (bad key, forbidden, no such model or route)."""


@dataclass(frozen=True)
class Budget:
    """Bounds of one probe run. Defaults keep a diagnosis to a handful of tiny requests.

    `max_requests` counts every request of the models check (the list call included). The whole run's
    caps (`run.max_provider_requests`, `run.max_output_tokens`) are the run budget's, not this one's.
    """

    max_attempts: int = 3
    primary_attempts: int = 3
    max_requests: int = 8
    connection_strikes: int = 2
    backoff_s: float = 0.3
    max_backoff_s: float = 8.0
    request_timeout_s: float = 10.0
    reserve_s: float = 0.5

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Budget:
        """The `models.*` options (checked and defaulted by `capdoctor.target.options`; tests keep runs short)."""
        return cls(
            max_attempts=options["models.max_attempts"],
            primary_attempts=options["models.primary_attempts"],
            max_requests=options["models.max_requests"],
            backoff_s=options["models.backoff_s"],
            max_backoff_s=options["models.max_backoff_s"],
            request_timeout_s=options["models.request_timeout_s"],
        )


@dataclass
class Attempt:
    """One request for a model and what the signature table made of it (`match` is a signatures.Match)."""

    exchange: Exchange
    match: Any = None
    waited_s: float = 0.0


@dataclass
class ModelRun:
    """All attempts for one model, and why the attempts stopped."""

    model: str
    role: str
    attempts: list[Attempt] = field(default_factory=list)
    stop_reason: str = ""

    @property
    def outcome(self) -> str:
        """`ok` (every attempt answered), `fail` (none did), `flaky` (some did), `skipped` (never sent)."""
        oks = sum(1 for a in self.attempts if a.exchange.ok)
        if not self.attempts:
            return "skipped"
        if oks == len(self.attempts):
            return "ok"
        return "flaky" if oks else "fail"

    @property
    def failures(self) -> list[Attempt]:
        """The attempts that did not answer."""
        return [a for a in self.attempts if not a.exchange.ok]


Classifier = Callable[[Exchange], Any]


NO_RETRY_CAUSES = frozenset({"quota", "account", "client"})
"""Failures a retry cannot change the verdict of: waiting out a rate limit only adds load (the quota check
reports when it resets). Retries exist to tell intermittent (capacity, network) failures from steady ones."""


def _retryable(attempt: Attempt) -> bool:
    if attempt.exchange.status in NEVER_RETRY_STATUSES:
        return False
    sig = getattr(attempt.match, "signature", None)
    cause = getattr(sig, "cause", None)
    if sig is not None and str(getattr(cause, "value", cause)) in NO_RETRY_CAUSES:
        return False
    if sig is not None and getattr(sig, "retryable", None) is not None:
        return bool(sig.retryable)
    ex = attempt.exchange
    return ex.status not in NO_RETRY_STATUSES


def _route_missing(ex: Exchange, model: str) -> bool:
    """A 404/405 that is about the URL, not the model (so another wire API may answer)."""
    if ex.status not in (404, 405):
        return False
    text = (ex.body or "").lower()
    return "model" not in text and model.lower() not in text


class Prober:
    """Sends the probe requests for one target under one budget; see the module docstring."""

    def __init__(
        self,
        ctx: Context,
        adapter: Adapter,
        target: Target,
        client: httpx.Client,
        budget: Budget,
        classify: Classifier,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        check_id: str = CHECK_ID,
    ) -> None:
        self.check_id = check_id  # whose requests these are, for the run's budget
        self.ctx, self.adapter, self.target, self.client = ctx, adapter, target, client
        self.budget, self.classify, self.sleep, self.rand = budget, classify, sleep, rand
        self.requests = 0
        self.output_tokens = 0
        self.not_sent = 0  # attempts planned and refused by the run's budget
        self.budget_note = ""  # the run budget's words when it refused (`request budget spent: 12 of 12`)
        self.strikes = 0  # connection failures in a row
        self.stopped = ""
        self.routes = list(adapter.route_order(target))
        self.exchanges: list[tuple[str, Exchange]] = []

    def _timeout(self) -> float:
        # One request may use at most half of what is left (at least 2 s), so a silent server cannot eat the
        # whole run and the checks after this one still get their turn.
        share = max(2.0, self.ctx.remaining() * 0.5)
        return self.ctx.timeout(min(self.budget.request_timeout_s, share, max(0.05, self.ctx.remaining() - 0.2)))

    def _send(self, model: str, req: ProbeRequest) -> Exchange:
        self.requests += 1
        self.output_tokens += req.output_tokens
        ex = send(self.client, self.adapter, req, timeout=self._timeout())
        self.exchanges.append((model, ex))
        self.strikes = self.strikes + 1 if ex.connection_failed else 0
        if ex.kind in STOP_ALL_KINDS:
            self.stopped = f"stopped after a connection failure ({ex.kind}): {ex.detail}"
        elif self.strikes >= self.budget.connection_strikes:
            self.stopped = (
                f"stopped after {self.strikes} connection failures in a row ({ex.kind}): the connection "
                "itself fails, more requests would only repeat it"
            )
        return ex

    def can_send(self, output_tokens: int = 0) -> bool:
        """True while this check's cap, the run's budget, the deadline and earlier failures allow a request."""
        return (
            not self.stopped
            and not self.budget_note
            and self.requests < self.budget.max_requests
            and self.ctx.remaining() > self.budget.reserve_s
            and self.ctx.provider_budget.can_take(self.check_id, output_tokens)
        )

    def _admit(self, output_tokens: int, planned: int = 1) -> bool:
        """Take one request (and its tokens) from the run's budget; on a refusal remember why, and that the
        `planned` attempts it would have started will not be sent."""
        if not (
            not self.stopped
            and self.requests < self.budget.max_requests
            and self.ctx.remaining() > self.budget.reserve_s
        ):
            return False
        run_budget = self.ctx.provider_budget
        if run_budget.take(self.check_id, output_tokens):
            return True
        self.not_sent += planned
        self.budget_note = self.budget_note or run_budget.spent_text(self.check_id)
        return False

    def refused(self, planned: int) -> None:
        """`planned` attempts were not sent because the run's budget refused an earlier one."""
        self.not_sent += planned

    def note_budget(self, planned: int) -> bool:
        """When the run's budget is why nothing more can be sent, count `planned` attempts (alternatives never
        tried) as not sent and return True; False when something else (this check's cap, the deadline) stops."""
        run_budget = self.ctx.provider_budget
        if not self.budget_note and run_budget.can_take(self.check_id):
            return False
        self.budget_note = self.budget_note or run_budget.spent_text(self.check_id)
        self.not_sent += planned
        return True

    def budget_text(self) -> str:
        """`request budget spent: 12 of 12; 2 planned attempts not sent`, or "" when the budget never refused."""
        if not self.budget_note:
            return ""
        n = self.not_sent
        return f"{self.budget_note}; {n} planned attempt{'s' if n != 1 else ''} not sent" if n else self.budget_note

    def list_models(self) -> Exchange | None:
        """The spend-nothing model list (None when nothing may be sent)."""
        if self.budget_note or not self._admit(0):
            return None
        return self._send("", self.adapter.list_request(self.target))

    def _request(self, model: str) -> ProbeRequest:
        return self.adapter.generate_request(self.target, model, self.routes[0])

    def probe(self, model: str, role: str, sample: bool = False) -> ModelRun:
        """Generations for `model`: `primary_attempts` of them when `sample` (going on after a success),
        else up to `max_attempts` stopping at the first success; always stopping at a failure a retry
        cannot change, at a connection failure that would repeat, or at the caps and the deadline."""
        attempts = self.budget.primary_attempts if sample else self.budget.max_attempts
        run = ModelRun(model, role)
        waited = 0.0
        while len(run.attempts) < attempts:
            request = self._request(model)
            if self.budget_note:  # refused before: the run's budget does not come back
                self.refused(attempts - len(run.attempts))
            if self.budget_note or not self._admit(request.output_tokens, attempts - len(run.attempts)):
                run.stop_reason = self.budget_note or self.stopped or "request cap or the deadline reached"
                break
            ex = self._send(model, request)
            while _route_missing(ex, model) and len(self.routes) > 1 and self._admit(request.output_tokens, 0):
                self.routes.pop(0)  # this target does not serve that wire API: use the one that answers
                ex = self._send(model, self._request(model))
            attempt = Attempt(ex, None if ex.ok else self.classify(ex), waited)
            run.attempts.append(attempt)
            if self.stopped:
                run.stop_reason = self.stopped
                break
            if ex.ok and not sample:
                run.stop_reason = "answered"
                break
            if not ex.ok and not _retryable(attempt):
                run.stop_reason = "not retryable"
                break
            if len(run.attempts) >= attempts:
                run.stop_reason = f"{len(run.attempts)} samples taken" if sample else "attempts exhausted"
                break
            wait, hint = self._pause(ex, len(run.attempts) - 1)
            if wait > self.ctx.remaining() - self.budget.reserve_s - 1.0:
                too_long = f"Retry-After {wait:.0f} s is longer than the time left"
                run.stop_reason = too_long if hint else "no time left for another attempt"
                break
            self.sleep(wait)
            waited = wait
        return run

    def _pause(self, ex: Exchange, n: int) -> tuple[float, bool]:
        """(seconds to wait before the next attempt, whether the server asked for it).

        After a success: a short jittered spacing, so samples do not arrive as one burst. After a failure:
        the server's Retry-After (header or body hint), else exponential backoff with jitter.
        """
        jitter = 0.75 + 0.5 * self.rand()
        if ex.ok:
            return self.budget.backoff_s * jitter, False
        hint = parse_retry_after(ex.headers, self.ctx.now())
        if hint is None and ex.body:
            hint = retry_hint_in_body(ex.body)
        if hint is not None:
            return hint, True
        return min(self.budget.max_backoff_s, self.budget.backoff_s * (2**n)) * jitter, False
