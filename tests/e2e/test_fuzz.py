"""Fuzzing: random bytes, random TOML/JSON configs and random URLs at every parser and at the CLI.

The contract under test: bad input is refused with capdoctor's own error (`UsageError`/`ConfigError`,
`ValueError` where a pure parser documents it) or read as "nothing there" — never another exception, never
a hang. Every property has a bounded number of examples and a per-example deadline, and the whole file runs
in well under a minute, so it cannot slow or hang CI. The CLI runs in process (`capdoctor.cli.commands.main` with an
argv, `SystemExit` caught); its diagnosis engine is replaced by a stand-in that returns an empty outcome,
because random *valid* values would otherwise send real requests for up to 600 s — what is fuzzed there is
everything before the run: parsing, validation, discovery and the configuration files.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capdoctor.errors import ConfigError, UsageError
from capdoctor.logscan import timestamps
from capdoctor.probes import ratelimit, sse
from capdoctor.providers.base import error_fields
from capdoctor.providers.catalog import PROVIDER_NAMES, adapter_for
from capdoctor.target import client_settings as clientconfig
from capdoctor.target import configfile, discovery, options, urls

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)
FAST = settings(max_examples=150, deadline=timedelta(seconds=2), suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(
    max_examples=40,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# -- value strategies ------------------------------------------------------------------------------------------

KEY_WORDS = [
    "model",
    "model_provider",
    "model_providers",
    "base_url",
    "env_key",
    "wire_api",
    "openai_base_url",
    "query_params",
    "api-version",
    "env",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_API_KEY",
    "target",
    "options",
    "provider",
    "alt_models",
    "api_key_env",
    "timeout",
    "since",
    "logs",
    "status_url",
    "models",
    "max_attempts",
    "models.max_attempts",
    "discover_logs",
    "name",
    "relay",
]
keys = st.one_of(st.sampled_from(KEY_WORDS), st.text(min_size=1, max_size=12))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.sampled_from(["http://[::1", "http://h:99999", "https://ok.example/v1", "7d", "all", "", " ", "three", "\r\n"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=20,
)
toml_scalars = scalars.filter(lambda v: v is not None)
toml_tables = st.recursive(
    st.dictionaries(keys, toml_scalars, max_size=5),
    lambda inner: st.dictionaries(keys, st.one_of(toml_scalars, inner, st.lists(toml_scalars, max_size=3)), max_size=5),
    max_leaves=20,
)


def toml_value(value: Any) -> str:
    """`value` as a TOML inline value (strings as JSON, which TOML's basic strings accept)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < 2**63 else json.dumps(str(value))
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_doc(table: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in table.items())


texts = st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace")))
documents = st.one_of(texts, toml_tables.map(toml_doc), json_values.map(json.dumps))
url_texts = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
        st.sampled_from(["http", "https", "ftp", "HTTP", ""]),
        st.one_of(st.text(max_size=15), st.sampled_from(["[::1", "[::1]", "127.0.0.1", "h", "-x", "a..b"])),
        st.one_of(st.just(""), st.integers(-5, 10**6).map(lambda p: f":{p}"), st.text(max_size=5)),
        st.one_of(st.just(""), st.text(max_size=20).map(lambda t: "/" + t)),
    ),
)

# -- parsers ---------------------------------------------------------------------------------------------------


@FAST
@given(documents)
def test_client_config_parsers_raise_only_config_errors(text: str) -> None:
    for parse in (
        clientconfig.parse_codex_config,
        clientconfig.parse_claude_settings,
        clientconfig.parse_gemini_settings,
        clientconfig.parse_dotenv,
    ):
        with contextlib.suppress(ConfigError):
            parse(text, "~/file")


@FAST
@given(url_texts)
def test_url_checks_never_raise_and_what_passes_is_usable(value: str) -> None:
    problem = urls.url_problem(value)
    if problem is None:
        url = value.strip()
        httpx.URL(urls.join(url, "chat/completions"))  # raises if the joined URL were not a URL
        httpx.URL(urls.root(url))
    else:
        with pytest.raises(ValueError):
            urls.check_url(value, "fuzz")


@FAST
@given(st.sampled_from([s.name for s in options.SPECS]), st.one_of(json_values, st.text(max_size=30)), st.booleans())
def test_option_values_are_checked_or_refused(name: str, value: Any, text: bool) -> None:
    if text and not isinstance(value, str):
        value = json.dumps(value)
    try:
        options.check(name, options.Given(value, "fuzz", text=text))
    except options.OptionError as exc:
        assert "(fuzz)" in str(exc)


@FAST
@given(texts)
def test_timestamps_and_since(text: str) -> None:
    got = timestamps.parse_timestamp(text, NOW)
    assert got is None or got.tzinfo is not None
    with contextlib.suppress(ValueError):
        timestamps.parse_since(text, NOW)


@FAST
@given(json_values, st.integers(100, 599), st.dictionaries(st.text(max_size=20), st.text(max_size=40), max_size=4))
def test_error_reading_and_classification(obj: Any, status: int, headers: dict[str, str]) -> None:
    from capdoctor.classifier.signatures import classify

    error_fields(obj)
    text = json.dumps(obj)
    classify(text, status=status, headers=headers, origin="body")
    classify(text[:200], origin="stream")
    for name in PROVIDER_NAMES:
        adapter = adapter_for(name)
        adapter.read_body("chat", obj)
        for event in sse.decode_all(text.encode()):
            adapter.read_event("chat", event)
    ratelimit.parse_retry_after(headers, NOW)
    ratelimit.parse_headers(headers, NOW)
    ratelimit.retry_hint_in_body(text)


