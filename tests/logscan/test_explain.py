"""`capdoctor explain`: one decisive line is a verdict, conflicting evidence is inconclusive, a text without an
error is `none`; the JSON schema, stdin and usage errors, exit codes as `diagnose`, redaction, and the same cause
as `capdoctor logs` on the same text. Runs through the real CLI where the contract is the command's."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from capdoctor.cli.exitcodes import ExitCode
from capdoctor.errors import UsageError
from capdoctor.logscan.explain import SCHEMA, explain, read_text

DECISIVE = [
    (
        'anthropic.RateLimitError: Error code: 429 - {"type":"error","error":{"type":"rate_limit_error",'
        '"message":"Number of requests has exceeded your organization rate limit"}}',
        "quota",
    ),
    ("status code 429", "quota"),
    ("HTTP 401 Unauthorized", "account"),
    ("403 Forbidden: You are not allowed to use this model", "account"),
    ("Error code: 400 - {'error': {'message': 'Invalid model: gpt-9', 'type': 'invalid_request_error'}}", "client"),
    ("Error: 503 Service Unavailable - the server is busy, please try again later", "capacity"),
    ("HTTP 429: the server is under heavy load, please retry", "capacity"),
    ("ollama: POST http://127.0.0.1:11434/api/chat 500: CUDA error: out of memory", "hardware"),
    ("错误：服务器繁忙，请稍后再试 (HTTP 503)", "capacity"),
    ("请求失败：状态码 401，无效的令牌", "account"),
    ("调用失败：您的账户余额不足，请充值", "quota"),
    ("接口返回 400：模型不存在", "client"),
    ("模型加载失败：显存不足", "hardware"),
    ("Error: connect ECONNREFUSED 127.0.0.1:7890", "network"),
]


@pytest.mark.parametrize(("text", "cause"), DECISIVE, ids=[f"{c}-{i}" for i, (_, c) in enumerate(DECISIVE)])
def test_one_decisive_line_is_a_verdict(text: str, cause: str) -> None:
    result = explain(text)
    assert result.verdict.cause == cause, (result.verdict.ranking, result.evidence)
    assert result.verdict.confidence >= 0.5
    assert result.evidence and result.evidence[0].cause == cause and result.evidence[0].layer


def test_two_errors_in_a_paste_are_both_named() -> None:
    """A reset, then a spent quota: both are present, not in conflict; the quota the paste ends on blocks."""
    text = 'Error: read ECONNRESET\nError: {"error":{"type":"insufficient_quota","code":"insufficient_quota"}}\n'
    verdict = explain(text).verdict
    assert verdict.cause == "quota" and [a.cause for a in verdict.also] == ["network"]


def test_one_record_that_points_two_ways_is_inconclusive() -> None:
    text = 'HTTP 529 {"type":"error","error":{"type":"overloaded_error"}} insufficient_quota: 429 Too Many Requests'
    verdict = explain(text).verdict
    assert verdict.cause == "inconclusive", verdict.ranking


def test_an_error_body_under_its_status_line_is_judged_with_it() -> None:
    """A bare status on one line and the provider's body on the next are one record: the 429 speaks of load."""
    text = (
        "mistralai.models.sdkerror.SDKError: API error occurred: Status 429\n"
        '{"object":"error","message":"Service tier capacity exceeded for this model.","code":"3505"}\n'
    )
    result = explain(text)
    assert result.verdict.cause == "capacity"
    assert [e.cause for e in result.evidence] == ["capacity"]


def test_a_text_without_an_error_is_none() -> None:
    result = explain("2026-11-30T10:00:00Z INFO POST /v1/responses 200 in 812ms tokens=1234\nall good")
    assert result.verdict.cause == "none" and result.evidence == ()
    assert "no error" in result.verdict.summary


