"""The judgement of the `models` check: what the probed runs say, as findings. Pure: no I/O, no clock.

Contract: `judge(Evidence)` turns what the probe saw (model list, one `ModelRun` per model, every exchange,
whether the rate-limit headers showed headroom) into the check's status, summary and findings, by the source
articles' rules:

- the primary fails with a capacity signature while an alternative answers → capacity (strong);
- the primary is intermittent with a capacity signature → capacity (moderate, with peak-hour advice and its
  failure rate), plus the strong switch-the-model finding when most attempts failed and an alternative
  answers; intermittent otherwise → weak. One capacity failure among successes is never "no problem";
- every model fails with the capacity code on a healthy path with quota headroom → account (strong), capacity
  (weak); without headroom or on an unhealthy path → capacity (moderate), account (weak);
- no alternative to compare with → capacity (moderate); everything fails otherwise → the signatures' own cause;
- "model not found": not listed → client (strong), listed but refused → account (moderate);
- no HTTP answer, an HTML page or a cut stream → network; a dead loopback base URL → network (`local_refused`);
- the key first: a named but unset or empty variable, or a missing, blank, templated or other-provider key that
  the provider refuses → client (strong); the 401/403 it causes is then context, not an account verdict.

Every input is data, so the rules are tested on hand-built runs (tests/checks/test_models_rules.py). This
module must not send requests, sleep, read the environment or classify text: matches arrive with the attempts.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capdoctor.model import Cause, Finding, NextStep, Status, Strength
from capdoctor.target.keys import KeyFacts, problem_text, problem_word
from capdoctor.text import shorten

if TYPE_CHECKING:
    from capdoctor.probes.http_call import Exchange
    from capdoctor.probes.http_probe import Attempt, ModelRun
    from capdoctor.providers.base import Adapter
    from capdoctor.run.context import Target


KIND_TEXT: dict[str, str] = {
    "refused": "the connection was refused",
    "timeout": "no answer before the timeout",
    "reset": "the connection was reset or closed mid-answer",
    "tls": "the TLS handshake failed (interception or a broken proxy)",
    "connect": "the host could not be reached (DNS or routing)",
}
"""Connection-level exchange kinds in words."""


@dataclass
class Evidence:
    """Everything the probe saw, handed to `judge` so that findings are testable without a network.

    `listing_match` is the signature match of a failed model list (the check classifies, the rules read);
    `key` the `capdoctor.target.keys.KeyFacts` of the target's key (None when not described).
    """

    target: Target
    adapter: Adapter
    listing: Exchange | None
    listed: list[str] | None
    runs: list[ModelRun]
    exchanges: list[Exchange]
    no_inference: bool
    now_headroom: bool
    listing_match: Any = None
    key: KeyFacts | None = None


# ------------------------------------------------------------------ reading one attempt


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
    """The cause of one failed attempt: its match's (the classification engine reads a bare status too, in
    the target's context), else network when no HTTP answer, an HTML page or a cut stream came back."""
    sig = getattr(a.match, "signature", None)
    if sig is not None:
        return Cause(sig.cause)
    ex = a.exchange
    if ex.connection_failed or ex.kind in ("html", "cut"):
        return Cause.NETWORK
    return None


def signature_id(a: Attempt) -> str | None:
    """The id of the signature that matched `a`, or None."""
    sig = getattr(a.match, "signature", None)
    return str(sig.id) if sig is not None else None


def attempt_ids(a: Attempt) -> dict[str, Any]:
    """The finding data that names a failed attempt: its status, signature, request id and cf-ray."""
    rid, ray = request_ids(a.exchange)
    return {"status": a.exchange.status, "signature": signature_id(a), "request_id": rid, "cf_ray": ray}


def attempt_label(a: Attempt) -> str:
    """A short label for a failed attempt: `HTTP 503 server_is_overloaded`, `HTTP 200 stream …`, `refused`."""
    ex = a.exchange
    sig = signature_id(a)
    code = ex.error.code if ex.error and ex.error.code else None
    if code is not None and code == str(ex.status):  # OpenRouter/Gemini repeat the status as the code
        code = None
    status = f"HTTP {ex.status}" if ex.status is not None else ex.kind
    if ex.kind == "stream_error":
        status += " stream"
    return " ".join(p for p in (status, code or sig) if p)


