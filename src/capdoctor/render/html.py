"""The HTML renderer: one self-contained page (inline CSS, no scripts, no external assets) for a ticket."""

from __future__ import annotations

from html import escape
from typing import Any

from capdoctor.render import GLYPHS

STYLE = """
body{font:14px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}td,th{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f6f6f6}.pass{color:#1a7f37}.warn{color:#9a6700}
.fail,.error{color:#cf222e}.skip{color:#6e7781}.verdict{border:2px solid #444;border-radius:8px;padding:1em}
code{background:#f6f6f6;padding:0 3px}
"""


def render(report: dict[str, Any]) -> str:
    """`report` as a standalone HTML document; every value is escaped."""
    e = escape
    v = report["verdict"]
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>capdoctor report — {e(v['cause'])}</title><style>{STYLE}</style></head><body>",
        "<h1>capdoctor report</h1>",
        f"<div class='verdict'><h2>Verdict: {e(v['cause'])} "
        f"<small>(confidence {v['confidence']:.0%})</small></h2><p>{e(v['summary'])}</p>",
    ]
    if v["evidence"]:
        out.append("<h3>Evidence</h3><ul>" + "".join(f"<li>{e(x)}</li>" for x in v["evidence"]) + "</ul>")
    if v["next_steps"]:
        out.append("<h3>Next steps</h3><ol>" + "".join(
            f"<li>{e(s['text'])}" + (f" <code>{e(s['command'])}</code>" if s.get("command") else "") + "</li>"
            for s in v["next_steps"]) + "</ol>")
    out.append("</div>")
    out.append(f"<p>Created {e(report['created'])} by capdoctor {e(report['version'])}.</p><h2>System</h2><table>")
    out += [f"<tr><th>{e(k)}</th><td>{e(str(val))}</td></tr>" for k, val in report["system"].items()]
    out.append("</table>")
    if report.get("target"):
        out.append("<h2>Target</h2><table>")
        for k, val in report["target"].items():
            out.append(f"<tr><th>{e(k)}</th><td>{e(str(val))}</td></tr>")
        out.append("</table>")
    out.append("<h2>Checks</h2><table><tr><th></th><th>check</th><th>status</th><th>time</th><th>summary</th></tr>")
    for c in report["checks"]:
        s = c["status"]
        findings = "".join(
            f"<br>• <b>{e(f['cause'])}</b> ({e(f['strength'])}): {e(f['message'])}" for f in c["findings"]
        )
        out.append(
            f"<tr><td class='{e(s)}'>{GLYPHS.get(s, '?')}</td><td>{e(c['title'])} <code>{e(c['id'])}</code></td>"
            f"<td class='{e(s)}'>{e(s)}</td><td>{c['duration_ms']} ms</td><td>{e(c['summary'])}{findings}</td></tr>"
        )
    out.append("</table>")
    if report.get("request_ids"):
        out.append("<h2>Request ids</h2><table><tr><th>check</th><th>kind</th><th>value</th></tr>")
        out += [f"<tr><td>{e(r['check'])}</td><td>{e(r['kind'])}</td><td><code>{e(r['value'])}</code></td></tr>"
                for r in report["request_ids"]]
        out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)
