"""The Markdown renderer: the support ticket (`render.ticket`) as GitHub-flavoured Markdown.

Contract: it only adds Markdown to what `ticket()` laid out. Table cells escape `|` and angle brackets (a
provider's HTML error page must not become markup where the ticket is pasted); commands are code spans.
"""

from __future__ import annotations

from typing import Any

from capdoctor.render.ticket import Table, ticket


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def _table(table: Table) -> list[str]:
    columns = [*table.columns, table.note_label] if table.notes else list(table.columns)
    lines = [f"## {table.title}", ""]
    if table.rows:
        lines += ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
        for i, row in enumerate(table.rows):
            cells = [*row, table.notes[i]] if table.notes else list(row)
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines.append("")
    lines += [*(f"{_cell(line)}  " for line in table.lines), *([""] if table.lines else [])]
    return lines


def render(report: dict[str, Any]) -> str:
    """`report` as GitHub-flavoured Markdown."""
    t = ticket(report)
    lines = [f"# {t.title}", ""]
    if t.demo:
        lines += [f"> **{_cell(t.demo)}**", ""]
    lines += [f"**{_cell(label)}:** {_cell(value)}  " for label, value in t.seen]
    lines += ["", f"## Verdict: {t.cause} (confidence {t.confidence})", "", _cell(t.summary), ""]
    if t.evidence:
        lines += ["Evidence:", "", *(f"- {_cell(e)}" for e in t.evidence), ""]
    if t.also:
        lines += ["Also present:", "", *(f"- {_cell(a)}" for a in t.also), ""]
    if t.steps:
        lines += ["Next steps:", ""]
        lines += [
            f"{i}. {_cell(text)}" + (f" — {_code(cmd)}" if cmd else "") for i, (text, cmd) in enumerate(t.steps, 1)
        ]
        lines.append("")
    for table in t.tables:
        lines += _table(table)
    if t.findings:
        lines += ["## Findings and details", ""]
        for title, items in t.findings:
            lines += [f"### {_cell(title)}", "", *(f"- {_cell(item)}" for item in items), ""]
    lines += ["---", "", f"_{_cell(t.footer)}_", ""]
    return "\n".join(lines)
