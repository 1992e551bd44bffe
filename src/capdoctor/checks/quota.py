"""The `quota` check ("Quota and rate limits"): how much allowance is left, and when it resets.

Contract: reads the rate-limit headers the `models` probes saw (ctx.results["models"].data["responses"]) and
the provider's key endpoint where one exists (OpenRouter `GET /key`, which spends nothing; when the run's
request budget is spent it is not asked, and the summary says so). Exhausted quota is quota evidence; headroom
argues against quota (`against`); Azure's -1/0 placeholders are "unknown". Run alone (`capdoctor check quota`)
it sends the smallest probe that carries the headers (one generation of the primary, or the model list under
--no-inference) and says so. It never stores or prints the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capdoctor.checks.base import Need
from capdoctor.checks.registry import Registered
from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength, result_of, skipped

if TYPE_CHECKING:
    from capdoctor.probes.ratelimit import RateLimits, Window
    from capdoctor.run.context import Context


def human_duration(seconds: float | None) -> str:
    """`1 s`, `6 min`, `2 h 5 min`, `3 d 4 h`: short, for "resets in …"."""
    if seconds is None:
        return "unknown"
    s = round(seconds)
    if s < 60:
        return f"{max(seconds, 0):.0f} s" if seconds >= 1 else f"{seconds * 1000:.0f} ms"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def _window_text(w: Window) -> str:
    if w.used_percent is not None:
        left = f"{w.used_percent:.0f}% used"
    elif w.limit is not None:
        left = f"{w.remaining:.0f}/{w.limit:.0f} left" if w.remaining is not None else f"limit {w.limit:.0f}"
    else:
        left = f"{w.remaining:.0f} left" if w.remaining is not None else "?"
    reset = f", resets in {human_duration(w.reset_s)}" if w.reset_s is not None else ""
    return f"{w.family} {w.name}: {left}{reset}"


def merge(
    limits: list[tuple[int | None, RateLimits]],
) -> tuple[dict[tuple[str, str], tuple[int | None, Window]], float | None, str | None]:
    """The latest value of each window across responses (later responses win), the retry hint, unified status."""
    windows: dict[tuple[str, str], tuple[int | None, Window]] = {}
    retry: float | None = None
    unified: str | None = None
    for status, rl in limits:
        for w in rl.windows:
            windows[(w.family, w.name)] = (status, w)
        if rl.retry_after_s is not None:
            retry = rl.retry_after_s
        if rl.unified_status:
            unified = rl.unified_status
    return windows, retry, unified


def assess(limits: list[tuple[int | None, RateLimits]]) -> tuple[Status, str, list[Finding], dict[str, Any]]:
    """Pure: status, summary, findings and data from the parsed headers of every probe response."""
    windows, retry, unified = merge(limits)
    data: dict[str, Any] = {
        "windows": [w.to_dict() for _, w in windows.values()],
        "retry_after_s": retry,
        "unified_status": unified,
    }
    findings: list[Finding] = []
    exhausted = [(st, w) for st, w in windows.values() if w.exhausted]
    for st, w in exhausted:
        strength = Strength.STRONG if st == 429 or w.family == "codex" else Strength.MODERATE
        findings.append(
            Finding(
                Cause.QUOTA,
                strength,
                f"Rate limit exhausted — {_window_text(w)}.",
                {"status": st, "window": f"{w.family}:{w.name}", "reset_s": w.reset_s, "retry_after_s": retry},
                (
                    NextStep(
                        f"Wait {human_duration(w.reset_s)} for the window to reset, then lower your request rate."
                        if w.reset_s is not None
                        else "Wait for the window to reset, then lower your request rate."
                    ),
                ),
            )
        )
    if unified == "rejected":
        findings.append(
            Finding(
                Cause.QUOTA,
                Strength.STRONG,
                "The subscription's usage window is used up (anthropic-ratelimit-unified-status: rejected).",
                {"unified_status": unified},
            )
        )
    if findings:
        return Status.FAIL, findings[0].message, findings, data
    known = [w for _, w in windows.values() if not w.unknown]
    if known and any(w.has_headroom for w in known):
        text = "; ".join(_window_text(w) for w in known[:3])
        findings.append(
            Finding(
                Cause.QUOTA,
                Strength.AGAINST,
                f"Quota headroom: {text}.",
                {"windows": [f"{w.family}:{w.name}" for w in known]},
            )
        )
        return Status.PASS, f"headroom — {text}", findings, data
    if windows:
        findings.append(
            Finding(
                Cause.QUOTA,
                Strength.CONTEXT,
                "Rate-limit headers carry placeholder values (-1/0, as Azure's Responses API "
                "sends): remaining quota is unknown.",
                {},
            )
        )
        return Status.WARN, "rate-limit values unknown (placeholders)", findings, data
    if retry is not None:
        return Status.WARN, f"retry-after {human_duration(retry)} seen, no rate-limit counters", findings, data
    return Status.SKIP, "the provider sent no rate-limit headers (quota shows only in its error bodies)", findings, data


def google_quota(bodies: list[tuple[int | None, str]]) -> tuple[list[Finding], list[dict[str, Any]]]:
    """Pure: quota findings from Gemini/Vertex error bodies (`QuotaFailure`, `RetryInfo`), one per quota id."""
    from capdoctor.probes.ratelimit import parse_google_quota

    seen: dict[str, Finding] = {}
    rows: list[dict[str, Any]] = []
    for status, text in bodies:
        if not text or status != 429:
            continue
        violations, delay = parse_google_quota(text)
        for v in violations:
            rows.append(
                {"quota_id": v.quota_id, "metric": v.metric, "limit": v.value, "model": v.model, "retry_after_s": delay}
            )
            if v.quota_id in seen:
                continue
            model = f" for {v.model}" if v.model else ""
            if v.value == 0:
                msg = (
                    f"Quota {v.quota_id or v.metric}{model} has limit 0: this tier has no allowance for the "
                    "model at all, so waiting will not help."
                )
                step = NextStep("Enable billing for the project (or use a model your tier includes).")
            else:
                limit = f" (limit {v.value:.0f})" if v.value is not None else ""
                wait = f"; retry in {human_duration(delay)}" if delay is not None else ""
                msg = f"Quota {v.quota_id or v.metric}{model} exceeded{limit}{wait}."
                step = NextStep("Wait for the quota window to reset, or request a higher quota in AI Studio.")
            seen[v.quota_id] = Finding(
                Cause.QUOTA,
                Strength.STRONG,
                msg,
                {"status": status, "quota_id": v.quota_id, "retry_after_s": delay},
                (step,),
            )
    return list(seen.values()), rows


def openrouter_key(data: Any) -> tuple[list[Finding], dict[str, Any]]:
    """Pure: findings from OpenRouter's `GET /key` body (`data.limit`, `limit_remaining`, `usage`)."""
    info = data.get("data") if isinstance(data, dict) else None
    if not isinstance(info, dict):
        return [], {}
    keep = {k: info.get(k) for k in ("limit", "limit_remaining", "limit_reset", "usage", "is_free_tier")}
    limit, left = info.get("limit"), info.get("limit_remaining")
    if isinstance(limit, (int, float)) and isinstance(left, (int, float)):
        if left <= 0:
            return [
                Finding(
                    Cause.QUOTA,
                    Strength.STRONG,
                    f"The OpenRouter key's credit limit is used up: {left} of {limit} credits left"
                    + (f" (resets {info.get('limit_reset')})" if info.get("limit_reset") else "")
                    + ".",
                    {"limit": limit, "limit_remaining": left},
                    (NextStep("Raise the key's limit or add credits at https://openrouter.ai/settings/keys"),),
                )
            ], keep
        return [
            Finding(
                Cause.QUOTA,
                Strength.AGAINST,
                f"The OpenRouter key has {left} of {limit} credits left.",
                {"limit": limit},
            )
        ], keep
    return [Finding(Cause.QUOTA, Strength.CONTEXT, "The OpenRouter key has no per-key credit limit.", {})], keep


