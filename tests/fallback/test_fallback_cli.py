"""`capdoctor fallback` as a user runs it: live vs saved report, files, merge, no secrets, and the bad-input paths."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fallback_support import PLANTED

FAST_TOML = '[options]\n"models.backoff_s" = 0.01\n"models.max_backoff_s" = 0.05\n'


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """A project folder whose capdoctor.toml keeps the probes' backoff short."""
    (tmp_path / "capdoctor.toml").write_text(FAST_TOML, encoding="utf-8")
    return tmp_path


def target(sim: Any) -> list[str]:
    return [
        "--provider",
        "openai",
        "--base-url",
        sim.base_url("openai"),
        "--model",
        "gpt-5.5",
        "--alt-model",
        "gpt-5.4-mini",
        "--api-key-env",
        "OPENAI_API_KEY",
    ]


def one_error_line(proc: Any) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("capdoctor: error:")
    return str(lines[0])


@pytest.mark.scenario("capacity")
def test_from_report_gives_exactly_the_live_output_and_nothing_holds_the_key(sim: Any, cli: Any, cwd: Path) -> None:
    live = cli("fallback", *target(sim), "--report", "run.json", env=PLANTED, cwd=cwd)
    assert live.returncode == 0, live.stderr
    sent = len(sim.requests)
    saved = cli("fallback", "--from-report", "run.json", env=PLANTED, cwd=cwd)
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout == live.stdout  # the same text, the time line included (it is the report's)
    assert len(sim.requests) == sent  # --from-report sends nothing
    report = json.loads((cwd / "run.json").read_text(encoding="utf-8"))
    assert report["created"] in live.stdout
    # the key was sent (the simulator saw it) and is nowhere in what capdoctor printed or wrote
    assert any(PLANTED["OPENAI_API_KEY"] in r["headers"].get("authorization", "") for r in sim.requests)
    for text in (live.stdout, live.stderr, saved.stdout, saved.stderr, (cwd / "run.json").read_text("utf-8")):
        assert PLANTED["OPENAI_API_KEY"] not in text
    # no client's own settings named the target and only the models check ran: the client in use is not known,
    # so the default is the LiteLLM proxy every client can use, with the key as a variable reference
    assert "model_list:" in live.stdout and "os.environ/OPENAI_API_KEY" in live.stdout
    assert "format litellm, for the client in use" in live.stderr


@pytest.mark.scenario("capacity")
@pytest.mark.parametrize("fmt", ["litellm", "codex", "openai-python", "env"])
def test_every_format_from_one_report_is_secret_free_and_parses(fmt: str, sim: Any, cli: Any, cwd: Path) -> None:
    proc = cli("diagnose", *target(sim), "--only", "models", "--json", env=PLANTED, cwd=cwd)
    (cwd / "diag.json").write_text(proc.stdout, encoding="utf-8")  # a `diagnose --json` report works too
    out = cli("fallback", "--from-report", "diag.json", "--format", fmt, env=PLANTED, cwd=cwd)
    assert out.returncode == 0, out.stderr
    assert PLANTED["OPENAI_API_KEY"] not in out.stdout + out.stderr
    parse = {
        "litellm": yaml.safe_load,
        "codex": tomllib.loads,
        "openai-python": lambda t: compile(t, "s", "exec"),
        "env": str.splitlines,
    }[fmt]
    assert parse(out.stdout)


@pytest.mark.scenario("healthy")
def test_nothing_to_fall_back_to_is_said_and_exits_10(sim: Any, cli: Any, cwd: Path) -> None:
    proc = cli("fallback", *target(sim), "--format", "litellm", cwd=cwd)
    assert proc.returncode == 10 and proc.stdout == ""
    assert "nothing generated: gpt-5.5 answered and no alternative was probed" in proc.stderr


@pytest.mark.scenario("capacity")
def test_a_report_where_nothing_was_probed_exits_10(sim: Any, cli: Any, cwd: Path) -> None:
    proc = cli("diagnose", *target(sim), "--only", "models", "--no-inference", "--json", cwd=cwd)
    (cwd / "listed.json").write_text(proc.stdout, encoding="utf-8")
    out = cli("fallback", "--from-report", "listed.json", cwd=cwd)
    assert out.returncode == 10 and out.stdout == "" and "nothing was probed" in out.stderr


