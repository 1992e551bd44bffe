"""The `models` check ("Switch model"): probe the primary model and a lighter one, and read what differs.

Contract: the first and most important stage of the triage. It lists the provider's models (spends
nothing), then — unless `--no-inference` — sends the smallest valid generation to the primary model and to
each alternative (the target's, else a lighter model of the same provider), a few bounded attempts each
(see `probes.http_probe`). Every error body and stream event is read through `capdoctor.signatures`; the
check turns the pattern across models into findings, encoding the source articles' rule: primary fails with
a capacity signature while an alternative works → capacity (strong); everything fails with the capacity
code on a healthy path with quota headroom → account (strong), capacity second (weak); everything fails
otherwise → the signatures' cause. It must not print, sleep past the deadline, or store a secret: response
headers are kept (for the quota check) without Authorization/x-api-key/cookies, and the key's value is
scrubbed from everything it returns.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capdoctor.check import Need
from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength, result_of, skipped

if TYPE_CHECKING:
    from capdoctor.context import Context, Target
    from capdoctor.probes.http_call import Exchange
    from capdoctor.probes.http_probe import Attempt, ModelRun
    from capdoctor.providers.base import Adapter

MAX_ALTERNATIVES = 2
MAX_LISTED = 200
MAX_ERROR_BODY = 2000

STATUS_FALLBACK: dict[int, Cause] = {
    400: Cause.CLIENT, 401: Cause.ACCOUNT, 402: Cause.QUOTA, 403: Cause.ACCOUNT, 404: Cause.CLIENT,
    429: Cause.QUOTA,
}
"""Weak fallback when no signature matched an HTTP error (5xx is capacity); signatures always win."""

SWITCH_COMMANDS: dict[str, str] = {
    "openai": "codex --model {model}",
    "anthropic": "claude --model {model}",
    "gemini": "gemini --model {model}",
}
"""How the provider's own coding client switches model, for a copyable next step."""

KIND_TEXT: dict[str, str] = {
    "refused": "the connection was refused",
    "timeout": "no answer before the timeout",
    "reset": "the connection was reset or closed mid-answer",
    "tls": "the TLS handshake failed (interception or a broken proxy)",
    "connect": "the host could not be reached (DNS or routing)",
}


def classify_exchange(ex: Exchange) -> Any:
    """The best signature match for a failed exchange, or None (also while signatures.py is absent)."""
    if ex.connection_failed or not ex.classify_text:
        return None
    try:
        from capdoctor.signatures import classify  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    origin = "stream" if ex.kind == "stream_error" else "body"
    matches = classify(ex.classify_text, status=ex.status, headers=dict(ex.headers), origin=origin)
    return matches[0] if matches else None


def request_ids(ex: Exchange) -> tuple[str | None, str | None]:
    """(request id, cf-ray) from the response headers, or the body's `request_id` (Anthropic)."""
    from capdoctor.providers.base import REQUEST_ID_HEADERS

    rid = next((ex.headers[h] for h in REQUEST_ID_HEADERS if ex.headers.get(h)), None)
    if rid is None and ex.body:
        try:
            obj = json.loads(ex.body)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("request_id"), str):
            rid = obj["request_id"]
    return rid, ex.headers.get("cf-ray")


def attempt_cause(a: Attempt) -> Cause | None:
    """The cause of one failed attempt: its signature's, else network for no/HTML answer, else by status."""
    sig = getattr(a.match, "signature", None)
    if sig is not None:
        return Cause(sig.cause)
    ex = a.exchange
    if ex.connection_failed or ex.kind in ("html", "cut"):
        return Cause.NETWORK
    if ex.status is not None and ex.status >= 500:
        return Cause.CAPACITY
    return STATUS_FALLBACK.get(ex.status or 0)


def _sig_id(a: Attempt) -> str | None:
    sig = getattr(a.match, "signature", None)
    return str(sig.id) if sig is not None else None


def _label(a: Attempt) -> str:
    ex = a.exchange
    sig = _sig_id(a)
    code = ex.error.code if ex.error and ex.error.code else None
    if code is not None and code == str(ex.status):  # OpenRouter/Gemini repeat the status as the code
        code = None
    status = f"HTTP {ex.status}" if ex.status is not None else ex.kind
    if ex.kind == "stream_error":
        status += " stream"
    return " ".join(p for p in (status, code or sig) if p)


