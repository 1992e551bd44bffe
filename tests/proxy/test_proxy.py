"""`capdoctor proxy` in front of the real simulator on loopback: what the client gets is what the provider sent,
streams pass as they come, hang-ups cancel the upstream, every exchange lands in the history with the cause
the one engine names, and no credential reaches a record, a line or a metric."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
import pytest

from capdoctor.watch.store import Store
from tests.conftest import run_cli
from tests.support.proxy_support import WAIT_S, Gated, Tee, end_to_end, running_proxy

SECRET_BEARER = "sk-proj-PLANTEDbearer0123456789abcdef"
SECRET_XKEY = "sk-ant-api03-PLANTEDxkey0123456789abcdef"
SECRET_COOKIE = "PLANTEDcookie0123456789abcdef"
SECRET_BODY = "sk-PLANTEDinbody0123456789abcdefgh"
SECRETS = (SECRET_BEARER, SECRET_XKEY, SECRET_COOKIE, SECRET_BODY, "PLANTED")

CHAT = {"model": "gpt-5.5", "messages": [{"role": "user", "content": "the prompt, never stored"}]}
MESSAGES = {"model": "claude-opus-4-7", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-api03-" + "k" * 30}
OPENAI_HEADERS = {"authorization": "Bearer sk-test-" + "k" * 30}
GEMINI = {"model": "gemini-2.5-pro", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}  # model: the path's
GEMINI_HEADERS = {"x-goog-api-key": "AIzaSy" + "k" * 33}


def _host_port(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    return parts.hostname or "127.0.0.1", int(parts.port or 80)


def _exchanges(db: Path) -> list[Any]:
    with Store.open(db, create=False) as store:
        return store.exchanges()


def _history(db: Path) -> dict[str, Any]:
    done = run_cli("history", "--db", str(db), "--json")
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


# -- transparency


@pytest.mark.parametrize(
    ("scenario", "path", "body", "headers", "status", "cause"),
    [
        ("capacity", "/v1/chat/completions", CHAT, OPENAI_HEADERS, 503, "capacity"),
        ("capacity", "/anthropic/v1/messages", MESSAGES, ANTHROPIC_HEADERS, 529, "capacity"),
        ("quota", "/v1/chat/completions", CHAT, OPENAI_HEADERS, 429, "quota"),
        ("auth", "/v1/chat/completions", CHAT, OPENAI_HEADERS, 401, "account"),
        ("capacity", "/gemini/v1beta/models/gemini-2.5-pro:generateContent", GEMINI, GEMINI_HEADERS, 503, "capacity"),
        ("healthy", "/v1/chat/completions", {**CHAT, "stream": True}, OPENAI_HEADERS, 200, None),
    ],
)
def test_client_gets_exactly_what_the_provider_sent(
    sim: Any, tmp_path: Path, scenario: str, path: str, body: Any, headers: dict[str, str], status: int, cause: Any
) -> None:
    sim.set_scenario(scenario)
    tee = Tee(_host_port(sim.url))
    db = tmp_path / "h.sqlite3"
    try:
        with (
            running_proxy([tee.url, f"/anthropic={tee.url}/anthropic"], db, provider="openai") as proxy,
            httpx.Client() as client,
        ):
            got = client.post(proxy.url + path, json=body, headers=headers)
            direct = client.post(sim.url + path, json=body, headers=headers)
            assert proxy.close() == 0
    finally:
        tee.close()
    sent = tee.responses()
    assert len(sent) == 1
    up_status, up_headers, up_body = sent[0]
    assert got.status_code == up_status == direct.status_code == status
    assert got.content == up_body
    assert end_to_end(list(got.headers.multi_items())) == end_to_end(up_headers)
    ((rnd, ex),) = _exchanges(db)
    a = rnd.attempts[0]
    assert (a.status, a.cause, a.model) == (status, cause, body["model"])
    assert a.ok is (cause is None)
    assert ex.outcome == "completed" and ex.bytes == len(up_body)
    assert ex.request_ids.get("x-request-id") or ex.request_ids.get("request-id") or "/gemini/" in path  # Google: none
    assert ex.client == "httpx" and ex.ttfb_ms is not None
    if cause:
        assert ex.error_text and "prompt" not in ex.error_text


@pytest.mark.scenario("rate-limit")
def test_retry_after_and_rate_limit_headers_are_recorded(sim: Any, tmp_path: Path) -> None:
    with running_proxy([sim.url], tmp_path / "h.sqlite3", provider="openai") as proxy:
        got = httpx.post(proxy.url + "/v1/chat/completions", json=CHAT, headers=OPENAI_HEADERS)
        proxy.close()
    ((_, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert got.status_code == 429
    assert ex.ratelimit.get("retry-after") == got.headers["retry-after"]
    assert ex.ratelimit.get("x-ratelimit-remaining-requests") == "0"


def test_stream_events_reach_the_client_before_the_stream_ends(tmp_path: Path) -> None:
    first = b'data: {"choices":[{"delta":{"content":"one"}}]}\n\n'
    rest = b'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    upstream = Gated(first, rest)
    try:
        with running_proxy([upstream.url], tmp_path / "h.sqlite3") as proxy, httpx.Client() as client:
            with client.stream("POST", proxy.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as resp:
                chunks = resp.iter_raw()
                got = next(chunks)
                # the upstream has not sent its second event yet: the first came through on its own
                assert got == first and not upstream.finished.is_set()
                upstream.go.set()
                got += b"".join(chunks)
            proxy.close()
    finally:
        upstream.close()
    assert got == first + rest
    ((_, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.stream and ex.outcome == "completed"


def test_a_client_that_hangs_up_cancels_the_upstream_request(tmp_path: Path) -> None:
    upstream = Gated(b'data: {"choices":[{"delta":{"content":"one"}}]}\n\n', b"data: [DONE]\n\n")
    try:
        with running_proxy([upstream.url], tmp_path / "h.sqlite3") as proxy:
            with (
                httpx.Client() as client,
                client.stream("POST", proxy.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as resp,
            ):
                next(resp.iter_raw())
            # the client closed its connection mid-stream: the proxy must close its own to the provider
            assert upstream.hung_up.wait(WAIT_S), "the upstream request was not cancelled"
            proxy.close()
    finally:
        upstream.close()
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "cancelled" and rnd.attempts[0].ok  # the provider had answered; the user went away


@pytest.mark.scenario("stream-capacity")
def test_an_error_event_mid_stream_is_recorded_with_its_cause(sim: Any, tmp_path: Path) -> None:
    body = {"model": "gpt-5.5", "input": "hi", "stream": True}
    with running_proxy([sim.url], tmp_path / "h.sqlite3", provider="openai") as proxy:
        got = httpx.post(proxy.url + "/v1/responses", json=body, headers=OPENAI_HEADERS)
        direct = httpx.post(sim.url + "/v1/responses", json=body, headers=OPENAI_HEADERS)
        proxy.close()
    assert got.status_code == direct.status_code == 200
    assert b"response.failed" in got.content
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.stream and ex.outcome == "error_event"
    assert rnd.attempts[0].cause == "capacity" and not rnd.attempts[0].ok
    assert "capacity" in (ex.error_text or "")


@pytest.mark.scenario("stream-cut")
def test_a_cut_stream_is_cut_for_the_client_too(sim: Any, tmp_path: Path) -> None:
    body = {**CHAT, "stream": True}
    with httpx.Client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(sim.url + "/v1/chat/completions", json=body, headers=OPENAI_HEADERS)
        with running_proxy([sim.url], tmp_path / "h.sqlite3", provider="openai") as proxy:
            with pytest.raises(httpx.RemoteProtocolError):
                client.post(proxy.url + "/v1/chat/completions", json=body, headers=OPENAI_HEADERS)
            proxy.close()
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "cut" and ex.bytes > 0
    assert rnd.attempts[0].cause == "network"


def test_an_upstream_that_refuses_gets_the_clients_connection_reset(tmp_path: Path) -> None:
    from tests.conftest import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    with running_proxy([dead], tmp_path / "h.sqlite3") as proxy:
        with pytest.raises(httpx.ReadError) as got:  # no answer of the proxy's own: the connection is reset
            httpx.post(proxy.url + "/v1/chat/completions", json=CHAT)
        proxy.close()
    assert "Connection reset" in str(got.value)
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "upstream_failed" and rnd.attempts[0].kind == "refused"
    assert rnd.attempts[0].cause == "network"
    assert rnd.attempts[0].signature  # the engine's row for the refusal: history weighs it as a log's
    assert _history(tmp_path / "h.sqlite3")["verdict"]["cause"] == "network"


@pytest.mark.scenario("reset")
def test_an_upstream_reset_reaches_the_client_as_a_reset(sim: Any, tmp_path: Path) -> None:
    with running_proxy([sim.url], tmp_path / "h.sqlite3") as proxy:
        with pytest.raises(httpx.ReadError) as direct:
            httpx.post(sim.url + "/v1/chat/completions", json=CHAT, headers=OPENAI_HEADERS)
        with pytest.raises(httpx.ReadError) as got:
            httpx.post(proxy.url + "/v1/chat/completions", json=CHAT, headers=OPENAI_HEADERS)
        proxy.close()
    assert str(got.value) == str(direct.value)  # [Errno 104] Connection reset by peer, both ways
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "upstream_failed" and rnd.attempts[0].kind == "reset"
    assert rnd.attempts[0].cause == "network"


@pytest.mark.scenario("blackhole")
def test_a_client_that_gives_up_on_a_silent_upstream_records_the_silence(sim: Any, tmp_path: Path) -> None:
    # the client's timeout (3 s) is past GAVE_UP_SILENCE_S: the proxy measured an upstream silent that long
    with running_proxy([sim.url], tmp_path / "h.sqlite3") as proxy:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(proxy.url + "/v1/responses", json={**CHAT, "stream": True}, headers=OPENAI_HEADERS, timeout=3)
        proxy.close()
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "cancelled" and ex.ttfb_ms is None
    assert (rnd.attempts[0].cause, rnd.attempts[0].kind) == ("network", "timeout") and rnd.attempts[0].signature
    assert ex.error_text and "no byte from" in ex.error_text and "before the client gave up" in ex.error_text
    assert _history(tmp_path / "h.sqlite3")["verdict"]["cause"] == "network"


@pytest.mark.scenario("stream-capacity")
def test_googles_bare_error_object_in_a_stream_is_recorded_with_its_cause(sim: Any, tmp_path: Path) -> None:
    path = "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    with running_proxy([sim.url], tmp_path / "h.sqlite3") as proxy:
        got = httpx.post(proxy.url + path, json=GEMINI, headers=GEMINI_HEADERS)
        proxy.close()
    assert got.status_code == 200 and got.json()["error"]["status"] == "UNAVAILABLE"
    ((rnd, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert (ex.outcome, rnd.attempts[0].cause) == ("error_event", "capacity")
    assert ex.error_text and "overloaded" in ex.error_text


# -- the history and the verdict


@pytest.mark.scenario("capacity")
def test_history_over_proxied_traffic_reaches_the_scenarios_verdict(sim: Any, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    with running_proxy([sim.url], db, provider="openai") as proxy, httpx.Client() as client:
        for _ in range(4):
            assert client.post(proxy.url + "/v1/chat/completions", json=CHAT, headers=OPENAI_HEADERS).status_code == 503
        light = {**CHAT, "model": "gpt-5.4-mini"}
        assert client.post(proxy.url + "/v1/chat/completions", json=light, headers=OPENAI_HEADERS).status_code == 200
        proxy.close()
    doc = _history(db)
    assert doc["verdict"]["cause"] == "capacity"
    assert doc["by_model"]["gpt-5.5"]["errors"] == 4
    assert doc["by_model"]["gpt-5.4-mini"]["errors"] == 0


@pytest.mark.scenario("quota")
def test_history_reads_quota_from_proxied_traffic(sim: Any, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    with running_proxy([sim.url], db, provider="openai") as proxy, httpx.Client() as client:
        for _ in range(3):
            client.post(proxy.url + "/v1/chat/completions", json=CHAT, headers=OPENAI_HEADERS)
        proxy.close()
    assert _history(db)["verdict"]["cause"] == "quota"


# -- secrets


@pytest.mark.scenario("auth")
def test_planted_secrets_reach_no_record_line_or_metric(sim: Any, tmp_path: Path) -> None:
    from tests.conftest import free_port

    db = tmp_path / "h.sqlite3"
    port = free_port()
    headers = {
        "authorization": f"Bearer {SECRET_BEARER}",
        "x-api-key": SECRET_XKEY,
        "cookie": f"session={SECRET_COOKIE}; other=1",
    }
    body = {**CHAT, "api_key": SECRET_BODY, "user": SECRET_BODY}
    with running_proxy([sim.url], db, provider="openai", metrics_port=port) as proxy, httpx.Client() as client:
        client.post(proxy.url + "/v1/chat/completions", json=body, headers=headers)
        client.post(proxy.url + f"/v1/chat/completions?key={SECRET_BODY}", json=body, headers=headers)
        metrics = client.get(f"http://127.0.0.1:{port}/metrics").text
        proxy.close()
        lines = proxy.out.text() + proxy.err.text()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("h.sqlite3"))
    assert "HTTP 401" in lines  # the failures were printed
    for secret in SECRETS:
        assert secret.encode() not in stored
        assert secret not in lines
        assert secret not in metrics
    # the simulator did get the credentials: the proxy forwards them, it only never keeps them
    assert any(r["headers"].get("authorization") == f"Bearer {SECRET_BEARER}" for r in sim.requests)


@pytest.mark.scenario("capacity")
def test_metrics_count_exchanges_by_status_and_cause(sim: Any, tmp_path: Path) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    families = {f.name: f for f in text_string_to_metric_families(_metrics_after(sim, tmp_path))}
    samples = {
        (s.labels["model"], s.labels["status"], s.labels["cause"]): s.value
        for s in families["capdoctor_proxy_exchanges"].samples
        if s.name.endswith("_total")
    }
    assert samples[("gpt-5.5", "503", "capacity")] == 2
    assert samples[("gpt-5.4-mini", "200", "none")] == 1
    assert "capdoctor_proxy_first_byte_seconds" in families


def _metrics_after(sim: Any, tmp_path: Path) -> str:
    """Scrape /metrics of a proxy that has carried three exchanges (two capacity failures, one success)."""
    from tests.conftest import free_port

    port = free_port()
    with running_proxy([sim.url], tmp_path / "m.sqlite3", provider="openai", metrics_port=port) as proxy:
        with httpx.Client() as client:
            for model in ("gpt-5.5", "gpt-5.5", "gpt-5.4-mini"):
                client.post(proxy.url + "/v1/chat/completions", json={**CHAT, "model": model}, headers=OPENAI_HEADERS)
            for _ in range(int(WAIT_S * 10)):  # the recorder counts off the event loop: wait for all three
                text = client.get(f"http://127.0.0.1:{port}/metrics").text
                if text.count("capdoctor_proxy_exchanges_total{") >= 2 and 'cause="none"' in text:
                    break
                time.sleep(0.1)
        proxy.close()
    return text


# -- the token and the routes


def test_the_token_is_required_and_never_forwarded(sim: Any, tmp_path: Path) -> None:
    token = "t0ken-" + "x" * 20
    with running_proxy([sim.url], tmp_path / "h.sqlite3", provider="openai", token=token) as proxy:
        with httpx.Client() as client:
            refused = client.post(proxy.url + "/v1/chat/completions", json=CHAT)
            by_header = client.post(proxy.url + "/v1/chat/completions", json=CHAT, headers={"x-capdoctor-token": token})
            by_path = client.post(proxy.url + f"/_t/{token}/v1/chat/completions", json=CHAT)
        proxy.close()
        printed = proxy.out.text()
    assert refused.status_code == 401 and "token" in refused.json()["error"]["message"]
    assert by_header.status_code == by_path.status_code == 200
    assert [r["path"] for r in sim.requests] == ["/v1/chat/completions"] * 2
    assert all("x-capdoctor-token" not in r["headers"] for r in sim.requests)
    assert token not in printed and "<TOKEN>" in printed


def test_prefixed_upstreams_strip_their_prefix(sim: Any, tmp_path: Path) -> None:
    with running_proxy(
        [f"/gemini={sim.url}/gemini", f"/anthropic={sim.url}/anthropic"], tmp_path / "h.sqlite3"
    ) as proxy:
        with httpx.Client() as client:
            gem = client.post(
                proxy.url + "/gemini/v1beta/models/gemini-2.5-pro:generateContent",
                json={"contents": []},
                headers={"x-goog-api-key": "AIza" + "k" * 35},
            )
            missing = client.get(proxy.url + "/v1/models")
        proxy.close()
        printed = proxy.out.text()
    assert gem.status_code == 200
    assert missing.status_code == 404
    assert sim.requests[0]["path"] == "/gemini/v1beta/models/gemini-2.5-pro:generateContent"
    ((rnd, _),) = _exchanges(tmp_path / "h.sqlite3")
    assert rnd.model == "gemini-2.5-pro" and rnd.provider == "gemini"
    assert f"GOOGLE_GEMINI_BASE_URL={proxy.url}/gemini" in printed
    assert f"ANTHROPIC_BASE_URL={proxy.url}/anthropic" in printed


# -- the command line


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--upstream", "api.openai.com"], "'api.openai.com'"),
        (["--upstream", "/x=ftp://h"], "'/x=ftp://h'"),
        (["--upstream", "http://h", "--listen", "localhost"], "'localhost'"),
        (["--upstream", "http://h", "--listen", "0.0.0.0:8787"], "'0.0.0.0:8787'"),
        (["--upstream", "http://h", "--burst-window", "0"], "--burst-window"),
        (["--provider", "nosuch"], "nosuch"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_listening(args: list[str], named: str, tmp_path: Path) -> None:
    done = run_cli("proxy", *args, "--db", str(tmp_path / "h.sqlite3"), timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and lines[0].startswith("capdoctor: error:")
    assert not (tmp_path / "h.sqlite3").exists() or named == "--burst-window"
    assert "listening" not in done.stdout


@pytest.mark.scenario("capacity")
def test_sigterm_lets_the_process_finish_and_exit_0(sim: Any, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "capdoctor",
            "proxy",
            "--upstream",
            sim.url,
            "--provider",
            "openai",
            "--listen",
            "127.0.0.1:0",
            "--db",
            str(db),
            "--no-network-checks",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on" in first, first + (proc.stderr.read() if proc.stderr else "")
        url = first.split("listening on ", 1)[1].split(";", 1)[0]
        assert httpx.post(url + "/v1/chat/completions", json=CHAT, headers=OPENAI_HEADERS).status_code == 503
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT_S + 15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "1 recorded" in out
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT kind, verdict FROM rounds").fetchall() == [("proxy", "capacity")]


def test_start_up_of_other_commands_loads_no_aiohttp() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "capdoctor", "--help"], capture_output=True, text=True, check=True
    )
    assert "aiohttp" not in done.stderr and "capdoctor.proxy" not in done.stderr


def test_a_stop_lets_an_open_stream_finish(tmp_path: Path) -> None:
    first = b'data: {"choices":[{"delta":{"content":"one"}}]}\n\n'
    rest = b"data: [DONE]\n\n"
    upstream = Gated(first, rest)
    try:
        with running_proxy([upstream.url], tmp_path / "h.sqlite3", drain_s=30) as proxy, httpx.Client() as client:
            with client.stream("POST", proxy.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as resp:
                chunks = resp.iter_raw()
                got = next(chunks)
                proxy.stop.set()  # SIGTERM, as the service manager sends it
                deadline = time.monotonic() + WAIT_S
                while "stopping" not in proxy.out.text() and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert "stopping" in proxy.out.text()
                upstream.go.set()  # the provider finishes only after the stop was asked for
                got += b"".join(chunks)
            assert proxy.close() == 0
    finally:
        upstream.close()
    assert got == first + rest
    ((_, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "completed"


def test_a_stream_that_outlasts_the_drain_is_cancelled_and_the_proxy_exits_0(tmp_path: Path) -> None:
    upstream = Gated(b'data: {"choices":[{"delta":{"content":"one"}}]}\n\n', b"data: [DONE]\n\n")
    try:
        with running_proxy([upstream.url], tmp_path / "h.sqlite3", drain_s=0.5) as proxy, httpx.Client() as client:
            with client.stream("POST", proxy.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as resp:
                chunks = resp.iter_raw()
                next(chunks)
                assert proxy.close() == 0  # the upstream never finishes: the drain's bound ends it
                with pytest.raises(httpx.HTTPError):
                    b"".join(chunks)
            assert upstream.hung_up.wait(WAIT_S)
    finally:
        upstream.close()
    ((_, ex),) = _exchanges(tmp_path / "h.sqlite3")
    assert ex.outcome == "cancelled"


def _watch(stream_asked: bool = True) -> Any:
    from capdoctor.proxy.exchange import Watch

    return Watch(
        started=0.0,
        t0=0.0,
        method="POST",
        path="/v1/chat/completions",
        prefix="",
        upstream="http://127.0.0.1:1",
        provider="openai",
        local=False,
        user_agent="OpenAI/Python 2.0.0",
        model="gpt-5.5",
        secrets=(),
        stream_asked=stream_asked,
    )


def _watched(*chunks: bytes) -> Any:
    watch = _watch()
    watch.response(200, [("content-type", "text/event-stream")], 0.01, path_streams=False)
    for chunk in chunks:
        watch.chunk(chunk)
    return watch


@pytest.mark.parametrize(
    ("last", "outcome"),
    [
        (b"data: [DONE]\n\n", "completed"),  # OpenAI's chat stream: the SDK closes on [DONE]
        (b"event: message_stop\ndata: {}\n\n", "completed"),  # Anthropic's last event
        (b"", "cancelled"),  # hung up mid-stream
    ],
)
def test_a_client_that_hangs_up_after_the_last_event_completed_the_exchange(last: bytes, outcome: str) -> None:
    delta = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'
    assert _watched(delta, last).finish("cancelled", 0.02).outcome == outcome


@pytest.mark.parametrize(
    ("connected", "stream_asked", "gave_up_at", "cause", "said"),
    [
        (0.01, True, 0.3, None, None),  # a Ctrl-C after 0.3 s: nothing measured names a cause
        (0.01, True, 15.0, "network", "no byte from http://127.0.0.1:1 in 15.0 s before the client gave up"),
        (None, True, 2.0, "network", "http://127.0.0.1:1 accepted no connection in 2.0 s before the client gave up"),
        (None, False, 2.0, "network", "accepted no connection in 2.0 s"),
        (0.01, False, 15.0, None, None),  # not a stream: the status line comes once the completion is written
    ],
)
def test_a_client_that_gave_up_before_any_answer_leaves_what_was_measured(
    connected: Any, stream_asked: bool, gave_up_at: float, cause: Any, said: Any
) -> None:
    from capdoctor.proxy.recording import judge

    watch = _watch(stream_asked)
    watch.connected = connected
    rnd = judge(watch.finish("cancelled", gave_up_at))
    assert rnd.exchange is not None and rnd.exchange.outcome == "cancelled"
    assert rnd.attempts[0].cause == cause and not rnd.attempts[0].ok
    assert (said is None and rnd.exchange.error_text is None) or said in (rnd.exchange.error_text or "")
