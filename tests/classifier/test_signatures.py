"""The classification engine: well-formed tables, every row matching its examples, the layers in order, the
status read in all its spellings and judged in context, and the prefilter literals covering everything the
engine can match (a property test over generated texts), so the log scanner may evaluate candidates only."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capdoctor.classifier import tables as tbl
from capdoctor.classifier.engine import Engine, Match
from capdoctor.classifier.signatures import Layer, best_match, by_id, classify, engine, extract_error, rows
from capdoctor.classifier.structure import STATUS_GROUP
from capdoctor.model import Cause, Strength

TEXT_ROWS = [r for r in rows() if r.layer is not Layer.STATUS]


def _ids(matches: list[Match]) -> list[str]:
    return [m.signature.id for m in matches]


# ------------------------------------------------------------------------------------------ the tables
def test_tables_are_well_formed() -> None:
    ids = [r.id for r in rows()]
    assert len(ids) == len(set(ids)) >= 150
    for r in rows():
        assert re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", r.id), r.id
        assert r.title and r.remedy and r.source, r.id
        for e in r.explains:
            assert e in by_id() and e != r.id
        if r.layer not in (Layer.STATUS, Layer.WORDS):  # those match through a status or the word counts
            assert r.names or r.codes or r.phrases or r.headers, f"{r.id} matches nothing"
            assert r.literals or r.codes or r.headers, f"{r.id} has no prefilter literal"
            assert all(lit == lit.lower() for lit in r.literals), r.id
    layers = {r.layer for r in rows()}
    assert layers == set(Layer)


def test_every_cause_has_strong_rows_and_phrase_families_in_english_and_chinese() -> None:
    for cause in Cause:
        assert any(r.cause is cause and r.strength is Strength.STRONG for r in rows()), cause
        langs = {r.lang for r in rows() if r.layer is Layer.PHRASE and r.cause is cause}
        assert {"en", "zh"} <= langs, (cause, langs)


def test_every_status_rule_has_a_meaning_without_words() -> None:
    for rule in engine().tables.rules:
        assert any(not o.words and o.text is None for o in rule.outcomes), rule.id
        assert all(o.row.layer is Layer.STATUS for o in rule.outcomes)


@pytest.mark.parametrize("row", [r for r in rows() if r.examples], ids=lambda r: r.id)
def test_row_matches_its_examples(row: tbl.Signature) -> None:
    for example in row.examples:
        assert row.id in _ids(classify(example, origin="log")), example


def test_names_and_spellings_match_their_examples() -> None:
    for name in engine().tables.status_names:
        for example in name.examples:
            hit = engine().reader.read(example) or None
            found = classify(example, origin="log")
            assert hit is not None or any(m.layer is Layer.STATUS for m in found), (name.id, example)
    for sp in engine().tables.spellings:
        for example in sp.examples:
            hit = engine().reader.read(example)
            assert hit is not None and 400 <= hit.status <= 599, (sp.id, example)


def test_bad_rows_are_reported_with_their_id() -> None:
    bad = {
        "providers.toml": '[[signature]]\nid = "x.y"\ncause = "nope"\nstrength = "weak"\ntitle = "t"\n'
        'remedy = "r"\nsource = "s"\n'
    }
    with pytest.raises(ValueError, match=r"x\.y"):
        tbl.load(bad)
    memory = {
        "providers.toml": '[[signature]]\nid = "x.y"\ncause = "hardware"\nstrength = "weak"\ntitle = "t"\n'
        'remedy = "r"\nsource = "s"\nmemory = "disk"\nphrases = ["x"]\n'
    }
    with pytest.raises(ValueError, match=r"x\.y.*memory"):
        tbl.load(memory)


def test_another_language_is_one_more_row() -> None:
    """A phrase family learns Finnish from one data row, without code."""
    files = {name: tbl.resources.files("capdoctor.classifier").joinpath(name).read_text("utf-8") for name in tbl.FILES}
    text = "Palvelin on ylikuormitettu, yritä myöhemmin uudelleen"
    assert Engine(tbl.load(files)).classify(text) == []
    files["phrases.toml"] += (
        '\n[[phrase]]\nid = "phrase.overloaded.fi"\nfamily = "overloaded"\nlang = "fi"\nphrases = [\'ylikuormit\']\n'
    )
    top = Engine(tbl.load(files)).classify(text)[0]
    assert top.signature.id == "phrase.overloaded.fi" and top.signature.cause is Cause.CAPACITY


def test_a_rows_literals_are_derived_from_its_phrases() -> None:
    """A row that spells out no literals is anchored on the literals every match of its phrases contains; one
    that spells them out keeps them; a phrase with no usable literal fails the load, naming the row."""
    row = '[[signature]]\nid = "x.y"\ncause = "capacity"\nstrength = "weak"\ntitle = "t"\nremedy = "r"\nsource = "s"\n'
    derived = tbl.load({"providers.toml": row + "phrases = ['Fleet (?:is )?saturated', 'no free slots?']\n"})
    assert derived.by_id["x.y"].literals == ("fleet saturated", "fleet is saturated", "no free slot")
    spelled = tbl.load({"providers.toml": row + "phrases = ['fleet saturated']\nliterals = ['Saturated']\n"})
    assert spelled.by_id["x.y"].literals == ("saturated",)
    with pytest.raises(ValueError, match=r"x\.y: no usable prefilter literal"):
        tbl.load({"providers.toml": row + "phrases = ['fleet saturated', '\\d+']\n"})


def test_a_spellings_literals_are_derived_from_its_pattern() -> None:
    spelling = "[[spelling]]\nid = \"sp\"\npattern = '\\bupstream status {s}'\n"
    assert tbl.load({"statuses.toml": spelling}).spellings[0].literals == ("upstream status 4", "upstream status 5")


def test_what_a_row_says_beyond_its_cause_is_row_data() -> None:
    assert {r.kind for r in rows()} <= {None, *tbl.ROW_KINDS}
    assert by_id()["openai.model_not_found"].kind == "missing-model"
    row = '[[signature]]\nid = "x.y"\ncause = "client"\nstrength = "weak"\ntitle = "t"\nremedy = "r"\nsource = "s"\n'
    with pytest.raises(ValueError, match=r"x\.y.*kind"):
        tbl.load({"providers.toml": row + 'codes = ["nope"]\nkind = "gone"\n'})


def test_every_transport_reader_ends_with_a_rule_for_anything_else() -> None:
    with pytest.raises(ValueError, match="the path transport rules must end with one without a condition"):
        tbl.load({"structure.toml": '[transport]\npath = [{kind = "x", names = ["a"]}]\nexchange = [{kind = "y"}]\n'})


def test_memory_kind_is_row_data() -> None:
    assert {r.memory for r in rows()} <= {None, *tbl.MEMORY_KINDS}
    assert all(r.cause is Cause.HARDWARE for r in rows() if r.memory)
    assert by_id()["local.system_memory"].memory == "ram" and by_id()["local.gpu_oom"].memory == "vram"
    assert by_id()["phrase.gpu_memory.en"].memory == "vram" and by_id()["name.oom"].memory == "vram"


def test_importing_compiles_nothing() -> None:
    code = (
        "import capdoctor.classifier.signatures, capdoctor.classifier.engine as e, capdoctor.classifier.tables as t;"
        "print(e.engine.cache_info().currsize, t.tables.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "0"]


# ------------------------------------------------------------------------------------------ the layers
@pytest.mark.parametrize(
    ("text", "cause", "layer"),
    [
        # structure: exception, error-type, gRPC and errno names
        ("anthropic.RateLimitError: Error code: 429", "quota", "status"),
        ("openai.AuthenticationError: Error code: 401", "account", "status"),
        ("anthropic.PermissionDeniedError: Error code: 403", "account", "status"),
        ("openai.NotFoundError: Error code: 404 - the model gpt-9 is unknown here", "client", "status"),
        ("litellm.APIConnectionError: APIConnectionError: OpenAIException", "network", "structure"),
        ("openai.APITimeoutError: Request timed out.", "network", "structure"),
        (
            "botocore.errorfactory.ThrottlingException: An error occurred (ThrottlingException) when calling the "
            "InvokeModel operation",
            "quota",
            "status",
        ),
        ("botocore.errorfactory.AccessDeniedException: An error occurred (AccessDeniedException)", "account", "status"),
        ("An error occurred (ValidationException) when calling the Converse operation", "client", "structure"),
        (
            "botocore.errorfactory.ServiceUnavailableException: An error occurred (ServiceUnavailableException)",
            "capacity",
            "status",
        ),
        ("grpc._channel._InactiveRpcError: status = StatusCode.UNAVAILABLE", "capacity", "status"),
        ("Error: read ECONNRESET", "network", "structure"),
        ("RuntimeError: CUDA_ERROR_OUT_OF_MEMORY", "hardware", "structure"),
        ("litellm.ContextWindowExceededError: litellm.BadRequestError", "client", "structure"),
        ("litellm.BudgetExceededError: Budget has been exceeded! Current cost: 10.5", "quota", "structure"),
        # provider codes and messages
        ('{"error":{"code":"server_is_overloaded","message":"x"}}', "capacity", "provider"),
        ("Your credit balance is too low to access the Anthropic API.", "quota", "provider"),
        # phrase families, English and Chinese
        ("upstream model is at capacity right now", "capacity", "phrase"),
        ("服务器繁忙，请稍后再试", "capacity", "phrase"),
        ("您的账户已欠费，请充值后重试", "quota", "phrase"),
        ("无效的令牌", "account", "phrase"),
        ("模型不存在", "client", "phrase"),
        ("Unsupported parameter: 'temperature' is not supported with this model.", "client", "phrase"),
        ("Unexpected endpoint or method. (POST /v1/responses)", "client", "phrase"),
        (
            "litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you are trying to call.",
            "client",
            "phrase",
        ),
    ],
)
def test_each_layer_decides_and_says_so(text: str, cause: str, layer: str) -> None:
    top = best_match(text, origin="log")
    assert top is not None, text
    assert (top.signature.cause.value, top.layer.value) == (cause, layer), _ids(classify(text, origin="log"))


@pytest.mark.parametrize(
    "text",
    [
        "status code 429",
        "HTTP 429",
        "Status: 429",
        "Error code: 404",
        "status_code: 503",
        "429 Too Many Requests",
        "-> 502",
        "API Error: 529",
        "<Response [429]>",
        "HTTPError: HTTP Error 429: Too Many Requests",
        "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url",
        "Request rejected (429)",
        '{"error":{"code":429,"message":"x"}}',
        "Too Many Requests (429)",
        "服务回复状态错误[429]",
    ],
)
def test_bare_statuses_in_their_spellings_reach_the_status_layer(text: str) -> None:
    matches = classify(text, origin="log")
    assert any(m.layer is Layer.STATUS for m in matches), (text, _ids(matches))


@pytest.mark.parametrize(
    ("text", "status", "local", "row"),
    [
        ("", 429, False, "http.429"),
        ("The engine is currently overloaded, please try again later", 429, False, "http.429.capacity"),
        ("We are experiencing high demand", 429, False, "http.429.capacity"),
        ("", 503, False, "http.503"),
        ("", 529, False, "http.503"),
        ("", 502, False, "http.5xx"),
        ("", 500, True, "http.5xx.local"),
        ("", 503, True, "http.503.local"),
        ("proxy error: socket hang up", 503, False, "http.503.network"),
        ("An internal error has occurred. Please retry", 500, False, "http.5xx.capacity"),
        ("", 401, False, "http.401"),
        ("You didn't provide an API key.", 401, False, "http.401.client"),
        ("", 403, False, "http.403"),
        ("<html><title>Attention Required! | Cloudflare</title>", 403, False, "http.403.network"),
        ("", 402, False, "http.402"),
        ("The model gpt-9 was not found", 404, False, "http.404.client"),
        ("The requested resource (model gpt-9) is missing", 404, False, "http.404.model"),
        ("Cannot POST /v1/chat/completions", 404, False, "http.404.client"),
        ("<html><center>nginx</center></html>", 404, False, "http.404.endpoint"),
        ("", 404, False, "http.404"),
        ("", 400, False, "http.400"),
        ("Your credit balance is too low to access the Anthropic API.", 400, False, "http.400.quota"),
        ("", 407, False, "http.407"),
    ],
)
def test_status_semantics_in_context(text: str, status: int, local: bool, row: str) -> None:
    got = [m for m in classify(text, status=status, local=local) if m.layer is Layer.STATUS]
    assert [m.signature.id for m in got] == [row]


def test_a_local_server_5xx_is_never_capacity() -> None:
    for status in (500, 502, 503, 504, 529):
        assert all(
            m.signature.cause is not Cause.CAPACITY
            for m in classify("", status=status, local=True)
            if m.layer is Layer.STATUS
        )
    # and the text itself can say the server is local
    top = best_match("POST http://127.0.0.1:11434/api/chat: 500 Internal Server Error", origin="log")
    assert top is not None and top.signature.id == "http.5xx.local"


def test_a_status_that_says_who_you_are_vetoes_load_words() -> None:
    """`not_statuses`: a wrapper's "may be temporarily unavailable" beside a 401 is a guess; the status is
    the fact. The same words with a status that allows them (or none) still speak for capacity."""
    text = "Server returned {} - the model may be temporarily unavailable or busy. Try again in a moment."
    for status in (401, 403, 407):
        assert all(m.signature.cause is not Cause.CAPACITY for m in classify(text.format(status))), status
    for status in (429, 503):
        assert any(m.signature.id.startswith("phrase.") for m in classify(text.format(status))), status
    assert "phrase.unavailable.en" in _ids(classify("the model may be temporarily unavailable"))
    with_caller = classify("service temporarily unavailable", status=401)
    assert "phrase.unavailable.en" not in _ids(with_caller)


@pytest.mark.parametrize(
    ("text", "row"),
    [
        ("Qwen 72B 推理到 10k token 时报错OOM", "phrase.memory.en"),
        ("接口返回HTTP 429，请稍后", "http.429"),
        ("调用失败status code 503，请重试", "http.503"),
    ],
)
def test_word_boundaries_are_ascii(text: str, row: str) -> None:
    """Chinese text glues English terms on without a space; the tables' `\\b` still finds them."""
    assert row in _ids(classify(text)), _ids(classify(text))