def attempt_row(a: Attempt) -> dict[str, Any]:
    """One attempt as report data: status, signature, cause, latency, ids and the provider's words."""
    ex = a.exchange
    rid, ray = request_ids(ex)
    cause = None if ex.ok else attempt_cause(a)
    error = None if ex.ok else (ex.error.short() if ex.error else ex.detail) or None
    return {
        "status": ex.status, "kind": ex.kind, "route": ex.route, "signature": _sig_id(a),
        "cause": cause.value if cause else None, "latency_ms": ex.latency_ms, "request_id": rid,
        "cf_ray": ray, "error": error, "waited_s": round(a.waited_s, 2),
    }


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


def key_level(run: ModelRun) -> bool:
    """True when every failure of `run` is about the key or account (quota/account), so every model shares it."""
    return bool(run.failures) and all(attempt_cause(a) in (Cause.QUOTA, Cause.ACCOUNT) for a in run.failures)


@dataclass
class Evidence:
    """Everything the probe saw, handed to `judge` (pure) so that findings are testable without a network."""

    target: Target
    adapter: Adapter
    listing: Exchange | None
    listed: list[str] | None
    runs: list[ModelRun]
    exchanges: list[Exchange]
    no_inference: bool
    now_headroom: bool


def _source(target: Target, field: str) -> str:
    return target.sources.get(field, "unknown source") if target.sources else "unknown source"


def _env_var(source: str) -> str | None:
    return source.split(" ", 1)[1] if source.startswith("env ") else None


def _connection_findings(ev: Evidence) -> list[Finding]:
    from capdoctor.providers import is_loopback

    failed = [ex for ex in ev.exchanges if ex.connection_failed]
    if not failed:
        return []
    first = failed[0]
    answered = [ex for ex in ev.exchanges if not ex.connection_failed]
    data = {"path": first.url, "kind": first.kind, "detail": first.detail}
    if first.kind == "refused" and is_loopback(ev.target.base_url) and not answered:
        src = _source(ev.target, "base_url")
        var = _env_var(src)
        steps = [NextStep(f"Start the local server or relay that should listen at {ev.target.base_url}, "
                          f"or remove the stale setting ({src}).")]
        if var:
            steps.append(NextStep(f"Unset {var} (and remove it from your shell profile) if nothing should "
                                  "listen there.", f"unset {var}"))
        return [Finding(Cause.CLIENT, Strength.STRONG,
                        f"Nothing is listening at the base URL {ev.target.base_url} (from {src}): a stale "
                        "local base URL or a stopped local server, not the provider.",
                        {**data, "source": src}, tuple(steps))]
    strength = Strength.STRONG if not answered else Strength.MODERATE
    when = "every request" if not answered else f"{len(failed)} of {len(ev.exchanges)} requests"
    what = KIND_TEXT.get(first.kind, first.kind)
    step = NextStep("Compare the direct path with your proxy path.", "capdoctor check paths")
    return [Finding(Cause.NETWORK, strength, f"No HTTP answer from {ev.target.base_url} on {when}: {what}.",
                    data, (step,))]


def _html_findings(ev: Evidence) -> list[Finding]:
    for run in ev.runs:
        for a in run.failures:
            if a.exchange.kind == "html" and attempt_cause(a) is Cause.NETWORK:
                rid, ray = request_ids(a.exchange)
                return [Finding(Cause.NETWORK, Strength.STRONG,
                                f"An HTML page came back where {ev.adapter.name} JSON was expected (HTTP "
                                f"{a.exchange.status}): a block page, captive portal or proxy answered, "
                                "not the provider.",
                                {"status": a.exchange.status, "signature": _sig_id(a), "request_id": rid,
                                 "cf_ray": ray, "path": a.exchange.url},
                                (NextStep("Open the base URL in a browser on this network, or retry on "
                                          "another network (VPN off, phone hotspot)."),))]
    if ev.listing is not None and ev.listing.kind == "html":
        return [Finding(Cause.NETWORK, Strength.STRONG,
                        f"The model list came back as an HTML page (HTTP {ev.listing.status}): something "
                        "in the middle answered instead of the provider.", {"status": ev.listing.status})]
    return []


