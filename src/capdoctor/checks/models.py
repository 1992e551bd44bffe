"""The `models` check ("Switch model"): probe the primary model and a lighter one, and read what differs.

Contract: the first and most important stage. It lists the provider's models (spends nothing), then, unless
`--no-inference`, samples the primary with the smallest valid generation (under a short deadline,
`LIST_FIRST_S`, the primary goes first; a run that sent nothing is `skip`, with a decisive gap) and, when the
primary failed at least once, tries each alternative until one answers (`probes.http_probe`). This is the I/O
half: it gathers an `Evidence` for `models_rules.judge`, which owns the rules — put judgement there. It must
not print, sleep past the deadline, or store a secret: headers are kept (for the quota check) without
Authorization/x-api-key/cookies, and the key's value is redacted from everything it returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timezone
from typing import TYPE_CHECKING, Any

from capdoctor.checks.base import Need
from capdoctor.checks.models_rules import (
    Evidence,
    attempt_cause,
    exchange_label,
    failure_rate,
    judge,
    key_level,
    refuses_key,
    request_ids,
    signature_id,
)
from capdoctor.checks.registry import Registered
from capdoctor.model import CheckResult, Finding, NextStep, Status, result_of, skipped

if TYPE_CHECKING:
    from capdoctor.probes.http_call import Exchange
    from capdoctor.probes.http_probe import Attempt, ModelRun
    from capdoctor.providers.base import Adapter
    from capdoctor.run.context import Context, Target

MAX_ALTERNATIVES = 2
MAX_LISTED = 200
MAX_ERROR_BODY = 2000
LIST_FIRST_S = 5.0
"""The model list goes first only with this much time left: under it, the one request that decides (the
primary's generation) is sent first, and the list follows if time remains. A short `--timeout` must never
be spent on the list call alone (against a server that never answers, it would take all of it)."""


def classify_exchange(ex: Exchange, local: bool = False) -> Any:
    """The classification engine's best match for a failed exchange (its body, or its bare status read in
    context: `local` says the target is a local model server), or None."""
    if ex.connection_failed or not (ex.classify_text or (ex.status or 0) >= 400):
        return None
    from capdoctor.classifier.signatures import classify

    origin = "stream" if ex.kind == "stream_error" else "body"
    matches = classify(ex.classify_text, status=ex.status, headers=dict(ex.headers), origin=origin, local=local)
    return matches[0] if matches else None


def local_server(target: Target, adapter: Adapter) -> bool:
    """True when the target is a local model server (a generic OpenAI-compatible adapter on this machine); a
    relay on loopback in front of a known provider is not: its 5xx are the provider's."""
    from capdoctor.probes.local_servers import is_local

    return not adapter.official_hosts and is_local(target.base_url)


def attempt_row(a: Attempt) -> dict[str, Any]:
    """One attempt as report data: status, signature, cause, latency, ids and the provider's words."""
    ex = a.exchange
    rid, ray = request_ids(ex)
    cause = None if ex.ok else attempt_cause(a)
    error = None if ex.ok else (ex.error.short() if ex.error else ex.detail) or None
    return {
        "status": ex.status,
        "kind": ex.kind,
        "route": ex.route,
        "signature": signature_id(a),
        "cause": cause.value if cause else None,
        "latency_ms": ex.latency_ms,
        "request_id": rid,
        "cf_ray": ray,
        "error": error,
        "waited_s": round(a.waited_s, 2),
        # for the ticket: when the provider answered (its Date header, UTC) and its words uncut
        "time": response_time(ex.headers),
        "error_text": None if ex.ok else full_error_text(ex),
    }


def response_time(headers: Mapping[str, str]) -> str | None:
    """The response's `Date` header as ISO 8601 UTC (`2026-11-30T08:01:02Z`), or None when absent or unreadable.

    The provider's own clock is what its support matches request ids against.
    """
    from email.utils import parsedate_to_datetime

    value = next((v for k, v in headers.items() if k.lower() == "date"), None)
    try:
        when = parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return when.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def full_error_text(ex: Exchange) -> str | None:
    """The provider's error in its own words, uncut (`code (type): message`), else the transport's detail."""
    return (ex.error.text() if ex.error else ex.detail) or None


