"""What the real clients write and print, read right: Codex rollouts, and the clients' printed errors (#34).

The captures are under `tests/data/clients/` (see its README): one failure in a session is one error, the
session's metadata never is, and no word of a path is a model.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from capdoctor.logscan.command import run_logs
from capdoctor.logscan.explain import explain
from capdoctor.logscan.outcomes import quiet
from capdoctor.logscan.scanner import find_model

CLIENTS = Path(__file__).parents[1] / "data/clients"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
ROLLOUTS = {
    "rollout-2026-11-29T09-00-00-0199a1b2-capacity.jsonl": ("capacity", "codex.selected_model_at_capacity"),
    "rollout-2026-11-29T09-10-00-0199a1b2-quota.jsonl": ("quota", "openai.insufficient_quota"),
}


@pytest.mark.parametrize("name", sorted(ROLLOUTS))
def test_a_codex_session_with_one_failure_reports_one(name: str) -> None:
    cause, signature = ROLLOUTS[name]
    run = run_logs([str(CLIENTS / "codex" / name)], since=None, env={}, home=Path("/nonexistent"), platform="linux")
    matches = run.doc["matches"]
    assert [(m["signature"], m["count"]) for m in matches] == [(signature, 1)]
    assert run.doc["by_cause"] == {cause: 1}
    assert run.doc["by_model"] == {}  # no model from the HOME path or the instructions ("based on GPT-5")
    assert run.verdict.cause == cause and run.verdict.confidence >= 0.7


def test_a_discovered_codex_session_reports_its_one_failure(home: Path) -> None:
    day = home / ".codex/sessions/2026/11/29"
    day.mkdir(parents=True)
    for name in ROLLOUTS:
        shutil.copy(CLIENTS / "codex" / name, day / name)
    run = run_logs([], since="all", env={}, home=home, platform="linux", now=NOW)
    assert {m["signature"]: m["count"] for m in run.doc["matches"]} == {
        "codex.selected_model_at_capacity": 1,
        "openai.insufficient_quota": 1,
    }


def test_codex_metadata_records_are_never_errors() -> None:
    lines = (CLIENTS / "codex" / sorted(ROLLOUTS)[0]).read_text(encoding="utf-8").splitlines()
    kinds = {line.split('"type":"', 2)[1].split('"')[0]: line for line in lines}
    for kind in ("session_meta", "thread_settings_applied", "turn_context"):
        assert quiet(kinds[kind]), kind
    assert quiet(next(line for line in lines if '"type":"token_count"' in line))
    assert not quiet(next(line for line in lines if '"type":"task_complete"' in line))
    # a marker quoted far into an error's text is no record type
    assert not quiet('{"type":"error","message":"' + "x" * 200 + '\\"type\\":\\"session_meta\\" 503 overloaded"}')


@pytest.mark.parametrize(
    "text",
    [
        '{"cwd":"/tmp/pytest-of-ci/gpt-5-home/work","error":"Selected model is at capacity"}',
        "ERROR at /home/runner/claude-3-opus-tests/x.log: model overloaded",
        "C:\\Users\\gpt-5-user\\.codex\\log: 503",
    ],
)
def test_a_folder_of_a_path_is_no_model(text: str) -> None:
    assert find_model(text) is None


def test_models_next_to_a_path_are_still_read() -> None:
    assert find_model("error 429 for gpt-5.5 in /home/x/gpt-5-dir/") == "gpt-5.5"
    assert find_model("model openai/gpt-4o overloaded") == "gpt-4o"


GEMINI_REPORT = (
    "Error when talking to Gemini API Full report available at: "
    "/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-29T11-00-00-000Z.json"
)
GEMINI_END = "An unexpected critical error occurred:[object Object]"
PRINTED: list[tuple[str, str, str]] = [
    # Claude Code 2.1 prints its errors on stdout
    ("claude-code", "account", "Invalid API key · Fix external API key"),
    ("claude-code", "quota", "Credit balance is too low"),
    (
        "claude-code",
        "client",
        "There's an issue with the selected model (claude-opus-4-9). It may not exist or you may not have access "
        "to it. Run /model to pick a different model.",
    ),
    (
        "claude-code",
        "quota",
        "API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 50 "
        "requests per minute.",
    ),
    ("claude-code", "quota", "API Error: Request rejected (429) · Rate limited"),
    ("claude-code", "network", "API Error: Unable to connect to API (ECONNRESET)"),
    ("claude-code", "network", "Unable to connect to API (ECONNRESET)"),
    ("claude-code", "network", "API Error: Request timed out."),
    ("claude-code", "network", "Request timed out"),
    # Gemini CLI 0.61: a 503 overload is a RetryableQuotaError (capacity, despite the name), a 429 a
    # TerminalQuotaError, a reset and a refusal both "fetch failed sending request"; every failure ends alike
    (
        "gemini-cli",
        "capacity",
        'RetryableQuotaError: {"error":{"code":503,"message":"The model is overloaded. Please try again later.",'
        '"status":"UNAVAILABLE"}}',
    ),
    (
        "gemini-cli",
        "capacity",
        f"{GEMINI_REPORT}\nRetryableQuotaError: The model is overloaded. Please try again later.\n{GEMINI_END}",
    ),
    ("gemini-cli", "capacity", "RetryableQuotaError: Request failed with status code 503"),
    ("gemini-cli", "quota", "TerminalQuotaError: You have exhausted your daily quota on this model."),
    ("gemini-cli", "quota", f"You have exhausted your daily quota on this model.\n{GEMINI_END}"),
    ("gemini-cli", "network", "[API Error: exception TypeError: fetch failed sending request]"),
    ("gemini-cli", "network", f"{GEMINI_REPORT}\nfetch failed sending request\n{GEMINI_END}"),
    # Codex CLI 0.171 rewrites the provider's errors
    ("codex", "quota", "ERROR: Quota exceeded. Check your plan and billing details."),
    ("codex", "quota", "ERROR: exceeded retry limit, last status: 429 Too Many Requests"),
    ("codex", "quota", "Reconnecting... 1/1\nERROR: exceeded retry limit, last status: 429 Too Many Requests"),
    (
        "codex",
        "account",
        "ERROR: unexpected status 401 Unauthorized: Incorrect API key provided: sk-fake***7890. You can find your "
        "API key at https://platform.openai.com/account/api-keys.",
    ),
    ("codex", "capacity", "ERROR: Selected model is at capacity. Please try a different model."),
]


@pytest.mark.parametrize(
    ("client", "cause", "text"), PRINTED, ids=[f"{c}-{cause}-{i}" for i, (c, cause, _) in enumerate(PRINTED)]
)
def test_what_the_clients_print_is_read_right_and_believed(client: str, cause: str, text: str) -> None:
    """Each client's printed text (issue #34) by `capdoctor explain`: its cause, at a decisive confidence."""
    verdict = explain(text).verdict
    assert verdict.cause == cause, (client, verdict.ranking)
    assert verdict.confidence >= 0.7, (client, verdict.confidence)


