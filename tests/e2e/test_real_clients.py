"""The real Codex CLI, Claude Code and Gemini CLI against the simulator, and capdoctor's verdict on each (issue #34).

Each pinned client (tests/data/clients/versions.txt) runs non-interactively with a throw-away HOME inside a network
namespace that has only loopback, against `capdoctor simulate` in each scenario (and against a port nobody serves),
directly and through `capdoctor proxy`. Then capdoctor must reach the scenario's verdict four ways: `explain` on
what the client printed, `logs PATH` on the client's own files, `logs` discovering them under that HOME, and
`diagnose` with the client's configuration discovered from that HOME; through the proxy the client must print
what it prints without it, every exchange must be recorded with the scenario's cause, and `history` over the
records must reach the verdict. The captures under tests/data/clients/real/ must still match what the pinned
versions print and write (CAPDOCTOR_UPDATE_CAPTURES=1 rewrites them).

Marked `realclients`: skipped with the reason where the clients are not installed, a failure where CI's host run
requires them (CAPDOCTOR_REAL_CLIENTS=required, set by .ci/run).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from capdoctor.watch.store import Store
from tests.support import netns, realclients
from tests.support.realclients import Home, Run

pytestmark = [pytest.mark.realclients, pytest.mark.timeout(300)]

CLIENTS = ("codex", "claude", "gemini")


@dataclass(frozen=True)
class Case:
    """One way of failing: the simulator's scenario (None: a port nobody serves) and the verdict it must give."""

    scenario: str | None
    cause: str


CASES = {
    "capacity": Case("capacity", "capacity"),
    "stream-capacity": Case("stream-capacity", "capacity"),
    "quota": Case("quota", "quota"),
    "rate-limit": Case("rate-limit", "quota"),
    "auth": Case("auth", "account"),
    "model-not-found": Case("model-not-found", "client"),
    "reset": Case("reset", "network"),
    "refused": Case(None, "network"),
    "blackhole": Case("blackhole", "network"),
}
SIM_PORT = 18_100
"""The namespace is ours alone: case i's simulator listens on SIM_PORT + i, the refused case's port is unused."""
PROXY_PORT = 18_300
PARALLEL = 3
"""Client runs (and diagnoses) at a time."""
HANGS = ("refused", "blackhole")
"""The cases where a client may wait without end (Codex on a refused port, Codex and Gemini CLI in a black hole)."""


def bound(case: str) -> float:
    """How long a client run may take in `case`: a hang is stopped after a while (what it printed by then is
    its run); any other run ends by itself well before its bound (reaching it is a failure of the test)."""
    return realclients.BOUND_S if case in HANGS else realclients.RUN_LIMIT_S


WAYS = ("explain", "logs-path", "logs-found", "diagnose")
PROXY_WAYS = ("same-output", "recorded", "history")

# Cells where the client gives capdoctor nothing to read: the check is then that capdoctor names no wrong cause.
_CODEX_WAITS = (
    "Codex writes no record while it waits for the network (a refused port: 'Reconnecting... waiting for network')"
)
_CODEX_HOLE = "Codex prints and writes nothing while a black hole holds its request (stopped at the bound)"
_GEMINI_HOLE = "Gemini CLI has no request timeout: it prints and writes nothing while a black hole holds its request"
SILENT: dict[tuple[str, str, str], str] = {
    ("codex", "refused", "logs-path"): _CODEX_WAITS,
    ("codex", "refused", "logs-found"): _CODEX_WAITS,
    ("codex", "blackhole", "explain"): _CODEX_HOLE,
    ("codex", "blackhole", "logs-path"): _CODEX_HOLE,
    ("codex", "blackhole", "logs-found"): _CODEX_HOLE,
    ("gemini", "blackhole", "explain"): _GEMINI_HOLE,
    ("gemini", "blackhole", "logs-path"): _GEMINI_HOLE,
    ("gemini", "blackhole", "logs-found"): _GEMINI_HOLE,
}
# Known misses, each with its reason (strict: a fix makes the test fail until the mark goes).
_REFUSED = (
    "a refused upstream reaches the client as a reset: the proxy had accepted the client's connection, so the "
    "closest it can give is a reset (an answer of its own would be an invention), and {client} prints a reset "
    "otherwise than a refusal: {how}"
)
_REFUSED_HOW = {
    "codex": "'Reconnecting... 1/1' then 'stream disconnected before completion' (exit 1) where it waits without "
    "end ('Reconnecting... waiting for network')",
    "claude": "'Connection dropped (ECONNRESET)' where it prints 'Connection refused ... (ECONNREFUSED)'",
    "gemini": "the same 'fetch failed sending request', its stack trace one frame otherwise (the fetch fails "
    "reading, not connecting)",
}
MISSES: dict[tuple[str, str, str], str] = {
    (c, "refused", "proxy-same-output"): _REFUSED.format(client=c, how=how) for c, how in _REFUSED_HOW.items()
}


