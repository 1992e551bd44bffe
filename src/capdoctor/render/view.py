"""The presentation flags of one run (`--json`, `--report`, `-v`, `--quiet`, `--no-color`).

Contract: data only; presentation never changes which checks run. Kept out of the package `__init__` so that
commands that only list (`capdoctor checks`) do not pay for building it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capdoctor.render import STDOUT


@dataclass(frozen=True)
class View:
    """How to present a run: `--json`, `--report`, `-v`, `--quiet`, `--no-color`."""

    json_out: bool = False
    report: Path | None = None
    verbose: bool = False
    quiet: bool = False
    no_color: bool = False

    @property
    def report_to_stdout(self) -> bool:
        """`--report -`: the Markdown ticket is stdout's only content."""
        return self.report is not None and str(self.report) == STDOUT

    @property
    def human(self) -> bool:
        """True when stdout shows the human view (not JSON, not the ticket)."""
        return not self.json_out and not self.report_to_stdout