def _cut_findings(ev: Evidence) -> list[Finding]:
    cuts = [a for r in ev.runs for a in r.attempts if a.exchange.kind == "cut"]
    if not cuts:
        return []
    total = sum(len(r.attempts) for r in ev.runs)
    strength = Strength.STRONG if len(cuts) == total else Strength.MODERATE
    return [Finding(Cause.NETWORK, strength,
                    f"Streams broke after the first output on {len(cuts)} of {total} attempts (stream disconnected "
                    "before completion): a proxy, VPN or relay is cutting long-lived connections.",
                    {"path": cuts[0].exchange.url, "kind": "cut"},
                    (NextStep("Disable connection auto-close in your proxy client (e.g. Clash "
                              "auto_close_connection) or compare paths.", "capdoctor check paths"),))]


def _not_listed_steps(model: str, listed: Sequence[str]) -> tuple[NextStep, ...]:
    close = difflib.get_close_matches(model, list(listed), n=3, cutoff=0.5)
    if close:
        return (NextStep(f"Did you mean {', '.join(close)}? Fix the model name in your client's config."),)
    return (NextStep("Pick a model from the provider's list (see data.available_models)."),)


def _is_model_error(a: Attempt, model: str) -> bool:
    ex = a.exchange
    sig = (_sig_id(a) or "").lower()
    text = " ".join(filter(None, [ex.error.code if ex.error else None, ex.error.type if ex.error else None,
                                  ex.error.message if ex.error else None])).lower()
    missing = ("not_found", "not found", "does not exist", "no endpoints found")
    return ex.status == 404 or "not-found" in sig or "not_found" in sig or any(m in text for m in missing)


def _signature_findings(ev: Evidence, runs: Sequence[ModelRun]) -> list[Finding]:
    """One finding per distinct (cause, signature) across the failed attempts of `runs`."""
    seen: dict[tuple[str, str | None], Finding] = {}
    for run in runs:
        for a in run.failures:
            cause = attempt_cause(a)
            if cause is None or a.exchange.connection_failed or a.exchange.kind in ("html", "cut"):
                continue
            ex = a.exchange
            listed = ev.listed
            model_error = _is_model_error(a, run.model) and cause in (Cause.CLIENT, Cause.ACCOUNT)
            if listed is not None and model_error:
                if run.model not in listed:
                    key = ("client", f"not-listed:{run.model}")
                    seen.setdefault(key, Finding(
                        Cause.CLIENT, Strength.STRONG,
                        f"{run.model} is not in the provider's model list ({len(listed)} models) and the "
                        f"request was refused ({_label(a)}): a mistyped or retired model name.",
                        {"model": run.model, "status": ex.status, "signature": _sig_id(a),
                         "request_id": request_ids(ex)[0], "cf_ray": request_ids(ex)[1]},
                        _not_listed_steps(run.model, listed)))
                    continue
                key = ("account", f"listed-refused:{run.model}")
                seen.setdefault(key, Finding(
                    Cause.ACCOUNT, Strength.MODERATE,
                    f"{run.model} is in the provider's model list but was refused ({_label(a)}): this "
                    "account or key may not use it (entitlement, tier or staged rollout).",
                    {"model": run.model, "status": ex.status, "signature": _sig_id(a),
                     "request_id": request_ids(ex)[0], "cf_ray": request_ids(ex)[1]}))
                continue
            key = (cause.value, _sig_id(a) or f"status:{ex.status}")
            if key in seen:
                continue
            sig = getattr(a.match, "signature", None)
            strength = Strength(sig.strength) if sig is not None else Strength.WEAK
            title = getattr(sig, "title", None) or _label(a)
            remedy = getattr(sig, "remedy", None)
            rid, ray = request_ids(ex)
            models = sorted({r.model for r in runs for b in r.failures if attempt_cause(b) is cause})
            seen[key] = Finding(
                cause, strength,
                f"{', '.join(models)}: {title} ({_label(a)})"
                + (f" — {ex.error.message.strip()[:160]}" if ex.error and ex.error.message else ""),
                {"status": ex.status, "signature": _sig_id(a), "request_id": rid, "cf_ray": ray,
                 "model": run.model},
                (NextStep(str(remedy)),) if remedy else ())
    return list(seen.values())