@dataclass
class Outcome:
    """One client run in one case, direct or through the proxy: the HOME, what it printed, the proxy's db."""

    home: Home
    run: Run
    db: Path | None = None
    proxy_log: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Lab:
    """The namespace, a simulator per case, and the client runs (each made once, on first use)."""

    def __init__(self, ns: str, root: Path) -> None:
        self.ns = ns
        self.root = root
        self.runs: dict[tuple[str, str, str], Outcome] = {}
        self.diagnoses: dict[tuple[str, str], dict[str, Any]] = {}

    def base(self, case: str) -> str:
        return f"http://127.0.0.1:{SIM_PORT + list(CASES).index(case)}"

    def prefetch(self) -> None:
        """Make every run, then every `diagnose`, a few at a time: most of a failing run is waiting (a
        client's timeout, the bound), so overlapping them keeps the job short. Each stays one real run."""
        # the runs that wait out their bound first, the others mixed across clients (no pile-up of one kind)
        runs = sorted(
            ((c, k, v) for k in CASES for c in CLIENTS for v in ("direct", "proxy")),
            key=lambda r: r[1] not in HANGS,
        )
        with ThreadPoolExecutor(PARALLEL) as pool:
            for key, done in zip(runs, pool.map(lambda r: self._run(*r), runs), strict=True):
                self.runs[key] = done
            cells = [(c, k) for c in CLIENTS for k in CASES]
            for cell, report in zip(cells, pool.map(lambda ck: diagnose(self, *ck), cells), strict=True):
                self.diagnoses[cell] = report

    def outcome(self, client: str, case: str, via: str = "direct") -> Outcome:
        key = (client, case, via)
        if key not in self.runs:
            self.runs[key] = self._run(client, case, via)
        return self.runs[key]

    def _run(self, client: str, case: str, via: str) -> Outcome:
        root = self.root / f"{client}-{case}-{via}"
        if via == "direct":
            home = realclients.make_home(client, root, self.base(case))
            return Outcome(home, realclients.run_client(self.ns, home, bound_s=bound(case)))
        port = PROXY_PORT + list(CASES).index(case) * 3 + CLIENTS.index(client)
        home = realclients.make_home(client, root, f"http://127.0.0.1:{port}")
        db = root / "history.sqlite3"
        argv = [
            *capdoctor(),
            "proxy",
            "--upstream",
            self.base(case),
            "--listen",
            f"127.0.0.1:{port}",
            "--db",
            str(db),
            "--no-network-checks",
            "--drain",
            "2",
        ]
        with realclients.serving(self.ns, argv, capdoctor_env(root), "127.0.0.1") as proxy:
            run = realclients.run_client(self.ns, home, bound_s=bound(case))
        return Outcome(home, run, db, proxy.output)


def capdoctor() -> list[str]:
    """capdoctor's command line, from this interpreter's environment."""
    return [sys.executable, "-m", "capdoctor"]


CACHE_HOME = realclients.ENV.get("XDG_CACHE_HOME", str(Path(realclients.ENV.get("HOME", "/root")) / ".cache"))


def capdoctor_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A clean environment for capdoctor with HOME at `home` (its caches and data under it)."""
    env = {
        "PATH": realclients.ENV.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "COLUMNS": "200",
        # capdoctor's build cache, kept between the runs (a fresh one per HOME would rebuild it each time)
        "XDG_CACHE_HOME": CACHE_HOME,
    }
    return {**env, **(extra or {})}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A namespace with a simulator per case, for the whole module."""
    for client in CLIENTS:
        reason = realclients.missing(client)
        if reason:
            if realclients.required():
                pytest.fail(f"CAPDOCTOR_REAL_CLIENTS=required, but {reason}")
            pytest.skip(reason)
    root = tmp_path_factory.mktemp("realclients")
    with netns.namespace({}) as ns, ExitStack() as stack:
        for i, (name, case) in enumerate(CASES.items()):
            if case.scenario is None:
                continue
            argv = [*capdoctor(), "simulate", "--scenario", case.scenario, "--port", str(SIM_PORT + i)]
            stack.enter_context(realclients.serving(ns, argv, capdoctor_env(root / f"sim-{name}"), "listening on"))
        lab = Lab(ns, root)
        lab.prefetch()
        yield lab


