"""The models check end to end against real loopback servers: the simulator and a few tiny purpose-built ones."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from capdoctor.checks.models import ModelsCheck
from capdoctor.model import Cause, CheckResult, Status, Strength
from capdoctor.run.context import Context, Target
from tests.conftest import free_port

FAKE_KEY = "sk-test-FAKEKEY-models-4242"
FAST = {"models.backoff_s": 0.01, "models.max_backoff_s": 0.05}


def ctx_for(
    base_url: str,
    provider: str,
    model: str,
    home: Path,
    *,
    alts: tuple[str, ...] = (),
    options: dict[str, Any] | None = None,
    no_inference: bool = False,
    sources: dict[str, str] | None = None,
    deadline_s: float = 20.0,
) -> Context:
    target = Target(
        provider=provider,
        base_url=base_url,
        model=model,
        alt_models=alts,
        api_key=FAKE_KEY,
        api_key_env="OPENAI_API_KEY",
        sources=sources or {"base_url": "flag --base-url"},
    )
    return Context(
        env={},
        home=home,
        cwd=home,
        target=target,
        deadline=time.monotonic() + deadline_s,
        no_inference=no_inference,
        options={**FAST, **(options or {})},
    )


def by_cause(result: CheckResult) -> dict[tuple[Cause, Strength], list[str]]:
    out: dict[tuple[Cause, Strength], list[str]] = {}
    for f in result.findings:
        out.setdefault((f.cause, f.strength), []).append(f.message)
    return out


def generations(sim: Any) -> list[dict[str, Any]]:
    return [r for r in sim.requests if r["method"] == "POST"]


@pytest.mark.scenario("capacity")
def test_primary_at_capacity_alternative_works(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    assert result.status is Status.FAIL
    assert (Cause.CAPACITY, Strength.STRONG) in by_cause(result)
    rows = {m["model"]: m for m in result.data["models"]}
    assert rows["gpt-5.5"]["outcome"] == "fail" and rows["gpt-5.5"]["role"] == "primary"
    assert rows["gpt-5.4-mini"]["outcome"] == "ok" and rows["gpt-5.4-mini"]["role"] == "alternative"
    first = rows["gpt-5.5"]["attempts"][0]
    assert first["status"] == 503 and first["cause"] == "capacity" and first["signature"]
    assert first["request_id"] and first["cf_ray"]  # the ids a support ticket needs
    strong = next(f for f in result.findings if f.strength is Strength.STRONG)
    assert strong.data["request_id"] and strong.data["cf_ray"] and strong.data["alternative"] == "gpt-5.4-mini"
    assert len(rows["gpt-5.5"]["attempts"]) == 3  # a few attempts, then stop
    assert "gpt-5.5" in result.data["available_models"]


@pytest.mark.scenario("flaky-capacity")
def test_intermittent_failure_is_capacity_evidence(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(
        ctx_for(sim.base_url("anthropic"), "anthropic", "claude-opus-4-7", home, alts=("claude-haiku-4-5",))
    )
    primary = result.data["models"][0]
    assert primary["outcome"] == "flaky"
    assert (Cause.CAPACITY, Strength.MODERATE) in by_cause(result)


@pytest.mark.scenario("stream-capacity")
def test_failure_inside_a_200_stream(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    attempt = result.data["models"][0]["attempts"][0]
    assert attempt["status"] == 200 and attempt["kind"] == "stream_error" and attempt["route"] == "responses"
    assert "server_is_overloaded" in attempt["error"]
    assert (Cause.CAPACITY, Strength.STRONG) in by_cause(result)
    sent = generations(sim)[0]
    assert sent["path"].endswith("/responses") and sent["json"]["max_output_tokens"] >= 16


@pytest.mark.scenario("account-throttled")
def test_every_model_at_capacity_with_headroom_points_at_the_account(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    found = by_cause(result)
    assert (Cause.ACCOUNT, Strength.STRONG) in found
    assert (Cause.CAPACITY, Strength.WEAK) in found
    assert (Cause.CAPACITY, Strength.STRONG) not in found


@pytest.mark.scenario("model-not-found")
def test_unlisted_model_is_a_client_error_with_suggestions(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    assert result.data["model_listed"] is False
    client = [f for f in result.findings if f.cause is Cause.CLIENT and f.strength is Strength.STRONG]
    assert client and "not in the provider's model list" in client[0].message
    assert client[0].next_steps


@pytest.mark.scenario("quota")
def test_everything_fails_with_quota_is_not_capacity(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    found = by_cause(result)
    assert (Cause.QUOTA, Strength.STRONG) in found
    assert not any(c is Cause.CAPACITY and s in (Strength.STRONG, Strength.MODERATE) for c, s in found)
    assert len(result.data["models"]) == 2  # a key-level failure needs only one comparison
    assert all(len(m["attempts"]) == 1 for m in result.data["models"])  # not retryable: one attempt each


@pytest.mark.scenario("account-throttled")
def test_request_cap(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(
        ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, options={"models.max_requests": 4})
    )
    assert result.data["requests"] == 4
    assert len(sim.requests) <= 4


@pytest.mark.scenario("reset")
def test_a_target_that_resets_every_request_is_left_after_two_tries(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, alts=("gpt-5.4-mini",)))
    assert result.data["requests"] == 2 and len(sim.requests) == 2  # the list call and one generation
    assert "connection failures in a row" in result.data["stopped"]
    assert [m["model"] for m in result.data["models"]] == ["gpt-5.5"]  # no alternative: it would only repeat
    assert (Cause.NETWORK, Strength.STRONG) in by_cause(result)


@pytest.mark.scenario("healthy")
def test_the_primary_is_sampled_even_after_a_success(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(
        ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, options={"models.primary_attempts": 4})
    )
    row = result.data["models"][0]
    assert row["outcome"] == "ok" and row["attempted"] == 4 and row["failed"] == 0
    assert row["failure_rate"] == "0 of 4 attempts failed"
    assert len(generations(sim)) == 4 and len(result.data["models"]) == 1  # no alternative for a healthy model
    assert result.data["output_tokens"] == 4 * 16


@pytest.mark.scenario("flaky-capacity")
def test_the_failure_rate_and_signatures_are_reported(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    row = result.data["models"][0]
    assert (row["attempted"], row["failed"], row["failure_rate"]) == (3, 2, "2 of 3 attempts overloaded")
    assert sum(row["signatures"].values()) == 2
    assert "2 of 3 attempts overloaded" in result.summary


@pytest.mark.scenario("auth")
def test_what_cannot_succeed_is_never_retried(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    assert all(len(m["attempts"]) == 1 for m in result.data["models"])
    assert all(a["status"] == 401 for m in result.data["models"] for a in m["attempts"])


@pytest.mark.scenario("rate-limit")
def test_a_rate_limit_is_not_retried(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    assert all(len(m["attempts"]) == 1 for m in result.data["models"])  # waiting adds load, not evidence
    assert (Cause.QUOTA, Strength.STRONG) in by_cause(result)


@pytest.mark.scenario("healthy")
def test_no_inference_spends_nothing(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, no_inference=True))
    assert [r["method"] for r in sim.requests] == ["GET"]
    assert result.status is Status.PASS and result.data["models"] == []
    assert result.data["model_listed"] is True


@pytest.mark.scenario("healthy")
def test_healthy_passes_with_against_capacity(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("gemini"), "gemini", "gemini-2.5-pro", home))
    assert result.status is Status.PASS
    assert (Cause.CAPACITY, Strength.AGAINST) in by_cause(result)
    sent = generations(sim)
    assert len(sent) == 3 and all("gemini-2.5-pro" in r["path"] for r in sent)  # samples; no alternative


@pytest.mark.scenario("blackhole")
def test_blackhole_stops_after_the_first_timeout(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(
        ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, options={"models.request_timeout_s": 0.5})
    )
    assert result.data["requests"] == 1 and result.data["stopped"]
    assert (Cause.NETWORK, Strength.STRONG) in by_cause(result)


@pytest.mark.scenario("cloudflare-block")
def test_html_where_json_expected_is_network(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    assert (Cause.NETWORK, Strength.STRONG) in by_cause(result)


def test_dead_loopback_base_url_is_a_local_refusal_naming_the_source(home: Path) -> None:
    """One reading of a loopback base URL nobody serves (issue #34): network, the verdict's `local_refused`."""
    from capdoctor.verdict.weighing import refused_locally

    url = f"http://127.0.0.1:{free_port()}"
    result = ModelsCheck().run(
        ctx_for(url, "anthropic", "claude-opus-4-7", home, sources={"base_url": "env ANTHROPIC_BASE_URL"})
    )
    client = [f for f in result.findings if f.cause is Cause.NETWORK and f.strength is Strength.STRONG]
    assert client, result.findings
    assert refused_locally(client[0])
    assert "env ANTHROPIC_BASE_URL" in client[0].message
    assert any(s.command == "unset ANTHROPIC_BASE_URL" for s in client[0].next_steps)
    assert result.data["requests"] == 1  # refused: nothing more to learn by repeating


# ------------------------------------------------------------------ purpose-built servers


Handler = Callable[[BaseHTTPRequestHandler, str, dict[str, Any]], None]


def serve(handle: Handler) -> Iterator[str]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _go(self) -> None:
            n = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}") if n else {}
            handle(self, self.path, body)

        do_GET = do_POST = _go

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def reply(h: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    h.send_response(status)
    h.send_header("content-type", "application/json")
    h.send_header("content-length", str(len(data)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)


@pytest.fixture
def chat_only() -> Iterator[str]:
    """A server that serves chat completions but 404s the Responses route (like many relays)."""

    def handle(h: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if path.endswith("/models"):
            reply(h, 200, {"data": [{"id": "gpt-5.5"}]})
        elif path.endswith("/chat/completions"):
            reply(h, 200, {"choices": [{"message": {"content": "pong"}, "finish_reason": "stop"}]})
        else:
            reply(h, 404, {"error": "Not Found"})

    yield from serve(handle)


def test_a_404_on_one_route_is_not_a_verdict(chat_only: str, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(chat_only, "openai", "gpt-5.5", home))
    assert result.status is Status.PASS, result.findings
    assert result.data["route"] == "chat"
    attempts = result.data["models"][0]["attempts"]
    assert attempts[-1]["route"] == "chat" and attempts[-1]["kind"] == "ok"


OVERLOADED_BODY = {
    "error": {
        "message": "Our servers are currently overloaded. Please try again later.",
        "type": "service_unavailable_error",
        "code": "server_is_overloaded",
    }
}


@pytest.fixture
def long_retry_after() -> Iterator[str]:
    """Every generation: 503 overloaded with a Retry-After far beyond the run's deadline."""

    def handle(h: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if path.endswith("/models"):
            reply(h, 200, {"data": [{"id": "gpt-5.5"}]})
        else:
            reply(
                h,
                503,
                OVERLOADED_BODY,
                {"retry-after": "3600"},
            )

    yield from serve(handle)


@pytest.fixture
def overloaded_once() -> Iterator[str]:
    """The first generation: 503 overloaded with Retry-After 1; then it answers."""
    calls: list[int] = []

    def handle(h: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if path.endswith("/models"):
            reply(h, 200, {"data": [{"id": "gpt-5.5"}]})
        elif not calls:
            calls.append(1)
            reply(
                h,
                503,
                OVERLOADED_BODY,
                {"retry-after": "1"},
            )
        else:
            reply(h, 200, {"choices": [{"message": {"content": "pong"}, "finish_reason": "stop"}]})

    yield from serve(handle)


def test_retry_after_is_honoured(overloaded_once: str, home: Path) -> None:
    result = ModelsCheck().run(
        ctx_for(
            overloaded_once, "openai", "gpt-5.5", home, options={"models.backoff_s": 5, "models.primary_attempts": 2}
        )
    )
    attempts = result.data["models"][0]["attempts"]
    assert [a["kind"] for a in attempts] == ["http_error", "ok"]
    assert attempts[-1]["waited_s"] == 1.0  # the server's hint, not the (long) configured backoff
    assert result.data["models"][0]["outcome"] == "flaky"


def test_retry_after_longer_than_the_time_left_ends_the_attempts(long_retry_after: str, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(long_retry_after, "openai", "gpt-5.5", home, alts=("gpt-5.4-mini",)))
    for row in result.data["models"]:
        assert len(row["attempts"]) == 1
        assert "Retry-After" in row["stop_reason"]


@pytest.mark.scenario("auth")
def test_the_key_never_appears_in_the_result(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    text = json.dumps(result.to_dict())
    assert FAKE_KEY not in text and "FAKEKEY" not in text
    assert any(r["headers"] for r in result.data["responses"])
    for r in result.data["responses"]:
        assert not {"authorization", "x-api-key", "set-cookie", "cookie"} & set(r["headers"])
    sent = sim.requests[0]["headers"]
    assert sent.get("authorization") == f"Bearer {FAKE_KEY}"  # it was really sent, and still not reported


@pytest.mark.scenario("auth")
def test_no_inference_still_reads_the_list_error(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, no_inference=True))
    assert len(sim.requests) == 1
    assert any(f.cause is Cause.ACCOUNT for f in result.findings), result.findings


@pytest.mark.scenario("healthy")
def test_no_inference_unlisted_model_is_client(sim: Any, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5-typo", home, no_inference=True))
    assert (Cause.CLIENT, Strength.MODERATE) in by_cause(result)
    assert any("gpt-5.5" in s.text for f in result.findings for s in f.next_steps)  # the close match


@pytest.fixture
def listed_but_refused() -> Iterator[str]:
    """The model is in the list, yet generation says it does not exist for this key (an entitlement gap)."""

    def handle(h: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if path.endswith("/models"):
            reply(h, 200, {"data": [{"id": "gpt-5.5"}, {"id": "gpt-5.4-mini"}]})
        elif body.get("model") == "gpt-5.5":
            reply(
                h,
                404,
                {
                    "error": {
                        "message": "The model `gpt-5.5` does not exist or you do not have access to it.",
                        "type": "invalid_request_error",
                        "code": "model_not_found",
                    }
                },
            )
        else:
            reply(h, 200, {"choices": [{"message": {"content": "pong"}, "finish_reason": "stop"}]})

    yield from serve(handle)


def test_listed_model_refused_points_at_the_account(listed_but_refused: str, home: Path) -> None:
    result = ModelsCheck().run(ctx_for(listed_but_refused, "openai", "gpt-5.5", home, options={}))
    found = by_cause(result)
    assert (Cause.ACCOUNT, Strength.MODERATE) in found
    assert (Cause.CLIENT, Strength.STRONG) not in found


def test_a_check_that_had_no_time_to_send_anything_is_a_skip_and_a_decisive_gap(sim: Any, home: Path) -> None:
    """Issue 35.1: a deadline too short for one request sends nothing, so the check is `skip` with its reason
    (not ✓), and the verdict over it is inconclusive, naming the generation that went untested."""
    from capdoctor.verdict.decision import decide

    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, deadline_s=0.1))
    assert sim.requests == []
    assert result.status is Status.SKIP
    assert result.summary.startswith("nothing was probed:") and "raise --timeout" in result.summary
    (gap,) = result.data["untested"]
    assert gap["what"] == "generation on gpt-5.5" and gap["decisive"] is True
    from dataclasses import replace

    tested = replace(result, id="proxy", title="Proxy", status=Status.PASS, summary="ok", findings=(), data={})
    verdict = decide([result, tested])
    assert verdict.cause == "inconclusive" and "generation on gpt-5.5" in verdict.summary


def test_under_a_short_deadline_the_primary_is_probed_before_the_model_list(sim: Any, home: Path) -> None:
    """Issue 35.1: with time for about one request, that request is the primary's generation, which decides,
    not the model list (a server that never answers would spend the whole deadline on the list)."""
    result = ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home, deadline_s=3.0))
    assert sim.requests and sim.requests[0]["method"] == "POST", sim.requests[:1]
    assert result.data["models"][0]["model"] == "gpt-5.5" and result.data["models"][0]["attempts"]
    assert result.data["untested"] == []


def test_with_time_enough_the_model_list_still_goes_first(sim: Any, home: Path) -> None:
    ModelsCheck().run(ctx_for(sim.base_url("openai"), "openai", "gpt-5.5", home))
    assert sim.requests[0]["method"] == "GET"