@pytest.mark.scenario("capacity")
def test_write_then_merge_shows_the_diff_and_keeps_the_users_lines(sim: Any, cli: Any, cwd: Path) -> None:
    assert cli("fallback", *target(sim), "--report", "run.json", "--format", "codex", cwd=cwd).returncode == 0
    profile = cwd / "profile.toml"
    profile.write_text('# mine\napproval_policy = "never"  # keep\n', encoding="utf-8")
    refused = cli("fallback", "--from-report", "run.json", "--format", "codex", "--write", "profile.toml", cwd=cwd)
    assert "profile.toml exists; add --merge" in one_error_line(refused)
    merged = cli(
        "fallback", "--from-report", "run.json", "--format", "codex", "--write", "profile.toml", "--merge", cwd=cwd
    )
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout.startswith("--- profile.toml (now)") and '+model = "gpt-5.4-mini"' in merged.stdout
    text = profile.read_text(encoding="utf-8")
    assert '# mine\napproval_policy = "never"  # keep' in text
    assert tomllib.loads(text)["model"] == "gpt-5.4-mini" and "Merged into profile.toml" in merged.stderr
    fresh = cli("fallback", "--from-report", "run.json", "--format", "litellm", "--write", "new.yaml", cwd=cwd)
    assert fresh.returncode == 0 and fresh.stdout == "" and yaml.safe_load((cwd / "new.yaml").read_text("utf-8"))


@pytest.mark.scenario("capacity")
def test_diagnose_names_the_fallback_command_for_the_client_in_use(sim: Any, cli: Any, tmp_path: Path) -> None:
    target = ["--provider", "openai", "--base-url", sim.base_url("openai"), "--model", "gpt-5.5"]
    proc = cli("diagnose", *target, "--only", "models", "--json", cwd=tmp_path)
    steps = [s.get("command", "") for s in json.loads(proc.stdout)["verdict"]["next_steps"]]
    assert "capdoctor fallback --format litellm " + " ".join(target) in steps


def test_the_fallback_step_after_a_demo_leads_to_the_demos_pool_and_nowhere_else(cli: Any, tmp_path: Path) -> None:
    """Issue 35.3: after `demo` the step was a bare `capdoctor fallback`: the demo's target dropped, it would
    probe whatever the environment names (a real provider with a real key). Followed word for word, the step
    now replays the demo into a report and builds the pool from it, sending nothing anywhere else."""
    import shlex

    proc = cli("demo", "--scenario", "capacity", "--json", cwd=tmp_path)
    step = next(
        s["command"] for s in json.loads(proc.stdout)["verdict"]["next_steps"] if "fallback" in s.get("command", "")
    )
    first, then = step.split(" && ")
    assert "--from-report" in then and "--provider" not in then
    for command in (first, then):
        words = shlex.split(command)
        assert words[0] == "capdoctor"
        ran = cli(*words[1:], cwd=tmp_path, env={"OPENAI_API_KEY": "sk-real-looking-key-000000000000"})
        assert ran.returncode == 0, ran.stderr
    assert "gpt-5.4-mini" in ran.stdout  # the demo's alternative that answered


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--from-report", "missing.json"], "report missing.json does not exist"),
        (["--from-report", "bad.json"], "report bad.json is not JSON"),
        (["--from-report", "other.json"], "not a capdoctor report"),
        (["--from-report", "other.json", "--model", "x"], "drop --model"),
        (["--from-report", "other.json", "--report", "r.json"], "--report saves a live run"),
        (["--format", "yaml"], "unknown format 'yaml'"),
        (["--merge"], "--merge merges into the --write file"),
        (["--write", "no/such/dir/x.yaml"], "its folder does not exist"),
        (["--from-report", "cap.json", "--format", "claude-code"], "Claude Code speaks the Anthropic Messages API"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], words: str, cli: Any, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "other.json").write_text('{"schema": "something/else"}', encoding="utf-8")
    if "cap.json" in args:
        (tmp_path / "cap.json").write_text(cli("demo", "--scenario", "capacity", "--json").stdout, encoding="utf-8")
    assert words in one_error_line(cli("fallback", *args, cwd=tmp_path))