class QuotaCheck(Registered, check_id="quota"):
    """Quota and rate limits: remaining requests/tokens and their reset, from headers and key endpoints."""

    needs: frozenset[Need] = frozenset({Need.TARGET})
    after: tuple[str, ...] = ("models",)

    def run(self, ctx: Context) -> CheckResult:
        """Parse the headers the models probes saw, plus OpenRouter's key endpoint."""
        from capdoctor.probes.ratelimit import parse_headers

        target = ctx.target
        if target is None:
            return skipped(self, "no target")
        models = ctx.results.get("models")
        responses = list(models.data.get("responses") or []) if models is not None else []
        own = ""
        if models is None and ctx.selected and "models" not in ctx.selected:
            responses, own = self._own_probe(ctx)
        now = ctx.now()
        limits = [
            (r.get("status"), parse_headers(r.get("headers") or {}, now)) for r in responses if isinstance(r, dict)
        ]
        status, summary, findings, data = assess(limits)
        g_findings, g_data = google_quota(
            [(r.get("status"), r.get("error_body") or "") for r in responses if isinstance(r, dict)]
        )
        if g_findings:
            findings = [f for f in findings if f.strength is not Strength.CONTEXT] + g_findings
            data["google_quota"] = g_data
            status, summary = Status.FAIL, g_findings[0].message
        data["responses_read"] = len(limits)
        key_findings, key_data = self._openrouter(ctx)
        if key_data:
            data["openrouter_key"] = key_data
        if key_findings:
            findings = findings + key_findings
            if any(f.strength is Strength.STRONG for f in key_findings):
                status, summary = Status.FAIL, key_findings[0].message
            elif status is Status.SKIP:
                status, summary = Status.PASS, key_findings[0].message
        unsent = str(key_data.get("error") or "")
        if unsent.startswith("GET /key not sent"):  # never silently: the run's budget stopped this request
            summary = f"{summary} ({unsent})"
        if own:  # said, never silently: this check sent a request of its own
            summary = f"{summary} ({own})"
            data["own_probe"] = own
        if status is Status.SKIP and not responses:
            why = "no probe responses to read (the models check did not run)" if models is None and not own else summary
            return skipped(self, why)
        if status is Status.SKIP:
            return skipped(self, summary)
        return result_of(self, status, summary, findings, data=data)

    def _own_probe(self, ctx: Context) -> tuple[list[dict[str, Any]], str]:
        """Run alone (`capdoctor check quota`), the models check's headers are not there to read: send the
        smallest probe that carries them — one generation of the primary, or the spend-nothing model list under
        --no-inference — and return its responses and the words that say so."""
        from dataclasses import replace

        from capdoctor.probes.http_probe import Budget, Prober
        from capdoctor.providers.catalog import adapter_for

        target = ctx.target
        if target is None or not target.base_url:
            return [], ""
        adapter = adapter_for(target.provider)
        budget = replace(Budget.from_options(ctx.options), max_attempts=1, primary_attempts=1, max_requests=2)
        with ctx.http_client(timeout=budget.request_timeout_s, check=self.id) as client:
            prober = Prober(ctx, adapter, target, client, budget, lambda ex: None, check_id=self.id)
            if ctx.no_inference or not target.model:
                prober.list_models()
                what = "the model list"
            else:
                prober.probe(target.model, "primary")
                what = f"one generation on {target.model}"
        responses = [
            {"model": m, "status": ex.status, "headers": dict(ex.headers), "error_body": ex.body[:2000] or None}
            for m, ex in prober.exchanges
        ]
        if not prober.exchanges:
            return (
                [],
                f"the models check did not run, and no request could be sent: {prober.budget_text() or 'no time left'}",
            )
        return responses, f"read from {what} this check sent itself: the models check did not run"

    def _openrouter(self, ctx: Context) -> tuple[list[Finding], dict[str, Any]]:
        from capdoctor.probes.http_call import send
        from capdoctor.providers.catalog import adapter_for

        target = ctx.target
        if target is None or not target.base_url:
            return [], {}
        adapter = adapter_for(target.provider)
        request = adapter.key_request(target)
        if request is None or not target.api_key:
            return [], {}
        if not ctx.provider_budget.take(self.id):  # the headers the models probes saw are read all the same
            return [], {"error": f"GET /key not sent: {ctx.provider_budget.spent_text(self.id, 1, 'request')}"}
        with ctx.http_client(timeout=5.0) as client:
            ex = send(client, adapter, request, timeout=ctx.timeout(5.0))
        if not ex.ok:
            return [], {"error": f"GET /key: {ex.detail or ex.kind}"}
        return openrouter_key(ex.json_body)