def test_the_json_document(cli: Any) -> None:
    proc = cli("explain", "--json", DECISIVE[0][0])
    assert proc.returncode == int(ExitCode.QUOTA), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == SCHEMA and doc["version"]
    assert {"cause", "confidence", "summary", "next_steps", "also"} <= set(doc["verdict"])
    assert doc["verdict"]["cause"] == "quota" and 0 < doc["verdict"]["confidence"] <= 1
    assert doc["verdict"]["next_steps"] and all("text" in s for s in doc["verdict"]["next_steps"])
    for e in doc["evidence"]:
        assert set(e) == {"signature", "title", "cause", "layer", "strength", "excerpt"}
        assert e["layer"] in ("structure", "provider", "phrase", "status")


def test_stdin_with_dash_and_with_a_pipe(cli: Any) -> None:
    text = 'Traceback (most recent call last):\n  File "x.py", line 1\nopenai.APIConnectionError: Connection error.\n'
    for args in (("explain", "-"), ("explain",)):
        proc = cli(*args, "--json", stdin=text)
        assert proc.returncode == int(ExitCode.NETWORK), proc.stderr
        assert json.loads(proc.stdout)["verdict"]["cause"] == "network"


def test_terminal_view_and_exit_codes(cli: Any) -> None:
    proc = cli("explain", "Selected model is at capacity. Please try a different model.")
    assert proc.returncode == int(ExitCode.CAPACITY)
    assert "Cause:" in proc.stdout and "capacity" in proc.stdout and "Next steps" in proc.stdout
    assert "provider" in proc.stdout  # the layer that decided
    assert cli("explain", "nothing wrong here").returncode == int(ExitCode.OK)


@pytest.mark.parametrize(
    ("args", "stdin", "tty", "message"),
    [
        ([], "", True, "no error text"),
        (["-"], "   \n", False, "empty"),
        ([], "x" * (16 * 1024 * 1024 + 2), False, "larger than"),
    ],
)
def test_bad_input_is_a_usage_error(args: list[str], stdin: str, tty: bool, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        read_text(args, io.StringIO(stdin), tty)


def test_empty_stdin_through_the_cli(cli: Any) -> None:
    proc = cli("explain", stdin="")
    assert proc.returncode == int(ExitCode.USAGE)
    assert proc.stdout == "" and "empty" in proc.stderr and "Traceback" not in proc.stderr


def test_secrets_never_leave(cli: Any) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    text = f"401 Incorrect API key provided: {key}. Authorization: Bearer {key}9"
    for args in (("explain", "--json", text), ("explain", "-v", text)):
        proc = cli(*args)
        assert proc.returncode == int(ExitCode.ACCOUNT), proc.stderr
        assert key not in proc.stdout and "A1b2C3d4" not in proc.stdout


@pytest.mark.parametrize(("text", "cause"), DECISIVE, ids=[f"{c}-{i}" for i, (_, c) in enumerate(DECISIVE)])
def test_logs_reaches_the_same_cause(text: str, cause: str, tmp_path: Path, cli: Any) -> None:
    path = tmp_path / "paste.log"
    path.write_text(text, encoding="utf-8")
    proc = cli("logs", str(path), "--json")
    assert json.loads(proc.stdout)["verdict"]["cause"] == cause == explain(text).verdict.cause


def test_a_client_crash_yields_to_the_refusal_beside_it() -> None:
    """A client's own type error decides alone, but beside an API refusal it is only context: clients that did
    not expect the refusal crash on it, and the refusal is the cause (`yields` in phrases.toml)."""
    crash = "TypeError: Cannot read properties of undefined (reading 'choices')"
    alone = explain(crash)
    assert alone.verdict.cause == "client"
    assert [(e.signature, e.strength) for e in alone.evidence] == [("phrase.client_bug.en", "moderate")]
    both = explain(crash + "\nopenai.RateLimitError: Error code: 429 - Rate limit reached for requests")
    assert both.verdict.cause == "quota"
    assert {e.signature: e.strength for e in both.evidence}["phrase.client_bug.en"] == "context"


def test_excerpts_are_cut_at_word_boundaries() -> None:
    text = (
        'Error: {"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your '
        'current quota, please check your plan and billing details for more information"}}'
    )
    for e in explain(text).evidence:
        assert e.excerpt.endswith(("…", "}")) and not e.excerpt.endswith("quot"), e.excerpt