def _capacity_findings(ev: Evidence) -> list[Finding]:
    """The switch-the-model rule over the primary and the alternatives."""
    if not ev.runs:
        return []
    primary, alts = ev.runs[0], [r for r in ev.runs[1:] if r.attempts]
    cap_fails = [a for a in primary.failures if attempt_cause(a) is Cause.CAPACITY]
    out: list[Finding] = []
    if not cap_fails:
        if primary.outcome == "flaky":
            n_ok = len(primary.attempts) - len(primary.failures)
            out.append(Finding(Cause.CAPACITY, Strength.WEAK,
                               f"{primary.model} answered only {n_ok} of {len(primary.attempts)} attempts: "
                               "intermittent failures.", {"model": primary.model}))
        return out
    first = cap_fails[-1]
    rid, ray = request_ids(first.exchange)
    base = {"model": primary.model, "status": first.exchange.status, "signature": _sig_id(first),
            "request_id": rid, "cf_ray": ray}
    working = [r for r in alts if r.outcome in ("ok", "flaky")]
    if working:
        alt = working[0].model
        cmd = SWITCH_COMMANDS.get(ev.adapter.name)
        out.append(Finding(
            Cause.CAPACITY, Strength.STRONG,
            f"{primary.model} fails with a capacity signature ({_label(first)}) while {alt} answers: the "
            "model is at capacity, not your key, network or client.",
            {**base, "alternative": alt},
            (NextStep(f"Switch to {alt} for now and back to {primary.model} later.",
                      cmd.format(model=alt) if cmd else None),)))
    if primary.outcome == "flaky":
        n_ok = len(primary.attempts) - len(primary.failures)
        out.append(Finding(
            Cause.CAPACITY, Strength.MODERATE,
            f"{primary.model} is intermittent: {n_ok} of {len(primary.attempts)} attempts answered, the "
            f"others failed with {_label(first)} — the signature of a saturated model.", base))
        return out
    if working:
        return out
    alt_cap = [r for r in alts if r.outcome == "fail" and all(attempt_cause(a) is Cause.CAPACITY
                                                              for a in r.failures)]
    if alts and len(alt_cap) == len(alts):
        healthy = not any(ex.connection_failed or ex.kind in ("html", "cut") for ex in ev.exchanges)
        models = ", ".join(r.model for r in ev.runs if r.attempts)
        if healthy and ev.now_headroom:
            out.append(Finding(
                Cause.ACCOUNT, Strength.STRONG,
                f"Every model ({models}) fails with the capacity code while the path is healthy and the "
                "rate-limit headers show headroom: that points at the account (risk control or "
                "account-level throttling), not the model.",
                {**base, "models": models},
                (NextStep("Try the same request with another account or key from this machine; if that "
                          "works, the account is throttled — sign out everywhere, then contact support "
                          "with the request ids."),)))
            out.append(Finding(Cause.CAPACITY, Strength.WEAK,
                               f"Capacity signature on every model ({_label(first)}): a global overload "
                               "is the second explanation (check the status page).", base))
        else:
            out.append(Finding(Cause.CAPACITY, Strength.MODERATE,
                               f"Every model ({models}) fails with a capacity signature ({_label(first)}).",
                               base))
            out.append(Finding(Cause.ACCOUNT, Strength.WEAK,
                               "When every model of a provider reports capacity for days while its status "
                               "page is green, the account is throttled rather than the model.",
                               {"models": models}))
        return out
    out.append(Finding(Cause.CAPACITY, Strength.MODERATE,
                       f"{primary.model} fails with a capacity signature ({_label(first)}); no alternative "
                       "model could be compared.", base,
                       (NextStep("Name a lighter model to compare with: --alt-model MODEL."),)))
    return out


