"""Linux network namespaces for tests that need a network of their own (a TUN, a DNS server that never answers).

`namespace(files)` creates a fresh namespace with its loopback up and `/etc/netns/<name>/<file>` written
from `files` (`ip netns exec` shows them as `/etc/<file>` inside), yields its name and removes both
afterwards. Where namespaces cannot be made (not Linux, not root, no iproute2, not permitted) the test is
skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def unavailable(need_tun: bool = False) -> str | None:
    """Why a network namespace cannot be made here (None when it can)."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux-only"
    if os.geteuid() != 0:
        return "creating a network namespace needs root (CAP_NET_ADMIN)"
    if shutil.which("ip") is None:
        return "iproute2 `ip` is not installed"
    if need_tun and not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing"
    return None


def ip(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `ip ARGS` (10 s at most), never raising for its exit status."""
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=False)


@contextmanager
def namespace(files: dict[str, str], *, need_tun: bool = False) -> Iterator[str]:
    """A fresh namespace (loopback up) with `files` under /etc/netns/<name>/; skips the test where impossible."""
    reason = unavailable(need_tun)
    if reason:
        pytest.skip(reason)
    name = f"capdoc-test-{uuid.uuid4().hex[:8]}"
    added = ip("netns", "add", name)
    if added.returncode != 0:
        pytest.skip(f"network namespaces not permitted here: {added.stderr.strip()}")
    etc = Path("/etc/netns") / name
    parent_existed = etc.parent.exists()
    try:
        up = ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        if up.returncode != 0:
            pytest.skip(f"cannot bring up loopback in the namespace: {up.stderr.strip()}")
        etc.mkdir(parents=True, exist_ok=True)
        for file, text in files.items():
            (etc / file).write_text(text, encoding="utf-8")
        yield name
    finally:
        shutil.rmtree(etc, ignore_errors=True)
        if not parent_existed:
            shutil.rmtree(etc.parent, ignore_errors=True)
        ip("netns", "del", name)
