"""Terminal view of a `capdoctor/logs-v1` document: verdict, the matches table, an hour-of-day histogram.

Contract: presents the finished, redacted document and computes nothing of its own (only layout: the
histogram's bar heights are a scaling of the given counts). Rich is imported here, not by the CLI at
start-up; the console follows `render.console` (colour from NO_COLOR / FORCE_COLOR, no hard wraps in a
pipe). Log lines are foreign text: every string of the document is made inert (`text.neutralise`) first,
so a line that sets the window title, clears the screen or writes the clipboard (OSC 52) shows as text.
"""

from __future__ import annotations

from typing import Any, TextIO

BARS = " ▁▂▃▄▅▆▇█"
ASCII_BARS = " .:-=+*#%"


def _stamp(iso: str | None) -> str:
    """An ISO time as `2026-11-29 09:05 UTC`, or `-`."""
    from capdoctor.render.ticket import when

    return when(iso)[:16] + " UTC" if iso else "-"


def histogram(by_hour: dict[str, int], ascii_only: bool = False) -> list[str]:
    """Two lines: one bar per hour of day (scaled to the busiest hour) and the hour labels under them."""
    bars = ASCII_BARS if ascii_only else BARS
    counts = [int(by_hour.get(f"{h:02d}", 0)) for h in range(24)]
    top = max(counts) or 1
    row = "".join(bars[0 if c == 0 else max(1, round(c / top * (len(bars) - 1)))] * 2 + " " for c in counts)
    labels = "".join(f"{h:02d} " for h in range(24))
    return [row.rstrip(), labels.rstrip()]


def render(doc: dict[str, Any], out: TextIO, *, verbose: bool = False, ascii_only: bool = False) -> None:
    """Write the human view of `doc` to `out`."""
    from rich.markup import escape
    from rich.table import Table

    from capdoctor.render.console import console_for
    from capdoctor.render.terminal import also_line
    from capdoctor.text import neutralise_all

    console = console_for(out)
    doc = neutralise_all(doc)
    v = doc["verdict"]
    console.print(f"[bold]Verdict from the logs:[/bold] {escape(v['cause'])} (confidence {v['confidence']:.0%})")
    console.print(escape(v["summary"]))
    for also in v.get("also") or []:
        console.print(f"  [bold]Also:[/bold] {escape(also_line(also))}")
    files = doc["files"]
    read = [f for f in files if not f.get("skipped")]
    lines = sum(f["lines"] for f in read)
    console.print(
        f"\nScanned {len(read)} file(s), {lines} line(s)"
        + (f", since {doc['since']}" if doc.get("since") else "")
        + (f"; {len(files) - len(read)} skipped" if len(files) > len(read) else "")
        + (f"; {doc['older_than_since']} older error(s) left out" if doc.get("older_than_since") else "")
        + f" [dim]({doc.get('engine', '')})[/dim]"
    )
    if doc["matches"]:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("error", "cause", "count", "first", "last"):
            table.add_column(col, justify="right" if col == "count" else "left")
        for m in doc["matches"][: None if verbose else 10]:
            table.add_row(
                escape(m.get("title") or m["signature"]),
                m["cause"],
                str(m["count"]),
                _stamp(m["first"]),
                _stamp(m["last"]),
            )
        console.print(table)
        if verbose:
            for m in doc["matches"]:
                console.print(f"  [dim]{escape(m['signature'])}:[/dim] {escape(m['example'])}")
    else:
        console.print("No known error signatures found.")
    if any(doc["by_hour"].values()):
        console.print("\nErrors by hour of day (UTC as written in the logs):")
        for line in histogram(doc["by_hour"], ascii_only):
            console.print(line)
    if doc["by_model"]:
        console.print("Errors by model: " + ", ".join(f"{escape(k)} {v}" for k, v in doc["by_model"].items()))
    pats = doc.get("patterns", {})
    if pats.get("bursts"):
        console.print("\n[bold]Incidents[/bold] (bursts of errors less than a minute apart)")
        for b in pats["bursts"][: None if verbose else 5]:
            models = f" on {escape(', '.join(b['models']))}" if b.get("models") else ""
            if b.get("request_ids"):
                models += f" [dim]({escape(', '.join(b['request_ids']))})[/dim]"
            console.print(
                f"  {_stamp(b['start'])} to {_stamp(b['end'])}: {b['count']} errors, mostly "
                f"{escape(b.get('cause') or '-')}{models}"
            )
    if pats.get("retries"):
        console.print(f"Retries: {pats['retries']}, followed by a completed request: {pats['retries_succeeded']}")
    if pats.get("last_error_before_quiet"):
        last = pats["last_error_before_quiet"]
        name = last.get("title") or last["signature"]
        console.print(f"Last error before the log went quiet: {escape(name)}, at {_stamp(last['ts'])}")
    if v["next_steps"]:
        console.print("\n[bold]Next steps[/bold]")
        for i, step in enumerate(v["next_steps"], 1):
            cmd = f"  [dim]$ {escape(step['command'])}[/dim]" if step.get("command") else ""
            console.print(f" {i}. {escape(step['text'])}{cmd}")
    skipped = [f for f in files if f.get("skipped")]
    if skipped and verbose:
        console.print("\n[bold]Skipped[/bold]")
        for f in skipped:
            console.print(f"  {escape(f['path'])}: {escape(f['skipped'])}")
