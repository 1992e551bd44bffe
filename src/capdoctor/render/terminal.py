"""The terminal renderer: a staged checklist in the style of `flutter doctor`, then the verdict.

It presents the report dict; nothing is computed. On a terminal, `Checklist` shows a spinner per running check,
a wrapped item keeps its hanging indent and a `$ command` sits on its own line that Rich never folds, so it
copies whole; in a pipe every logical line is one physical line. Each timing segment has its own glyph and its
number written out, so the bar reads without colour. Outside text is made inert first (`text.neutralise`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from capdoctor.render import ASCII_GLYPHS, GLYPHS
from capdoctor.text import neutralise, neutralise_all, one_line

if TYPE_CHECKING:
    from capdoctor.checks.base import Check
    from capdoctor.model import CheckResult

STYLES = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "dim", "error": "bold red"}
CAUSE_STYLES = {"none": "green", "inconclusive": "yellow"}
SEGMENTS = (
    ("dns_ms", "DNS", "cyan", "█", "#"),
    ("connect_ms", "connect", "blue", "▓", "="),
    ("tls_ms", "TLS", "magenta", "▒", "+"),
    ("ttfb_ms", "wait", "yellow", "░", "."),
)
"""Timing segments: report key, label, colour, glyph, ASCII glyph (distinct, so the bar reads in monochrome)."""
BAR_WIDTH = 32


def glyph(status: str, ascii_only: bool) -> str:
    """The bracketed status glyph, e.g. `[✓]`, or `[ok]` in ASCII mode."""
    return f"[{(ASCII_GLYPHS if ascii_only else GLYPHS).get(status, '?')}]"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 100 else f"{ms} ms"


def _ms(value: Any) -> str:
    return "—" if value is None else f"{float(value):.0f}"


UNIT_JOIN = re.compile(r"(?<=\d) (?=(?:ms|s|µs|min|h|d|KiB|MiB|GiB|kB|MB|GB|%)\b)")
"""The space between a number and its unit (`11 ms`, `2.3 GiB`): a wrap never falls there."""
GLUE = "\ue000"
"""What such a space is while a line wraps: not whitespace, so Rich keeps the pair together (one cell wide,
as the space is); it is a plain space again in what is printed, so a copied or grepped `11 ms` still reads."""


def _glued(body: Text) -> Text:
    joined = body.copy()
    joined.plain = UNIT_JOIN.sub(GLUE, body.plain)  # same length: every style span stays where it was
    return joined


def _unglued(line: Text) -> Text:
    line.plain = line.plain.replace(GLUE, " ")
    return line


class Hanging:
    """`lead` then `body`, the body wrapped to the console with continuation lines under its first character."""

    def __init__(self, lead: Text, body: Text) -> None:
        self.lead, self.body = lead, body

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """One Text per wrapped line, without padding (no trailing spaces to copy)."""
        indent = self.lead.cell_len
        width = max(16, options.max_width - indent)
        for i, line in enumerate(_glued(self.body).wrap(console, width, overflow="fold")):
            line.rstrip()
            yield (self.lead if i == 0 else Text(" " * indent)) + _unglued(line)


def item(prefix: str | Text, body: Text, wrap: bool, indent: int = 0) -> RenderableType:
    """`prefix` then `body`; when `wrap`, continuation lines start under the body (a hanging indent)."""
    lead = Text(" " * indent).append_text(prefix if isinstance(prefix, Text) else Text(prefix))
    return Hanging(lead, body) if wrap else lead.append_text(body)


def check_line(check: dict[str, Any], ascii_only: bool = False, wrap: bool = False) -> RenderableType:
    """`[✓] Title — summary (1.2 s)` for one check of the report."""
    status = check["status"]
    body = Text()
    body.append(one_line(str(check["title"])), style="bold")
    body.append(f" — {one_line(str(check['summary']))}")
    body.append(f" ({_seconds(check['duration_ms'])})", style="dim")
    return item(Text(glyph(status, ascii_only) + " ", style=STYLES.get(status, "")), body, wrap)


def _model_rows(models: Sequence[dict[str, Any]], wrap: bool) -> list[RenderableType]:
    rows: list[RenderableType] = []
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
        row = Text()
        row.append(f"{m.get('model', '?')}", style="bold")
        row.append(f" ({m.get('role', '')}) ")
        row.append(outcome, style=style)
        if shown:
            row.append(f"  {one_line(shown)}", style="dim")
        rows.append(item("", row, wrap, indent=4))
    return rows


def _path_rows(paths: Sequence[dict[str, Any]], ascii_only: bool, wrap: bool) -> list[RenderableType]:
    longest = max((float(p.get("total_ms") or 0) for p in paths), default=0.0) or 1.0
    width = max((len(str(p.get("name", ""))) for p in paths), default=0)
    rows: list[RenderableType] = []
    for p in paths:
        row = Text()
        if p.get("error") or p.get("error_class"):
            cross = "x" if ascii_only else "✗"
            row.append(
                f"{cross} {p.get('error_class') or ''} {one_line(str(p.get('error') or ''))}".strip(), style="red"
            )
        else:
            for key, _label, style, mark, ascii_mark in SEGMENTS:
                cells = round(BAR_WIDTH * float(p.get(key) or 0) / longest)
                row.append((ascii_mark if ascii_only else mark) * cells, style=style)
            row.append(f" {float(p.get('total_ms') or 0):.0f} ms", style="bold")
            row.append(" (" + ", ".join(f"{label} {_ms(p.get(key))}" for key, label, *_ in SEGMENTS) + ")", style="dim")
            if p.get("status") is not None:
                row.append(f"  HTTP {p['status']}")
            if p.get("exit_location"):
                row.append(f"  exit {one_line(str(p['exit_location']))}", style="dim")
        rows.append(item(str(p.get("name", "?")).ljust(width) + "  ", row, wrap, indent=4))
    if rows:
        legend = Text("    ")
        for _key, label, style, mark, ascii_mark in SEGMENTS:
            legend.append(ascii_mark if ascii_only else mark, style=style)
            legend.append(f" {label}  ", style="dim")
        legend.append("(ms)", style="dim")
        rows.append(legend)
    return rows


def checklist(report: dict[str, Any], verbose: bool = False, ascii_only: bool = False, wrap: bool = False) -> Group:
    """The staged checklist for every check in the report."""
    parts: list[RenderableType] = []
    for check in report["checks"]:
        parts.append(check_line(check, ascii_only, wrap))
        data = check.get("data") or {}
        if isinstance(data.get("models"), list):
            parts.extend(_model_rows(data["models"], wrap))
        if isinstance(data.get("paths"), list):
            parts.extend(_path_rows(data["paths"], ascii_only, wrap))
        if verbose:
            bullet = "* " if ascii_only else "• "
            for finding in check["findings"]:
                parts.append(
                    item(
                        bullet,
                        Text(f"{finding['cause']} ({finding['strength']}): {one_line(str(finding['message']))}"),
                        wrap,
                        indent=4,
                    )
                )
            for detail in check.get("details", []):
                parts.append(item("", Text(one_line(str(detail)), style="dim"), wrap, indent=4))
    return Group(*parts)


def verdict_title(report: dict[str, Any]) -> Text:
    """`Verdict: QUOTA (confidence 91%)`, coloured by cause."""
    v = report["verdict"]
    title = Text(f"Verdict: {v['cause'].upper()}", style=CAUSE_STYLES.get(v["cause"], "bold red"))
    title.append(f" (confidence {v['confidence']:.0%})", style="dim")
    return title


def verdict_line(report: dict[str, Any]) -> Text:
    """The verdict on one line (what `--quiet` prints): title, then the summary."""
    return verdict_title(report).append(f" — {one_line(str(report['verdict']['summary']))}")


def verdict_block(report: dict[str, Any], ascii_only: bool = False, wrap: bool = False) -> list[RenderableType]:
    """The verdict: title, summary, evidence and numbered next steps, each `$ command` on a line of its own."""
    v = report["verdict"]
    parts: list[RenderableType] = [Text(""), verdict_title(report), item("", Text(one_line(v["summary"])), wrap, 2)]
    if v["evidence"]:
        parts.append(Text("  Evidence", style="bold"))
        bullet = "* " if ascii_only else "• "
        parts += [item(bullet, Text(one_line(line)), wrap, 3) for line in v["evidence"]]
    if v.get("also"):
        parts.append(Text("  Also present", style="bold"))
        bullet = "* " if ascii_only else "• "
        parts += [item(bullet, Text(also_line(a)), wrap, 3) for a in v["also"]]
    if v["next_steps"]:
        parts.append(Text("  Next steps", style="bold"))
        number_width = len(str(len(v["next_steps"])))
        for i, step in enumerate(v["next_steps"], 1):
            prefix = f"{i}.".rjust(number_width + 1) + " "
            parts.append(item(prefix, Text(one_line(step["text"])), wrap, 3))
            if step.get("command"):
                parts.append(CommandLine(" " * (3 + len(prefix)) + "$ " + one_line(step["command"])))
    return parts


def also_line(also: dict[str, Any]) -> str:
    """One contributing cause in words: `Also quota or rate limit: … (confidence 97%)`."""
    return f"{one_line(str(also['summary']))} (confidence {float(also['confidence']):.0%})"


class CommandLine(Text):
    """A `$ command` line: printed without Rich's wrapping, so a copied command is always whole."""