def default_alternatives(target: Target, adapter: Adapter, listed: Sequence[str] | None) -> list[str]:
    """The target's alternatives, else the provider's lighter models, else another listed model."""
    if target.alt_models:
        return [m for m in target.alt_models if m != target.model][:MAX_ALTERNATIVES]
    light = [m for m in adapter.light_models if m != target.model]
    if listed:
        present = [m for m in light if m in listed]
        light = present or light
        if not light:
            light = [m for m in listed if m != target.model][:1]
    return light[:MAX_ALTERNATIVES]


def _scrub_finding(f: Finding, secrets: list[str]) -> Finding:
    from capdoctor.redact import redact, redact_text

    return Finding(
        f.cause,
        f.strength,
        redact_text(f.message, secrets),
        redact(dict(f.data), secrets),
        tuple(NextStep(redact_text(s.text, secrets), s.command) for s in f.next_steps),
    )


def untested_generation(
    model: str, runs: Sequence[ModelRun], no_inference: bool, key_blocked: bool, listing: Exchange | None, stopped: str
) -> list[dict[str, Any]]:
    """The coverage gap the verdict reads when the model's generation was never probed (see verdict.Gap)."""
    if any(r.attempts for r in runs) or key_blocked or not model:
        return []  # a run of no attempts (cut by the deadline before its first) tested nothing
    why = "--no-inference" if no_inference else stopped or "no time or request budget left"
    listed = listing is not None and listing.ok
    open_causes = ["capacity", "quota", "account"] if listed else ["capacity", "quota", "account", "network", "client"]
    return [{"what": f"generation on {model}", "why": why, "open_causes": open_causes, "decisive": True}]


def nothing_probed(refused: str, left: float, reserve: float) -> str:
    """The skip reason of a run that sent nothing: the run's budget's words, else the time this check had."""
    if refused:
        return f"nothing was probed: {refused}"
    return (
        f"nothing was probed: {left:.2f} s left for this check when it started, and a request needs more than "
        f"{reserve:.1f} s (raise --timeout)"
    )