def test_ascii_boundaries_still_separate_words() -> None:
    assert "phrase.memory.en" not in _ids(classify("zoom meeting failed"))
    assert "phrase.memory.en" in _ids(classify("runner died: OOM"))


def test_exception_names_are_read_inside_prefixed_class_names() -> None:
    """SDKs prefix a provider's name onto the class (`OpenAIRateLimitError`); a function of that name in a
    stack trace (`isRateLimitError`) is not the class."""
    assert "http.429" in _ids(classify("OpenAIRateLimitError (status code unknown)"))
    assert "name.connection_error" in _ids(classify("MistralAPIConnectionError: peer went away"))
    assert classify("    at isRateLimitError (retry.js:12:7)") == []


def test_strength_then_specificity_orders_matches() -> None:
    body = '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}'
    found = classify(body, status=429)
    assert found[0].signature.id == "openai.insufficient_quota" and found[0].layer is Layer.PROVIDER
    assert any(m.signature.id == "http.429" for m in found)


def test_ordinary_lines_are_not_errors() -> None:
    ordinary = [
        '127.0.0.1 - - [30/Nov/2026:10:00:00 +0000] "GET /favicon.ico HTTP/1.1" 404 153 "-" "curl/8.4"',
        'INFO:     127.0.0.1:52044 - "GET /v1/models HTTP/1.1" 404 Not Found',
        '{"level":"info","method":"GET","path":"/v1/x","status":404,"duration_ms":3}',
        "method=GET path=/health status=503 duration=2ms",
        "2026-11-30T10:00:00Z INFO account settings loaded; proxy disabled; daily summary sent",
        "2026-11-30T10:00:00Z INFO POST /v1/responses 200 in 812ms tokens=1234",
        "GET /x 404",
        "retrying in 2s (attempt 1/5)",
    ]
    for line in ordinary:
        assert classify(line, origin="log") == [], line