def footer(report: dict[str, Any], verbose: bool = False) -> Text:
    """One closing line: counts per status and the verdict's category, and the flags that show more (not
    `-v` to a reader who gave it)."""
    counts: dict[str, int] = {}
    for check in report["checks"]:
        counts[check["status"]] = counts.get(check["status"], 0) + 1
    words = {"pass": "ok", "warn": "warn", "fail": "fail", "skip": "skipped", "error": "error"}
    parts = [f"{counts[s]} {words[s]}" for s in ("pass", "warn", "fail", "error", "skip") if counts.get(s)]
    cause = report["verdict"]["cause"]
    tail = "no issues found." if cause == "none" else f"verdict: {cause}."
    more = "ticket report: --report FILE" if verbose else "details: -v · ticket report: --report FILE"
    return Text(" · ".join(parts) + f" — {tail}  ({more})")


def _print(console: Console, renderables: Sequence[RenderableType]) -> None:
    for r in renderables:
        console.print(r, soft_wrap=console.soft_wrap or isinstance(r, CommandLine))


def render(
    report: dict[str, Any], console: Console, verbose: bool = False, ascii_only: bool = False, header: str | None = None
) -> None:
    """Print the whole human report to `console`: header, checklist, verdict, closing line."""
    report = neutralise_all(report)
    wrap = not console.soft_wrap
    if header:
        _print(console, [Text(neutralise(header), style="bold")])
    _print(console, list(checklist(report, verbose, ascii_only, wrap).renderables))
    _print(console, verdict_block(report, ascii_only, wrap))
    _print(console, [item("", footer(report, verbose), wrap)])


