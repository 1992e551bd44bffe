"""URL checking and joining: one rule for every request URL built from a base URL."""

from __future__ import annotations

import pytest

from capdoctor.providers.catalog import adapter_for
from capdoctor.run.context import Target
from capdoctor.target.urls import check_url, join, root, url_problem, without_query


@pytest.mark.parametrize(
    ("base", "path", "expected"),
    [
        ("https://h/v1", "responses", "https://h/v1/responses"),
        ("https://h/v1/", "/responses", "https://h/v1/responses"),
        (
            "https://h/openai/v1?api-version=2025-04-01-preview",
            "responses",
            "https://h/openai/v1/responses?api-version=2025-04-01-preview",
        ),
        (
            "https://h/openai/v1/?api-version=x#frag",
            "chat/completions",
            "https://h/openai/v1/chat/completions?api-version=x",
        ),
        ("https://h/v1?a=1", "models?limit=2", "https://h/v1/models?a=1&limit=2"),
        ("http://[::1]:8080", "models", "http://[::1]:8080/models"),
    ],
)
def test_join_keeps_the_base_query(base: str, path: str, expected: str) -> None:
    assert join(base, path) == expected


def test_root_drops_the_version_segment_and_keeps_the_query() -> None:
    assert root("https://api.anthropic.com/v1/") == "https://api.anthropic.com"
    assert root("https://g/v1beta?key=x", ("/v1beta", "/v1")) == "https://g?key=x"
    assert root("https://h/api") == "https://h/api"
    assert without_query("https://u:p@h/v1?key=s#f") == "https://h/v1"


@pytest.mark.parametrize("provider", ["openai", "azure", "openrouter", "anthropic", "gemini", "openai-compatible"])
def test_every_adapter_puts_its_path_before_the_query(provider: str) -> None:
    target = Target(provider, "https://relay.example/v1?api-version=x", "m", api_key="k")
    adapter = adapter_for(provider)
    reqs = [adapter.list_request(target), *(adapter.generate_request(target, "m", r) for r in adapter.routes)]
    for req in reqs:
        path, _, query = req.url.partition("?")
        assert "api-version=x" in query, req.url
        assert "?" not in path and path.startswith("https://relay.example/"), req.url


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://localhost:70000/v1", "out of range"),
        ("http://h:abc/v1", "not a valid URL"),
        ("http://h/v1\r\nX-Injected: 1", "carriage return"),
        ("http://h/v1\nx", "line feed"),
        ("http://h /v1", "a space"),
        ("", "is empty"),
        ("   ", "is empty"),
        ("ftp://h/v1", "http:// or https://"),
        ("api.openai.com/v1", "http:// or https://"),
        ("http:///v1", "no host"),
        ("http://h:0/", "port 0"),
        ("http://bad_host!/v1", "invalid host name"),
        ("http://-h/v1", "invalid host name"),
    ],
)
def test_bad_urls_are_named(value: str, phrase: str) -> None:
    assert phrase in (url_problem(value) or "")
    with pytest.raises(ValueError, match=r"\(flag --base-url\)"):
        check_url(value, "flag --base-url", "base URL")


@pytest.mark.parametrize(
    "value",
    [
        "https://api.openai.com/v1",
        "http://127.0.0.1:11434/v1",
        "http://[::1]:8080",
        "https://h.example./v1",
        "https://user:pa%20ss@relay.example/v1?api-version=1",
        "http://host.docker.internal:1234",
        "https://bücher.example",
    ],
)
def test_good_urls_pass(value: str) -> None:
    assert url_problem(value) is None
    assert check_url(f"  {value} ", "env X") == value
