"""`capdoctor checks`: the registry's listing as a Rich table on a terminal, tab-separated in a pipe, or JSON.

Contract: presents `registry.BUILTIN` (data only: no check module is imported). As gh does, a terminal gets
a table whose description column wraps to the window, and a pipe gets one tab-separated row per check
(stage, id, title, description) with no header, for `cut` and `awk`; Rich is imported only for the table,
so listing from a script costs no more than start-up.
"""

from __future__ import annotations

from typing import Any

from capdoctor.render.console import is_tty


def render(out: Any, json_out: bool = False, no_color: bool = False) -> None:
    """Write the list of checks to `out`."""
    from capdoctor.checks.registry import BUILTIN

    rows: list[dict[str, Any]] = [
        {"id": i.id, "title": i.title, "stage": i.stage, "description": i.description} for i in BUILTIN
    ]
    if json_out:
        from capdoctor.render.console import ascii_only
        from capdoctor.render.json import dumps

        out.write(dumps(rows, ascii_only=ascii_only(out)))
    elif not is_tty(out):
        out.write("".join(f"{r['stage']}\t{r['id']}\t{r['title']}\t{r['description']}\n" for r in rows))
    else:
        from rich.table import Table

        from capdoctor.render.console import console_for

        table = Table(box=None, header_style="bold", pad_edge=False)
        table.add_column("stage", justify="right", no_wrap=True)
        table.add_column("id", style="bold", no_wrap=True)
        table.add_column("title", no_wrap=True)
        table.add_column("what it tells")
        for row in rows:
            table.add_row(str(row["stage"]), row["id"], row["title"], row["description"])
        console_for(out, no_color).print(table)
