"""Logs that mix causes, as real clients write them: the primary cause, every other cause present and no
absent one, and advice that contradicts nothing measured. Timestamps are relative to now; the same log fed
to `capdoctor history` (through `logs --into`) reaches the same primary cause."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from capdoctor.logscan.command import run_logs
from capdoctor.model import Verdict
from capdoctor.verdict.advice import CAUSE_TEXT
from tests.conftest import run_cli

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def ago(minutes: float) -> str:
    """An ISO-8601 UTC time `minutes` before now, as clients write it."""
    return (NOW - timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def codex_tui_capacity_with_one_usage_limit() -> str:
    """~/.codex/log/codex-tui.log: capacity errors over two days, each retried and then completed; one
    usage-limit hit between them."""
    out = []
    for i, minutes in enumerate((2900, 2300, 1500, 700, 60)):
        out.append(
            f"{ago(minutes)} ERROR codex_core::codex: stream error: Selected model is at capacity. Please try a "
            "different model.; retrying sampling request (1/5 in 211ms)…\n"
        )
        out.append(f'{ago(minutes - 1)}  INFO codex_core::client: SSE event: {{"type":"response.completed","i":{i}}}\n')
        if i == 2:
            out.append(
                f"{ago(minutes - 30)} ERROR codex_core::codex: You've hit your usage limit. Upgrade to Pro "
                "(https://openai.com/chatgpt/pricing) or try again in 2 hours.\n"
            )
    return "".join(out)


def codex_rollout_capacity_with_one_usage_limit() -> str:
    """sessions/…/rollout-*.jsonl: the same story as Codex's session rollout records it."""
    out = []
    for i, minutes in enumerate((2900, 2300, 1500, 700, 60)):
        msg = "Selected model is at capacity. Please try a different model. Reconnecting... 1/5"
        out.append(
            _compact(
                {"timestamp": ago(minutes), "type": "event_msg", "payload": {"type": "stream_error", "message": msg}}
            )
        )
        out.append(
            _compact(
                {
                    "timestamp": ago(minutes - 1),
                    "type": "event_msg",
                    "payload": {"type": "task_complete", "last_agent_message": "done"},
                }
            )
        )
        if i == 2:
            limit = "You've hit your usage limit. Upgrade to Pro or try again in 2 hours."
            out.append(
                _compact(
                    {
                        "timestamp": ago(minutes - 30),
                        "type": "event_msg",
                        "payload": {"type": "error", "message": limit},
                    }
                )
            )
    return "\n".join(out) + "\n"


def _compact(doc: object) -> str:
    """JSON as the clients write it (serde_json, JSON.stringify): no spaces."""
    return json.dumps(doc, separators=(",", ":"))