def cli(
    args: list[str], env: dict[str, str], ns: str | None = None, stdin: str | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    """`capdoctor ARGS --json` (in namespace `ns` when given): its JSON report, with the process's text kept."""
    argv = [*capdoctor(), *args, "--json"]
    if ns is not None:
        argv = realclients.in_ns(ns, argv, env)
    done = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, timeout=120, check=False, env=None if ns else env, cwd=cwd
    )
    assert done.stdout.strip(), f"capdoctor {' '.join(args)} printed no report (exit {done.returncode}): {done.stderr}"
    doc: dict[str, Any] = json.loads(done.stdout)
    doc["_text"] = done.stdout + done.stderr
    return doc


def client_files(home: Home) -> list[Path]:
    """The files the client writes its failures to."""
    if home.client == "codex":
        return sorted((home.root / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    if home.client == "claude":
        return sorted((home.root / ".claude" / "projects").rglob("*.jsonl"))
    return sorted(home.tmp.glob("gemini-client-error-*.json"))


def verdict(client: str, case: str, way: str, lab: Lab) -> dict[str, Any]:
    """capdoctor's report, one way, on one direct run."""
    out = lab.outcome(client, case)
    home = out.home
    env = capdoctor_env(home.root, {"TMPDIR": str(home.tmp)})
    if way == "explain":
        if not out.run.printed.strip():
            return {"verdict": {"cause": "silent"}, "_text": ""}
        return cli(["explain"], env, stdin=out.run.printed)
    if way == "logs-path":
        files = client_files(home)
        if not files:
            return {"verdict": {"cause": "no files"}, "_text": ""}
        return cli(["logs", *map(str, files)], env)
    if way == "logs-found":
        return cli(["logs"], env)
    if (client, case) not in lab.diagnoses:
        lab.diagnoses[client, case] = diagnose(lab, client, case)
    return lab.diagnoses[client, case]


def diagnose(lab: Lab, client: str, case: str) -> dict[str, Any]:
    """`capdoctor diagnose` in the namespace with the client's HOME and environment: the target discovered."""
    home = lab.outcome(client, case).home
    env = {**home.env, "CAPDOCTOR_STATUS_URL": lab.base(case) + "/status", "COLUMNS": "200"}
    return cli(["diagnose", "--timeout", "10"], env, ns=lab.ns, cwd=home.work)


def note(client: str, case: str, way: str, result: str) -> None:
    """Add one cell to the matrix file named by CAPDOCTOR_REALCLIENTS_MATRIX (for reports; nothing otherwise)."""
    path = realclients.ENV.get("CAPDOCTOR_REALCLIENTS_MATRIX")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"client": client, "case": case, "way": way, "result": result}) + "\n")


def _mark(client: str, case: str, way: str) -> Any:
    reason = MISSES.get((client, case, way))
    return pytest.param(client, case, way, marks=pytest.mark.xfail(strict=True, reason=reason) if reason else ())


@pytest.mark.parametrize(("client", "case", "way"), [_mark(c, k, w) for c in CLIENTS for k in CASES for w in WAYS])
def test_the_verdict_on_a_real_client(lab: Lab, client: str, case: str, way: str) -> None:
    """capdoctor reaches the case's verdict from what the real client printed, wrote and is configured with."""
    run = lab.outcome(client, case).run
    assert case in HANGS or not run.stopped, f"{client} {case}: still running after {bound(case):.0f} s"
    report = verdict(client, case, way, lab)
    cause = report["verdict"]["cause"]
    note(client, case, way, cause)
    silent = SILENT.get((client, case, way))
    if silent:
        assert cause in ("silent", "no files", "none", "inconclusive"), f"{silent}; yet capdoctor says {cause}"
    else:
        assert cause == CASES[case].cause, (
            f"{client} {case} {way}: {cause}, not {CASES[case].cause}: "
            f"{json.dumps(report.get('verdict'), default=str)[:1500]}\n--- printed:\n"
            f"{lab.outcome(client, case).run.printed[-1500:]}"
        )
    _, key = realclients.KEYS[client]
    assert key not in report["_text"], "the client's key appears in capdoctor's output"


# ------------------------------------------------------------------------------------------ through the proxy


def _proxy_mark(client: str, case: str, way: str) -> Any:
    reason = MISSES.get((client, case, f"proxy-{way}"))
    return pytest.param(client, case, way, marks=pytest.mark.xfail(strict=True, reason=reason) if reason else ())