def exchange_label(ex: Exchange) -> str:
    """`HTTP <status>`, or the connection kind when no HTTP answer came back."""
    return f"HTTP {ex.status}" if ex.status is not None else ex.kind


def failure_rate(run: ModelRun) -> dict[str, Any]:
    """Report data for one run: attempts, failures, the rate in words and the signatures seen (with counts)."""
    fails = run.failures
    seen: dict[str, int] = {}
    for a in fails:
        label = signature_id(a) or attempt_label(a)
        seen[label] = seen.get(label, 0) + 1
    return {"attempted": len(run.attempts), "failed": len(fails), "failure_rate": rate_text(run), "signatures": seen}


def rate_text(run: ModelRun) -> str:
    """`2 of 3 attempts overloaded` (`failed` when not every failure is a capacity failure)."""
    fails = run.failures
    word = "overloaded" if fails and all(attempt_cause(a) is Cause.CAPACITY for a in fails) else "failed"
    return f"{len(fails)} of {len(run.attempts)} attempts {word}"


PEAK_HOURS_STEP = NextStep(
    "Capacity errors that come and go are peak-hour saturation: retry with backoff and jitter, keep a fallback "
    "model configured, and move heavy or batch work off-peak."
)
"""The advice for intermittent capacity (the finding-specific step, ahead of the generic capacity steps)."""


def key_level(run: ModelRun) -> bool:
    """True when every failure of `run` is about the key or account (quota/account), so every model shares it."""
    return bool(run.failures) and all(attempt_cause(a) in (Cause.QUOTA, Cause.ACCOUNT) for a in run.failures)


def _is_model_error(a: Attempt) -> bool:
    """True when the failure says the model does not exist: HTTP 404, a row that says so (its kind), or the
    provider's words (the classifier's `missing_model` mark in the error's code, type or message)."""
    from capdoctor.classifier.marks import marked

    ex = a.exchange
    if ex.status == 404 or getattr(getattr(a.match, "signature", None), "kind", None) == "missing-model":
        return True
    fields = (ex.error.code, ex.error.type, ex.error.message) if ex.error else ()
    return marked("missing_model", " ".join(filter(None, fields)).lower())


def _source(target: Target, field: str) -> str:
    return target.sources.get(field, "unknown source") if target.sources else "unknown source"


def _env_var(source: str) -> str | None:
    return source.split(" ", 1)[1] if source.startswith("env ") else None


def _not_listed_steps(model: str, listed: Sequence[str]) -> tuple[NextStep, ...]:
    close = difflib.get_close_matches(model, list(listed), n=3, cutoff=0.5)
    if close:
        return (NextStep(f"Did you mean {', '.join(close)}? Fix the model name in your client's config."),)
    return (NextStep("Pick a model from the provider's list (see data.available_models)."),)


# ------------------------------------------------------------------ the rules


def _connection_findings(ev: Evidence) -> list[Finding]:
    """No HTTP answer: network. A loopback base URL nothing listens on is named as such (the local server is not
    running, or the setting is stale), in the words the verdict's `local_refused` fact reads, so that the models,
    paths and client checks and the verdict give one reading of it."""
    from capdoctor.probes.hosts import is_loopback

    failed = [ex for ex in ev.exchanges if ex.connection_failed]
    if not failed:
        return []
    first = failed[0]
    answered = [ex for ex in ev.exchanges if not ex.connection_failed]
    data = {"path": first.url, "kind": first.kind, "detail": first.detail}
    if first.kind == "refused" and is_loopback(ev.target.base_url) and not answered:
        src = _source(ev.target, "base_url")
        var = _env_var(src)
        steps = [
            NextStep(
                f"Start the local server or relay that should listen at {ev.target.base_url}, "
                f"or remove the stale setting ({src})."
            )
        ]
        if var:
            steps.append(
                NextStep(
                    f"Unset {var} (and remove it from your shell profile) if nothing should listen there.",
                    f"unset {var}",
                )
            )
        return [
            Finding(
                Cause.NETWORK,
                Strength.STRONG,
                f"Nothing is listening at the base URL {ev.target.base_url} (from {src}; connection refused): "
                "the local server or relay is not running, or the base URL is stale — not the provider.",
                {**data, "source": src, "base_url": ev.target.base_url},
                tuple(steps),
            )
        ]
    strength = Strength.STRONG if not answered else Strength.MODERATE
    when = "every request" if not answered else f"{len(failed)} of {len(ev.exchanges)} requests"
    what = KIND_TEXT.get(first.kind, first.kind)
    step = NextStep("Compare the direct path with your proxy path.", "capdoctor check paths")
    return [
        Finding(Cause.NETWORK, strength, f"No HTTP answer from {ev.target.base_url} on {when}: {what}.", data, (step,))
    ]


