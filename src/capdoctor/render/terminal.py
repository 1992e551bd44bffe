"""The terminal renderer: a staged checklist in the style of `flutter doctor`, then a verdict panel.

One line per check with a glyph and its summary (details under it with `-v`), the per-model probe rows and
an httpstat-like bar per network path when a check recorded them, then the verdict: cause, confidence,
evidence, next steps, and one closing line. On a terminal, `LiveChecklist` shows a spinner per running
check while the runner works. Everything here presents the report dict; nothing is computed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from capdoctor.render import ASCII_GLYPHS, GLYPHS

if TYPE_CHECKING:
    from capdoctor.check import Check
    from capdoctor.model import CheckResult

STYLES = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "dim", "error": "bold red"}
CAUSE_STYLES = {"none": "green", "inconclusive": "yellow"}
SEGMENTS = (("dns_ms", "DNS", "cyan"), ("connect_ms", "connect", "blue"), ("tls_ms", "TLS", "magenta"),
            ("ttfb_ms", "wait", "yellow"))
BAR_WIDTH = 32


def glyph(status: str, ascii_only: bool) -> str:
    """The bracketed status glyph, e.g. `[✓]`, or `[ok]` in ASCII mode."""
    return f"[{(ASCII_GLYPHS if ascii_only else GLYPHS).get(status, '?')}]"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 100 else f"{ms} ms"


def check_line(check: dict[str, Any], ascii_only: bool = False) -> Text:
    """`[✓] Title — summary (1.2 s)` for one check of the report."""
    status = check["status"]
    line = Text()
    line.append(glyph(status, ascii_only), style=STYLES.get(status, ""))
    line.append(f" {check['title']}", style="bold")
    line.append(f" — {check['summary']}")
    line.append(f" ({_seconds(check['duration_ms'])})", style="dim")
    return line


def _model_rows(models: Sequence[dict[str, Any]]) -> list[Text]:
    rows = []
    for m in models:
        labels = [
            str(a.get("status") or a.get("error_class") or a.get("error") or "?")
            + (f" {a['signature']}" if a.get("signature") else "")
            for a in m.get("attempts") or []
        ]
        runs: list[list[Any]] = []  # consecutive identical attempts shown once, as "3× 503 …"
        for label in labels:
            if runs and runs[-1][0] == label:
                runs[-1][1] += 1
            else:
                runs.append([label, 1])
        shown = ", ".join(f"{n}× {label}" if n > 1 else label for label, n in runs)
        outcome = str(m.get("outcome", "?"))
        style = {"ok": "green", "fail": "red", "flaky": "yellow"}.get(outcome, "")
        row = Text("    ")
        row.append(f"{m.get('model', '?')}", style="bold")
        row.append(f" ({m.get('role', '')}) ")
        row.append(outcome, style=style)
        if shown:
            row.append(f"  {shown}", style="dim")
        rows.append(row)
    return rows


def _path_rows(paths: Sequence[dict[str, Any]], ascii_only: bool) -> list[Text]:
    longest = max((float(p.get("total_ms") or 0) for p in paths), default=0.0) or 1.0
    width = max((len(str(p.get("name", ""))) for p in paths), default=0)
    rows = []
    for p in paths:
        row = Text("    " + str(p.get("name", "?")).ljust(width) + "  ")
        if p.get("error") or p.get("error_class"):
            row.append(f"✗ {p.get('error_class') or ''} {p.get('error') or ''}".strip(), style="red")
        else:
            for key, _label, style in SEGMENTS:
                value = float(p.get(key) or 0)
                cells = round(BAR_WIDTH * value / longest)
                row.append(("#" if ascii_only else "█") * cells, style=style)
            row.append(f" {float(p.get('total_ms') or 0):.0f} ms", style="bold")
            if p.get("status") is not None:
                row.append(f"  HTTP {p['status']}")
            if p.get("exit_location"):
                row.append(f"  exit {p['exit_location']}", style="dim")
        rows.append(row)
    if rows:
        legend = Text("    ")
        for _key, label, style in SEGMENTS:
            legend.append("#" if ascii_only else "█", style=style)
            legend.append(f" {label}  ", style="dim")
        rows.append(legend)
    return rows


def checklist(report: dict[str, Any], verbose: bool = False, ascii_only: bool = False) -> Group:
    """The staged checklist for every check in the report."""
    parts: list[Any] = []
    for check in report["checks"]:
        parts.append(check_line(check, ascii_only))
        data = check.get("data") or {}
        if isinstance(data.get("models"), list):
            parts.extend(_model_rows(data["models"]))
        if isinstance(data.get("paths"), list):
            parts.extend(_path_rows(data["paths"], ascii_only))
        if verbose:
            for finding in check["findings"]:
                parts.append(Text(f"    • {finding['cause']} ({finding['strength']}): {finding['message']}"))
            for detail in check.get("details", []):
                parts.append(Text(f"    {detail}", style="dim"))
    return Group(*parts)


def verdict_panel(report: dict[str, Any]) -> Panel:
    """The verdict: cause, confidence, summary, evidence, next steps."""
    v = report["verdict"]
    style = CAUSE_STYLES.get(v["cause"], "bold red")
    body = Table.grid(padding=(0, 1))
    body.add_row(Text(v["summary"]))
    if v["evidence"]:
        body.add_row(Text("\nEvidence", style="bold"))
        for line in v["evidence"]:
            body.add_row(Text(f" • {line}"))
    if v["next_steps"]:
        body.add_row(Text("\nNext steps", style="bold"))
        for i, step in enumerate(v["next_steps"], 1):
            row = Text(f" {i}. {step['text']}")
            if step.get("command"):
                row.append(f"  $ {step['command']}", style="cyan")
            body.add_row(row)
    title = Text(f" Verdict: {v['cause'].upper()} ", style=style)
    title.append(f"(confidence {v['confidence']:.0%}) ", style="dim")
    return Panel(body, title=title, title_align="left", border_style=style)


def footer(report: dict[str, Any]) -> Text:
    """One closing line: counts per status and the verdict's category."""
    counts: dict[str, int] = {}
    for check in report["checks"]:
        counts[check["status"]] = counts.get(check["status"], 0) + 1
    words = {"pass": "ok", "warn": "warn", "fail": "fail", "skip": "skipped", "error": "error"}
    parts = [f"{counts[s]} {words[s]}" for s in ("pass", "warn", "fail", "error", "skip") if counts.get(s)]
    cause = report["verdict"]["cause"]
    tail = "no issues found." if cause == "none" else f"verdict: {cause}."
    return Text(" · ".join(parts) + f" — {tail}  (details: -v · ticket report: --report FILE)")


