"""The ordered registry of built-in checks: their listing data, and where each implementation lives.

Listing checks (`capdoctor checks`, unknown-id errors) must not import them: the check modules cost more than
the CLI framework itself. So each check's id, title, stage and description are data here, next to the
`module:Class` path imported only when a run needs it. A check class names its id once
(`class ModelsCheck(Registered, check_id="models")`) and `Registered` copies the rest from the row, so listing
and class cannot drift apart. This module imports no check module at the top (they import it).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from capdoctor.errors import UsageError

if TYPE_CHECKING:
    from capdoctor.checks.base import Check


@dataclass(frozen=True)
class CheckInfo:
    """What `capdoctor checks` shows about one check, and where its implementation lives."""

    id: str
    title: str
    stage: int
    description: str
    path: str


BUILTIN: tuple[CheckInfo, ...] = (
    CheckInfo(
        "models",
        "Switch model",
        1,
        "probe the primary model and a lighter one: capacity when switching the model fixes it",
        "capdoctor.checks.models:ModelsCheck",
    ),
    CheckInfo(
        "status",
        "Provider status page",
        2,
        "read the provider's status page: an ongoing incident is capacity evidence",
        "capdoctor.checks.status:StatusCheck",
    ),
    CheckInfo(
        "paths",
        "Network paths",
        3,
        "compare direct, env-proxy and system-proxy paths to the provider: DNS/TCP/TLS/TTFB, errors, exit",
        "capdoctor.checks.paths:PathsCheck",
    ),
    CheckInfo(
        "proxy",
        "Proxy and TUN",
        4,
        "what sits between you and the provider: env/system proxy, TUN, fake-IP DNS, TLS interception",
        "capdoctor.checks.proxy:ProxyCheck",
    ),
    CheckInfo(
        "quota",
        "Quota and rate limits",
        5,
        "read rate-limit headers and key endpoints: exhausted quota vs healthy headroom",
        "capdoctor.checks.quota:QuotaCheck",
    ),
    CheckInfo(
        "client",
        "Client",
        6,
        "which AI clients are installed, how they are set up, and whether they are current",
        "capdoctor.checks.client:ClientCheck",
    ),
    CheckInfo(
        "hardware",
        "Local GPU and memory",
        7,
        "local model servers, GPU memory (NVML / Apple unified memory), RAM and swap",
        "capdoctor.checks.hardware:HardwareCheck",
    ),
    CheckInfo(
        "logs",
        "Logs",
        8,
        "what the clients' own logs say: which errors, how often, when, on which models",
        "capdoctor.checks.logs:LogsCheck",
    ),
)


def info(check_id: str) -> CheckInfo:
    """The registry row of `check_id` (a programming error, not a usage error, when it is missing)."""
    for row in BUILTIN:
        if row.id == check_id:
            return row
    raise KeyError(f"no registry row for check {check_id!r}")


class Registered:
    """Base of the built-in checks: `check_id=` in the class statement binds the class to its registry row.

    The id, title, stage and description are then read from the row (the one place they are written).
    """

    id: str
    title: str
    stage: int
    description: str

    def __init_subclass__(cls, check_id: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if check_id:
            row = info(check_id)
            cls.id, cls.title, cls.stage, cls.description = row.id, row.title, row.stage, row.description


def load(info: CheckInfo) -> Check:
    """Import and instantiate the check that `info` describes."""
    module_name, _, cls_name = info.path.partition(":")
    check: Check = getattr(import_module(module_name), cls_name)()
    return check


def selected_infos(
    only: list[str] | None = None, skip: list[str] | None = None, only_source: str = "--only"
) -> list[CheckInfo]:
    """The registry rows named by `--only`/`--skip` (comma lists allowed), in stage order, without importing.

    Unknown ids are a usage error that names where they came from (`only_source`: `check`'s ID argument gives
    its ids as `only`) and lists the known ones.
    """
    known = [i.id for i in BUILTIN]

    def ids(values: list[str] | None, source: str) -> set[str]:
        out = {v.strip() for raw in values or [] for v in raw.split(",") if v.strip()}
        unknown = sorted(out - set(known))
        if unknown:
            raise UsageError(
                f"unknown check id(s) {', '.join(map(repr, unknown))} ({source}); known: {', '.join(known)}"
            )
        return out

    wanted, unwanted = ids(only, only_source), ids(skip, "--skip")
    rows = [i for i in BUILTIN if (not wanted or i.id in wanted) and i.id not in unwanted]
    return sorted(rows, key=lambda i: i.stage)


def select(only: list[str] | None = None, skip: list[str] | None = None) -> list[Check]:
    """The checks named by `--only`/`--skip`, instantiated, in stage order."""
    return [load(info) for info in selected_infos(only, skip)]
