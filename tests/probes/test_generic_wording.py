"""Live probes against real loopback servers that answer with generic wording (status and shape kept).

Each case is a simulator scenario built here: a relay's plain "busy" message, a 429 that speaks of load, a
401 with a one-line message on every model, a 403 refusing one model, a 400 rejecting an unknown model, a
local server's out-of-memory error — in English and in Chinese. `capdoctor diagnose` probes it over HTTP and
must name the cause: the engine reads the words through its phrase families and the status in context.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capdoctor.simulator.replies import Reply
from capdoctor.simulator.scenarios import Scenario
from tests.conftest import run_cli

CASES: list[tuple[str, str, int, str, str, str]] = [
    # (id, shape, status, message, which requests fail, expected cause)
    ("relay-busy-en", "openai", 503, "The server is busy, please try again later.", "primary", "capacity"),
    ("relay-busy-zh", "openai", 503, "系统繁忙，请稍后再试", "primary", "capacity"),
    (
        "load-429-en",
        "openai",
        429,
        "The service is under heavy load right now, please retry later.",
        "primary",
        "capacity",
    ),
    ("load-429-zh", "openai", 429, "服务器负载过高，请稍后重试", "primary", "capacity"),
    ("auth-401-en", "openai", 401, "Unauthorized", "all", "account"),
    ("auth-401-zh", "openai", 401, "未授权", "all", "account"),
    ("model-403-en", "openai", 403, "You are not allowed to use this model.", "primary", "account"),
    ("model-403-zh", "openai", 403, "您无权使用该模型", "primary", "account"),
    ("unknown-model-400-en", "openai", 400, "Invalid model: gpt-5.5", "primary", "client"),
    ("unknown-model-400-zh", "openai", 400, "模型不存在", "primary", "client"),
    ("local-oom-en", "compat", 500, "CUDA error: out of memory", "primary", "hardware"),
    ("local-oom-zh", "compat", 500, "模型加载失败：显存不足", "primary", "hardware"),
]
PROVIDER = {"openai": "openai", "compat": "openai-compatible"}
MODELS = {"openai": ("gpt-5.5", "gpt-5.4-mini"), "compat": ("llama3.1:70b", "llama3.2:3b")}


@pytest.mark.parametrize(("name", "shape", "status", "message", "fails", "cause"), CASES, ids=[c[0] for c in CASES])
def test_generic_wording_gets_the_right_cause(
    name: str, shape: str, status: int, message: str, fails: str, cause: str, tmp_path: Path, home: Path
) -> None:
    from capdoctor.simulator.server import Simulator

    primary, alt = MODELS[shape]
    body: Any = {"error": {"message": message}}
    scenario = Scenario(
        name,
        f"generic wording: {message}",
        cause,
        provider=shape,
        primary_model=primary,
        alt_models=(alt,),
        replies={shape: Reply(status, body)},
        fails=fails,
    )
    with Simulator(scenario=scenario) as sim:
        provider = PROVIDER[shape]
        proc = run_cli(
            "diagnose",
            "--json",
            "--only",
            "models",
            "--timeout",
            "20",
            "--provider",
            provider,
            "--base-url",
            sim.base_url(provider),
            "--model",
            primary,
            "--alt-model",
            alt,
            cwd=tmp_path,
            env={"OPENAI_API_KEY": "sk-test-FAKEKEY-generic-0001"},
            timeout=60,
        )
    report = json.loads(proc.stdout)
    findings = [(f["cause"], f["strength"], f["message"][:100]) for c in report["checks"] for f in c["findings"]]
    assert report["verdict"]["cause"] == cause, (report["verdict"], findings)
