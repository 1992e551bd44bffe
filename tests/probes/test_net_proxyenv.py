"""Proxy environment semantics: our pure reading must match what urllib and httpx really do.

The reference is httpx itself: for each environment we build a real `httpx.Client(trust_env=True)` with
`os.environ` set to it and ask which proxy its transport for the URL uses, then compare with
`effective_proxy(read_env_proxies(env), url)`, which never reads `os.environ`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capdoctor.probes.net_proxyenv import (
    effective_proxy,
    find_issues,
    read_env_proxies,
)
from capdoctor.redact import redact_url


def httpx_choice(env: Mapping[str, str], url: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """The proxy URL a real httpx client picks for `url` under `env` (None: direct)."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name == "REQUEST_METHOD":
            monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    try:
        with httpx.Client() as client:
            pool = client._transport_for_url(httpx.URL(url))._pool  # type: ignore[attr-defined]
            proxy = getattr(pool, "_proxy_url", None)
            return None if proxy is None else f"{proxy.scheme.decode()}://{proxy.host.decode()}:{proxy.port}"
    finally:
        for k in env:
            monkeypatch.delenv(k, raising=False)


def ours(env: Mapping[str, str], url: str) -> str | None:
    got = effective_proxy(read_env_proxies(env), url).url
    if got is None:
        return None
    u = httpx.URL(got)
    return f"{u.scheme}://{u.host}:{u.port}"


CASES = [
    ({"HTTPS_PROXY": "http://127.0.0.1:7890"}, "https://api.openai.com/v1", "http://127.0.0.1:7890"),
    ({"HTTPS_PROXY": "http://127.0.0.1:7890", "NO_PROXY": "openai.com"}, "https://api.openai.com/v1", None),
    (
        {"HTTPS_PROXY": "http://127.0.0.1:7890", "NO_PROXY": ".openai.com"},
        "https://openai.com/v1",
        "http://127.0.0.1:7890",
    ),
    ({"HTTPS_PROXY": "http://127.0.0.1:7890", "NO_PROXY": "*"}, "https://api.openai.com/v1", None),
    ({"HTTP_PROXY": "127.0.0.1:7890"}, "http://127.0.0.1:5000/v1", "http://127.0.0.1:7890"),
    ({"HTTP_PROXY": "127.0.0.1:7890", "no_proxy": "127.0.0.1"}, "http://127.0.0.1:5000/v1", None),
    ({"HTTP_PROXY": "http://127.0.0.1:7890", "NO_PROXY": "localhost"}, "http://localhost:8080/v1", None),
    (
        {"ALL_PROXY": "http://127.0.0.1:7890", "https_proxy": "http://127.0.0.1:1081"},
        "https://x.test",
        "http://127.0.0.1:1081",
    ),
    ({"ALL_PROXY": "http://127.0.0.1:7890", "all_proxy": ""}, "https://x.test", None),
    (
        {"HTTPS_PROXY": "http://127.0.0.1:7890", "https_proxy": "http://127.0.0.1:7891"},
        "https://x.test",
        "http://127.0.0.1:7891",
    ),
    ({"HTTPS_PROXY": "http://127.0.0.1:7890"}, "http://x.test/v1", None),
    ({"HTTP_PROXY": "http://127.0.0.1:7890", "REQUEST_METHOD": "GET"}, "http://x.test/v1", None),
    ({"HTTPS_PROXY": "http://127.0.0.1:7890", "NO_PROXY": "x.test:8443"}, "https://x.test:8443/v1", None),
]