class Checklist:
    """A runner observer: a spinner per running check on a terminal (`live`), and the rows already finished.

    On Ctrl-C (`KeyboardInterrupt` through the `with` block) the finished rows stay on screen, followed by
    "interrupted": a live view stops showing them in place, a pipe gets them printed.
    """

    def __init__(
        self,
        checks: Sequence[Check],
        console: Console,
        header: str,
        ascii_only: bool = False,
        scrub: Callable[[str], str] = str,
        live: bool = True,
    ) -> None:
        """Prepare a row per check, in stage order; `scrub` redacts summaries before they are shown."""
        self._scrub = scrub
        self._console = console
        self._order = [c.id for c in sorted(checks, key=lambda c: c.stage)]
        self._titles = {c.id: c.title for c in checks}
        self._done: dict[str, RenderableType] = {}
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self._header = neutralise(header)
        self._ascii = ascii_only
        # transient: the live rows vanish at the end and the full checklist (with per-model rows and path
        # bars) is printed in their place, so a terminal shows exactly what a pipe would, plus motion.
        self._live = Live(self._view(), console=console, refresh_per_second=12, transient=True) if live else None

    def _view(self, finished_only: bool = False) -> Group:
        rows: list[RenderableType] = [Text(self._header, style="bold")]
        for cid in self._order:
            if cid in self._done:
                rows.append(self._done[cid])
            elif finished_only:
                continue
            elif cid in self._running:
                rows.append(Spinner("dots", text=Text(f" {self._titles[cid]} …")))
            else:
                rows.append(Text(f"[ ] {self._titles[cid]}", style="dim"))
        return Group(*rows)

    def __enter__(self) -> Checklist:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        interrupted = exc_type is not None and issubclass(exc_type, KeyboardInterrupt)
        with self._lock:
            view = self._view(finished_only=interrupted)  # the CLI then says "interrupted" on stderr
            if self._live is not None:
                self._live.transient = not interrupted
                self._live.update(view, refresh=True)
                self._live.stop()
            elif interrupted:
                _print(self._console, list(view.renderables))

    def started(self, check: Check) -> None:
        """Show a spinner for `check`."""
        with self._lock:
            self._running.add(check.id)
            if self._live is not None:
                self._live.update(self._view())

    def finished(self, result: CheckResult) -> None:
        """Replace the spinner with the final line."""
        line = check_line(
            {
                "status": result.status.value,
                "title": result.title,
                "summary": neutralise(self._scrub(result.summary)),
                "duration_ms": result.duration_ms,
            },
            self._ascii,
            wrap=not self._console.soft_wrap,
        )
        with self._lock:
            self._running.discard(result.id)
            self._done[result.id] = line
            if self._live is not None:
                self._live.update(self._view())
