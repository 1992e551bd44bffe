"""The real `openai` and `anthropic` Python SDKs with their base URL pointed at `capdoctor proxy`, in front of the
simulator: each SDK sees what it sees without the proxy (the same exception, status and error body), its
retries are its own (the proxy sends each exactly once), and every exchange is recorded with its cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from capdoctor.watch.store import Store
from tests.support.proxy_support import running_proxy

OPENAI_KEY = "sk-test-" + "o" * 30
ANTHROPIC_KEY = "sk-ant-api03-" + "a" * 30


def _rows(db: Path) -> list[tuple[Any, Any]]:
    with Store.open(db, create=False) as store:
        return store.exchanges()


def _openai_error(base_url: str) -> Any:
    client = openai.OpenAI(base_url=base_url, api_key=OPENAI_KEY, max_retries=1)
    try:
        client.chat.completions.create(model="gpt-5.5", messages=[{"role": "user", "content": "hi"}])
    except openai.OpenAIError as exc:
        return exc
    raise AssertionError("the call did not fail")


@pytest.mark.parametrize(("scenario", "status", "cause"), [("capacity", 503, "capacity"), ("quota", 429, "quota")])
def test_openai_sdk_through_the_proxy_fails_as_it_does_direct(
    sim: Any, tmp_path: Path, scenario: str, status: int, cause: str
) -> None:
    sim.set_scenario(scenario)
    db = tmp_path / "h.sqlite3"
    direct = _openai_error(sim.base_url("openai"))
    before = len(sim.requests)
    with running_proxy([sim.url], db, provider="openai") as proxy:
        proxied = _openai_error(proxy.url + "/v1")
        proxy.close()
    assert type(proxied) is type(direct)
    assert proxied.status_code == direct.status_code == status
    assert proxied.body == direct.body
    sent = len(sim.requests) - before
    rows = _rows(db)
    assert len(rows) == sent  # the SDK's own retry went through once each; the proxy added none
    assert {r.attempts[0].cause for r, _ in rows} == {cause}
    assert {e.client for _, e in rows} == {"openai-python"}
    assert all(e.client_version for _, e in rows)


@pytest.mark.scenario("stream-capacity")
def test_openai_sdk_stream_error_event_through_the_proxy(sim: Any, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"

    def events(base_url: str) -> list[tuple[str, Any]]:
        client = openai.OpenAI(base_url=base_url, api_key=OPENAI_KEY, max_retries=0)
        stream = client.responses.create(model="gpt-5.5", input="hi", stream=True)
        return [(e.type, getattr(getattr(e, "response", None), "error", None)) for e in stream]

    direct = events(sim.base_url("openai"))
    with running_proxy([sim.url], db, provider="openai") as proxy:
        proxied = events(proxy.url + "/v1")
        proxy.close()
    assert proxied == direct and proxied[-1][0] == "response.failed"
    ((rnd, ex),) = _rows(db)
    assert ex.outcome == "error_event" and rnd.attempts[0].cause == "capacity"


@pytest.mark.scenario("healthy")
def test_openai_sdk_stream_succeeds_through_the_proxy(sim: Any, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    with running_proxy([sim.url], db, provider="openai") as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key=OPENAI_KEY, max_retries=0)
        deltas = [
            c.choices[0].delta.content
            for c in client.chat.completions.create(
                model="gpt-5.5", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            if c.choices and c.choices[0].delta.content
        ]
        proxy.close()
    assert deltas
    ((rnd, ex),) = _rows(db)
    assert ex.stream and ex.outcome == "completed" and rnd.attempts[0].ok


@pytest.mark.parametrize(
    ("scenario", "exc_type", "status", "cause"),
    [
        ("capacity", anthropic.InternalServerError, 529, "capacity"),
        ("auth", anthropic.AuthenticationError, 401, "account"),
    ],
)
def test_anthropic_sdk_through_the_proxy_fails_as_it_does_direct(
    sim: Any, tmp_path: Path, scenario: str, exc_type: type[Exception], status: int, cause: str
) -> None:
    sim.set_scenario(scenario)
    db = tmp_path / "h.sqlite3"

    def call(base_url: str) -> Any:
        client = anthropic.Anthropic(base_url=base_url, api_key=ANTHROPIC_KEY, max_retries=0)
        with pytest.raises(exc_type) as info:
            client.messages.create(model="claude-opus-4-7", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
        return info.value

    direct = call(sim.base_url("anthropic"))
    with running_proxy([f"/anthropic={sim.url}/anthropic"], db) as proxy:
        proxied = call(proxy.url + "/anthropic")
        proxy.close()
    assert proxied.status_code == direct.status_code == status  # type: ignore[attr-defined]
    assert {k: v for k, v in proxied.body.items() if k != "request_id"} == {  # type: ignore[attr-defined]
        k: v
        for k, v in direct.body.items()  # type: ignore[attr-defined]
        if k != "request_id"
    }
    ((rnd, ex),) = _rows(db)
    assert rnd.attempts[0].cause == cause and rnd.provider == "anthropic"
    assert ex.client == "anthropic-python" and ex.request_ids.get("request-id")
    assert ANTHROPIC_KEY not in (ex.error_text or "")