def test_uppercase_names_are_case_sensitive() -> None:
    assert not any(m.layer is Layer.STATUS for m in classify("Language model unavailable"))
    assert any(m.signature.id == "http.503" for m in classify('{"error":{"status":"UNAVAILABLE"}}'))


def test_unless_vetoes_and_explains() -> None:
    ids = _ids(classify("Incorrect API key provided: https://relay.example/v1"))
    assert "client.malformed_api_key" in ids and "openai.invalid_api_key" not in ids
    assert "phrase.connection.en" in by_id()["client.local_base_url"].explains


def test_header_rows() -> None:
    m = classify("", status=429, headers={"x-ratelimit-remaining-requests": "0"})
    assert m and m[0].signature.id == "quota.headers_exhausted"
    assert "quota.headers_exhausted" not in _ids(
        classify("", status=429, headers={"x-ratelimit-remaining-requests": "12"})
    )
    assert classify("", status=529, headers={"x-should-retry": "true"})[0].signature.cause is Cause.CAPACITY
    assert "capacity.should_retry_529" not in _ids(classify("", status=500, headers={"x-should-retry": "true"}))


def test_x_error_json_header_is_read() -> None:
    import base64

    blob = base64.b64encode(b'{"error":{"code":"server_is_overloaded"}}').decode().rstrip("=")
    top = best_match("", status=503, headers={"X-Error-Json": blob})
    assert top is not None and top.signature.id == "openai.server_is_overloaded"
    assert [m.layer for m in classify("", headers={"x-error-json": "%%%not-base64%%%"})] == []