def test_the_leak_guard_refuses_output_that_holds_a_secret(tmp_path: Path) -> None:
    """Belt and braces: if a secret ever reached the pool (here: a model named like an env secret), nothing prints."""
    import io

    from capdoctor.errors import CapdoctorError
    from capdoctor.fallback.command import FallbackOptions, run
    from tests.support.fallback_support import attempt, model_run, report

    doc = report(
        model_run("gpt-5.5", "primary", attempt(False)), model_run("tenant-7c1e9a", "alternative", attempt(True))
    )
    (tmp_path / "r.json").write_text(json.dumps(doc), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    opts = FallbackOptions(fmt="litellm", from_report=tmp_path / "r.json")
    with pytest.raises(CapdoctorError, match="would hold a secret"):
        run(opts, lambda: None, out, err, {"RELAY_TOKEN": "tenant-7c1e9a"}, str(tmp_path))
    assert out.getvalue() == ""
    assert run(opts, lambda: None, out, err, {}, str(tmp_path)) == 0 and "tenant-7c1e9a" in out.getvalue()


def test_contains_secret_sees_values_and_key_shapes_but_not_variable_references() -> None:
    from capdoctor.redact import contains_secret

    assert contains_secret("api_key: sk-proj-abcdefghijklmnop1234")
    assert contains_secret("x-api-key: hunter2-value", ["hunter2-value"])
    assert contains_secret("Authorization: Bearer abc123def456")
    assert not contains_secret('api_key: os.environ/OPENAI_API_KEY\nenv_key = "ANTHROPIC_API_KEY"', ["short"])


def test_help_names_every_format(cli: Any) -> None:
    from capdoctor.fallback.generate import FORMATS

    shown = " ".join(cli("fallback", "--help", env={"COLUMNS": "300"}).stdout.split())
    assert all(name in shown for name in FORMATS)


@pytest.mark.scenario("capacity")
def test_a_format_that_cannot_serve_the_target_is_refused_before_any_request(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    """Issue 35.3: `--format claude-code` on an OpenAI target probed (4–5 requests) and then refused."""
    target = ["--provider", "openai", "--base-url", sim.base_url("openai"), "--model", "gpt-5.5"]
    for fmt in ("claude-code", "anthropic-python"):
        proc = cli("fallback", *target, "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 2 and "the target is openai" in proc.stderr, proc.stderr
    assert sim.requests == []


@pytest.mark.scenario("capacity")
@pytest.mark.parametrize(
    ("fmt", "name", "hint"),
    [
        ("litellm", "pool.yaml", "litellm --config pool.yaml"),
        ("env", "pool.env", ". ./pool.env"),
    ],
)
def test_the_load_hint_names_the_file_really_written(
    sim: Any, cli: Any, tmp_path: Path, fmt: str, name: str, hint: str
) -> None:
    """Issue 35.3: `--write FILE` printed a hint naming another file (`capdoctor-litellm.yaml`), and
    `--format env` told the user to source `./capdoctor-fallback.env`, which was never written."""
    target = ["--provider", "openai", "--base-url", sim.base_url("openai"), "--model", "gpt-5.5"]
    written = cli("fallback", *target, "--format", fmt, "--write", name, cwd=tmp_path)
    assert written.returncode == 0 and (tmp_path / name).is_file(), written.stderr
    assert hint in written.stderr and "capdoctor-" not in written.stderr.replace("capdoctor fallback:", "")
    printed = cli("fallback", *target, "--format", fmt, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert "Save this output as " in printed.stderr  # nothing was written: the hint says to save it first


@pytest.mark.scenario("capacity")
def test_env_names_the_models_that_answered_even_at_the_default_url(sim: Any, cli: Any, tmp_path: Path) -> None:
    """Issue 35.3: for an OpenAI-style target `--format env` emitted only the base URL (nothing at all at the
    provider's default URL); the pool itself is always there now."""
    target = ["--provider", "openai", "--base-url", sim.base_url("openai"), "--model", "gpt-5.5"]
    proc = cli("fallback", *target, "--format", "env", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "export CAPDOCTOR_FALLBACK_MODEL=gpt-5.4-mini" in proc.stdout.splitlines()
