"""Terminal view of a `capdoctor/explain-v1` document: the cause, how sure, the evidence by layer, next steps.

Contract: presents the finished, redacted document and computes nothing of its own. Rich is imported here,
not by the CLI at start-up; the console follows `render.console` (colour from NO_COLOR / FORCE_COLOR, no hard
wraps in a pipe). The excerpts are foreign text: every string of the document is made inert
(`text.neutralise`) first, so a pasted escape sequence cannot drive the terminal.
"""

from __future__ import annotations

from typing import Any, TextIO


def render(doc: dict[str, Any], out: TextIO, *, verbose: bool = False) -> None:
    """Write the human view of `doc` to `out`: the evidence that decided, then what to do."""
    from rich.markup import escape
    from rich.text import Text

    from capdoctor.render.console import console_for
    from capdoctor.render.terminal import also_line, item
    from capdoctor.text import neutralise_all

    doc = neutralise_all(doc)
    console = console_for(out)

    def said(prefix: str, markup: str) -> None:
        """One item; on a terminal its wrapped lines stay under its text (a hanging indent)."""
        console.print(item(prefix, Text.from_markup(markup), not console.soft_wrap), soft_wrap=console.soft_wrap)

    v = doc["verdict"]
    sure = f" (confidence {v['confidence']:.0%})" if v["cause"] not in ("none",) else ""
    console.print(f"[bold]Cause:[/bold] {escape(v['cause'])}{sure}")
    console.print(escape(v["summary"]))
    for also in v.get("also") or []:
        said("  ", f"[bold]Also:[/bold] {escape(also_line(also))}")
    evidence = doc["evidence"] if verbose else [e for e in doc["evidence"] if e["strength"] != "context"]
    if evidence:
        head = "(layer | strength | row -> cause: the words that decided)" if verbose else "(the words that decided)"
        console.print(f"\n[bold]Evidence[/bold] {head}")
        for e in evidence[: None if verbose else 8]:
            if verbose:
                said(
                    "  ",
                    f"{escape(e['layer'])} | {escape(e['strength'])} | {escape(e['signature'])} "
                    f"-> {escape(e['cause'])}: [dim]{escape(e['excerpt'])}[/dim]",
                )
            else:
                said(
                    "  ",
                    f"{escape(e.get('title') or e['cause'])} ({escape(e['cause'])}, {escape(e['strength'])}): "
                    f"[dim]{escape(e['excerpt'])}[/dim]",
                )
    if v["next_steps"]:
        console.print("\n[bold]Next steps[/bold]")
        for i, step in enumerate(v["next_steps"], 1):
            cmd = f"  [dim]$ {escape(step['command'])}[/dim]" if step.get("command") else ""
            said(f" {i}. ", f"{escape(step['text'])}{cmd}")