def _relay_findings(ev: Evidence) -> list[Finding]:
    from capdoctor.providers import is_loopback, is_official

    url = ev.target.base_url
    if not ev.adapter.official_hosts or is_official(ev.adapter, url):
        return []
    where = "a local port" if is_loopback(url) else "a relay or gateway"
    return [Finding(Cause.CLIENT, Strength.CONTEXT,
                    f"The base URL {url} (from {_source(ev.target, 'base_url')}) is {where}, not "
                    f"{ev.adapter.name}'s own host: errors may come from it rather than from the provider.",
                    {"path": url, "source": _source(ev.target, "base_url")})]


def _listing_findings(ev: Evidence) -> list[Finding]:
    """Findings from the model list alone (the whole story under --no-inference)."""
    lst = ev.listing
    if lst is None or lst.connection_failed or lst.kind == "html":
        return []
    if lst.ok and ev.listed is not None:
        if ev.target.model in ev.listed:
            return [Finding(Cause.CLIENT, Strength.CONTEXT,
                            f"{ev.target.model} is in the provider's model list.",
                            {"model": ev.target.model})]
        return [Finding(Cause.CLIENT, Strength.MODERATE,
                        f"{ev.target.model} is not in the provider's model list ({len(ev.listed)} models): "
                        "check the name (typo, retired model, or a model of another provider).",
                        {"model": ev.target.model}, _not_listed_steps(ev.target.model, ev.listed))]
    if not lst.ok and lst.status is not None and lst.status not in (404, 405):
        from capdoctor.probes.http_probe import Attempt, ModelRun

        run = ModelRun("model list", "list", [Attempt(lst, classify_exchange(lst))])
        alone = Evidence(ev.target, ev.adapter, None, None, [run], [lst], True, False)
        return _signature_findings(alone, [run])
    return []


def judge(ev: Evidence) -> tuple[Status, str, list[Finding]]:
    """Pure: the check's status, one-line summary and findings from what the probe saw."""
    findings = _connection_findings(ev) + _html_findings(ev) + _cut_findings(ev)
    if ev.no_inference or not any(r.attempts for r in ev.runs):
        findings += _listing_findings(ev)
    else:
        cap = _capacity_findings(ev)
        findings += cap
        covered = {f.cause for f in cap} | ({Cause.CAPACITY} if cap else set())
        sig = [f for f in _signature_findings(ev, ev.runs) if f.cause not in covered]
        findings += sig
    findings += _relay_findings(ev)
    primary = ev.runs[0] if ev.runs else None
    if primary is not None and primary.outcome == "ok" and not ev.no_inference:
        findings.append(Finding(Cause.CAPACITY, Strength.AGAINST,
                                f"{primary.model} answered ({primary.attempts[-1].exchange.latency_ms} ms).",
                                {"model": primary.model}))
    return _status(ev, findings), _summary(ev), findings


def _status(ev: Evidence, findings: Sequence[Finding]) -> Status:
    weighty = [f for f in findings if f.strength in (Strength.STRONG, Strength.MODERATE)]
    primary = ev.runs[0] if ev.runs else None
    if primary is not None and primary.outcome == "fail":
        return Status.FAIL
    if any(f.strength is Strength.STRONG for f in findings):
        return Status.FAIL
    if weighty or (primary is not None and primary.outcome == "flaky"):
        return Status.WARN
    if any(f.strength is Strength.WEAK for f in findings):
        return Status.WARN
    return Status.PASS


def _summary(ev: Evidence) -> str:
    parts: list[str] = []
    for run in ev.runs:
        if not run.attempts:
            continue
        if run.outcome == "ok":
            parts.append(f"{run.model} answers")
        else:
            fails = run.failures
            label = _label(fails[-1])
            n = f" ×{len(fails)}" if len(fails) > 1 else ""
            verb = "is flaky" if run.outcome == "flaky" else "fails"
            parts.append(f"{run.model} {verb} ({label}{n})")
    if not parts:
        lst = ev.listing
        if lst is None:
            return "nothing was probed (no time left)"
        if lst.connection_failed:
            return f"no answer from {ev.target.base_url}: {KIND_TEXT.get(lst.kind, lst.kind)}"
        if ev.listed is not None:
            where = "listed" if ev.target.model in ev.listed else "NOT listed"
            return f"{ev.target.model} is {where} ({len(ev.listed)} models); generation not probed"
        return f"model list: {_label_exchange(lst)}; generation not probed"
    return "; ".join(parts)