def _html_findings(ev: Evidence) -> list[Finding]:
    """An HTML page where JSON was expected: something in the middle answered (network, strong)."""
    for run in ev.runs:
        for a in run.failures:
            if a.exchange.kind == "html" and attempt_cause(a) is Cause.NETWORK:
                return [
                    Finding(
                        Cause.NETWORK,
                        Strength.STRONG,
                        f"An HTML page came back where {ev.adapter.name} JSON was expected (HTTP "
                        f"{a.exchange.status}): a block page, captive portal or proxy answered, "
                        "not the provider.",
                        {**attempt_ids(a), "path": a.exchange.url},
                        (
                            NextStep(
                                "Open the base URL in a browser on this network, or retry on "
                                "another network (VPN off, phone hotspot)."
                            ),
                        ),
                    )
                ]
    if ev.listing is not None and ev.listing.kind == "html":
        return [
            Finding(
                Cause.NETWORK,
                Strength.STRONG,
                f"The model list came back as an HTML page (HTTP {ev.listing.status}): something "
                "in the middle answered instead of the provider.",
                {"status": ev.listing.status},
            )
        ]
    return []


def _cut_findings(ev: Evidence) -> list[Finding]:
    """Streams that broke after their first output: a proxy, VPN or relay cutting connections (network)."""
    cuts = [a for r in ev.runs for a in r.attempts if a.exchange.kind == "cut"]
    if not cuts:
        return []
    total = sum(len(r.attempts) for r in ev.runs)
    strength = Strength.STRONG if len(cuts) == total else Strength.MODERATE
    return [
        Finding(
            Cause.NETWORK,
            strength,
            f"Streams broke after the first output on {len(cuts)} of {total} attempts (stream disconnected "
            "before completion): a proxy, VPN or relay is cutting long-lived connections.",
            {"path": cuts[0].exchange.url, "kind": "cut"},
            (
                NextStep(
                    "Disable connection auto-close in your proxy client (e.g. Clash "
                    "auto_close_connection) or compare paths.",
                    "capdoctor check paths",
                ),
            ),
        )
    ]


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
            model_error = _is_model_error(a) and cause in (Cause.CLIENT, Cause.ACCOUNT)
            if listed is not None and model_error:
                if run.model not in listed:
                    key = ("client", f"not-listed:{run.model}")
                    seen.setdefault(
                        key,
                        Finding(
                            Cause.CLIENT,
                            Strength.STRONG,
                            f"{run.model} is not in the provider's model list ({len(listed)} models) and the "
                            f"request was refused ({attempt_label(a)}): a mistyped or retired model name.",
                            {"model": run.model, **attempt_ids(a)},
                            _not_listed_steps(run.model, listed),
                        ),
                    )
                    continue
                key = ("account", f"listed-refused:{run.model}")
                seen.setdefault(
                    key,
                    Finding(
                        Cause.ACCOUNT,
                        Strength.MODERATE,
                        f"{run.model} is in the provider's model list but was refused ({attempt_label(a)}): this "
                        "account or key may not use it (entitlement, tier or staged rollout).",
                        {"model": run.model, **attempt_ids(a)},
                    ),
                )
                continue
            key = (cause.value, signature_id(a) or f"status:{ex.status}")
            if key in seen:
                continue
            sig = getattr(a.match, "signature", None)
            strength = Strength(sig.strength) if sig is not None else Strength.WEAK
            title = getattr(sig, "title", None) or attempt_label(a)
            remedy = getattr(sig, "remedy", None)
            models = sorted({r.model for r in runs for b in r.failures if attempt_cause(b) is cause})
            seen[key] = Finding(
                cause,
                strength,
                f"{', '.join(models)}: {title} ({attempt_label(a)})"
                + (f" — {shorten(ex.error.message.strip(), 160)}" if ex.error and ex.error.message else ""),
                {**attempt_ids(a), "model": run.model},
                (NextStep(str(remedy)),) if remedy else (),
            )
    return list(seen.values())


