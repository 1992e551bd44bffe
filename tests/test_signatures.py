"""The signature table and classifier: every row matches its own examples, the table is well-formed, and
the classifier reads shapes (code > phrase > status) without ever deciding on a status alone."""

from __future__ import annotations

import re

import pytest

from capdoctor import signatures as sig
from capdoctor.model import Cause, Strength
from capdoctor.signatures import BY_ID, SIGNATURES, best_match, classify, extract_error


def test_table_is_well_formed() -> None:
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids)) >= 100
    for s in SIGNATURES:
        assert re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", s.id), s.id
        assert s.title and s.remedy and s.source, s.id
        assert s.codes or s.phrases or s.headers or s.status_only, f"{s.id} matches nothing"
        for e in s.explains:
            assert e in BY_ID and e != s.id


def test_every_cause_has_specific_rows() -> None:
    for cause in Cause:
        strong = [s for s in SIGNATURES if s.cause is cause and s.strength is Strength.STRONG and not s.family]
        assert strong, f"no strong row for {cause.value}"


@pytest.mark.parametrize("row", [s for s in SIGNATURES if s.examples], ids=lambda s: s.id)
def test_row_matches_its_examples_and_has_an_anchor(row: sig.Signature) -> None:
    for example in row.examples:
        found = [m.signature.id for m in classify(example, origin="log")]
        assert row.id in found, (example, found)
        anchors = row.literals + tuple(c.lower() for c in row.codes)
        assert any(a in example.lower() for a in anchors), f"{row.id}: no prefilter literal in {example!r}"


def test_every_text_row_has_prefilter_literals() -> None:
    for s in SIGNATURES:
        if s.codes or s.phrases:
            assert s.literals or s.codes, s.id
            assert all(lit == lit.lower() for lit in s.literals), s.id


def test_code_beats_phrase_beats_status_only() -> None:
    body = '{"error":{"code":"server_is_overloaded","message":"Our servers are currently overloaded."}}'
    top = best_match(body, status=503)
    assert top is not None and top.signature.id == "openai.server_is_overloaded"
    assert top.score > sig.SCORE_PHRASE
    phrase_only = best_match("That model is currently overloaded with other requests.")
    assert phrase_only is not None and phrase_only.score < top.score
    bare = best_match("", status=503)
    assert bare is not None and bare.signature.id == "http.5xx" and bare.score == sig.SCORE_STATUS_ONLY


def test_never_on_429_alone() -> None:
    assert classify("", status=429) == []
    assert classify("HTTP 429") == []


def test_429_read_by_body_not_status() -> None:
    capacity = '{"error":{"message":"The engine is currently overloaded, please try again later",' \
               '"type":"engine_overloaded_error"}}'
    quota = '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}'
    assert best_match(capacity, status=429).signature.cause is Cause.CAPACITY  # type: ignore[union-attr]
    assert best_match(quota, status=429).signature.cause is Cause.QUOTA  # type: ignore[union-attr]


def test_gemini_resource_exhausted_is_quota_only_with_a_quota_failure() -> None:
    bare = '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",' \
           '"status":"RESOURCE_EXHAUSTED"}}'
    top = best_match(bare, status=429)
    assert top is not None and top.signature.id == "gemini.resource_exhausted"
    assert top.signature.strength is Strength.WEAK  # ambiguous: a small tier's quota or the shared pool
    detail = bare[:-2] + ',"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure",' \
                         '"violations":[{"quotaMetric":"m","quotaValue":"0"}]}]}}'
    top = best_match(detail, status=429)
    assert top is not None and top.signature.id == "gemini.quota_failure"
    assert top.signature.cause is Cause.QUOTA and top.signature.strength is Strength.STRONG
    # a word in the message is not the detail: without QuotaFailure the row does not fire
    assert "gemini.quota_failure" not in [m.signature.id for m in classify(bare + " quotaFailure?")]


def test_anthropic_forbidden_is_account_region_not_just_auth() -> None:
    body = '{"type":"error","error":{"type":"forbidden","message":"Request not allowed"},"request_id":"req_01"}'
    top = best_match(body, status=403)
    assert top is not None and top.signature.id == "anthropic.request_not_allowed"
    assert top.signature.cause is Cause.ACCOUNT and top.signature.strength is Strength.MODERATE
    html = "<html><title>403 Forbidden</title>Request not allowed by cloudflare</html>"
    assert "anthropic.request_not_allowed" not in [m.signature.id for m in classify(html, status=403)]


