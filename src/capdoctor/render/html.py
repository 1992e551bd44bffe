"""The HTML renderer: the support ticket (`render.ticket`) as one self-contained page.

Contract: inline CSS only (no scripts, no external assets), every value escaped. The page fits any screen:
a mobile viewport, text that wraps anywhere it must (long ids and URLs), tables that turn into one card per
row on a narrow screen and scroll inside their own box if they still do not fit, so the page itself never
grows wider than the window; it prints cleanly on A4 (no scroll boxes, rows kept whole).
"""

from __future__ import annotations

from html import escape
from typing import Any

from capdoctor.render.ticket import Table, ticket

TOKEN = 16
"""A cell value without spaces at least this long (a request id, a signature, a URL) may break anywhere, so it
cannot force its column wide; the text itself stays intact, so the file can be searched for an id."""

STYLE = """
*{box-sizing:border-box}html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:0 auto;padding:1rem;
color:#1f2328;background:#fff;overflow-wrap:break-word}
h1{font-size:1.5rem;margin:.2em 0 .6em}h2{font-size:1.15rem;margin:1.6em 0 .4em}h3{font-size:1rem}
.demo{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.5em .8em}
.seen{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1em;margin:0 0 1em}
.seen dt{font-weight:600}.seen dd{margin:0}
.verdict{border:2px solid #57606a;border-radius:8px;padding:.2em 1em 1em;margin:1em 0}
.verdict.capacity,.verdict.quota,.verdict.account,.verdict.network,.verdict.hardware,.verdict.client{border-color:#cf222e}
.verdict h2{margin-top:.6em}.verdict.none{border-color:#1a7f37}.verdict.inconclusive{border-color:#9a6700}
.box{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.3em 0 .8em;font-size:.9em}
th,td{border:1px solid #d0d7de;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa;white-space:nowrap}td.tok{overflow-wrap:anywhere}td.note{background:#fbfbfb;font-family:ui-monospace,monospace;font-size:.92em;
white-space:pre-wrap;overflow-wrap:anywhere}
code{background:#f6f8fa;border-radius:4px;padding:0 .3em;font-family:ui-monospace,monospace;white-space:pre-wrap}
.pass{color:#1a7f37}.warn{color:#9a6700}.fail,.error{color:#cf222e}.skip{color:#6e7781}
footer{margin-top:2em;color:#57606a;font-size:.85em;border-top:1px solid #d0d7de;padding-top:.5em}
@media (max-width:640px){
 body{padding:.6rem;font-size:14px}.seen{grid-template-columns:minmax(0,1fr)}.seen dd{margin-bottom:.4em}
 table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
 table.cards thead{display:none}table.cards tr{border:1px solid #d0d7de;border-radius:6px;margin:.5em 0;
 padding:.3em .5em}table.cards tr.note{border-top:0;margin-top:-.6em;border-radius:0 0 6px 6px}
 table.cards td{border:0;padding:1px 0}table.cards td[data-label]::before{content:attr(data-label) ": ";
 font-weight:600;color:#57606a}table.cards td:empty{display:none}}
@media print{@page{size:A4;margin:12mm}body{max-width:none;padding:0;font-size:9.5pt}.box{overflow:visible}
 tr,li,.verdict{break-inside:avoid}h2,h3{break-after:avoid}a{color:inherit}}
"""


def _table(table: Table) -> str:
    e = escape
    out = [f"<h2>{e(table.title)}</h2>"]
    if table.rows:
        labelled = any(table.columns)
        out.append(f"<div class='box'><table class='{'cards' if labelled else 'pairs'}'>")
        if labelled:
            out.append("<thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in table.columns) + "</tr></thead>")
        out.append("<tbody>")
        for i, row in enumerate(table.rows):
            cells = []
            for j, (col, value) in enumerate(zip(table.columns, row, strict=False)):
                tag = "th" if not labelled and j == 0 else "td"
                label = f" data-label='{e(col)}'" if col else ""
                css = value if col == "status" else "tok" if len(value) >= TOKEN and " " not in value else ""
                cells.append(f"<{tag}{label}{f' class={e(css)!r}' if css else ''}>{e(value)}</{tag}>")
            out.append("<tr>" + "".join(cells) + "</tr>")
            note = table.notes[i] if table.notes else ""
            if note:
                out.append(
                    f"<tr class='note'><td class='note' colspan='{len(table.columns)}' "
                    f"data-label='{e(table.note_label)}'>{e(note)}</td></tr>"
                )
        out.append("</tbody></table></div>")
    out += [f"<p>{e(line)}</p>" for line in table.lines]
    return "\n".join(out)


def render(report: dict[str, Any]) -> str:
    """`report` as a standalone HTML document; every value is escaped."""
    e = escape
    t = ticket(report)
    out = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{e(t.title)}: {e(t.cause)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(t.title)}</h1>",
    ]
    if t.demo:
        out.append(f"<p class='demo'><strong>{e(t.demo)}</strong></p>")
    out.append("<dl class='seen'>" + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in t.seen) + "</dl>")
    out.append(
        f"<section class='verdict {e(t.cause)}'><h2>Verdict: {e(t.cause)} "
        f"<small>(confidence {e(t.confidence)})</small></h2><p>{e(t.summary)}</p>"
    )
    if t.evidence:
        out.append("<h3>Evidence</h3><ul>" + "".join(f"<li>{e(x)}</li>" for x in t.evidence) + "</ul>")
    if t.also:
        out.append("<h3>Also present</h3><ul>" + "".join(f"<li>{e(x)}</li>" for x in t.also) + "</ul>")
    if t.steps:
        out.append(
            "<h3>Next steps</h3><ol>"
            + "".join(
                f"<li>{e(text)}" + (f"<br><code>{e(cmd)}</code>" if cmd else "") + "</li>" for text, cmd in t.steps
            )
            + "</ol>"
        )
    out.append("</section>")
    out += [_table(table) for table in t.tables]
    if t.findings:
        out.append("<h2>Findings and details</h2>")
        for title, items in t.findings:
            out.append(f"<h3>{e(title)}</h3><ul>" + "".join(f"<li>{e(i)}</li>" for i in items) + "</ul>")
    out.append(f"<footer>{e(t.footer)}</footer></body></html>\n")
    return "\n".join(out)
