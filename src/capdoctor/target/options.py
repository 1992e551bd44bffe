"""The run options, declared once: name, kind, default, help, and the flag or variable that also sets them.

Contract: `SPECS` is the one table of options: it feeds capdoctor.toml's `[options]`, the flags and variables
that set an option, validation, the values checks read (`ctx.options["models.max_attempts"]` is a checked
`int`, default filled in) and `capdoctor config`. Adding an option is one `OptionSpec` row; a new kind is one
parser in `KINDS`.

`resolve(layers)` checks every given value once and returns an `Options` mapping; a bad value raises
`OptionError` (a `UsageError`: exit 2) naming the value and its source, before any request. Precedence, highest
first: flags, project capdoctor.toml, user capdoctor.toml, environment, default (target discovery's order).
`unknown_keys()` names what a capdoctor.toml holds that no one reads, with the closest known name.

Imported by the CLI at start-up for the flags' help: it must stay light (no httpx, no rich, nothing from the
logs scanner until a `since` value is checked) and must not read files or print.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from capdoctor.errors import UsageError


class OptionError(UsageError):
    """An option value that cannot be used; the message names the value and where it came from."""


class OptionSpec(NamedTuple):
    """One option: its name (the key in `[options]` and `ctx.options`), kind, default and help.

    `kind` names a parser in `KINDS`. `minimum`/`maximum` bound numbers (inclusive; `above` makes the
    minimum exclusive). `flag` and `env` name the flag and the environment variable that also set it.
    `user` is False for options only capdoctor itself sets (the demo's), which capdoctor.toml cannot set.
    """

    name: str
    kind: str
    default: Any
    help: str
    flag: str | None = None
    env: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    user: bool = True


class Given(NamedTuple):
    """One layer's raw value for an option, and where it came from (`flag --timeout`, a file, `env X`)."""

    value: Any
    source: str
    text: bool = False
    """True when the value is text to convert (a flag, a variable); False for a typed TOML or Python value."""


# -- kinds ----------------------------------------------------------------------------------------------------

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")


def _bool(spec: OptionSpec, value: Any, text: bool) -> bool:
    if isinstance(value, bool):
        return value
    if text and isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise ValueError("must be true or false")


def _number(spec: OptionSpec, value: Any, text: bool, integer: bool) -> float:
    wanted = "a whole number" if integer else "a number"
    if isinstance(value, bool):
        raise ValueError(f"must be {wanted}, not a boolean")
    if text and isinstance(value, str):
        try:
            value = int(value.strip()) if integer else float(value.strip())
        except ValueError:
            raise ValueError(f"must be {wanted}") from None
    if integer and not isinstance(value, int):
        raise ValueError(f"must be {wanted}")
    if not isinstance(value, (int, float)):
        raise ValueError(f"must be {wanted}")
    if not math.isfinite(value):
        raise ValueError(f"must be a finite number, not {value}")
    low, high = spec.minimum, spec.maximum
    if low is not None and (value <= low if spec.above else value < low):
        raise ValueError(f"must be {'above' if spec.above else 'at least'} {_num(low)}")
    if high is not None and value > high:
        raise ValueError(f"must be at most {_num(high)}")
    return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _int(spec: OptionSpec, value: Any, text: bool) -> int:
    return int(_number(spec, value, text, integer=True))


def _float(spec: OptionSpec, value: Any, text: bool) -> float:
    return float(_number(spec, value, text, integer=False))


def text_problem(value: str) -> str | None:
    """Why `value` cannot be a name or a setting (`is empty`, `contains a control character`), or None."""
    if not value.strip():
        return "is empty"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "contains a control character"
    return None


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, not {type(value).__name__}")
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value.strip()


def _url(spec: OptionSpec, value: Any, text: bool) -> str:
    from capdoctor.target.urls import url_problem

    url = _string(value)
    problem = url_problem(url)
    if problem:
        raise ValueError(problem)
    return url


def _since(spec: OptionSpec, value: Any, text: bool) -> str:
    from datetime import datetime, timezone

    from capdoctor.logscan.timestamps import SinceRangeError, parse_since

    since = _string(value)
    try:
        parse_since(since, datetime.now(timezone.utc))
    except SinceRangeError:
        raise ValueError("reaches back further than dates go; use 'all'") from None
    except ValueError:
        raise ValueError("must be a duration such as 7d, 12h or 30m, a date such as 2026-11-01, or 'all'") from None
    return since


class ItemError(ValueError):
    """A list option refused for one of its items: the message names that item, not the whole list."""

    def __init__(self, item: Any, phrase: str) -> None:
        super().__init__(phrase)
        self.item = item


COMPRESSED_MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")
"""gzip and zstd: compressed logs are read as the text they hold, NUL bytes in their header or not."""


def path_problem(path: str, content: bool = True) -> str | None:
    """Why a log path the user named cannot be read as one, or None. The one rule for `logs PATH`, `--log` and
    capdoctor.toml's `logs`: a name that is not there is refused before anything is sent (`-` is stdin). With
    `content`, a named file that cannot be opened or holds binary data is refused too (`--log`, where the run
    would otherwise probe the provider and bury it in a check); `logs` reads what it can and names the rest,
    exit 2 when nothing could be read, so it asks without."""
    import os

    if path == "-":
        return None
    full = os.path.expanduser(path)
    if not os.path.lexists(full):
        return "does not exist"
    if content and os.path.isfile(full):
        try:
            with open(full, "rb") as fh:
                head = fh.read(8192)
        except OSError as exc:
            return f"cannot be read: {exc.strerror or exc}"
        if b"\x00" in head and not head.startswith(COMPRESSED_MAGIC):
            return "is binary data (NUL bytes), not a log"
    return None


def _paths(spec: OptionSpec, value: Any, text: bool) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"must be a list of paths, not {type(value).__name__}")
    paths = tuple(_string(item) for item in items)
    for path in paths:
        problem = path_problem(path)
        if problem:
            raise ItemError(path, problem)
    return paths


