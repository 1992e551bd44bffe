"""What the real clients write and print, read right: Codex rollouts, and the clients' printed errors (#34).

The captures are under `tests/data/clients/` (see its README): one failure in a session is one error, the
session's metadata never is, and no word of a path is a model.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from capdoctor.logs import run_logs
from capdoctor.logscan.outcomes import quiet
from capdoctor.logscan.scanner import find_model

CLIENTS = Path(__file__).parent / "data/clients"
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
