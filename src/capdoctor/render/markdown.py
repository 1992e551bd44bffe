"""The Markdown renderer: a support-ticket report (system, target, every check with timings, ids, verdict)."""

from __future__ import annotations

from typing import Any

from capdoctor.render import GLYPHS


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(report: dict[str, Any]) -> str:
    """`report` as GitHub-flavoured Markdown."""
    v = report["verdict"]
    lines = [
        "# capdoctor report",
        "",
        f"**Verdict: {v['cause']}** (confidence {v['confidence']:.0%}) — {v['summary']}",
        "",
        f"Created {report['created']} by capdoctor {report['version']} (schema `{report['schema']}`).",
        "",
        "## System",
        "",
        "| | |",
        "|---|---|",
        *(f"| {k} | {_cell(val)} |" for k, val in report["system"].items()),
        "",
    ]
    target = report.get("target")
    if target:
        lines += ["## Target", "", "| | | source |", "|---|---|---|"]
        sources = target.get("sources", {})
        for key in ("provider", "base_url", "model", "alt_models", "wire_api", "api_key_present", "api_key_env"):
            value = target.get(key)
            shown = ", ".join(value) if isinstance(value, list) else value
            source = sources.get("key" if key.startswith("api_key") else key, "")
            lines.append(f"| {key} | {_cell(shown)} | {_cell(source)} |")
        lines.append("")
    lines += ["## Checks", "", "| | check | status | time | summary |", "|---|---|---|---|---|"]
    for c in report["checks"]:
        lines.append(
            f"| {GLYPHS.get(c['status'], '?')} | {_cell(c['title'])} (`{c['id']}`) | {c['status']} | "
            f"{c['duration_ms']} ms | {_cell(c['summary'])} |"
        )
    lines.append("")
    for c in report["checks"]:
        if not c["findings"] and not c.get("details"):
            continue
        lines += [f"### {c['title']} (`{c['id']}`)", ""]
        for f in c["findings"]:
            lines.append(f"- **{f['cause']}** ({f['strength']}): {f['message']}")
        for d in c.get("details", []):
            lines.append(f"- {d}")
        lines.append("")
    if report.get("request_ids"):
        lines += ["## Request ids", "", "| check | kind | value |", "|---|---|---|"]
        lines += [f"| {r['check']} | {r['kind']} | `{_cell(r['value'])}` |" for r in report["request_ids"]]
        lines.append("")
    lines += ["## Verdict", "", f"**{v['cause']}** — confidence {v['confidence']:.0%}", "", v["summary"], ""]
    if v["ranking"]:
        lines.append("Ranking: " + ", ".join(f"{r['cause']} {r['score']:.1f}" for r in v["ranking"]))
        lines.append("")
    if v["evidence"]:
        lines += ["Evidence:", "", *(f"- {e}" for e in v["evidence"]), ""]
    if v["next_steps"]:
        lines += ["Next steps:", ""]
        for i, s in enumerate(v["next_steps"], 1):
            lines.append(f"{i}. {s['text']}" + (f" — `{s['command']}`" if s.get("command") else ""))
        lines.append("")
    return "\n".join(lines)