def _capacity_findings(ev: Evidence) -> list[Finding]:
    """The switch-the-model rule over the primary and the alternatives."""
    from capdoctor.fallback.default_format import fallback_step

    if not ev.runs:
        return []
    primary, alts = ev.runs[0], [r for r in ev.runs[1:] if r.attempts]
    cap_fails = [a for a in primary.failures if attempt_cause(a) is Cause.CAPACITY]
    if not cap_fails:
        if primary.outcome != "flaky":
            return []
        n_ok = len(primary.attempts) - len(primary.failures)
        return [
            Finding(
                Cause.CAPACITY,
                Strength.WEAK,
                f"{primary.model} answered only {n_ok} of {len(primary.attempts)} attempts: intermittent failures.",
                {"model": primary.model, **failure_rate(primary)},
            )
        ]
    out: list[Finding] = []
    first = cap_fails[-1]
    base = {"model": primary.model, **attempt_ids(first)}
    working = [r for r in alts if r.outcome in ("ok", "flaky")]
    mostly_failing = 2 * len(primary.failures) > len(primary.attempts)
    if working and mostly_failing:
        alt = working[0].model
        cmd = ev.adapter.switch_command
        rate = "" if primary.outcome == "fail" else f" on {rate_text(primary)}"
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.STRONG,
                f"{primary.model} fails with a capacity signature ({attempt_label(first)}){rate} while {alt} answers: "
                "the model is at capacity, not your key, network or client.",
                {**base, "alternative": alt},
                (
                    NextStep(
                        f"Switch to {alt} for now and back to {primary.model} later.",
                        cmd.format(model=alt) if cmd else None,
                    ),
                    fallback_step(ev.target),
                ),
            )
        )
    if primary.outcome == "flaky":
        also = f"; {working[0].model} answered meanwhile" if working else ""
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.MODERATE,
                f"{primary.model} is intermittent: {rate_text(primary)} ({attempt_label(first)}){also} — a model "
                "that is saturated at times, typically at peak hours.",
                {**base, **failure_rate(primary)},
                (PEAK_HOURS_STEP, fallback_step(ev.target)) if working else (PEAK_HOURS_STEP,),
            )
        )
        return out
    if working:
        return out
    alt_cap = [r for r in alts if r.outcome == "fail" and all(attempt_cause(a) is Cause.CAPACITY for a in r.failures)]
    if alts and len(alt_cap) == len(alts):
        return out + _every_model_at_capacity(ev, base, attempt_label(first))
    out.append(
        Finding(
            Cause.CAPACITY,
            Strength.MODERATE,
            f"{primary.model} fails with a capacity signature ({attempt_label(first)}); no alternative "
            "model could be compared.",
            base,
            (NextStep("Name a lighter model to compare with: --alt-model MODEL."),),
        )
    )
    return out