def _label_exchange(ex: Exchange) -> str:
    return f"HTTP {ex.status}" if ex.status is not None else ex.kind


def scrub(value: Any, secret: str | None) -> Any:
    """`value` with every occurrence of `secret` replaced (belt and braces before the report's redactor)."""
    if not secret or len(secret) < 6:
        return value
    if isinstance(value, str):
        return value.replace(secret, "<redacted>")
    if isinstance(value, dict):
        return {k: scrub(v, secret) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, secret) for v in value]
    return value


def _scrub_finding(f: Finding, secret: str | None) -> Finding:
    return Finding(f.cause, f.strength, scrub(f.message, secret), scrub(dict(f.data), secret),
                   tuple(NextStep(scrub(s.text, secret), s.command) for s in f.next_steps))


class ModelsCheck:
    """Switch model: does a lighter model of the same provider answer where the primary fails?"""

    id = "models"
    title = "Switch model"
    stage = 1
    description = "probe the primary model and a lighter one: capacity when switching the model fixes it"
    needs: frozenset[Need] = frozenset({Need.TARGET, Need.NETWORK})
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """List models, probe primary then alternatives within the budget, and judge the pattern."""
        from capdoctor.probes.http_probe import Budget, Prober
        from capdoctor.probes.ratelimit import parse_headers
        from capdoctor.providers import adapter_for

        target = ctx.target
        if target is None:
            return skipped(self, "no target")
        if not target.base_url:
            return skipped(self, f"no base URL known for provider {target.provider}: pass --base-url")
        adapter = adapter_for(target.provider)
        budget = Budget.from_options(ctx.options)
        with ctx.http_client(timeout=budget.request_timeout_s) as client:
            prober = Prober(ctx, adapter, target, client, budget, classify_exchange)
            listing = prober.list_models()
            listed = adapter.parse_models(listing.json_body) if listing is not None and listing.ok else None
            runs: list[ModelRun] = []
            if not ctx.no_inference and target.model:
                runs.append(prober.probe(target.model, "primary"))
                if runs[0].outcome != "ok":
                    alternatives = default_alternatives(target, adapter, listed)
                    if key_level(runs[0]):
                        alternatives = alternatives[:1]  # the key's problem: one comparison is enough
                    for alt in alternatives:
                        if not prober.can_send():
                            break
                        runs.append(prober.probe(alt, "alternative"))
        exchanges = [ex for _, ex in prober.exchanges]
        headroom = any(parse_headers(ex.headers, ctx.now()).headroom for ex in exchanges)
        ev = Evidence(target, adapter, listing, listed, runs, exchanges, ctx.no_inference, headroom)
        status, summary, findings = judge(ev)
        data = {
            "models": [{"model": r.model, "role": r.role, "outcome": r.outcome, "stop_reason": r.stop_reason,
                        "attempts": [attempt_row(a) for a in r.attempts]} for r in runs],
            "available_models": listed[:MAX_LISTED] if listed is not None else None,
            "model_listed": None if listed is None else target.model in listed,
            "responses": [{"model": m, "route": ex.route, "status": ex.status, "kind": ex.kind,
                           "headers": dict(ex.headers),
                           "error_body": None if ex.ok or ex.kind == "html" else ex.body[:MAX_ERROR_BODY] or None}
                          for m, ex in prober.exchanges],
            "requests": prober.requests,
            "route": prober.routes[0] if prober.routes else None,
            "stopped": prober.stopped or None,
        }
        details = [f"{r.model} ({r.role}): {r.outcome} after {len(r.attempts)} attempt(s); {r.stop_reason}"
                   for r in runs]
        if listing is not None:
            details.insert(0, f"model list: {_label_exchange(listing)}"
                           + (f", {len(listed)} models" if listed is not None else ""))
        secret = target.api_key
        return result_of(self, status, scrub(summary, secret), [_scrub_finding(f, secret) for f in findings],
                         scrub(details, secret), scrub(data, secret))