def test_memory_kind_is_row_data() -> None:
    assert {s.memory for s in SIGNATURES} <= {None, *sig.MEMORY_KINDS}
    assert all(s.cause is Cause.HARDWARE for s in SIGNATURES if s.memory)
    assert BY_ID["local.system_memory"].memory == "ram" and BY_ID["local.gpu_oom"].memory == "vram"
    assert BY_ID["local.vllm_kv_cache"].memory == "kv-cache"
    bad = ('[[signature]]\nid = "x.y"\ncause = "hardware"\nstrength = "weak"\ntitle = "t"\nremedy = "r"\n'
           'source = "s"\nmemory = "disk"\nphrases = ["x"]\n')
    with pytest.raises(ValueError, match=r"x\.y.*memory"):
        sig.load(bad)


def test_uppercase_codes_are_case_sensitive() -> None:
    ids = [m.signature.id for m in classify("Language model unavailable")]
    assert "gemini.model_overloaded" not in ids
    ids = [m.signature.id for m in classify('{"error":{"code":503,"status":"UNAVAILABLE"}}')]
    assert "gemini.model_overloaded" in ids


def test_unless_vetoes_and_explains() -> None:
    ids = [m.signature.id for m in classify("Incorrect API key provided: https://relay.example/v1")]
    assert "client.malformed_api_key" in ids and "openai.invalid_api_key" not in ids
    assert "net.connection_refused" in BY_ID["client.local_base_url"].explains


def test_header_rows() -> None:
    m = classify("", status=429, headers={"x-ratelimit-remaining-requests": "0"})
    assert m and m[0].signature.id == "quota.headers_exhausted"
    assert not any(x.signature.id == "quota.headers_exhausted"
                   for x in classify("", status=429, headers={"x-ratelimit-remaining-requests": "12"}))
    m = classify("", status=529, headers={"x-should-retry": "true"})
    assert m[0].signature.cause is Cause.CAPACITY
    assert not any(x.signature.id == "capacity.should_retry_529"
                   for x in classify("", status=500, headers={"x-should-retry": "true"}))


def test_origin_is_validated() -> None:
    with pytest.raises(ValueError, match="unknown origin"):
        classify("x", origin="carrier-pigeon")


def test_nothing_matches_normal_traffic() -> None:
    assert classify("2026-11-30T10:00:00Z INFO POST /v1/responses 200 in 812ms tokens=1234") == []
    assert best_match("") is None


@pytest.mark.parametrize(("text", "want"), [
    ('API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
     {"status": 529, "type": "overloaded_error", "message": "Overloaded"}),
    ('data: {"type":"response.failed","response":{"error":{"code":"server_is_overloaded","message":"x"}}}',
     {"code": "server_is_overloaded", "message": "x"}),
    ("Error code: 429 - {'error': {'message': 'Provider returned error', 'code': 429}}",
     {"status": 429, "message": "Provider returned error"}),
    ("unexpected status 403 Forbidden: <!DOCTYPE html>", {"status": 403}),
    ('{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}',
     {"status": 429, "type": "RESOURCE_EXHAUSTED"}),
    ("exceeded retry limit, last status: 429 Too Many Requests", {"status": 429}),
    ("API Error: Request rejected (429) · This request would exceed", {"status": 429}),
    ("nothing here", {"status": None, "code": None, "type": None, "message": None}),
])
def test_extract_error(text: str, want: dict[str, object]) -> None:
    got = extract_error(text)
    assert set(got) >= {"status", "code", "type", "message"}
    for key, value in want.items():
        assert got[key] == value, (key, got)


def test_excerpt_is_short_and_single_line() -> None:
    text = "x" * 5000 + "\nSelected model is at capacity. Please try a different model.\n" + "y" * 5000
    m = best_match(text)
    assert m is not None and len(m.excerpt) <= sig.EXCERPT_CHARS and "\n" not in m.excerpt
    assert "Selected model is at capacity" in m.excerpt


def test_bad_table_is_reported_with_the_row() -> None:
    bad = '[[signature]]\nid = "x.y"\ncause = "nope"\nstrength = "weak"\ntitle = "t"\nremedy = "r"\nsource = "s"\n'
    with pytest.raises(ValueError, match=r"x\.y"):
        sig.load(bad)


def test_literals_cover_the_table() -> None:
    lits = sig.all_literals()
    assert len(lits) == len(set(lits)) and "server_is_overloaded" in lits and "积极拒绝" in lits


def test_x_error_json_header_is_read() -> None:
    import base64

    blob = base64.b64encode(b'{"error":{"code":"server_is_overloaded"}}').decode().rstrip("=")
    top = best_match("", status=503, headers={"X-Error-Json": blob})
    assert top is not None and top.signature.id == "openai.server_is_overloaded"
    assert best_match("", headers={"x-error-json": "%%%not-base64%%%"}) is None
