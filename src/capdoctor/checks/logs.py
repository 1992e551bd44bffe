"""The `logs` check: what the clients' own logs say about recent failures, as findings for the verdict.

Contract: reads the logs named by `ctx.target.logs` and `ctx.options["logs"]`, else discovers the clients' logs
under `ctx.home` (unless `discover_logs` is off), only data newer than `since` when given (discovered logs
default to 7d; named logs are read whole). It skips, with the reason, when no logs are found. It must not read
credentials or touch the network; heavy imports (hyperscan, zstandard) happen inside `run`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capdoctor.checks.base import Need
from capdoctor.checks.registry import Registered
from capdoctor.model import CheckResult, skipped

if TYPE_CHECKING:
    from capdoctor.run.context import Context


class LogsCheck(Registered, check_id="logs"):
    """Scan the AI clients' logs and session files for the error-signature table."""

    needs: frozenset[Need] = frozenset()
    after: tuple[str, ...] = ()

    def run(self, ctx: Context) -> CheckResult:
        """Scan named or discovered logs and return findings that combine with the live checks."""
        from capdoctor.logscan.command import run_logs

        paths = [str(p) for p in (ctx.target.logs if ctx.target else ())]
        paths += list(ctx.options["logs"])
        if not paths and not ctx.options["discover_logs"]:
            # the demo and the field scenarios diagnose a simulator: the user's own logs must not decide that
            return skipped(self, "log discovery is off (discover_logs = false); pass --log PATH")
        missing = [p for p in paths if p != "-" and not _exists(p)]
        if missing:
            return skipped(self, f"log path not found: {missing[0]}")
        run = run_logs(
            paths,
            since=ctx.options["since"],
            env=ctx.env,
            home=ctx.home,
            platform=ctx.platform,
            now=ctx.now(),
            stage=self,
        )
        result = run.check
        if result.status.value == "skip" and not paths:
            return skipped(
                self, "no client logs found (Codex, Claude Code, Gemini CLI, Copilot, Cursor, Ollama); pass --log PATH"
            )
        return result


def _exists(path: str) -> bool:
    import os

    return os.path.lexists(path)