def test_a_codex_session_without_a_failure_is_none(tmp_path: Path) -> None:
    """The metadata of a session that went well holds no mark of an error either (`unplaced`): `none`."""
    lines = (CLIENTS / "codex" / sorted(ROLLOUTS)[0]).read_text(encoding="utf-8").splitlines()[:-1]
    lines.append(
        '{"timestamp":"2026-11-29T09:00:01.950Z","type":"event_msg","payload":{"type":"task_complete",'
        '"turn_id":"1","last_agent_message":"Hi!"}}'
    )
    path = tmp_path / "rollout-ok.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = run_logs([str(path)], since=None, env={}, home=Path("/nonexistent"), platform="linux")
    assert run.doc["matches"] == [] and run.verdict.cause == "none"


def test_a_later_failed_turn_is_no_recovery_of_an_earlier_one(tmp_path: Path) -> None:
    """A failed turn's `task_complete` (its answer null, its `error` set) completed nothing: two failures in one
    session are two, neither recovered."""
    lines = (CLIENTS / "codex" / sorted(ROLLOUTS)[0]).read_text(encoding="utf-8").splitlines()
    again = lines[-1].replace("09:00:00.950Z", "09:05:00.950Z").replace('"turn_id":"1"', '"turn_id":"2"')
    path = tmp_path / "rollout-two.jsonl"
    path.write_text("\n".join([*lines, again]) + "\n", encoding="utf-8")
    run = run_logs([str(path)], since=None, env={}, home=Path("/nonexistent"), platform="linux")
    (match,) = run.doc["matches"]
    assert match["count"] == 2
    assert run.check.findings[0].data["recovered"] == 0