@SLOW
@given(documents, documents, documents, documents)
def test_discovery_over_random_files_raises_only_usage_errors(own: str, codex: str, claude: str, gemini: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
        for path, text in (
            (cwd / "capdoctor.toml", own),
            (home / ".codex" / "config.toml", codex),
            (home / ".claude" / "settings.json", claude),
            (home / ".gemini" / "settings.json", gemini),
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        env = {"OPENAI_API_KEY": "sk-fuzz-0000000000"}
        try:
            files = configfile.read_config_files(cwd, home, env, "linux")
            configfile.config_warnings(files)
            configfile.load_options(files, {}, env)
            discovery.discover(discovery.DiscoveryFlags(), env, home, cwd, "linux", files)
        except UsageError:
            pass
        # the clients' own files never stop anything: only capdoctor.toml may
        (cwd / "capdoctor.toml").unlink()
        discovery.discover(discovery.DiscoveryFlags(), env, home, cwd, "linux")
        discovery.client_file_problems(env, home, cwd)


@SLOW
@given(
    st.lists(
        st.tuples(st.sampled_from([".log", ".gz", ".zst", ".jsonl", ""]), st.binary(max_size=3000)),
        min_size=1,
        max_size=4,
    )
)
def test_log_sources_of_random_bytes(files: list[tuple[str, bytes]]) -> None:
    from capdoctor.logscan.command import run_logs

    with tempfile.TemporaryDirectory() as tmp:
        named = []
        for i, (suffix, data) in enumerate(files):
            path = Path(tmp) / f"f{i}{suffix}"
            path.write_bytes(data)
            named.append(str(path))
        run = run_logs(named, since="all", env={}, home=Path(tmp), platform="linux", now=NOW)
        run_logs([tmp], since="7d", env={}, home=Path(tmp), platform="linux", now=NOW)
    assert len(run.doc["files"]) == len(files)


# -- the CLI, in process -----------------------------------------------------------------------------------------

COMMANDS = [
    ["diagnose"],
    ["check", "models"],
    ["check", "logs"],
    ["config"],
    ["logs"],
    ["demo"],
    ["checks"],
    ["check"],
    [],
    ["nosuch"],
]
FLAGS = [
    "--provider",
    "--base-url",
    "--model",
    "--alt-model",
    "--api-key-env",
    "--timeout",
    "--since",
    "--reference-url",
    "--only",
    "--skip",
    "--log",
    "--report",
    "--scenario",
    "--json",
    "-v",
    "--no-inference",
]
argv_items = st.one_of(
    st.sampled_from(FLAGS),
    url_texts,
    st.text(max_size=12),
    st.sampled_from(["nan", "-1", "1e309", "5", "0", "", "99999999999d", "openai", "x.md"]),
)


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The diagnosis engine replaced by one that records the request and returns an empty, real outcome."""
    from capdoctor.render.report import build
    from capdoctor.run import diagnosis as engine
    from capdoctor.verdict.decision import decide

    seen: list[Any] = []

    def diagnose(request: Any, observer: Any = None) -> Any:
        seen.append(request)
        verdict = decide([])
        return engine.RunOutcome([], verdict, build([], verdict, request.target, NOW))

    monkeypatch.setattr(engine, "diagnose", diagnose)
    return seen


def inside(item: str) -> str:
    """`item` kept inside the test's folder: an absolute, home or parent path becomes a relative one (a
    `--report` or a log path must never reach outside)."""
    return "./" + item if item.startswith(("/", "~", "\\")) or ".." in item or ":" in item[:3] else item


@SLOW
@given(st.sampled_from(COMMANDS), st.lists(argv_items, max_size=8), st.one_of(st.none(), documents))
def test_the_cli_never_shows_a_traceback(
    fake_engine: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
    rest: list[str],
    config: str | None,
) -> None:
    from capdoctor.cli.commands import main

    if command == ["demo"] and "--scenario" not in rest:
        rest = [*rest, "--scenario", "no-such-scenario"]  # a real scenario would start the simulator
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.chdir(tmp)
        if config is not None:
            Path(tmp, "capdoctor.toml").write_text(config, encoding="utf-8")
        with pytest.raises(SystemExit) as ended:
            main([*command, *(inside(item) for item in rest)])
        out = capsys.readouterr()
    code = ended.value.code
    assert code in (0, 2, 3, 4, 5, 6, 7, 8, 9), (command, rest, code, out.err)
    assert "Traceback" not in out.err and "internal error" not in out.err, out.err
    if code == 2:
        assert out.err.strip(), "exit 2 without saying why"


VALUE_FLAGS = FLAGS[:8]  # the flags that take a value about the target or the run


@SLOW
@given(
    st.sampled_from([["diagnose"], ["check", "models"], ["config"]]),
    st.sampled_from(VALUE_FLAGS),
    st.one_of(url_texts, st.text(max_size=20), st.floats().map(str)),
)
def test_one_bad_value_in_an_otherwise_valid_command(
    fake_engine: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
    flag: str,
    value: str,
) -> None:
    from capdoctor.cli.commands import main

    valid = ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-5.5"]
    if command[0] == "config" and flag in ("--timeout", "--since", "--reference-url"):
        flag = "--model"  # `config` takes the target flags only
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.chdir(tmp)
        with pytest.raises(SystemExit) as ended:
            main([*command, *valid, flag, value])
        out = capsys.readouterr()
    assert ended.value.code in (0, 2, 9), out.err
    assert "Traceback" not in out.err and "internal error" not in out.err, out.err
    if ended.value.code == 2:
        lines = [line for line in out.err.splitlines() if line.startswith("capdoctor: error:")]
        assert len(lines) == 1, out.err
    elif command[0] != "config":
        assert fake_engine, "a valid command reached the run"