def test_origin_is_validated() -> None:
    with pytest.raises(ValueError, match="unknown origin"):
        classify("x", origin="carrier-pigeon")


def test_excerpt_is_short_and_single_line() -> None:
    text = "x" * 5000 + "\nSelected model is at capacity. Please try a different model.\n" + "y" * 5000
    m = best_match(text)
    assert m is not None and len(m.excerpt) <= 160 and "\n" not in m.excerpt
    assert "Selected model is at capacity" in m.excerpt


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            {"status": 529, "type": "overloaded_error", "message": "Overloaded"},
        ),
        (
            'data: {"type":"response.failed","response":{"error":{"code":"server_is_overloaded","message":"x"}}}',
            {"code": "server_is_overloaded", "message": "x"},
        ),
        (
            "Error code: 429 - {'error': {'message': 'Provider returned error', 'code': 429}}",
            {"status": 429, "message": "Provider returned error"},
        ),
        (
            '{"error":{"message":"Provider returned error","code":403,"metadata":{"raw":"{\\"error\\":{\\"code\\":'
            '\\"unsupported_country_region_territory\\",\\"message\\":\\"Country not supported\\"}}"}}}',
            {"status": 403, "code": "unsupported_country_region_territory", "message": "Country not supported"},
        ),
        ("unexpected status 403 Forbidden: <!DOCTYPE html>", {"status": 403}),
        (
            '{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}',
            {"status": 429, "type": "RESOURCE_EXHAUSTED"},
        ),
        ("exceeded retry limit, last status: 429 Too Many Requests", {"status": 429}),
        ("nothing here", {"status": None, "code": None, "type": None, "message": None}),
    ],
)
def test_extract_error(text: str, want: dict[str, object]) -> None:
    got = extract_error(text)
    for key, value in want.items():
        assert got[key] == value, (key, got)


