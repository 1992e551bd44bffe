"""A real Prometheus for the tests: started on a free loopback port, scraping one target, stopped after."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import free_port


@contextmanager
def real_prometheus(binary: str, folder: Path, job: str, target: str, rule_files: Sequence[str] = ()) -> Iterator[str]:
    """A Prometheus process scraping `target` every second as `job` (its config in `folder`); yields its base URL.

    The config is JSON (which is YAML). The process is stopped, then killed if it lingers, whatever the test did.
    """
    port = free_port()
    config = folder / "prometheus.yml"
    settings: dict[str, object] = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": [target]}]}],
    }
    if rule_files:
        settings["rule_files"] = list(rule_files)
    config.write_text(json.dumps(settings), encoding="utf-8")
    prom = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        prom.terminate()
        try:
            prom.wait(timeout=30)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait()


def ready(base: str) -> bool:
    """Whether the Prometheus at `base` says it is ready."""
    with urllib.request.urlopen(f"{base}/-/ready", timeout=5) as resp:
        return bool(resp.status == 200)