@pytest.mark.parametrize(
    ("client", "case", "way"), [_proxy_mark(c, k, w) for c in CLIENTS for k in CASES for w in PROXY_WAYS]
)
def test_a_real_client_through_the_proxy(lab: Lab, client: str, case: str, way: str) -> None:
    """Through `capdoctor proxy` the client prints what it prints without it, and the records give the verdict."""
    direct, proxied = lab.outcome(client, case), lab.outcome(client, case, "proxy")
    assert proxied.db is not None
    _, key = realclients.KEYS[client]
    if way == "same-output":
        before = realclients.normalise(direct.run.printed, direct.home.root)
        after = realclients.normalise(proxied.run.printed, proxied.home.root)
        note(client, case, f"proxy-{way}", "same" if before == after else "differs")
        assert after == before, f"{client} {case}: through the proxy it printed otherwise"
        assert proxied.run.rc == direct.run.rc
        return
    if way == "recorded":
        with Store.open(proxied.db, create=False) as store:
            rows = store.exchanges()
        causes = sorted({round_.verdict for round_, _ in rows})
        note(client, case, f"proxy-{way}", ",".join(causes) or "nothing")
        assert rows, f"{client} {case}: the proxy recorded no exchange"
        assert causes == [CASES[case].cause], [(r.verdict, e.status, e.outcome, e.error_text) for r, e in rows]
        assert key.encode() not in proxied.db.read_bytes()
        assert key not in proxied.proxy_log
        return
    report = cli(["history", "--db", str(proxied.db)], capdoctor_env(proxied.home.root))
    cause = report["verdict"]["cause"]
    note(client, case, f"proxy-{way}", cause)
    assert cause == CASES[case].cause, json.dumps(report["verdict"], default=str)[:1500]
    assert key not in report["_text"]


# ------------------------------------------------------------------------------------------------- captures


@pytest.mark.parametrize(("client", "case"), [(c, k) for c in CLIENTS for k in CASES])
def test_the_captures_match_what_the_pinned_clients_do(lab: Lab, client: str, case: str) -> None:
    """tests/data/clients/real/CLIENT/CASE holds what the pinned client printed and wrote in that case
    (CAPDOCTOR_UPDATE_CAPTURES=1 writes it afresh); a run must print the same and write the same kinds of
    records, volatile parts aside."""
    out = lab.outcome(client, case)
    pin = realclients.pins()[client]
    folder = realclients.CAPTURES / client / case
    printed = realclients.redact(out.run.printed, out.home.root)
    files = {
        str(path.relative_to(out.home.root)): realclients.capture_text(path, out.home.root)
        for path in client_files(out.home)
    }
    files = {realclients.redact(name, out.home.root): text for name, text in files.items()}
    manifest = {
        "client": client,
        "package": pin.package,
        "version": pin.version,
        "case": case,
        "scenario": CASES[case].scenario,
        "cause": CASES[case].cause,
        "silent": sorted(w for (c, k, w) in SILENT if (c, k) == (client, case)),
        "exit": out.run.rc,
        "stopped_at_bound": out.run.stopped,
        "captured": max((_newest_time(t) for t in files.values()), default=None),
        "files": sorted(files),
    }
    if realclients.ENV.get("CAPDOCTOR_UPDATE_CAPTURES") == "1":
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "printed.txt").write_text(printed, encoding="utf-8")
        for name, text in files.items():
            (folder / "home" / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / "home" / name).write_text(text, encoding="utf-8")
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        return
    stored = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert (stored["package"], stored["version"]) == (pin.package, pin.version), "captures of another version"
    assert stored["exit"] == out.run.rc and stored["stopped_at_bound"] == out.run.stopped
    was = realclients.normalise((folder / "printed.txt").read_text(encoding="utf-8"))
    assert realclients.normalise(printed) == was, f"{client} {case} prints otherwise than its capture"
    assert [_unnamed(n) for n in stored["files"]] == [_unnamed(n) for n in sorted(files)]
    for was_name, name in zip(stored["files"], sorted(files), strict=True):
        was_text = (folder / "home" / was_name).read_text(encoding="utf-8")
        assert realclients.kinds(files[name]) == realclients.kinds(was_text), f"{name}: other kinds of record"
    for text in (printed, *files.values()):
        assert all(key not in text for _, key in realclients.KEYS.values())


def _unnamed(path: str) -> str:
    """A file's path without its times and ids (`rollout-#T#.jsonl`)."""
    return re.sub(r"[0-9a-f-]{6,}", "#", path)


def _newest_time(text: str) -> str | None:
    """The newest ISO time stamp in `text` (the capture's moment, for reading it later as if then)."""
    stamps = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z", text)
    return max(stamps) if stamps else None