# ------------------------------------------------------------------------- literals cover the engine
def _samples(pattern: str) -> st.SearchStrategy[str]:
    """Texts containing a match of `pattern`, in mixed case, with junk around it."""
    return st.from_regex(re.compile(pattern, re.IGNORECASE), fullmatch=False)


def _agree(text: str) -> None:
    eng = engine()
    ids = eng.literal_ids(text)
    gated = eng.classify_candidates(text, ids, origin="log")
    ungated = eng.classify_candidates(text, ids, origin="log", gated=False)
    assert _ids(gated) == _ids(ungated), (text, _ids(ungated))


EXAMPLES = int(os.environ.get("CAPDOCTOR_PROPERTY_EXAMPLES", "6"))
"""Generated texts per pattern (raise it for a deeper one-off run: CAPDOCTOR_PROPERTY_EXAMPLES=200; every row added
in the ninth round passed with 150-200). Six keeps the ~1,060 patterns' run near a minute, about half of CI's
growth from the ninth round's tests; under Hypothesis's CI profile the examples are derandomized, so CI checks the
same texts every run whatever the count, and the deeper runs are the ones that search."""
PATTERNS = [(r.id, p) for r in TEXT_ROWS for p in r.phrases] + [
    (f"spelling:{sp.id}", sp.pattern.replace("{s}", STATUS_GROUP)) for sp in engine().tables.spellings
]


