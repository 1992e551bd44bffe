"""Count running client sessions per client (psutil), for the "several sessions on one account" signal.

Contract: `match_client(name, cmdline, specs)` is pure and says which client a process is (the executable's
basename, or a node/bun/python process running the client's package); `count_sessions()` walks the process
table once. Processes that vanish or deny access are skipped. Must not read process environments or
report command lines (they can hold keys), only counts and pids.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from capdoctor.probes.local_clients import ClientSpec

INTERPRETERS = ("node", "node.exe", "bun", "deno", "python", "python3", "python.exe")
"""Runtimes whose processes are matched by the script they run rather than by their own name."""

HELPER_ARGS = ("--version", "-V", "mcp", "app-server", "completion")
"""Arguments that mark a short-lived or helper invocation, not an interactive session."""


def _base(arg: str) -> str:
    name = arg.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") or name.endswith(".cmd") else name


def match_client(name: str, cmdline: Sequence[str], specs: Iterable[ClientSpec]) -> str | None:
    """The id of the client this process is a session of, or None."""
    base = _base(name or (cmdline[0] if cmdline else ""))
    args = list(cmdline[1:]) if cmdline else []
    if any(a in HELPER_ARGS for a in args[:2]):
        return None
    for spec in specs:
        if base == spec.executable or (cmdline and _base(cmdline[0]) == spec.executable):
            return spec.id
    if base.startswith(INTERPRETERS) or base in INTERPRETERS:
        for spec in specs:
            for arg in args[:3]:
                norm = arg.replace("\\", "/")
                if _base(arg) == spec.executable or any(
                    p.startswith("@") and f"/{p}/" in f"{norm}/" for p in spec.process_names
                ):
                    return spec.id
    return None


def count_sessions(specs: Sequence[ClientSpec]) -> dict[str, list[int]]:
    """Pids of running sessions per client id (clients with none are absent). Never raises.

    A process whose parent is a session of the same client is not counted again: npm installs run a node
    shim that starts the native binary, and that pair is one session.
    """
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        return {}
    me = os.getpid()
    matched: dict[int, tuple[str, int | None]] = {}
    try:
        procs = list(psutil.process_iter(["pid", "ppid", "name", "cmdline"]))
    except Exception:  # no process table access at all (sandbox): report nothing
        return {}
    for proc in procs:
        info = getattr(proc, "info", None) or {}
        pid = info.get("pid")
        if pid == me or not isinstance(pid, int):
            continue
        try:
            client = match_client(str(info.get("name") or ""), list(info.get("cmdline") or []), specs)
        except Exception:  # odd entries are skipped
            continue
        if client is not None:
            ppid = info.get("ppid")
            matched[pid] = (client, ppid if isinstance(ppid, int) else None)
    return group_sessions(matched)


def group_sessions(matched: dict[int, tuple[str, int | None]]) -> dict[str, list[int]]:
    """Sessions per client from `{pid: (client, ppid)}`, dropping children of a same-client process."""
    out: dict[str, list[int]] = {}
    for pid, (client, ppid) in sorted(matched.items()):
        parent = matched.get(ppid) if ppid is not None else None
        if parent is not None and parent[0] == client:
            continue
        out.setdefault(client, []).append(pid)
    return out
