"""What a support ticket holds, laid out once for the Markdown and HTML renderers.

Contract: `ticket(report)` turns a finished, redacted report dict into sections of display strings, in the
order a support engineer reads them: what was seen and when, the verdict, every attempt (model, status,
signature, request id, cf-ray, UTC time, latency and the provider's words in full), the client in use,
the network paths with their timings and egress, the checks, the target with each value's source, the
system, and a footer naming the capdoctor version and the JSON schema. It selects and formats (`human`:
lists joined, booleans yes/no, missing values "—", foreign text made inert and kept on one line); it
decides nothing, and the renderers only add their markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from capdoctor.render import GLYPHS
from capdoctor.text import one_line

MISSING = "—"

TARGET_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("provider", "provider", ("provider",)),
    ("base_url", "base URL", ("base_url",)),
    ("model", "model", ("model",)),
    ("alt_models", "alternative models", ("alt_models",)),
    ("wire_api", "wire API", ("wire_api",)),
    ("api_key_env", "key variable", ("api_key_env", "key")),
    ("api_key_present", "key present", ("key",)),
)
"""Target fields in ticket order: (key, label, where its source is: the first present of these `sources`)."""

ATTEMPT_COLUMNS = (
    "check",
    "model",
    "attempt",
    "route",
    "HTTP",
    "signature",
    "request id",
    "cf-ray",
    "time (UTC)",
    "latency",
)
PATH_COLUMNS = ("path", "via", "DNS", "connect", "TLS", "wait", "total", "HTTP", "exit", "error")
CHECK_COLUMNS = ("", "check", "status", "time", "summary")


def human(value: Any) -> str:
    """`value` for people: missing "—", booleans yes/no, lists joined, mappings as `key: value; …`, text inert."""
    if value is None or value == "" or value == [] or value == {}:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(human(v) for v in value)
    if isinstance(value, Mapping):
        return "; ".join(f"{one_line(str(k))}: {human(v)}" for k, v in value.items())
    return one_line(str(value))


def ms(value: Any) -> str:
    """A duration in milliseconds for people ("12 ms", "0.4 ms", "1.2 s"), or "—"."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return MISSING
    if value >= 1000:
        return f"{value / 1000:.1f} s"
    return f"{value:.0f} ms" if value >= 10 or value == int(value) else f"{value:.1f} ms"


def when(iso: Any, zone: bool = True) -> str:
    """An ISO 8601 time as `2026-11-30 08:01:02 UTC` (without " UTC" when `zone` is false, for a column that
    says so); unparseable text is shown as given."""
    if not isinstance(iso, str) or not iso:
        return MISSING
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return human(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S" + (" UTC" if zone else ""))


@dataclass
class Table:
    """A titled table: column names, rows of display strings, and an optional full-width note per row.

    `notes[i]` (the provider's error text for an attempt) belongs under row `i`; Markdown shows it as a last
    column, HTML as a row spanning the table, so that long text never squeezes the other columns.
    """

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    note_label: str = ""
    lines: list[str] = field(default_factory=list)  # free lines under the table (egress, reference)


@dataclass
class Ticket:
    """Everything the ticket shows, as display strings, in reading order."""

    title: str
    demo: str | None
    seen: list[tuple[str, str]]
    cause: str
    confidence: str
    summary: str
    evidence: list[str]
    steps: list[tuple[str, str | None]]
    also: list[str]
    """Every other cause present, in words, with its confidence and what to do about it."""
    tables: list[Table]
    findings: list[tuple[str, list[str]]]
    footer: str


def _checks(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in report.get("checks") or [] if isinstance(c, Mapping)]


def _data(report: Mapping[str, Any], check_id: str) -> Mapping[str, Any]:
    return next((c.get("data") or {} for c in _checks(report) if c.get("id") == check_id), {})


def attempts(report: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any], int, Mapping[str, Any]]]:
    """(check id, model row, attempt number, attempt) for every probe attempt any check recorded."""
    for check in _checks(report):
        for model in (check.get("data") or {}).get("models") or []:
            if isinstance(model, Mapping):
                for n, attempt in enumerate(model.get("attempts") or [], 1):
                    if isinstance(attempt, Mapping):
                        yield str(check.get("id", "")), model, n, attempt


def _outcome(attempt: Mapping[str, Any]) -> str:
    status = attempt.get("status")
    return str(status) if status is not None else human(attempt.get("kind"))


def _error_text(attempt: Mapping[str, Any]) -> str:
    return human(attempt.get("error_text") or attempt.get("error"))