class ModelsCheck(Registered, check_id="models"):
    """Switch model: does a lighter model of the same provider answer where the primary fails?"""

    needs: frozenset[Need] = frozenset({Need.TARGET, Need.NETWORK})
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """List models, probe primary then alternatives within the budget, and judge the pattern."""
        from capdoctor.probes.http_probe import Budget, Prober
        from capdoctor.probes.ratelimit import parse_headers
        from capdoctor.providers.catalog import adapter_for
        from capdoctor.target.keys import describe_key, shape_text

        target = ctx.target
        if target is None:
            return skipped(self, "no target")
        if not target.base_url:
            return skipped(self, f"no base URL known for provider {target.provider}: pass --base-url")
        adapter = adapter_for(target.provider)
        key = describe_key(target, ctx.env)  # the key first: named, set?, from where, shape — before any spend
        budget = Budget.from_options(ctx.options)
        local = local_server(target, adapter)
        left = ctx.remaining()

        def classify(ex: Exchange) -> Any:
            return classify_exchange(ex, local)

        with ctx.http_client(timeout=budget.request_timeout_s) as client:
            prober = Prober(ctx, adapter, target, client, budget, classify)
            generate = not ctx.no_inference and bool(target.model)
            runs: list[ModelRun] = []
            if generate and left < LIST_FIRST_S:  # little time: the primary's generation before the list
                runs.append(prober.probe(target.model, "primary", sample=True))
            listing = prober.list_models() if not runs or prober.can_send() else None
            listed = adapter.parse_models(listing.json_body) if listing is not None and listing.ok else None
            # a refused list with a key problem is the whole story: generations would be refused the same way
            key_blocked = not runs and key.problem is not None and listing is not None and refuses_key(listing)
            if generate and not key_blocked:
                if not runs:
                    runs.append(prober.probe(target.model, "primary", sample=True))
                if runs[0].outcome != "ok":
                    alternatives = default_alternatives(target, adapter, listed)
                    if key_level(runs[0]):
                        alternatives = alternatives[:1]  # the key's problem: one comparison is enough
                    for i, alt in enumerate(alternatives):
                        if not prober.can_send():
                            prober.note_budget(len(alternatives) - i)  # one planned attempt per alternative
                            break
                        runs.append(prober.probe(alt, "alternative"))
        exchanges = [ex for _, ex in prober.exchanges]
        headroom = any(parse_headers(ex.headers, ctx.now()).headroom for ex in exchanges)
        listing_match = classify(listing) if listing is not None and not listing.ok else None
        ev = Evidence(target, adapter, listing, listed, runs, exchanges, ctx.no_inference, headroom, listing_match, key)
        status, summary, findings = judge(ev)
        if not prober.exchanges:  # nothing was sent: nothing was tested, whatever the findings of the setup say
            status, summary = Status.SKIP, nothing_probed(prober.budget_text(), left, budget.reserve_s)
        data = {
            "models": [_model_row(r) for r in runs],
            "available_models": listed[:MAX_LISTED] if listed is not None else None,
            "model_listed": None if listed is None else target.model in listed,
            "responses": [_response_row(m, ex) for m, ex in prober.exchanges],
            "requests": prober.requests,
            "output_tokens": prober.output_tokens,
            "route": prober.routes[0] if prober.routes else None,
            "stopped": prober.stopped or None,
            "budget": {"refused": prober.budget_text() or None, "not_sent": prober.not_sent},
            "key": key.to_dict(),
            "untested": untested_generation(
                target.model, runs, ctx.no_inference, key_blocked, listing, prober.stopped or prober.budget_note
            ),
        }
        details = _details(
            runs, f"key: {key.names()} ({shape_text(key)}); name from {key.name_source}", listing, listed
        )
        if prober.budget_note:  # never silently: the run's budget stopped this check
            summary = f"{summary} ({prober.budget_text()})"
            details.append(f"run budget: {prober.budget_text()}")
        if key_blocked:
            details.append("generation not probed: the provider refused the model list and the key is the problem")
        return _scrubbed(self, status, summary, findings, details, data, target.api_key)


def _model_row(r: ModelRun) -> dict[str, Any]:
    """One model's probe in the check's data: its outcome, why it stopped, its failure rate, every attempt."""
    return {
        "model": r.model,
        "role": r.role,
        "outcome": r.outcome,
        "stop_reason": r.stop_reason,
        **failure_rate(r),
        "attempts": [attempt_row(a) for a in r.attempts],
    }


def _response_row(model: str, ex: Exchange) -> dict[str, Any]:
    """One response in the check's data: status, kind, headers, and an error's body (bounded; never a page)."""
    return {
        "model": model,
        "route": ex.route,
        "status": ex.status,
        "kind": ex.kind,
        "headers": dict(ex.headers),
        "error_body": None if ex.ok or ex.kind == "html" else ex.body[:MAX_ERROR_BODY] or None,
    }


def _details(runs: list[ModelRun], key_line: str, listing: Exchange | None, listed: list[str] | None) -> list[str]:
    """The check's details: the key, the model list, then one line per model probed."""
    out = [key_line]
    if listing is not None:
        out.append(f"model list: {exchange_label(listing)}" + (f", {len(listed)} models" if listed is not None else ""))
    out += [f"{r.model} ({r.role}): {r.outcome} after {len(r.attempts)} attempt(s); {r.stop_reason}" for r in runs]
    return out


def _scrubbed(
    check: Any, status: Status, summary: str, findings: list[Any], details: list[str], data: Any, key: str | None
) -> CheckResult:
    """The result with the key taken out of every string: belt and braces before the report's redaction."""
    from capdoctor.redact import redact, redact_text

    secrets = [key] if key else []
    return result_of(
        check,
        status,
        redact_text(summary, secrets),
        [_scrub_finding(f, secrets) for f in findings],
        redact(details, secrets),
        redact(data, secrets),
    )