def render(report: dict[str, Any], console: Console, verbose: bool = False, ascii_only: bool = False,
           header: str | None = None) -> None:
    """Print the whole human report to `console`: header, checklist, verdict panel, closing line."""
    if header:
        console.print(Text(header, style="bold"))
    console.print(checklist(report, verbose, ascii_only))
    console.print(verdict_panel(report))
    console.print(footer(report))


class LiveChecklist:
    """A runner observer that shows each check with a spinner while it runs (terminal only, thread-safe)."""

    def __init__(self, checks: Sequence[Check], console: Console, header: str, ascii_only: bool = False,
                 scrub: Callable[[str], str] = str) -> None:
        """Prepare a row per check, in stage order; `scrub` redacts summaries before they are shown."""
        self._scrub = scrub
        self._order = [c.id for c in sorted(checks, key=lambda c: c.stage)]
        self._titles = {c.id: c.title for c in checks}
        self._done: dict[str, Text] = {}
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self._header = header
        self._ascii = ascii_only
        # transient: the live rows vanish at the end and the full checklist (with per-model rows and path
        # bars) is printed in their place, so a terminal shows exactly what a pipe would, plus motion.
        self._live = Live(self._view(), console=console, refresh_per_second=12, transient=True)

    def _view(self) -> Group:
        rows: list[Any] = [Text(self._header, style="bold")]
        for cid in self._order:
            if cid in self._done:
                rows.append(self._done[cid])
            elif cid in self._running:
                rows.append(Spinner("dots", text=Text(f" {self._titles[cid]} …")))
            else:
                rows.append(Text(f"[ ] {self._titles[cid]}", style="dim"))
        return Group(*rows)

    def __enter__(self) -> LiveChecklist:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._live.update(self._view(), refresh=True)
        self._live.stop()

    def started(self, check: Check) -> None:
        """Show a spinner for `check`."""
        with self._lock:
            self._running.add(check.id)
            self._live.update(self._view())

    def finished(self, result: CheckResult) -> None:
        """Replace the spinner with the final line."""
        line = check_line({"status": result.status.value, "title": result.title, "summary": self._scrub(result.summary),
                           "duration_ms": result.duration_ms}, self._ascii)
        with self._lock:
            self._running.discard(result.id)
            self._done[result.id] = line
            self._live.update(self._view())