KINDS: dict[str, Callable[[OptionSpec, Any, bool], Any]] = {
    "bool": _bool,
    "int": _int,
    "float": _float,
    "url": _url,
    "since": _since,
    "paths": _paths,
}
"""Parser per kind: `(spec, value, text) -> value`, raising ValueError with a phrase (`must be …`)."""


# -- the table ------------------------------------------------------------------------------------------------

SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "timeout",
        "float",
        30.0,
        "One deadline in seconds for the whole run, counted from the start of the process.",
        flag="--timeout",
        minimum=1,
        maximum=600,
    ),
    OptionSpec(
        "since",
        "since",
        None,
        "Only log data newer than this: a duration (7d, 12h, 30m), a date (2026-11-01) or 'all' (default: 7d for "
        "discovered logs; logs you name are read whole).",
        flag="--since",
    ),
    OptionSpec("logs", "paths", (), "Log files or folders to scan besides the discovered ones.", flag="--log"),
    OptionSpec("discover_logs", "bool", True, "Look for the clients' logs under your home."),
    OptionSpec(
        "reference_url",
        "url",
        None,
        "Neutral URL for the 'is the internet up' test (default: a public 204 endpoint unless lookups are off).",
        flag="--reference-url",
    ),
    OptionSpec(
        "status_url", "url", None, "The status page to read (default: the provider's).", env="CAPDOCTOR_STATUS_URL"
    ),
    OptionSpec("status.cache_s", "float", 300.0, "Seconds a status page answer is reused.", minimum=0),
    OptionSpec(
        "no_network_lookups",
        "bool",
        False,
        "Contact nothing but your target (no status page, registry or reference lookups unless configured explicitly).",
        env="CAPDOCTOR_NO_NETWORK_LOOKUPS",
    ),
    OptionSpec(
        "npm_registry",
        "url",
        None,
        "Where the latest npm client versions are looked up (default: https://registry.npmjs.org; cached a day).",
    ),
    OptionSpec(
        "pypi_url", "url", None, "Where the latest Python SDK versions are looked up (default: https://pypi.org)."
    ),
    OptionSpec(
        "client_version_timeout",
        "float",
        3.0,
        "Seconds one `--version` call of an installed client may take.",
        minimum=0,
        above=True,
        maximum=600,
    ),
    OptionSpec(
        "ollama_url",
        "url",
        None,
        "A local model server to inspect (default: OLLAMA_HOST, then http://127.0.0.1:11434).",
    ),
    OptionSpec("local_scan_default_ports", "bool", True, "Look for local model servers on their usual ports."),
    OptionSpec(
        "local_probe_timeout",
        "float",
        0.5,
        "Seconds to wait for a local server's port.",
        minimum=0,
        above=True,
        maximum=600,
    ),
    OptionSpec(
        "ollama_load_timeout",
        "float",
        20.0,
        "Seconds to wait for Ollama to load the target model.",
        minimum=0,
        above=True,
        maximum=600,
    ),
    OptionSpec(
        "run.max_provider_requests",
        "int",
        12,
        "Requests the whole run may send to the provider (its API host), every check together.",
        minimum=1,
        maximum=100,
    ),
    OptionSpec(
        "run.max_output_tokens",
        "int",
        200,
        "Output tokens the whole run may ask of the provider (the sum of its generations' max_tokens).",
        minimum=1,
        maximum=10000,
    ),
    OptionSpec("models.max_attempts", "int", 3, "Generation attempts per model.", minimum=1, maximum=20),
    OptionSpec(
        "models.primary_attempts",
        "int",
        3,
        "Generations sent to the primary model, even after a success (its failure rate is sampled).",
        minimum=1,
        maximum=20,
    ),
    OptionSpec("models.max_requests", "int", 8, "Requests the models check may send in all.", minimum=1, maximum=50),
    OptionSpec(
        "models.backoff_s",
        "float",
        0.3,
        "First backoff between attempts, in seconds (doubles).",
        minimum=0,
        maximum=600,
    ),
    OptionSpec(
        "models.max_backoff_s", "float", 8.0, "Longest backoff between attempts, in seconds.", minimum=0, maximum=600
    ),
    OptionSpec(
        "models.request_timeout_s",
        "float",
        10.0,
        "Seconds one probe request may take, whole.",
        minimum=0,
        above=True,
        maximum=600,
    ),
    OptionSpec(
        "watch.interval_s",
        "float",
        300.0,
        "Seconds from one watch round to the next.",
        flag="--interval",
        minimum=1,
        maximum=7 * 86400,
    ),
    OptionSpec(
        "watch.retention_days",
        "float",
        30.0,
        "Days of watch history to keep.",
        flag="--retention",
        minimum=1,
        maximum=36500,
    ),
    OptionSpec(
        "proxy.burst_failures",
        "int",
        5,
        "Failed exchanges within --burst-window that make `capdoctor proxy` look at the network once (0: never).",
        flag="--burst-failures",
        minimum=0,
        maximum=100000,
    ),
    OptionSpec(
        "proxy.burst_window_s",
        "float",
        60.0,
        "Seconds in which --burst-failures failed exchanges make a burst.",
        flag="--burst-window",
        minimum=1,
        maximum=86400,
    ),
    OptionSpec(
        "proxy.drain_s",
        "float",
        10.0,
        "Seconds open exchanges may take to finish when `capdoctor proxy` is stopped.",
        flag="--drain",
        minimum=0,
        maximum=600,
    ),
    OptionSpec("demo", "bool", False, "Set by `capdoctor demo`: the target is the simulator.", user=False),
)

