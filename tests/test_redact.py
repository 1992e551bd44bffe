"""Redaction: generated secrets embedded in bodies, URLs, headers and JSON never survive, in any renderer."""

from __future__ import annotations

import json
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from capdoctor.redact import MASK, redact, redact_text, redact_url

ALNUM = string.ascii_letters + string.digits
tail = st.text(alphabet=ALNUM + "_-", min_size=20, max_size=60).filter(lambda t: any(c.isdigit() for c in t))

secrets = st.one_of(
    tail.map(lambda t: "sk-" + t),
    tail.map(lambda t: "sk-ant-api03-" + t),
    tail.map(lambda t: "sk-proj-" + t),
    tail.map(lambda t: "sk-or-v1-" + t),
    st.text(alphabet=ALNUM + "_-", min_size=35, max_size=39).map(lambda t: "AIza" + t),
)
opaque = st.text(alphabet=ALNUM + "._~+/-", min_size=12, max_size=40).filter(lambda t: any(c.isdigit() for c in t))
noise = st.text(alphabet=string.ascii_letters + " .,:{}\"'", max_size=30)


def embed(secret: str, before: str, after: str) -> list[str]:
    return [
        f"{before} {secret}{after}",
        f"{before}={secret}",
        f'{{"error": {{"message": "Incorrect API key provided: {secret}."}}}}',
        f"https://api.example.test/v1/models?key={secret}&alt=json",
        f"https://user:{secret}@proxy.example.test:8080",
        f"Authorization: Bearer {secret}",
        f"x-api-key: {secret}",
        f"curl -H 'Authorization: Bearer {secret}' {before}",
    ]


@given(secrets, noise, noise)
@settings(max_examples=200)
def test_key_shapes_never_survive(secret: str, before: str, after: str) -> None:
    for text in embed(secret, before, after):
        assert secret not in redact_text(text), text


@given(opaque)
def test_opaque_values_of_secret_headers_never_survive(value: str) -> None:
    for text in (
        f"Authorization: Bearer {value}",
        f"Cookie: session={value}; theme=dark",
        f'"x-api-key": "{value}"',
        f"Proxy-Authorization: Basic {value}",
    ):
        out = redact_text(text)
        assert value not in out, (text, out)


@given(opaque)
def test_known_exact_secret_is_removed_anywhere(value: str) -> None:
    text = f"the key {value} leaked inside free text"
    assert value not in redact_text(text, secrets=[value])


@given(secrets)
def test_nested_structures_are_redacted(secret: str) -> None:
    doc = {
        "headers": {"Authorization": "whatever-shape", "x-request-id": "req_123"},
        "rows": [{"body": f"key={secret}"}, (f"Bearer {secret}",)],
        "n": 3,
    }
    out = redact(doc)
    dumped = json.dumps(out)
    assert secret not in dumped
    assert out["headers"]["Authorization"] == MASK
    assert out["headers"]["x-request-id"] == "req_123"
    assert out["n"] == 3


def test_prose_is_left_alone() -> None:
    text = "Missing bearer or basic authentication in header. Token limit exceeded; max_tokens=16"
    assert redact_text(text) == text


def test_home_becomes_tilde() -> None:
    assert redact_text("/home/alice/.codex/log/codex-tui.log", home="/home/alice") == "~/.codex/log/codex-tui.log"
    assert redact_text("/home/alicexyz/x", home="/home/alice") == "/home/alicexyz/x"


def test_redact_url_masks_userinfo_and_keeps_scheme_host_port() -> None:
    assert redact_url("http://alice:s3cret-test-pw@127.0.0.1:7890/path") == f"http://{MASK}@127.0.0.1:7890/path"
    assert redact_url(" socks5h://:only-pw@proxy.example:1080 ") == f"socks5h://{MASK}@proxy.example:1080"
    assert redact_url("https://api.openai.com/v1") == "https://api.openai.com/v1"
    assert redact_url("127.0.0.1:7890") == "127.0.0.1:7890"
