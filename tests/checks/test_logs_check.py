"""The `logs` check and `capdoctor logs`: discovery in fake homes laid out like each client's, findings that
combine with the verdict, the logs-v1 JSON, exit codes, redaction, and the terminal view."""

from __future__ import annotations

import io
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from capdoctor.checks.logs import LogsCheck
from capdoctor.errors import UsageError
from capdoctor.logscan import client_logs
from capdoctor.logscan.command import logs_command, run_logs
from capdoctor.model import Cause, Status, Strength
from capdoctor.run.context import Context, Target

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
FAKE_KEY = "sk-test-fake-0123456789abcdefghij"


def _write(path: Path, text: str, *, age_days: float = 0.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    t = time.time() - age_days * 86400
    os.utime(path, (t, t))
    return path


def _codex_home(home: Path) -> None:
    _write(
        home / ".codex/log/codex-tui.log",
        "2026-11-29T09:00:00.000Z ERROR codex_core: stream disconnected before completion: "
        "Selected model is at capacity. Please try a different model. model=gpt-5.5\n" * 3,
    )
    _write(
        home / ".codex/sessions/2026/11/29/rollout-2026-11-29T09-00-00-abc.jsonl",
        '{"timestamp":"2026-11-29T09:01:00Z","type":"event_msg","payload":{"type":"error",'
        '"message":"Selected model is at capacity. Please try a different model."}}\n',
    )
    _write(home / ".codex/auth.json", '{"OPENAI_API_KEY":"' + FAKE_KEY + '","note":"server_is_overloaded"}')


def _claude_home(home: Path) -> None:
    _write(
        home / ".claude/projects/-home-me-app/0b1c.jsonl",
        '{"timestamp":"2026-11-29T10:00:00Z","type":"assistant","isApiErrorMessage":true,"message":'
        '{"content":[{"type":"text","text":"API Error: 400 {\\"type\\":\\"error\\",\\"error\\":{\\"type\\":'
        '\\"invalid_request_error\\",\\"message\\":\\"Your credit balance is too low to access the Anthropic '
        'API.\\"}}"}]}}\n',
    )


def _gemini_home(home: Path) -> None:
    _write(
        home / ".gemini/tmp/5f2a/logs.json",
        '[{"timestamp":"2026-11-29T11:00:00Z","message":"[API Error: You exceeded your current quota, '
        "please check your plan and billing details. Quota exceeded for metric: "
        'generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0]"}]\n',
    )
    _write(home / ".gemini/settings.json", '{"note":"insufficient_quota should never be read"}')


def _copilot_home(home: Path) -> None:
    _write(
        home / ".copilot/logs/session-1.log",
        "2026-11-29T12:00:00Z [ERROR] Request Error: (FetchError) self signed certificate in certificate chain\n",
    )


def _ollama_home(home: Path) -> None:
    _write(
        home / ".ollama/logs/server.log",
        'time=2026-11-29T13:00:00.000Z level=ERROR source=server.go msg="llama runner terminated" '
        'error="CUDA error: out of memory"\n',
    )


LAYOUTS = {
    "codex": (_codex_home, "codex.selected_model_at_capacity", Cause.CAPACITY),
    "claude-code": (_claude_home, "anthropic.credit_balance_low", Cause.QUOTA),
    "gemini-cli": (_gemini_home, "gemini.quota_exceeded", Cause.QUOTA),
    "copilot-cli": (_copilot_home, "phrase.tls.en", Cause.NETWORK),
    "ollama": (_ollama_home, "local.gpu_oom", Cause.HARDWARE),
}


def _ctx(home: Path, **options: Any) -> Context:
    return Context(env={}, home=home, cwd=home, options=dict(options), platform="linux", now=lambda: NOW)


@pytest.mark.parametrize("client", sorted(LAYOUTS))
def test_discovery_per_client(client: str, tmp_path: Path) -> None:
    layout, signature, cause = LAYOUTS[client]
    home = tmp_path / "home"
    layout(home)
    found = client_logs.discover({}, home, "linux")
    assert client in {c for c, _ in found}
    result = LogsCheck().run(_ctx(home))
    assert result.status is Status.WARN, result.summary
    sigs = {f.data.get("signature") for f in result.findings if f.strength is not Strength.CONTEXT}
    assert signature in sigs
    assert result.findings[0].cause is cause
    from capdoctor.verdict.decision import decide

    assert decide([result]).cause == cause.value


def test_credentials_are_never_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _codex_home(home)
    _gemini_home(home)
    run = run_logs([], since="all", env={}, home=home, platform="linux", now=NOW)
    paths = [f["path"] for f in run.doc["files"]]
    assert not any(p.endswith(("auth.json", "settings.json")) for p in paths)
    assert FAKE_KEY not in json.dumps(run.doc)
    assert "~/.codex/log/codex-tui.log" in paths  # home shortened in the report


def test_codex_home_env_and_windows_layout(tmp_path: Path) -> None:
    custom = tmp_path / "elsewhere"
    _write(custom / "log/codex-tui.log", "2026-11-29T09:00:00Z Connection refused (os error 10061)\n")
    found = client_logs.discover({"CODEX_HOME": str(custom)}, tmp_path, "linux")
    assert ("codex", custom / "log") in found
    appdata = tmp_path / "AppData/Roaming"
    (appdata / "Cursor/logs").mkdir(parents=True)
    found = client_logs.discover({"APPDATA": str(appdata)}, tmp_path, "win32")
    assert ("cursor", appdata / "Cursor/logs") in found


def test_old_files_are_left_out_by_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(home / ".codex/log/codex-tui.log", "Selected model is at capacity.\n", age_days=30)
    result = LogsCheck().run(_ctx(home))
    assert result.status is Status.SKIP
    result = LogsCheck().run(_ctx(home, since="60d"))
    assert result.status is Status.WARN


def test_skip_when_no_logs(tmp_path: Path) -> None:
    result = LogsCheck().run(_ctx(tmp_path))
    assert result.status is Status.SKIP and "no client logs found" in result.summary
    with pytest.raises(UsageError, match=r"option 'logs' '.*missing.log' \(caller\) does not exist"):
        _ctx(tmp_path, logs=[str(tmp_path / "missing.log")])  # refused where it is read, as `logs PATH` is
    with pytest.raises(UsageError, match=r"option 'since' 'soon' \(caller\) must be a duration"):
        _ctx(tmp_path, since="soon")  # a bad since never reaches the check: it is refused where it is read


def test_named_logs_via_target_and_options(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.log", "2026-11-29T09:00:00Z ggml_vulkan: Device memory allocation of size 1 failed.\n")
    b = _write(tmp_path / "b.log", "2026-11-29T09:00:00Z cudaMalloc failed: out of memory\n")
    ctx = _ctx(tmp_path / "nohome", logs=str(b))
    ctx.target = Target(provider="openai-compatible", base_url="http://127.0.0.1:11434/v1", model="llama3", logs=(a,))
    result = LogsCheck().run(ctx)
    assert result.status is Status.WARN and result.data["read"] == 2
    assert {f.cause for f in result.findings if f.strength is not Strength.CONTEXT} == {Cause.HARDWARE}


def test_pass_when_logs_are_clean(tmp_path: Path) -> None:
    _write(tmp_path / ".codex/log/codex-tui.log", "2026-11-29T09:00:00Z INFO turn completed\n")
    result = LogsCheck().run(_ctx(tmp_path))
    assert result.status is Status.PASS and not result.findings


def test_strength_follows_count_and_pattern_findings(tmp_path: Path) -> None:
    lines = [
        f"2026-11-{d:02d}T{h:02d}:{m:02d}:00Z ERROR Selected model is at capacity. model=gpt-5.5\n"
        for d in (27, 28, 29)
        for h in (14, 15)
        for m in (0, 20)
    ]
    _write(tmp_path / "x.log", "".join(lines))
    run = run_logs([str(tmp_path / "x.log")], since="all", env={}, home=tmp_path, platform="linux", now=NOW)
    f = next(f for f in run.check.findings if f.data.get("signature") == "codex.selected_model_at_capacity")
    assert f.strength is Strength.MODERATE and f.data["count"] == 12  # the row's strength; the count is a fact
    patterns = {f.data.get("pattern") for f in run.check.findings}
    assert {"peak_hours", "one_model"} <= patterns
    assert run.doc["patterns"]["peak_hours"] == [12, 16] or run.doc["patterns"]["peak_hours"][0] <= 14
    assert run.verdict.cause == "capacity" and run.verdict.confidence >= 0.9  # twelve of one cause: not 55%
    assert "seen 12 times over 2 days" in run.verdict.summary


def test_json_document_shape_and_redaction(tmp_path: Path) -> None:
    log = _write(
        tmp_path / "a.log",
        f"2026-11-29T09:00:00Z Incorrect API key provided: {FAKE_KEY}. request id: req_fakeTest0123456789\n"
        "2026-11-29T09:05:00Z API Error: 529 Overloaded\n",
    )
    out, err = io.StringIO(), io.StringIO()
    code = logs_command([str(log)], True, "all", False, out, err)
    doc = json.loads(out.getvalue())
    assert doc["schema"] == "capdoctor/logs-v1"
    assert set(doc) >= {"files", "matches", "by_cause", "by_hour", "by_model", "verdict"}
    assert set(doc["files"][0]) >= {"path", "bytes", "lines", "skipped"}
    assert set(doc["matches"][0]) >= {"signature", "cause", "count", "first", "last", "example"}
    assert set(doc["verdict"]) >= {"cause", "confidence", "summary", "next_steps"}
    assert doc["by_hour"]["09"] == 2
    assert FAKE_KEY not in out.getvalue() and err.getvalue() == ""
    from capdoctor.cli.exitcodes import for_verdict

    assert code == int(for_verdict(doc["verdict"]["cause"]))


def test_exit_codes_for_bad_input(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert logs_command([str(tmp_path / "missing.log")], False, None, False, out, err) == 2
    assert err.getvalue().count("\n") == 1 and "missing.log" in err.getvalue()
    err = io.StringIO()
    _write(tmp_path / "ok.log", "x\n")
    assert logs_command([str(tmp_path / "ok.log")], False, "whenever", False, out, err) == 2
    assert "--since" in err.getvalue() and "Traceback" not in err.getvalue()


def test_terminal_view_shows_histogram(tmp_path: Path) -> None:
    _write(tmp_path / "a.log", "".join(f"2026-11-29T{h:02d}:00:00Z ERROR Overloaded (529)\n" for h in (3, 3, 3, 17)))
    out = io.StringIO()
    code = logs_command([str(tmp_path / "a.log")], False, "all", True, out, io.StringIO())
    text = out.getvalue()
    assert "Verdict from the logs: capacity" in text and "phrase.overloaded.en" in text
    hist = text.splitlines()
    label = next(i for i, ln in enumerate(hist) if ln.startswith("00 01 02"))
    bars = hist[label - 1]
    assert bars[9:11] == "██" and bars[0:2] == "  "  # 03:00 is the busiest hour, 00:00 has none
    assert code == 3


def test_cli_subprocess_stdin_and_json(cli: Any, tmp_path: Path) -> None:
    proc = cli(
        "logs",
        "-",
        "--json",
        "--since",
        "all",
        stdin="2026-11-29T09:00:00Z Error: model requires more system memory (64 GiB) than is available\n",
    )
    assert proc.returncode == 7, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["cause"] == "hardware" and doc["files"][0]["path"] == "-"
    proc = cli("logs", str(tmp_path / "nope.log"))
    assert proc.returncode == 2 and "nope.log" in proc.stderr and "Traceback" not in proc.stderr


def test_discovery_can_be_turned_off(tmp_path: Path) -> None:
    """The demo diagnoses a simulator: logs lying in the user's home must not be read then."""
    from capdoctor.checks.logs import LogsCheck
    from capdoctor.run.context import Context

    log = tmp_path / ".codex" / "log" / "codex-tui.log"
    log.parent.mkdir(parents=True)
    log.write_text("ERROR You exceeded your current quota, please check your plan and billing details.\n")
    ctx = Context(env={}, home=tmp_path, cwd=tmp_path, options={"discover_logs": False})
    result = LogsCheck().run(ctx)
    assert result.status.value == "skip" and "discovery is off" in result.summary
    assert LogsCheck().run(Context(env={}, home=tmp_path, cwd=tmp_path)).status.value != "skip"


def test_a_named_file_is_read_whole_and_since_applies_when_given(tmp_path: Path) -> None:
    """The default window bounds discovered logs only: what the user names is read whole (unless --since)."""
    log = _write(
        tmp_path / "old.log",
        "2025-01-05T09:00:00Z ERROR Selected model is at capacity.\n"
        "2026-11-29T09:00:00Z ERROR You exceeded your current quota\n",
        age_days=300,
    )
    whole = run_logs([str(log)], since=None, env={}, home=tmp_path, platform="linux", now=NOW)
    assert whole.doc["since"] is None and whole.doc["older_than_since"] == 0
    assert sum(m["count"] for m in whole.doc["matches"]) == 2
    window = run_logs([str(log)], since="7d", env={}, home=tmp_path, platform="linux", now=NOW)
    assert window.doc["since"] is not None and window.doc["older_than_since"] == 1
    home = tmp_path / "home"  # the same lines in a discovered log: the 7-day default applies
    _write(home / ".codex/log/codex-tui.log", log.read_text(encoding="utf-8"))
    found = run_logs([], since=None, env={}, home=home, platform="linux", now=NOW)
    assert found.doc["since"] is not None and found.doc["older_than_since"] == 1


GEMINI_REPORTS = Path(__file__).parents[1] / "data/clients/gemini-cli"


def test_gemini_error_reports_in_the_temp_folder_are_discovered(tmp_path: Path) -> None:
    """Gemini CLI writes a failure only to `$TMPDIR/gemini-client-error-*.json` (issue #34): `logs` with no
    path reads the ones written within the window, and only those."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    overload = sorted(GEMINI_REPORTS.glob("gemini-client-error-*.json"))[0]
    _write(tmp / overload.name, overload.read_text(encoding="utf-8"))
    _write(tmp / "gemini-client-error-Turn.run-sendMessageStream-old.json", overload.read_text(), age_days=30)
    _write(tmp / "unrelated-report.json", '{"error":{"message":"You have exhausted your daily quota"}}')
    env = {"TMPDIR": str(tmp)}
    now = datetime.now(timezone.utc)
    run = run_logs([], since="24h", env=env, home=home, platform="linux", now=now)
    assert [d["path"] for d in run.doc["discovered"]] == [str(tmp / overload.name)]
    assert run.doc["discovered"][0]["client"] == "gemini-cli"
    assert run.verdict.cause == "capacity"
    assert len(client_logs.discover(env, home, "linux")) == 2  # no window: every report, oldest first


def test_gemini_reports_follow_node_tmpdir(tmp_path: Path) -> None:
    assert client_logs.temp_dir({"TMPDIR": "/var/folders/x/T/"}, "darwin") == Path("/var/folders/x/T")
    assert client_logs.temp_dir({}, "linux") == Path("/tmp")
    assert client_logs.temp_dir({"TEMP": "C:\\Users\\me\\AppData\\Local\\Temp"}, "win32").name.endswith("Temp")
    for i in range(client_logs.REPORTS_KEPT + 3):
        _write(tmp_path / f"gemini-client-error-general-{i:03d}.json", "{}", age_days=1 - i / 1000)
    kept = client_logs.gemini_reports({"TMPDIR": str(tmp_path)}, "linux")
    assert len(kept) == client_logs.REPORTS_KEPT and kept[-1].name.endswith("052.json")