def gemini_free_tier_day() -> str:
    """Gemini CLI / SDK JSON log lines: a day of free-tier 429 RESOURCE_EXHAUSTED (12) and one 503 overload."""
    out = []
    for k in range(12):
        out.append(
            json.dumps(
                {
                    "timestamp": ago(1400 - k * 110),
                    "level": "error",
                    "message": "[GoogleGenerativeAI Error]: [429 Too Many Requests] You exceeded your current quota, "
                    "please check your plan and billing details. status: RESOURCE_EXHAUSTED "
                    "quotaId: GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                }
            )
        )
        if k == 6:
            out.append(
                json.dumps(
                    {
                        "timestamp": ago(1400 - k * 110 - 5),
                        "level": "error",
                        "message": "[503 Service Unavailable] The model is overloaded. Please try again later. "
                        "status: UNAVAILABLE",
                    }
                )
            )
    return "\n".join(out) + "\n"


OVERLOADED = (
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
    '"request_id":"req_011CWfakeTestBurst0001"}'
)
BAD_KEY = 'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'


def claude_transcript_old_burst_then_key_refused() -> str:
    """~/.claude/projects/…/*.jsonl: an overload burst two days ago (recovered), today every request refused
    for the key with nothing succeeding since (errors as the synthetic assistant messages Claude Code writes)."""

    def error(minutes: float, text: str) -> str:
        content = [{"type": "text", "text": text}]
        return _compact(
            {
                "type": "assistant",
                "timestamp": ago(minutes),
                "isApiErrorMessage": True,
                "message": {"role": "assistant", "content": content},
            }
        )

    out = [error(2880 - k / 6, OVERLOADED) for k in range(6)]
    out.append(_compact({"type": "assistant", "timestamp": ago(2870), "message": {"stop_reason": "end_turn"}}))
    out += [error(30 - k * 10, BAD_KEY) for k in range(3)]
    return "\n".join(out) + "\n"


def codex_streams_cut_with_two_overloads() -> str:
    """codex-tui.log: streams cut again and again, two overload replies among them."""
    out = []
    for k in range(8):
        out.append(
            f"{ago(300 - k * 30)} ERROR codex_core::codex: stream disconnected before completion: error decoding "
            "response body\n"
        )
        if k in (2, 5):
            out.append(
                f"{ago(300 - k * 30 - 3)} ERROR codex_core::codex: unexpected status 503 Service Unavailable: "
                '{"error":{"message":"The server is overloaded","code":"server_is_overloaded"}}\n'
            )
    return "".join(out)


def ollama_oom_then_refused() -> str:
    """A local model that does not fit the GPU (the Ollama server's log), then the client's refused connections."""
    out = [f'{ago(20)} level=ERROR source=server.go msg="llama runner terminated" error="CUDA error: out of memory"\n']
    out += [f"{ago(15 - k)} Error: connect ECONNREFUSED 127.0.0.1:11434\n" for k in range(3)]
    return "".join(out)


def local_server_not_running() -> str:
    """Connection refused on 127.0.0.1:11434, nothing else: the local server is not running."""
    return "".join(f"{ago(15 - k)} Error: connect ECONNREFUSED 127.0.0.1:11434\n" for k in range(3))


def sdk_invalid_key_three_times() -> str:
    """Python logging from an app on the OpenAI SDK: a plain invalid_api_key 401, three times."""
    body = (
        "{'error': {'message': 'Incorrect API key provided: sk-proj-****abcd.', 'type': 'invalid_request_error', "
        "'code': 'invalid_api_key'}}"
    )
    return "".join(f"{ago(15 - k)} ERROR app: openai.AuthenticationError: Error code: 401 - {body}\n" for k in range(3))


def capacity_twelve_quota_two() -> str:
    """A Codex log of 12 capacity errors and 2 quota errors over a day (what `history` holds after import)."""
    out = [
        f"{ago(1300 - k * 100)} ERROR codex_core::codex: Selected model is at capacity. Please try a different model.\n"
        for k in range(12)
    ]
    out.insert(4, f"{ago(905)} ERROR codex_core::codex: Quota exceeded. Check your plan and billing details.\n")
    out.insert(9, f"{ago(405)} ERROR codex_core::codex: Quota exceeded. Check your plan and billing details.\n")
    return "".join(out)


@dataclass(frozen=True)
class Case:
    """One mixed log: what an engineer would say (primary cause, every other cause present), and the kinds of
    advice that must not appear (phrases that would contradict what the log shows)."""

    name: str
    write: Callable[[], str]
    cause: str
    also: frozenset[str]
    never: tuple[str, ...] = ()
    summary: tuple[str, ...] = ()
    step: str = ""


CASES = [
    Case(
        "codex TUI: intermittent capacity, one usage limit",
        codex_tui_capacity_with_one_usage_limit,
        "capacity",
        frozenset({"quota"}),
        ("TUN", "exit node"),
        ("5 times over 2 days", "every one recovered on retry"),
    ),
    Case(
        "codex rollout: intermittent capacity, one usage limit",
        codex_rollout_capacity_with_one_usage_limit,
        "capacity",
        frozenset({"quota"}),
        ("TUN", "exit node"),
        ("every one recovered on retry",),
    ),
    Case(
        "gemini: a day of free-tier 429s and one overload",
        gemini_free_tier_day,
        "quota",
        frozenset({"capacity"}),
        ("reset time shown",),
        ("12 times",),
    ),
    Case(
        "claude code: a past overload burst, the key refused now",
        claude_transcript_old_burst_then_key_refused,
        "account",
        frozenset({"capacity"}),
        ("Sign out", "Stop sharing"),
        ("refuses the key", "nothing completing after"),
    ),
    Case(
        "codex: streams cut again and again, two overloads",
        codex_streams_cut_with_two_overloads,
        "network",
        frozenset({"capacity"}),
        ("TUN", "exit node"),
    ),
    Case(
        "ollama: out of GPU memory, then connections refused",
        ollama_oom_then_refused,
        "hardware",
        frozenset({"network"}),
        ("TUN", "exit node"),
        ("refused connections",),
    ),
    Case(
        "the local server is not running",
        local_server_not_running,
        "network",
        frozenset(),
        ("TUN", "exit node", "system-proxy", "hotspot", "proxy variables"),
        ("local model server is not running",),
        "Start the local model server",
    ),
    Case(
        "an SDK app: invalid_api_key three times",
        sdk_invalid_key_three_times,
        "account",
        frozenset(),
        ("Sign out", "Stop sharing", "one machine"),
        ("refuses the key",),
    ),
    Case(
        "codex: 12 capacity errors and 2 quota errors",
        capacity_twelve_quota_two,
        "capacity",
        frozenset({"quota"}),
        ("TUN",),
    ),
]


def _verdict(tmp_path: Path, text: str) -> Verdict:
    log = tmp_path / "client.log"
    log.write_text(text, encoding="utf-8")
    return run_logs([str(log)], since="all", env={}, home=tmp_path, platform="linux").verdict


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_mixed_logs_name_the_primary_cause_and_every_other_present(tmp_path: Path, case: Case) -> None:
    verdict = _verdict(tmp_path, case.write())
    assert verdict.cause == case.cause, (verdict.summary, verdict.ranking)
    assert {a.cause for a in verdict.also} == case.also, [a.summary for a in verdict.also]
    assert verdict.confidence >= 0.9, verdict.ranking
    texts = [s.text for s in verdict.next_steps] + [s.text for a in verdict.also for s in a.next_steps]
    for phrase in case.never:  # whole words, as written
        assert not any(re.search(rf"\b{re.escape(phrase)}\b", t) for t in texts), (phrase, texts)
    for phrase in case.summary:
        assert phrase in verdict.summary, verdict.summary
    if case.step:
        assert any(t.startswith(case.step) for t in texts), texts
    for also in verdict.also:  # each contributing cause says how often and when, in words
        assert (
            also.count >= 1
            and also.first
            and also.last
            and also.summary.split(":")[0].lower() == CAUSE_TEXT[also.cause].name
        )


def test_plain_language_in_the_verdict(tmp_path: Path) -> None:
    """No signature ids, Python values or ISO timestamps in what a person reads (they stay in -v and JSON)."""
    from capdoctor.classifier.signatures import by_id

    ids = set(by_id())
    for case in CASES:
        verdict = _verdict(tmp_path, case.write())
        words = [verdict.summary, *(a.summary for a in verdict.also), *(s.text for s in verdict.next_steps)]
        for text in words:
            assert not re.search(r"\bNone\b|\d{4}-\d\d-\d\dT\d\d", text), text
            assert not {w.strip(".,;:()") for w in text.split()} & ids, text


@pytest.mark.parametrize(
    "case", [CASES[0], CASES[3], CASES[-1]], ids=["capacity+quota", "account after a burst", "capacity 12 + quota 2"]
)
def test_history_over_the_imported_log_reaches_the_same_primary_cause(tmp_path: Path, case: Case) -> None:
    log = tmp_path / "client.log"
    log.write_text(case.write(), encoding="utf-8")
    db = tmp_path / "h.db"
    logs = run_cli("logs", str(log), "--json", "--into", str(db), "--since", "30d")
    assert logs.returncode != 2, logs.stderr
    hist = run_cli("history", "--db", str(db), "--json", "--since", "30d")
    doc = json.loads(hist.stdout)
    assert json.loads(logs.stdout)["verdict"]["cause"] == case.cause
    assert doc["verdict"]["cause"] == case.cause, doc["verdict"]
    assert {a["cause"] for a in doc["verdict"]["also"]} == case.also
    assert doc["bursts"] == [] or all({"start", "end", "count", "cause", "models"} <= set(b) for b in doc["bursts"])


def test_the_logs_view_names_what_else_is_present(tmp_path: Path) -> None:
    log = tmp_path / "codex-tui.log"
    log.write_text(codex_tui_capacity_with_one_usage_limit(), encoding="utf-8")
    proc = run_cli("logs", str(log), "--since", "all")
    assert "Verdict from the logs: capacity" in proc.stdout, proc.stdout
    assert "Also: Quota or rate limit: Plan usage limit reached" in proc.stdout
    assert "codex.usage_limit_reached" not in proc.stdout  # ids only with -v


@pytest.mark.parametrize("suffix", [".md", ".html", ".json"])
def test_logs_report_writes_the_ticket_from_the_logs_alone(tmp_path: Path, suffix: str) -> None:
    """The ticket people build by hand today: the verdict, what else is present, the incidents, request ids."""
    log = tmp_path / "transcript.jsonl"
    log.write_text(claude_transcript_old_burst_then_key_refused(), encoding="utf-8")
    out = tmp_path / f"ticket{suffix}"
    proc = run_cli("logs", str(log), "--since", "all", "--report", str(out))
    assert proc.returncode != 2, proc.stderr
    text = out.read_text("utf-8")
    assert "req_011CWfakeTestBurst0001" in text
    if suffix == ".json":
        doc = json.loads(text)
        assert doc["schema"] == "capdoctor/report-v1" and doc["verdict"]["cause"] == "account"
        assert [a["cause"] for a in doc["verdict"]["also"]] == ["capacity"]
        burst = doc["checks"][0]["data"]["bursts"][0]
        assert burst["count"] == 6 and burst["cause"] == "capacity"
        assert burst["request_ids"] == ["req_011CWfakeTestBurst0001"]  # a few ids per incident, for the ticket
    else:
        assert "Also present" in text and "Incidents" in text and "account" in text


def test_logs_report_into_a_missing_folder_is_refused_before_the_scan(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text(local_server_not_running(), encoding="utf-8")
    proc = run_cli("logs", str(log), "--report", str(tmp_path / "nowhere" / "t.md"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nowhere" in proc.stderr, proc.stderr


@pytest.mark.scenario("healthy")
def test_a_client_config_that_does_not_parse_is_the_verdict_beside_a_healthy_target(sim: Any, home: Path) -> None:
    """The Client row fails and the verdict says why, with the file, line and column, not "no problem"."""
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n[model_providers.x\nname = 1\n', "utf-8")
    proc = run_cli(
        "diagnose",
        "--json",
        "--provider",
        "openai",
        "--model",
        "gpt-5.5",
        "--base-url",
        sim.base_url("openai"),
        "--api-key-env",
        "OPENAI_API_KEY",
        env={"OPENAI_API_KEY": "sk-test-fakeKEY0123456789abcdef"},
        timeout=120,
    )
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["cause"] == "client", doc["verdict"]
    assert "cannot read its own settings file" in doc["verdict"]["summary"]
    assert any("config.toml" in e and "line 2" in e for e in doc["verdict"]["evidence"]), doc["verdict"]["evidence"]