@pytest.mark.parametrize(("row_id", "pattern"), PATTERNS, ids=[f"{i}-{n}" for n, (i, _) in enumerate(PATTERNS)])
def test_every_match_contains_a_prefilter_literal(row_id: str, pattern: str) -> None:
    """Whatever a row (or status spelling) matches, one of its literals is in the text: evaluating only the
    candidates that the prefilter's literal ids select is the same as evaluating everything.

    The property is a fresh function per pattern rather than `@given` on this parametrized test: Hypothesis's
    pytest plugin wraps a parametrized test's settings once per case (parent of parent of ...), and with a
    thousand cases under its `ci` profile (set when `CI` is in the environment) reading that chain overflows
    the recursion limit."""

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(text=_samples(pattern))
    def holds(text: str) -> None:
        _agree(text)

    holds()


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.sampled_from(
            [
                "Error",
                "error:",
                "HTTP",
                "status",
                "code",
                "429",
                "503",
                "404",
                "401",
                "{",
                "}",
                '"code":',
                '"status":',
                "->",
                "rate limit",
                "overloaded",
                "quota",
                "account",
                "proxy",
                "daily",
                "model",
                "not found",
                "timeout",
                "RateLimitError",
                "ECONNRESET",
                "UNAVAILABLE",
                "繁忙",
                "余额不足",
                "GET /x",
                'HTTP/1.1"',
                "Too Many Requests",
                "connection",
                "refused",
                "invalid",
                "key",
                "token",
                "out of memory",
                "CUDA",
                "(",
                ")",
                ":",
                " ",
                "\n",
                "\\u7e41\\u5fd9",
                "\\u4f59\\u989d\\u4e0d\\u8db3",
                "\\u6a21\\u578b\\u4e0d\\u5b58\\u5728",
            ]
        ),
        max_size=14,
    ).map(" ".join)
)
def test_generated_lines_are_candidates_whenever_the_engine_judges_them(text: str) -> None:
    """The scanner's prefilter, built from the engine's literals, selects every line the engine judges."""
    _agree(text)
    if classify(text, origin="log"):
        for prefer in (None, "python"):
            assert _prefilter(prefer).ends(text.encode()), (prefer, text)


@functools.cache
def _prefilter(prefer: str | None) -> Any:
    """The scanner's prefilter over the engine's literals (Hyperscan where it exists, or the pure-Python one),
    built once: building it per generated line took most of the property test's time."""
    from capdoctor.logscan.prefilter import build_prefilter

    return build_prefilter(engine().literals(), prefer=prefer)


def test_literal_units_name_what_they_trigger() -> None:
    eng = engine()
    units = {u for i in eng.literal_ids("server_is_overloaded") for u in eng.literal_units(i)}
    assert "openai.server_is_overloaded" in units
    units = {u for i in eng.literal_ids("status code 429") for u in eng.literal_units(i)}
    assert "spelling:status-code" in units