def _every_model_at_capacity(ev: Evidence, base: dict[str, Any], label: str) -> list[Finding]:
    """Every model, the primary and each alternative, fails with capacity: the account when the path is healthy
    and the rate-limit headers show headroom (global overload second), else capacity (the account second)."""
    out: list[Finding] = []
    healthy = not any(ex.connection_failed or ex.kind in ("html", "cut") for ex in ev.exchanges)
    models = ", ".join(r.model for r in ev.runs if r.attempts)
    if healthy and ev.now_headroom:
        out.append(
            Finding(
                Cause.ACCOUNT,
                Strength.STRONG,
                f"Every model ({models}) fails with the capacity code while the path is healthy and the "
                "rate-limit headers show headroom: that points at the account (risk control or "
                "account-level throttling), not the model.",
                {**base, "models": models},
                (
                    NextStep(
                        "Try the same request with another account or key from this machine; if that "
                        "works, the account is throttled — sign out everywhere, then contact support "
                        "with the request ids."
                    ),
                ),
            )
        )
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.WEAK,
                f"Capacity signature on every model ({label}): a global overload "
                "is the second explanation (check the status page).",
                base,
            )
        )
    else:
        out.append(
            Finding(
                Cause.CAPACITY,
                Strength.MODERATE,
                f"Every model ({models}) fails with a capacity signature ({label}).",
                base,
            )
        )
        out.append(
            Finding(
                Cause.ACCOUNT,
                Strength.WEAK,
                "When every model of a provider reports capacity for days while its status "
                "page is green, the account is throttled rather than the model.",
                {"models": models},
            )
        )
    return out


def _relay_findings(ev: Evidence) -> list[Finding]:
    """Context: the base URL is a relay or a local port, so errors may be the relay's own."""
    from capdoctor.probes.hosts import is_loopback
    from capdoctor.providers.catalog import is_official

    url = ev.target.base_url
    if not ev.adapter.official_hosts or is_official(ev.adapter, url):
        return []
    where = "a local port" if is_loopback(url) else "a relay or gateway"
    return [
        Finding(
            Cause.CLIENT,
            Strength.CONTEXT,
            f"The base URL {url} (from {_source(ev.target, 'base_url')}) is {where}, not "
            f"{ev.adapter.name}'s own host: errors may come from it rather than from the provider.",
            {"path": url, "source": _source(ev.target, "base_url")},
        )
    ]


def _listing_findings(ev: Evidence) -> list[Finding]:
    """Findings from the model list alone (the whole story under --no-inference)."""
    lst = ev.listing
    if lst is None or lst.connection_failed or lst.kind == "html":
        return []
    if lst.ok and ev.listed is not None:
        if ev.target.model in ev.listed:
            return [
                Finding(
                    Cause.CLIENT,
                    Strength.CONTEXT,
                    f"{ev.target.model} is in the provider's model list.",
                    {"model": ev.target.model},
                )
            ]
        return [
            Finding(
                Cause.CLIENT,
                Strength.MODERATE,
                f"{ev.target.model} is not in the provider's model list ({len(ev.listed)} models): "
                "check the name (typo, retired model, or a model of another provider).",
                {"model": ev.target.model},
                _not_listed_steps(ev.target.model, ev.listed),
            )
        ]
    if not lst.ok and lst.status is not None and lst.status not in (404, 405):
        from capdoctor.probes.http_probe import Attempt, ModelRun

        run = ModelRun("model list", "list", [Attempt(lst, ev.listing_match)])
        alone = Evidence(ev.target, ev.adapter, None, None, [run], [lst], True, False)
        return _signature_findings(alone, [run])
    return []


def refuses_key(ex: Exchange) -> bool:
    """True when `ex` is the provider refusing the credentials: a 401/403 in the API's own (non-HTML) words."""
    return ex.status in (401, 403) and ex.kind != "html"


def key_refused(ev: Evidence) -> bool:
    """True when the provider refused the key, on the model list or on any generation."""
    exchanges = [ev.listing] if ev.listing is not None else []
    exchanges += [a.exchange for r in ev.runs for a in r.attempts]
    return any(refuses_key(ex) for ex in exchanges)


def _key_accepted(ev: Evidence) -> bool:
    return (ev.listing is not None and ev.listing.ok) or any(a.exchange.ok for r in ev.runs for a in r.attempts)