@pytest.mark.parametrize(("env", "url", "expected"), CASES)
def test_effective_proxy_matches_httpx(
    env: dict[str, str], url: str, expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ours(env, url) == expected
    assert httpx_choice(env, url, monkeypatch) == expected


NAMES = st.sampled_from(
    ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"]
)
PROXIES = st.sampled_from(["", "http://127.0.0.1:7890", "127.0.0.1:7891", "http://10.0.0.1:3128"])
NOPROXY = st.sampled_from(["", "localhost", "api.test", ".api.test", "test", "127.0.0.1", "*", "other.test,api.test"])
URLS = st.sampled_from(
    [
        "https://api.test/v1",
        "http://api.test/v1",
        "https://sub.api.test/v1",
        "http://127.0.0.1:8000/v1",
        "http://localhost:8000/v1",
    ]
)


@settings(max_examples=60, deadline=None)
@given(pairs=st.lists(st.tuples(NAMES, PROXIES, NOPROXY), max_size=4), url=URLS)
def test_effective_proxy_agrees_with_httpx_on_generated_environments(
    pairs: list[tuple[str, str, str]], url: str
) -> None:
    env = {name: (noproxy if name.lower() == "no_proxy" else proxy) for name, proxy, noproxy in pairs}
    with pytest.MonkeyPatch.context() as mp:
        assert ours(env, url) == httpx_choice(env, url, mp), env


def test_empty_lowercase_cancels_uppercase_and_is_named() -> None:
    env = {"ALL_PROXY": "socks5://127.0.0.1:7891", "all_proxy": ""}
    assert read_env_proxies(env).proxies == {}
    issues = find_issues(env, socks_supported=False)
    kinds = {i.kind for i in issues}
    assert kinds == {"empty_cancels"}
    assert "cancels ALL_PROXY" in issues[0].message
    assert issues[0].command == "unset all_proxy"


@pytest.mark.parametrize("scheme", ["socks", "socks4", "socks4a"])
def test_schemes_httpx_rejects_are_named_with_the_fix(scheme: str) -> None:
    env = {"ALL_PROXY": f"{scheme}://127.0.0.1:7891"}
    with pytest.raises(ValueError, match="Unknown scheme"):  # the real failure we describe
        httpx.Client(proxy=f"{scheme}://127.0.0.1:7891")
    (issue,) = find_issues(env, socks_supported=True)
    assert issue.kind == "rejected_scheme" and issue.variable == "ALL_PROXY"
    assert "httpx rejects" in issue.message
    assert issue.command == "export ALL_PROXY=socks5://127.0.0.1:7891"


def test_socks5_without_socksio_is_named_only_when_unsupported() -> None:
    env = {"all_proxy": "socks5://127.0.0.1:7897", "https_proxy": "http://127.0.0.1:7897"}
    (issue,) = find_issues(env, socks_supported=False)
    assert issue.kind == "socks_unsupported" and "socksio" in issue.message
    assert issue.command == "pip install 'httpx[socks]'"
    assert find_issues(env, socks_supported=True) == []


def test_no_proxy_covering_the_target_is_reported_only_when_a_proxy_is_set() -> None:
    env = {"HTTPS_PROXY": "http://127.0.0.1:7890", "NO_PROXY": "localhost,.openai.com"}
    (issue,) = find_issues(env, True, "https://api.openai.com/v1")
    assert issue.kind == "no_proxy_covers" and "'.openai.com' covers api.openai.com" in issue.message
    assert find_issues(env, True, "https://api.anthropic.com/v1") == []
    assert find_issues({"NO_PROXY": "*"}, True, "https://api.openai.com/v1") == []


def test_upper_and_lower_case_disagreeing_is_named() -> None:
    env = {"HTTPS_PROXY": "http://127.0.0.1:7890", "https_proxy": "http://127.0.0.1:1080"}
    (issue,) = find_issues(env, True)
    assert issue.kind == "case_conflict" and "differ" in issue.message


def test_credentials_never_leave_in_any_output() -> None:
    env = {
        "HTTPS_PROXY": "http://alice:s3cret-test-pw@127.0.0.1:7890",
        "https_proxy": "",
        "ALL_PROXY": "socks4://bob:fake-pass@127.0.0.1:1",
    }
    ep = read_env_proxies(env)
    texts = [repr(ep.to_dict()), *(i.message + repr(i.data) for i in find_issues(env, False))]
    assert texts and all("s3cret-test-pw" not in t and "fake-pass" not in t for t in texts)
    assert redact_url("http://u:p@h:1") == "http://<redacted>@h:1"
    assert redact_url("http://h:1") == "http://h:1"
