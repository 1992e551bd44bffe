"""Context facts: per-platform user directories, deadline arithmetic, secret discovery in the environment."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from capdoctor.run.context import Context
from capdoctor.run.diagnosis import env_secrets


@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("linux", {}, "/h/.config/capdoctor"),
        ("linux", {"XDG_CONFIG_HOME": "/x"}, "/x/capdoctor"),
        ("darwin", {}, "/h/Library/Application Support/capdoctor"),
        ("win32", {"APPDATA": "C:/Users/u/AppData/Roaming"}, "C:/Users/u/AppData/Roaming/capdoctor"),
    ],
)
def test_config_dir_per_platform(platform: str, env: dict[str, str], expected: str) -> None:
    ctx = Context(env=env, home=Path("/h"), cwd=Path("."), platform=platform)
    assert ctx.config_dir.as_posix().rstrip("/") == expected


def test_cache_dirs_differ_from_config() -> None:
    ctx = Context(env={}, home=Path("/h"), cwd=Path("."), platform="darwin")
    assert ctx.cache_dir.as_posix() == "/h/Library/Caches/capdoctor"


def test_timeout_never_exceeds_deadline() -> None:
    ctx = Context(env={}, home=Path("/h"), cwd=Path("."), deadline=time.monotonic() + 1.0)
    assert ctx.timeout(10) <= 1.0
    ctx.deadline = time.monotonic() - 5
    assert ctx.remaining() == 0.0 and ctx.timeout(10) == 0.05


def test_env_secrets_are_found_by_name() -> None:
    env = {"OPENAI_API_KEY": "sk-test-fake-0123456789", "MY_TOKEN": "abcdefgh12", "PATH": "/usr/bin", "SHORT_KEY": "x"}
    assert sorted(env_secrets(env)) == ["abcdefgh12", "sk-test-fake-0123456789"]


def test_cli_start_up_imports_nothing_heavy() -> None:
    """`--version` and `checks` must not pay for httpx, psutil, NVML, hyperscan, the simulator or any check."""
    code = (
        "import sys; import capdoctor.cli.commands; from capdoctor.checks.registry import BUILTIN, selected_infos; "
        "selected_infos(['models'], None); "
        "heavy = {'httpx', 'psutil', 'pynvml', 'hyperscan', 'zstandard', 'ssl', 'rich'}; "
        "light = {'capdoctor.checks', 'capdoctor.checks.base', 'capdoctor.checks.registry'}; "
        "checks = {m for m in sys.modules if m.startswith('capdoctor.checks')} - light; "
        "print(sorted(({m.split('.')[0] for m in sys.modules} & heavy) | checks))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_registry_rows_match_the_check_classes() -> None:
    from capdoctor.checks.registry import BUILTIN, Registered, load

    for info in BUILTIN:
        check = load(info)
        assert isinstance(check, Registered)  # its metadata is read from the row, not written twice
        assert (check.id, check.title, check.stage, check.description) == (
            info.id,
            info.title,
            info.stage,
            info.description,
        )


def test_check_metadata_is_written_only_in_the_registry() -> None:
    """No check module repeats a title or description that the registry row holds."""
    from capdoctor.checks.registry import BUILTIN

    src = Path(__file__).resolve().parents[2] / "src" / "capdoctor" / "checks"
    for info in BUILTIN:
        module = (src / (info.path.split(":")[0].rsplit(".", 1)[1] + ".py")).read_text(encoding="utf-8")
        assert f'"{info.description}"' not in module, info.id
        assert f'title = "{info.title}"' not in module, info.id


def test_an_unknown_check_id_in_a_class_statement_fails_loudly() -> None:
    from capdoctor.checks.registry import Registered

    with pytest.raises(KeyError):
        type("Bogus", (Registered,), {}, check_id="no-such-check")