def _key_findings(ev: Evidence) -> list[Finding]:
    """The key first: what is wrong with it before (and whatever) the provider answered."""
    facts = ev.key
    if facts is None or facts.problem is None:
        return []
    refused, accepted = key_refused(ev), _key_accepted(ev)
    data = {
        "variable": facts.variable,
        "name_source": facts.name_source,
        "state": facts.state,
        "length": facts.length,
        "family": facts.family,
        "problem": facts.problem,
    }
    var = facts.variable or (facts.candidates[0] if facts.candidates else "THE_KEY_VARIABLE")
    steps = (
        NextStep(
            f"Put your {facts.provider} key in {var} (or point the client at the variable that holds "
            "it), then run again; see which variable is read and from where:",
            "capdoctor config",
        ),
    )
    missing = facts.problem in ("unset", "empty")
    if refused or (missing and facts.explicit):  # refused, or the configuration names a variable holding nothing
        strength = Strength.STRONG
    elif accepted:
        return [Finding(Cause.CLIENT, Strength.CONTEXT, problem_text(facts) + " The provider answered anyway.", data)]
    elif missing:
        return []  # nothing named a variable and nothing was refused: a server that needs no key, or no answer
    else:
        strength = Strength.MODERATE
    tail = " The 401/403 the provider answered is this, not an account problem." if refused else ""
    return [Finding(Cause.CLIENT, strength, problem_text(facts) + tail, data, steps)]


def _explained_by_key(findings: list[Finding]) -> list[Finding]:
    """Account findings from a refusal that a key problem explains become context: the key wins over its 401."""
    return [
        Finding(Cause.ACCOUNT, Strength.CONTEXT, f.message + " (explained by the key problem)", f.data, f.next_steps)
        if f.cause is Cause.ACCOUNT and f.strength is not Strength.CONTEXT
        else f
        for f in findings
    ]


# ------------------------------------------------------------------ the judgement


def judge(ev: Evidence) -> tuple[Status, str, list[Finding]]:
    """The check's status, one-line summary and findings from what the probe saw."""
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
    key = _key_findings(ev)
    if any(f.strength is Strength.STRONG for f in key) and key_refused(ev):
        findings = _explained_by_key(findings)
    findings = key + findings
    primary = ev.runs[0] if ev.runs else None
    if primary is not None and primary.outcome == "ok" and not ev.no_inference:
        n = len(primary.attempts)
        findings.append(
            Finding(
                Cause.CAPACITY,
                Strength.AGAINST,
                f"{primary.model} answered"
                + (f" {n} of {n} attempts" if n > 1 else "")
                + f" ({primary.attempts[-1].exchange.latency_ms} ms).",
                {"model": primary.model, "attempted": n},
            )
        )
    summary = _summary(ev)
    if any(f.strength is Strength.STRONG for f in key) and ev.key is not None:
        summary = f"the key in {ev.key.names()} is {problem_word(ev.key)}; {summary}"
    return _status(ev, findings), summary, findings


def _status(ev: Evidence, findings: Sequence[Finding]) -> Status:
    """FAIL when the primary fails or any finding is strong; WARN for weighty, weak or flaky; else PASS."""
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
    """One line: what each probed model did, else what the model list said."""
    parts: list[str] = []
    for run in ev.runs:
        if not run.attempts:
            continue
        if run.outcome == "ok":
            parts.append(
                f"{run.model} answers"
                + (f" ({len(run.attempts)} of {len(run.attempts)})" if len(run.attempts) > 1 else "")
            )
        elif run.outcome == "flaky":
            parts.append(f"{run.model} is intermittent: {rate_text(run)} ({attempt_label(run.failures[-1])})")
        else:
            fails = run.failures
            n = f" ×{len(fails)}" if len(fails) > 1 else ""
            parts.append(f"{run.model} fails ({attempt_label(fails[-1])}{n})")
    if not parts:
        lst = ev.listing
        if lst is None:
            return "nothing was probed (no time left)"
        if lst.connection_failed:
            return f"no answer from {ev.target.base_url}: {KIND_TEXT.get(lst.kind, lst.kind)}"
        if ev.listed is not None:
            where = "listed" if ev.target.model in ev.listed else "NOT listed"
            return f"{ev.target.model} is {where} ({len(ev.listed)} models); generation not probed"
        return f"model list: {exchange_label(lst)}; generation not probed"
    return "; ".join(parts)
