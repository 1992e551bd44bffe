"""The command line's options as annotated types, declared once and shared by the commands in `cli.py`.

Help texts of options that `capdoctor.toml` can also set come from `capdoctor.target.options` (one declaration);
this module holds only how each flag is spelled on the command line. Imports only typer, like `cli.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from capdoctor.cli import choices
from capdoctor.target.options import help_for

Provider = Annotated[
    str | None,
    typer.Option(
        click_type=choices.providers(),
        rich_help_panel="Target",
        help="The provider's API (other spellings such as claude or ollama are accepted).",
    ),
]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="What the provider's SDK takes as base URL.", rich_help_panel="Target")
]
ModelOpt = Annotated[str | None, typer.Option("--model", help="The model your client uses.", rich_help_panel="Target")]
AltModels = Annotated[
    list[str] | None,
    typer.Option("--alt-model", help="An alternative model to try (repeatable).", rich_help_panel="Target"),
]
KeyEnv = Annotated[
    str | None,
    typer.Option("--api-key-env", help="The NAME of the variable holding the key.", rich_help_panel="Target"),
]
LogOpt = Annotated[
    list[Path] | None, typer.Option("--log", help=help_for("logs") + " Repeatable.", rich_help_panel="Target")
]
Timeout = Annotated[str | None, typer.Option("--timeout", metavar="SECONDS", help=help_for("timeout"))]
Only = Annotated[list[str] | None, typer.Option("--only", help="Run only these check ids (comma list).")]
Skip = Annotated[list[str] | None, typer.Option("--skip", help="Skip these check ids (comma list).")]
NoInference = Annotated[bool, typer.Option("--no-inference", help="Only calls that spend no tokens.")]
JsonOut = Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout, nothing else.")]
ReportOut = Annotated[
    Path | None,
    typer.Option(
        "--report", help="Also write the report: .md, .json or .html; - prints the Markdown ticket on stdout."
    ),
]
Verbose = Annotated[bool, typer.Option("-v", "--verbose", help="Show every finding and detail.")]
Quiet = Annotated[bool, typer.Option("-q", "--quiet", help="Print only the verdict line.")]
NoColor = Annotated[bool, typer.Option("--no-color", help="No colour (NO_COLOR and FORCE_COLOR are honoured too).")]
Scenario = Annotated[str, typer.Option(click_type=choices.scenarios(), help="Simulator scenario.")]
RefUrl = Annotated[str | None, typer.Option("--reference-url", help=help_for("reference_url"))]
Since = Annotated[str | None, typer.Option("--since", help=help_for("since"))]
HistorySince = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Only the rounds recorded after this: a duration (7d, 12h, 30m), a date (2026-11-01) or 'all' "
        "(default: all).",
    ),
]

FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format", help="litellm, codex, claude-code, openai-python, anthropic-python or env (default: your client's)."
    ),
]
FromReport = Annotated[
    Path | None,
    typer.Option(
        "--from-report", help="Build from a saved JSON report (diagnose --json / --report x.json): sends nothing."
    ),
]
WriteOpt = Annotated[
    Path | None,
    typer.Option("--write", help="Write to this file instead of stdout (an existing file only with --merge)."),
]
MergeOpt = Annotated[
    bool,
    typer.Option(
        "--merge", help="Merge into the existing --write file, keeping its other keys and comments (diff shown)."
    ),
]

DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="The history database (default: history.sqlite3 in capdoctor's user data folder)."),
]

CheckId = Annotated[str, typer.Argument(metavar="ID", help="A check id (see `capdoctor checks`).")]
SimHost = Annotated[
    str,
    typer.Option(help="Address to bind (loopback by default; anything else exposes the simulator to your network)."),
]
SimPort = Annotated[int, typer.Option(help="Port (0 picks a free one).", min=0, max=65535)]
LogPaths = Annotated[
    list[str] | None,
    typer.Argument(help="Files, folders (recursive), .gz/.zst, or - for stdin; none: discover the clients' logs."),
]
Into = Annotated[
    Path | None,
    typer.Option(
        "--into", metavar="DB", help="Also add the dated errors to this history database (see `capdoctor history`)."
    ),
]
RoundTimeout = Annotated[
    str | None, typer.Option("--timeout", metavar="SECONDS", help="Deadline of each round in seconds.")
]
Interval = Annotated[str | None, typer.Option("--interval", metavar="SECONDS", help=help_for("watch.interval_s"))]
Count = Annotated[int | None, typer.Option(help="Stop after N rounds (default: until stopped).", min=1)]
Retention = Annotated[str | None, typer.Option("--retention", metavar="DAYS", help=help_for("watch.retention_days"))]
MetricsPort = Annotated[int | None, typer.Option(help="Serve Prometheus metrics on this port.", min=1, max=65535)]
MetricsHost = Annotated[str, typer.Option(help="Address /metrics listens on (loopback by default).")]
Textfile = Annotated[
    Path | None, typer.Option(help="Also write the metrics to this node_exporter textfile (.prom) after each round.")
]
ExplainText = Annotated[
    list[str] | None,
    typer.Argument(metavar="[TEXT]...", help="The error text (quote it); - or none with a pipe: read stdin."),
]
Upstreams = Annotated[
    list[str] | None,
    typer.Option(
        "--upstream",
        metavar="[/PREFIX=]URL",
        help="Where requests go: the path is appended to URL's; /PREFIX=URL serves URL under /PREFIX (repeatable).",
    ),
]
Listen = Annotated[
    str | None, typer.Option("--listen", metavar="HOST:PORT", help="Address to listen on. [default: 127.0.0.1:8787]")
]
ProxyToken = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Clients must send this (x-capdoctor-token header, or /_t/TOKEN/ before the path); required "
        "off loopback. CAPDOCTOR_PROXY_TOKEN keeps it out of `ps`.",
    ),
]
BurstFailures = Annotated[
    str | None, typer.Option("--burst-failures", metavar="N", help=help_for("proxy.burst_failures"))
]
BurstWindow = Annotated[
    str | None, typer.Option("--burst-window", metavar="SECONDS", help=help_for("proxy.burst_window_s"))
]
Drain = Annotated[str | None, typer.Option("--drain", metavar="SECONDS", help=help_for("proxy.drain_s"))]
NoNetworkChecks = Annotated[
    bool, typer.Option("--no-network-checks", help="Never run the network checks at a burst of failures.")
]