def _seen(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    failed = next(((m, a) for _, m, _, a in attempts(report) if a.get("kind") != "ok"), None)
    target = report.get("target") or {}
    rows = [("When", when(report.get("created")))]
    if failed:
        model, attempt = failed
        status = f"HTTP {attempt['status']}" if attempt.get("status") else human(attempt.get("kind"))
        head = " ".join(p for p in (status, attempt.get("signature")) if p)
        rows.insert(0, ("Error seen", f"{head} from {human(model.get('model'))}: {_error_text(attempt)}"))
    elif report["verdict"]["evidence"]:
        rows.insert(0, ("Seen", human(report["verdict"]["evidence"][0])))
    if target:
        rows.append(
            (
                "Target",
                f"{human(target.get('provider'))} {human(target.get('model'))} at {human(target.get('base_url'))}",
            )
        )
    client = report.get("client")
    if isinstance(client, Mapping):
        rows.append(("Client", client_line(client)))
    return rows


def client_line(client: Mapping[str, Any]) -> str:
    """`Codex CLI 0.55.0 (the target was read from Codex CLI's settings)`, or the reason it is not known."""
    if client.get("id") == "unknown":
        return f"not identified ({human(client.get('basis'))})"
    version = f" {human(client.get('version'))}" if client.get("version") else " (version unknown)"
    return f"{human(client.get('name'))}{version} — {human(client.get('basis'))}"


def _attempt_table(report: Mapping[str, Any]) -> Table:
    table = Table("Attempts", ATTEMPT_COLUMNS, note_label="provider's error")
    for check_id, model, n, a in attempts(report):
        table.rows.append(
            (
                check_id,
                human(model.get("model")) + (f" ({human(model.get('role'))})" if model.get("role") else ""),
                str(n),
                human(a.get("route")),
                _outcome(a),
                human(a.get("signature")),
                human(a.get("request_id")),
                human(a.get("cf_ray")),
                when(a.get("time"), zone=False),
                ms(a.get("latency_ms")),
            )
        )
        table.notes.append(_error_text(a) if a.get("kind") != "ok" else "")
    return table


def _client_table(report: Mapping[str, Any]) -> Table:
    table = Table("Client", ("", ""))
    client = report.get("client")
    if isinstance(client, Mapping):
        table.rows.append(("in use", client_line(client)))
    data = _data(report, "client")
    for row in data.get("clients") or []:
        if isinstance(row, Mapping):
            newer = row.get("latest") and row.get("latest") != row.get("version")
            latest = f" (latest {human(row.get('latest'))})" if newer else ""
            table.rows.append(
                (human(row.get("name")), f"{human(row.get('version'))}{latest} at {human(row.get('path'))}")
            )
    for package, row in (data.get("sdks") or {}).items():
        version = row.get("version") if isinstance(row, Mapping) else row
        table.rows.append((f"{human(package)} (Python SDK)", human(version)))
    for package, version in (data.get("http_stack") or {}).items():
        table.rows.append((f"{human(package)} (HTTP library)", human(version)))
    for cfg in data.get("configs") or []:
        if isinstance(cfg, Mapping):
            table.rows.append(
                (
                    f"{human(cfg.get('client'))} settings",
                    f"{human(cfg.get('source'))}: model {human(cfg.get('model'))}, base URL "
                    f"{human(cfg.get('base_url'))}, key variable {human(cfg.get('key_env'))}"
                    + (f" — {human(cfg.get('error'))}" if cfg.get("error") else ""),
                )
            )
    return table


def _path_table(report: Mapping[str, Any]) -> Table:
    table = Table("Network paths", PATH_COLUMNS)
    data = _data(report, "paths")
    for p in data.get("paths") or []:
        if isinstance(p, Mapping):
            status = p.get("status")
            table.rows.append(
                (
                    human(p.get("name")),
                    human(p.get("proxy") or "direct"),
                    ms(p.get("dns_ms")),
                    ms(p.get("connect_ms")),
                    ms(p.get("tls_ms")),
                    ms(p.get("ttfb_ms")),
                    ms(p.get("total_ms")),
                    human(status),
                    human(p.get("exit_location")),
                    human(" ".join(str(x) for x in (p.get("error_class"), p.get("error")) if x)),
                )
            )
    if data.get("target_url"):
        table.lines.append(f"Probed: {human(data['target_url'])}")
    reference = data.get("reference")
    if isinstance(reference, Mapping) and reference.get("url"):
        reachable = reference.get("reachable")
        state = (
            "reachable"
            if reachable is True
            else "not reachable"
            if reachable is False
            else human(reference.get("reason"))
        )
        table.lines.append(f"Reference {human(reference['url'])}: {state}")
    egress = _data(report, "proxy").get("egress")
    if isinstance(egress, Mapping) and (egress.get("interface") or egress.get("source_address")):
        table.lines.append(
            f"Egress: interface {human(egress.get('interface'))}, source address {human(egress.get('source_address'))}"
        )
    return table


def _check_table(report: Mapping[str, Any]) -> Table:
    table = Table("Checks", CHECK_COLUMNS)
    for c in _checks(report):
        status = str(c.get("status", ""))
        table.rows.append(
            (
                GLYPHS.get(status, "?"),
                f"{human(c.get('title'))} ({human(c.get('id'))})",
                status,
                ms(c.get("duration_ms")),
                human(c.get("summary")),
            )
        )
    return table


def _target_table(report: Mapping[str, Any]) -> Table:
    table = Table("Target", ("setting", "value", "source"))
    target = report.get("target")
    if not isinstance(target, Mapping):
        return table
    sources = target.get("sources") or {}
    tried = list(
        dict.fromkeys(str(m.get("model")) for _, m, _, _ in attempts(report) if m.get("role") == "alternative")
    )
    for key, label, source_keys in TARGET_ROWS:
        source = next((sources[k] for k in source_keys if sources.get(k)), None)
        value = target.get(key)
        if key == "alt_models" and not value and tried:  # none configured: the ones the probe picked and tried
            value, source = tried, "none configured; picked by capdoctor (the provider's lighter models)"
        table.rows.append((label, human(value), human(source)))
    return table


def _other_ids(report: Mapping[str, Any]) -> Table:
    shown = {v for _, _, _, a in attempts(report) for v in (a.get("request_id"), a.get("cf_ray")) if v}
    table = Table("Other request ids", ("check", "kind", "value"))
    for row in report.get("request_ids") or []:
        if isinstance(row, Mapping) and row.get("value") not in shown:
            table.rows.append((human(row.get("check")), human(row.get("kind")), human(row.get("value"))))
    return table


def _findings(report: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    out = []
    for c in _checks(report):
        lines = [
            f"{human(f.get('cause'))} ({human(f.get('strength'))}): {human(f.get('message'))}"
            for f in c.get("findings") or []
            if isinstance(f, Mapping)
        ]
        lines += [human(d) for d in c.get("details") or []]
        if lines:
            out.append((f"{human(c.get('title'))} ({human(c.get('id'))})", lines))
    return out


def _also_line(also: Mapping[str, Any]) -> str:
    steps = [human(s.get("text")) for s in also.get("next_steps") or [] if isinstance(s, Mapping)]
    first = f" Next: {steps[0]}" if steps else ""
    return f"{human(also.get('summary'))} (confidence {float(also.get('confidence') or 0):.0%}).{first}"


def _incident_table(report: Mapping[str, Any]) -> Table:
    """The bursts of errors the logs or the history hold: when, how many, which cause and models."""
    bursts = [b for c in _checks(report) for b in (c.get("data") or {}).get("bursts") or [] if isinstance(b, Mapping)]
    rows: list[tuple[str, ...]] = [
        (
            when(b.get("start")),
            when(b.get("end")),
            human(b.get("count")),
            human(b.get("cause")),
            human(", ".join(str(m) for m in b.get("models") or [])),
            human(", ".join(str(r) for r in b.get("request_ids") or [])),
        )
        for b in bursts[:20]
    ]
    return Table("Incidents (bursts of errors)", ("Start", "End", "Errors", "Cause", "Models", "Request ids"), rows)


def ticket(report: Mapping[str, Any]) -> Ticket:
    """The ticket's content for `report` (see the module docstring)."""
    v = report["verdict"]
    demo = report.get("demo")
    demo_line = None
    if isinstance(demo, Mapping):
        demo_line = (
            f"Demo report: capdoctor diagnosed its own simulator (scenario '{human(demo.get('scenario'))}': "
            f"{human(demo.get('description')).rstrip('.')}). No real provider was contacted."
        )
    system = Table("System", ("", ""), [(human(k), human(val)) for k, val in (report.get("system") or {}).items()])
    tables = [
        t
        for t in (
            _attempt_table(report),
            _incident_table(report),
            _client_table(report),
            _path_table(report),
            _check_table(report),
            _target_table(report),
            system,
            _other_ids(report),
        )
        if t.rows or t.lines
    ]
    steps: Sequence[Mapping[str, Any]] = v.get("next_steps") or []
    return Ticket(
        title="capdoctor report" + (" (demo)" if demo_line else ""),
        demo=demo_line,
        seen=_seen(report),
        cause=human(v["cause"]),
        confidence=f"{float(v['confidence']):.0%}",
        summary=human(v["summary"]),
        evidence=[human(e) for e in v.get("evidence") or []],
        steps=[(human(s.get("text")), one_line(str(s["command"])) if s.get("command") else None) for s in steps],
        also=[_also_line(a) for a in v.get("also") or [] if isinstance(a, Mapping)],
        tables=tables,
        findings=_findings(report),
        footer=f"capdoctor {human(report.get('version'))} · JSON schema {human(report.get('schema'))} · "
        f"created {when(report.get('created'))}",
    )