BY_NAME: dict[str, OptionSpec] = {s.name: s for s in SPECS}

TABLES = ("target", "options")
"""The tables capdoctor.toml may hold; anything else is named in a warning."""


def spec(name: str) -> OptionSpec:
    """The declaration of option `name` (KeyError for an unknown name: a programming error)."""
    return BY_NAME[name]


def help_for(name: str) -> str:
    """The help text of option `name`, with its default, for the flag that sets it."""
    s = BY_NAME[name]
    return s.help if s.default in (None, "", False, ()) else f"{s.help} [default: {shown(s.default)}]"


def shown(value: Any) -> str:
    """An option value as capdoctor.toml would spell it (`true`, `30`, `a, b`; `-` for unset)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


# -- values ---------------------------------------------------------------------------------------------------


class Value(NamedTuple):
    """An option's effective value and where it came from (`default` when nothing set it)."""

    value: Any
    source: str


class Options(Mapping[str, Any]):
    """Checked option values by name, defaults filled in; `source(name)` says where each came from."""

    def __init__(self, values: Mapping[str, Value]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> Any:
        return self._values[name].value

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Options({ {k: v.value for k, v in self._values.items()}!r})"

    def source(self, name: str) -> str:
        """Where option `name` came from: `default`, `flag --timeout`, a capdoctor.toml, `env X`, …"""
        return self._values[name].source

    def is_set(self, name: str) -> bool:
        """True when something other than the default set option `name`."""
        return self._values[name].source != "default"

    def rows(self) -> list[tuple[OptionSpec, Value]]:
        """Every declared option with its value and source, in table order (for `capdoctor config`)."""
        return [(s, self._values[s.name]) for s in SPECS if s.name in self._values]


def check(name: str, given: Given) -> Any:
    """The checked value of option `name` from `given`, or `OptionError` naming the value and its source."""
    s = BY_NAME[name]
    try:
        return KINDS[s.kind](s, given.value, given.text)
    except ItemError as exc:
        raise OptionError(f"{_label(s, given)} {exc.item!r} ({given.source}) {exc}") from None
    except ValueError as exc:
        raise OptionError(f"{_label(s, given)} {given.value!r} ({given.source}) {exc}") from None


def _label(s: OptionSpec, given: Given) -> str:
    return s.flag if given.source.startswith("flag ") and s.flag else f"option {s.name!r}"


def resolve(layers: Sequence[Mapping[str, Given]], *, env: Mapping[str, str] | None = None) -> Options:
    """The options from `layers` (highest precedence first), then the environment, then the defaults.

    Every value that is given is checked, even one a higher layer overrides: a bad value in a file is an
    error whether or not a flag hides it today. Unknown names in a layer are a programming error (KeyError);
    files are screened by `unknown_keys` first.
    """
    chosen: dict[str, Value] = {}
    for layer in layers:
        for name, given in layer.items():
            value = check(name, given)
            chosen.setdefault(name, Value(value, given.source))
    for s in SPECS:
        if s.name in chosen:
            continue
        raw = (env or {}).get(s.env) if s.env else None
        if raw:
            chosen[s.name] = Value(check(s.name, Given(raw, f"env {s.env}", text=True)), f"env {s.env}")
        else:
            chosen[s.name] = Value(s.default, "default")
    return Options(chosen)


def from_mapping(values: Mapping[str, Any], source: str, env: Mapping[str, str] | None = None) -> Options:
    """`resolve` over one mapping of typed values (a caller's own, such as the demo's or a test's; None means
    unset, as in a copy of an `Options`)."""
    unknown = sorted(set(values) - set(BY_NAME))
    if unknown:
        raise KeyError(f"unknown option(s): {', '.join(unknown)}")
    return resolve([{k: Given(v, source) for k, v in values.items() if v is not None}], env=env)


def file_layer(table: Mapping[str, Any], source: str) -> dict[str, Given]:
    """The `[options]` table of one capdoctor.toml as a layer (unknown and capdoctor-only keys left out)."""
    return {k: Given(v, source) for k, v in table.items() if k in BY_NAME and BY_NAME[k].user}


def flag_layer(flags: Mapping[str, Any]) -> dict[str, Given]:
    """Options set on the command line, by option name (None and empty repeats mean "not given")."""
    out: dict[str, Given] = {}
    for name, value in flags.items():
        if value is None or (isinstance(value, (list, tuple)) and not value):
            continue
        s = BY_NAME[name]
        out[name] = Given(value, f"flag {s.flag}", text=True)
    return out


def unknown_keys(doc: Mapping[str, Any], target_keys: Sequence[str]) -> list[str]:
    """What a capdoctor.toml document holds that nothing reads, each with the closest known name.

    `target_keys` are the keys `[target]` may hold (they may also stand at the top level).
    """
    out: list[str] = []
    top_known = [*TABLES, *target_keys]
    for key, value in doc.items():
        if key in top_known:
            continue
        kind = "table" if isinstance(value, dict) else "key"
        out.append(f"unknown {kind} {_shown_key(key, kind)}{_close(key, top_known, kind)}")
    target = doc.get("target")
    if isinstance(target, dict):
        out += [f"unknown key {k!r} in [target]{_close(k, target_keys, 'key')}" for k in target if k not in target_keys]
    options = doc.get("options")
    if isinstance(options, dict):
        names = [s.name for s in SPECS if s.user]
        out += [f"unknown option {k!r} in [options]{_close(k, names, 'key')}" for k in options if k not in names]
    return out


def _shown_key(key: str, kind: str) -> str:
    return f"[{key}]" if kind == "table" else repr(key)


def _close(key: str, known: Sequence[str], kind: str) -> str:
    import difflib

    near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {_shown_key(near[0], kind)}?)" if near else ""
