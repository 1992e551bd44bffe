"""The real AI clients (Codex CLI, Claude Code, Gemini CLI) against the simulator, for tests/e2e/test_real_clients.py.

Each client is the npm package pinned in tests/data/clients/versions.txt (`.ci/clients install` puts them in a
cache folder outside the checkout); each run gets a throw-away HOME whose config files point the client at a
base URL on loopback, with retries and timeouts capped so that a failing run takes seconds, and runs inside a
network namespace that has only loopback (`ip netns exec`), so nothing can leave the machine. `normalise` takes
the volatile parts (times, ids, ports, paths) out of what a client printed or wrote, to compare two runs and a
run with its capture; `capture_lines` is what a capture keeps of a client's file. Not part of the package.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).parent.parent / "data" / "clients"
PINS = DATA / "versions.txt"
CAPTURES = DATA / "real"
ENV = dict(os.environ)
"""The environment as the test run began (the suite's fixtures clear it for each test)."""
CACHE = Path(ENV.get("CAPDOCTOR_CI_NPM", "/var/cache/capdoctor-ci/npm"))
BOUND_S = 15.0
"""How long a client that waits without end is let wait before it is stopped (its run is what it printed)."""
RUN_LIMIT_S = 90.0
"""A bound on any other run: the clients' retries and timeouts are capped so that a failure ends in seconds."""
START_LIMIT_S = 30.0
"""A bound on a simulator or proxy coming up."""

KEYS = {
    "codex": ("OPENAI_API_KEY", "sk-test-realclients0codex0000000000000000"),
    "claude": ("ANTHROPIC_API_KEY", "sk-ant-test-realclients0claude00000000000000"),
    "gemini": ("GEMINI_API_KEY", "AIzaSy-test-realclients0gemini000000000"),
}
"""Each client's key variable and a fake key, planted to check that no output of capdoctor shows it."""
MODELS = {"codex": "gpt-5.5", "claude": "claude-opus-4-7", "gemini": "gemini-2.5-pro"}
"""The model each client is configured with: the simulator's primary model for the client's API shape."""
PREFIXES = {"codex": "/v1", "claude": "/anthropic", "gemini": "/gemini"}
"""Where the simulator serves each client's API (the proxy appends the same path to its upstream)."""


@dataclass(frozen=True)
class Pin:
    """One pinned client: the name the tests use (also its command), its npm package and version."""

    name: str
    package: str
    version: str


def pins() -> dict[str, Pin]:
    """The pinned clients, by name, from versions.txt."""
    found = {}
    for line in PINS.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 3 and not line.startswith("#"):
            found[parts[0]] = Pin(*parts)
    return found


def bin_dir() -> Path:
    """Where `.ci/clients install` puts the clients' commands (keyed by versions.txt, as the script keys it)."""
    override = ENV.get("CAPDOCTOR_CLIENTS_BIN")
    if override:
        return Path(override)
    lines = PINS.read_text(encoding="utf-8").splitlines()
    pinned = "".join(f"{line}\n" for line in lines if not line.startswith("#") and len(line.split()) == 3)
    key = hashlib.sha256(pinned.encode()).hexdigest()[:12]
    return CACHE / f"clients-{key}" / "node_modules" / ".bin"


def required() -> bool:
    """Whether a missing client is a failure rather than a skip (CI's host run sets CAPDOCTOR_REAL_CLIENTS)."""
    return ENV.get("CAPDOCTOR_REAL_CLIENTS") == "required"


def missing(name: str) -> str | None:
    """Why client `name` cannot run here (None when it can)."""
    command = bin_dir() / name
    if not os.access(command, os.X_OK):
        return f"{name} is not installed in {bin_dir()} (`.ci/clients install` installs the pinned clients)"
    return None


# ------------------------------------------------------------------------------------------ configuration


@dataclass
class Home:
    """A throw-away HOME for one client run: its folders and the environment the client (and capdoctor) get."""

    client: str
    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def work(self) -> Path:
        return self.root / "work"


def make_home(client: str, root: Path, base: str) -> Home:
    """HOME for `client` at `root`, its config pointing at `base` (scheme://host:port, no path)."""
    home = Home(client, root)
    for folder in (home.root, home.tmp, home.work):
        folder.mkdir(parents=True, exist_ok=True)
    var, key = KEYS[client]
    url = base + PREFIXES[client]
    model = MODELS[client]
    home.env = {
        "PATH": f"{bin_dir()}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home.root),
        "TMPDIR": str(home.tmp),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    if client == "codex":
        # request_max_retries / stream_max_retries: one retry each (Codex's own "Reconnecting... 1/1");
        # stream_idle_timeout_ms bounds a provider that never answers.
        (home.root / ".codex").mkdir()
        (home.root / ".codex" / "config.toml").write_text(
            f'model = "{model}"\nmodel_provider = "sim"\n\n[model_providers.sim]\nname = "Simulator"\n'
            f'base_url = "{url}"\nenv_key = "{var}"\nwire_api = "responses"\nrequest_max_retries = 1\n'
            "stream_max_retries = 1\nstream_idle_timeout_ms = 3000\n",
            encoding="utf-8",
        )
        home.env[var] = key
    elif client == "claude":
        # CLAUDE_CODE_MAX_RETRIES: one retry; API_TIMEOUT_MS bounds each request; no traffic but the API's.
        (home.root / ".claude").mkdir()
        settings = {
            "model": model,
            "env": {
                "ANTHROPIC_BASE_URL": url,
                "CLAUDE_CODE_MAX_RETRIES": "1",
                "API_TIMEOUT_MS": "2000",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
            },
        }
        (home.root / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
        home.env[var] = key
    else:
        # general.maxAttempts: one attempt (its default is 10, with backoff from 5 s); retryFetchErrors off;
        # folder trust off, so that the user's ~/.gemini/.env is read in the throw-away work folder.
        (home.root / ".gemini").mkdir()
        settings = {
            "model": {"name": model},
            "general": {"maxAttempts": 1, "retryFetchErrors": False, "disableAutoUpdate": True},
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
        (home.root / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
        (home.root / ".gemini" / ".env").write_text(f"{var}={key}\nGOOGLE_GEMINI_BASE_URL={url}\n", encoding="utf-8")
    return home


def command(client: str, prompt: str) -> list[str]:
    """The client's non-interactive command line for one prompt."""
    exe = str(bin_dir() / client)
    if client == "codex":
        return [exe, "exec", "--skip-git-repo-check", prompt]
    return [exe, "-p", prompt]


# ----------------------------------------------------------------------------------------------- running


def in_ns(ns: str, argv: list[str], env: Mapping[str, str]) -> list[str]:
    """`argv` run inside namespace `ns` with exactly `env` (nothing of this process's environment)."""
    return ["ip", "netns", "exec", ns, "env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]


@dataclass(frozen=True)
class Run:
    """What one client run printed (stdout, stderr), its exit status, and whether it was stopped at the bound."""

    stdout: str
    stderr: str
    rc: int
    stopped: bool = False

    @property
    def printed(self) -> str:
        return self.stdout + self.stderr


def run_client(ns: str, home: Home, prompt: str = "Say hi.", bound_s: float = BOUND_S) -> Run:
    """Run the client once in `ns`, from its work folder, with no terminal and nothing on stdin.

    A client that is still waiting after `bound_s` (Codex waits for the network without end when the port
    is refused; a black hole is silent) is stopped, and what it printed until then is its run.
    """
    proc = subprocess.Popen(
        in_ns(ns, command(home.client, prompt), home.env),
        cwd=home.work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    stopped = False
    try:
        out, err = proc.communicate(timeout=bound_s)
    except subprocess.TimeoutExpired:
        stopped = True
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    return Run(out, err, proc.returncode, stopped)


@dataclass
class Served:
    """A capdoctor server run for a test: its process, and all it printed once it has stopped."""

    proc: subprocess.Popen[str]
    output: str = ""


@contextmanager
def serving(ns: str, argv: list[str], env: Mapping[str, str], ready: str) -> Iterator[Served]:
    """A capdoctor server (`simulate`, `proxy`) in `ns` until the block ends; waits for `ready` in its output."""
    proc = subprocess.Popen(
        in_ns(ns, argv, env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    served = Served(proc)
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_LIMIT_S
        for line in proc.stdout:
            seen.append(line)
            if ready in line or time.monotonic() > deadline:
                break
        if ready not in "".join(seen):
            raise AssertionError(f"{argv[2:4]} not ready: {''.join(seen)[-2000:]}")
        yield served
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rest, _ = proc.communicate()
        served.output = "".join(seen) + (rest or "")


# --------------------------------------------------------------------------------- comparing and capturing

_VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(?:[.-]\d+)?Z?"), "<time>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d\b"), "<date>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b(?:req|resp|msg|chatcmpl|call|rs)_[0-9A-Za-z]{8,}"), "<id>"),
    (re.compile(r"\b[0-9a-f]{32,64}\b"), "<hash>"),
    (re.compile(r"\b[0-9a-f]{16}-[A-Z]{3}\b"), "<cf-ray>"),
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:<port>"),
    (re.compile(r"\b\d{10,13}\b"), "<epoch>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"), "<duration>"),
    (re.compile(r"(\.js):\d+:\d+"), r"\1:<line>"),
]


_NOISE = re.compile(r"^\[STARTUP\] .*\n?", re.MULTILINE)
"""Gemini CLI's start-up profiler lines: which of them it prints depends on how fast it started."""


_REPEATS = re.compile(r"^(.*\n)(?:\1)+", re.MULTILINE)
"""A line repeated: how often a client says it again while it waits ("Reconnecting... waiting for network")
depends on how long it waited."""


def normalise(text: str, home: Path | None = None) -> str:
    """`text` without what changes from run to run: times, dates, ids, ports, durations, the HOME and the
    install folder."""
    text = _NOISE.sub("", text)
    text = _REPEATS.sub(r"\1", text)
    if home is not None:
        text = text.replace(str(home), "<home>")
    text = text.replace(str(bin_dir().parent.parent), "<clients>")
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


BIG_LINE = 4000
"""A capture drops a client file's JSON lines longer than this: system prompts, tool and skill listings, request
snapshots (the prompt lives there; no failure does)."""
CAPTURE_HOME = "/home/user"
"""The HOME a capture shows in place of the run's throw-away one."""


def redact(text: str, home: Path) -> str:
    """`text` as a capture keeps it: the throw-away HOME (also as Claude Code spells it in folder names) as
    CAPTURE_HOME, the install folder as <clients>, the planted keys as <key>."""
    text = text.replace(str(home), CAPTURE_HOME).replace(str(home).replace("/", "-"), CAPTURE_HOME.replace("/", "-"))
    text = text.replace(str(bin_dir().parent.parent), "<clients>")
    for _, key in KEYS.values():
        text = text.replace(key, "<key>")
    return text


def capture_text(path: Path, home: Path) -> str:
    """What a capture keeps of one client file: redacted, a JSON-lines file without its BIG_LINE lines."""
    text = redact(path.read_text(encoding="utf-8", errors="replace"), home)
    if path.suffix != ".jsonl":
        return text
    return "".join(line for line in text.splitlines(keepends=True) if len(line) <= BIG_LINE)


def kinds(text: str) -> list[str]:
    """A client file's kinds of record, sorted and each once (what a capture must still match): each JSON line's
    `type` with its payload's type or subtype, or a JSON document's top-level keys."""
    stripped = text.strip()
    try:
        doc = json.loads(stripped)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        return sorted(doc)
    found: set[str] = set()
    for line in stripped.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            found.add("<text>")
            continue
        if not isinstance(row, dict):
            continue
        payload = row.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else row.get("subtype")
        found.add(f"{row.get('type')}/{sub}" if sub else str(row.get("type")))
    return sorted(found)
