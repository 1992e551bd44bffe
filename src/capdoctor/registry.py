"""The ordered registry of built-in checks.

A plain ordered list of import paths (stage order), resolved on demand: `capdoctor checks` must not pay for
importing httpx or psutil. Adding a check means adding one line here; nothing else dispatches on check ids.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from capdoctor.errors import UsageError

if TYPE_CHECKING:
    from capdoctor.check import Check

BUILTIN: tuple[str, ...] = (
    "capdoctor.checks.models:ModelsCheck",
    "capdoctor.checks.status:StatusCheck",
    "capdoctor.checks.paths:PathsCheck",
    "capdoctor.checks.proxy:ProxyCheck",
    "capdoctor.checks.quota:QuotaCheck",
    "capdoctor.checks.client:ClientCheck",
    "capdoctor.checks.hardware:HardwareCheck",
    "capdoctor.checks.logs:LogsCheck",
)


def _load(path: str) -> Check | None:
    """Instantiate the check at `module:Class`, or None while that module does not exist yet."""
    module_name, _, cls_name = path.partition(":")
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    check: Check = getattr(module, cls_name)()
    return check


def all_checks() -> list[Check]:
    """Every built-in check, in stage order."""
    found = [c for c in (_load(p) for p in BUILTIN) if c is not None]
    return sorted(found, key=lambda c: c.stage)


def select(only: list[str] | None = None, skip: list[str] | None = None) -> list[Check]:
    """The checks named by `--only`/`--skip` (comma lists allowed), in stage order; unknown ids are a usage error."""
    checks = all_checks()
    known = {c.id for c in checks}

    def ids(values: list[str] | None) -> set[str]:
        out = {v.strip() for raw in values or [] for v in raw.split(",") if v.strip()}
        unknown = sorted(out - known)
        if unknown:
            raise UsageError(
                f"unknown check id(s): {', '.join(unknown)} (known: {', '.join(c.id for c in checks)})"
            )
        return out

    wanted, unwanted = ids(only), ids(skip)
    return [c for c in checks if (not wanted or c.id in wanted) and c.id not in unwanted]
