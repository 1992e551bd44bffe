"""Terminal view of a `capdoctor/history-v1` document: an hour-of-day chart, models, streaks, the verdict.

Contract: presents the finished, redacted document and computes nothing of its own (only layout: bar heights
are the given rates, or the given counts scaled to the busiest hour). Plain text, no colour, so it reads the
same in a pipe, a log file or a terminal without colour; `ascii_only` swaps the block glyphs for `#`, `=` and
`_` (everything else is ASCII already).
"""

from __future__ import annotations

from typing import Any, TextIO

LEVELS = 4
"""Rows of the chart: 25 % each."""

GLYPHS = {"full": "██", "half": "▄▄", "low": "▁▁"}
ASCII_GLYPHS = {"full": "##", "half": "==", "low": "__"}


def _cell(height: float, row: int, glyphs: dict[str, str]) -> str:
    if height >= row:
        return glyphs["full"]
    if height >= row - 0.5:
        return glyphs["half"]
    if row == 1 and height > 0:
        return glyphs["low"]
    return "  "


def hour_chart(by_hour: dict[str, dict[str, Any]], ascii_only: bool = False) -> list[str]:
    """The chart's lines: error rate per local hour (live rounds), else log errors scaled to the busiest hour."""
    glyphs = ASCII_GLYPHS if ascii_only else GLYPHS
    rows = [by_hour.get(f"{h:02d}", {}) for h in range(24)]
    live = any(r.get("attempts") for r in rows)
    if live:
        values: list[float | None] = [r.get("error_rate") for r in rows]
        labels = [f"{100 * k // LEVELS}%" for k in range(LEVELS, 0, -1)]
        title = "Error rate by hour of day"
    else:
        counts = [int(r.get("log_errors") or 0) for r in rows]
        top = max(counts) or 1
        values = [c / top if c else 0.0 for c in counts]
        labels = [f"{top * k / LEVELS:.0f}" for k in range(LEVELS, 0, -1)]
        title = "Errors from logs by hour of day"
    width = max(len(label) for label in labels) + 1
    lines = [title]
    for row, label in zip(range(LEVELS, 0, -1), labels, strict=True):
        cells = " ".join(_cell((v or 0.0) * LEVELS, row, glyphs) for v in values)
        lines.append(f"{label:>{width}} | {cells}".rstrip())
    lines.append(" " * width + " +" + "-" * 72)
    lines.append(" " * (width + 3) + " ".join(f"{h:02d}" for h in range(24)))
    empty = [h for h, v in enumerate(values) if v is None]
    if live and empty:
        lines.append(" " * (width + 3) + f"no rounds at {_spans(empty)}")
    return lines


def _spans(hours: list[int]) -> str:
    """`[0, 1, 2, 5]` → `00-02, 05` (hours without rounds, in short)."""
    spans: list[list[int]] = []
    for h in hours:
        if spans and spans[-1][1] == h - 1:
            spans[-1][1] = h
        else:
            spans.append([h, h])
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}-{b:02d}" for a, b in spans)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def model_lines(by_model: dict[str, dict[str, Any]]) -> list[str]:
    """One line per model: live errors / attempts, rate, causes, median latency, log errors."""
    if not by_model:
        return []
    width = max(12, *(len(m) for m in by_model))
    out = [f"  {'model':<{width}}  {'failed':>11}  {'rate':>5}  {'latency':>8}  causes"]
    for name, row in by_model.items():
        failed = f"{row['errors']}/{row['attempts']}" if row["attempts"] else "-"
        latency = f"{row['latency_ms_median']} ms" if row.get("latency_ms_median") is not None else "-"
        causes = ", ".join(f"{c} {n}" for c, n in row["causes"].items()) or "-"
        logs = f"  (+{row['log_errors']} in logs)" if row.get("log_errors") else ""
        out.append(f"  {name:<{width}}  {failed:>11}  {_pct(row['error_rate']):>5}  {latency:>8}  {causes}{logs}")
    return out


def _when(iso: str | None) -> str:
    return (iso or "?").replace("T", " ").replace("Z", " UTC")


def render(doc: dict[str, Any], out: TextIO, *, ascii_only: bool = False) -> None:
    """Write the human view of `doc` to `out`."""
    s = doc["summary"]
    lines = [
        f"capdoctor history: {s['rounds']} round(s) from {_when(s['first'])} to {_when(s['last'])}"
        + (f", {s['log_errors']} error(s) from logs" if s["log_errors"] else "")
        + f" (hours in local time, UTC{doc['timezone']})"
    ]
    if not s["rounds"] and not s["log_errors"]:
        lines.append("Nothing recorded in this period: run `capdoctor watch`, or `capdoctor logs --into DB`.")
    else:
        if s["attempts"]:
            lines.append(
                f"{s['errors']} of {s['attempts']} probe request(s) failed ({_pct(s['error_rate'])})"
                + (": " + ", ".join(f"{c} {n}" for c, n in s["causes"].items()) if s["causes"] else "")
            )
        lines += ["", *hour_chart(doc["by_hour"], ascii_only), "", "By model", *model_lines(doc["by_model"]), ""]
        outage = s["longest_outage"]
        if outage:
            minutes = outage["seconds"] / 60
            lines.append(
                f"Longest failing streak: {outage['rounds']} round(s) in a row, {_when(outage['started'])}"
                f" to {_when(outage['ended'])} ({minutes:.0f} min)"
            )
        else:
            lines.append("Longest failing streak: none (the primary model answered in every round)")
        peak = s["peak_hours"]
        if peak:
            lines.append(
                f"Peak hours: {peak['share']:.0%} of the errors fall between {peak['from']:02d}:00 and "
                f"{peak['to']:02d}:00 on several days (provider capacity; move batch work off-peak)"
            )
        spread = {
            "one": "one model only (capacity, not your account)",
            "many": "several models (account-wide: quota or account)",
        }.get(s["model_spread"] or "")
        if spread:
            lines.append(f"Errors hit {spread}")
    if doc.get("bursts"):
        lines += ["", "Incidents (bursts of errors less than a minute apart)"]
        lines += [
            f"  {_when(b['start'])} to {_when(b['end'])}: {b['count']} errors, mostly {b.get('cause') or '-'}"
            + (f" on {', '.join(b['models'])}" if b.get("models") else "")
            for b in doc["bursts"][:5]
        ]
    v = doc["verdict"]
    lines += ["", f"Verdict from the history: {v['cause']} (confidence {v['confidence']:.0%})", v["summary"]]
    from capdoctor.render.terminal import also_line

    lines += [f"  Also: {also_line(a)}" for a in v.get("also") or []]
    lines += [f"  - {e}" for e in v["evidence"]]
    if v["next_steps"]:
        lines.append("Next steps:")
        lines += [
            f"  {i}. {step['text']}" + (f"  ({step['command']})" if step.get("command") else "")
            for i, step in enumerate(v["next_steps"], 1)
        ]
    out.write("\n".join(lines) + "\n")
