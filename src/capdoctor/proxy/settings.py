"""What `capdoctor proxy` was asked for, checked before anything listens, and the lines each client needs.

Contract: `build(...)` turns the raw flags into `ProxySettings` or raises `UsageError` (one line naming the value
and where it came from, exit 2): an `--upstream` without an http(s) scheme and host, a prefix used twice, a
`--listen` that is not HOST:PORT, an address other than loopback without a token, an unknown `--provider`.
`Upstream.route(path)` says which upstream a request path goes to and what is left of the path; `client_lines`
writes what a user pastes into each client (Claude Code, Codex, Gemini CLI, the SDKs). Pure: no I/O, no
aiohttp, nothing heavy (cli.py imports none of it at start-up either; the command does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from capdoctor.errors import UsageError

DEFAULT_LISTEN = "127.0.0.1:8787"
TOKEN_HEADER = "x-capdoctor-token"
"""The header a client may send the token in (removed before forwarding)."""
TOKEN_PATH = "/_t/"
"""The path prefix a client may send the token in instead (`http://host:8787/_t/TOKEN/v1`), for clients that
take a base URL but no extra header; stripped before forwarding."""
TOKEN_ENV = "CAPDOCTOR_PROXY_TOKEN"
"""Where the token may come from instead of `--token`, which every user of the machine sees in `ps`."""
MIN_TOKEN_CHARS = 16
TOKEN_PLACEHOLDER = "<TOKEN>"
"""What the printed client lines show instead of the token: they go to the terminal or the journal."""

OPENAI_SHAPED = frozenset({"openai", "openai-compatible", "openrouter", "groq", "azure"})
_PREFIX_RE = re.compile(r"^(?:/[A-Za-z0-9._~-]+)+$")


@dataclass(frozen=True)
class Upstream:
    """One provider the proxy forwards to: requests under `prefix` ("" for every other path) go to `url`
    with the prefix removed; `provider` is the catalogue's name when known; `source` where it was given."""

    prefix: str
    url: str
    provider: str | None
    source: str

    def route(self, path: str) -> str | None:
        """What is left of `path` for this upstream (always starting with `/`), or None when not under it."""
        if not self.prefix:
            return path if path.startswith("/") else "/" + path
        if path == self.prefix:
            return "/"
        if path.startswith(self.prefix + "/"):
            return path[len(self.prefix) :]
        return None

    @property
    def client_suffix(self) -> str:
        """What an OpenAI-shaped SDK's base URL adds to the proxy's: `/v1` unless the upstream holds it."""
        if self.provider not in OPENAI_SHAPED and self.provider is not None:
            return ""
        return "" if urlsplit(self.url).path.rstrip("/").endswith("/v1") else "/v1"


@dataclass(frozen=True)
class ProxySettings:
    """Everything `capdoctor proxy` runs with."""

    upstreams: tuple[Upstream, ...]
    host: str = "127.0.0.1"
    port: int = 8787
    db: Path | None = None
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    token: str | None = None
    retention_days: float = 30.0
    burst_failures: int = 5
    burst_window_s: float = 60.0
    drain_s: float = 10.0
    network_checks: bool = True

    def upstream_for(self, path: str) -> tuple[Upstream, str] | None:
        """The upstream with the longest prefix `path` is under, and the path left for it; None: no upstream."""
        for up in sorted(self.upstreams, key=lambda u: len(u.prefix), reverse=True):
            rest = up.route(path)
            if rest is not None:
                return up, rest
        return None


def parse_upstream(value: str, source: str) -> Upstream:
    """`URL` or `/PREFIX=URL` into an `Upstream`, or `UsageError`. The provider is the one the host names, else
    the one the prefix's last segment names (`/anthropic=http://relay:4000`), else unknown."""
    from capdoctor.providers.catalog import provider_for_host
    from capdoctor.target.urls import url_problem

    text = value.strip()
    prefix = ""
    if text.startswith("/"):
        prefix, eq, text = text.partition("=")
        prefix = prefix.rstrip("/")
        if not eq or not _PREFIX_RE.match(prefix):
            raise UsageError(
                f"--upstream {value!r} ({source}): a prefixed upstream reads /PREFIX=URL, with a prefix of "
                "letters, digits and . _ ~ - between slashes (e.g. /anthropic=https://api.anthropic.com)"
            )
    problem = url_problem(text)
    if problem:
        raise UsageError(f"--upstream {value!r} ({source}): the URL {problem}")
    parts = urlsplit(text)
    if parts.query or parts.fragment:
        raise UsageError(f"--upstream {value!r} ({source}): the URL must not carry a query or fragment")
    if prefix.startswith(TOKEN_PATH.rstrip("/")):
        raise UsageError(f"--upstream {value!r} ({source}): the prefix {TOKEN_PATH.rstrip('/')} is the token's")
    from capdoctor.providers.catalog import canonical

    named = canonical(prefix.rsplit("/", 1)[-1]) if prefix else None  # `/anthropic=…` names its provider
    return Upstream(prefix, text.rstrip("/"), provider_for_host(parts.hostname or "") or named, source)


def provider_upstream(name: str, source: str) -> Upstream:
    """The upstream of a catalogue provider: its default base URL without a trailing `/v1` (the client's SDK
    adds that), or `UsageError` for a name the catalogue does not know or a provider without a public URL."""
    from capdoctor.providers.catalog import PROVIDER_NAMES, adapter_for, canonical
    from capdoctor.target.urls import root

    known = canonical(name)
    if known is None:
        raise UsageError(
            f"--provider {name!r} ({source}) is not a provider capdoctor knows ({', '.join(PROVIDER_NAMES)})"
        )
    base = adapter_for(known).default_base_url
    if not base:
        raise UsageError(f"--provider {name!r} ({source}) has no public endpoint: pass --upstream URL instead")
    return Upstream("", root(base), known, source)


def parse_listen(value: str, source: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6; port 0 picks a free one) into (host, port), or `UsageError`."""
    text = value.strip()
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([A-Za-z0-9.\-]+):(\d{1,5})", text)
    if not match:
        raise UsageError(f"--listen {value!r} ({source}) must be HOST:PORT, e.g. 127.0.0.1:8787 or [::1]:8787")
    host = match.group(1) or match.group(3)
    port = int(match.group(2) or match.group(4))
    if port > 65535:
        raise UsageError(f"--listen {value!r} ({source}): port {port} is above 65535")
    return host, port


def build(
    upstreams: list[str] | None,
    provider: str | None,
    listen: str | None,
    token: str | None,
    env: dict[str, str],
    *,
    db: Path | None = None,
    metrics_port: int | None = None,
    metrics_host: str = "127.0.0.1",
    retention_days: float = 30.0,
    burst_failures: int = 5,
    burst_window_s: float = 60.0,
    drain_s: float = 10.0,
    network_checks: bool = True,
) -> ProxySettings:
    """The checked settings; `UsageError` (exit 2) for the first bad value, before anything listens."""
    from capdoctor.probes.hosts import bind_problem, is_loopback_host

    mounts = [parse_upstream(v, "flag --upstream") for v in upstreams or ()]
    if provider is not None:
        if any(not m.prefix for m in mounts):  # --provider names the unprefixed upstream's provider (a relay)
            named = provider_upstream(provider, "flag --provider").provider
            mounts = [Upstream(m.prefix, m.url, named, m.source) if not m.prefix else m for m in mounts]
        else:
            mounts.append(provider_upstream(provider, "flag --provider"))
    if not mounts:
        raise UsageError("proxy: no upstream: pass --upstream URL (repeatable, /PREFIX=URL) or --provider NAME")
    seen: dict[str, Upstream] = {}
    for m in mounts:
        if m.prefix in seen:
            where = f"prefix {m.prefix}" if m.prefix else "no prefix"
            raise UsageError(f"--upstream {m.url!r} ({m.source}): {where} is already {seen[m.prefix].url}")
        seen[m.prefix] = m
    listen_source = "flag --listen" if listen is not None else "default"
    host, port = parse_listen(listen if listen is not None else DEFAULT_LISTEN, listen_source)
    secret, token_source = (token, "flag --token") if token is not None else (env.get(TOKEN_ENV), f"env {TOKEN_ENV}")
    if secret is not None:
        secret = secret.strip()
        if len(secret) < MIN_TOKEN_CHARS or not re.fullmatch(r"[A-Za-z0-9._~-]+", secret):
            raise UsageError(
                f"the proxy token ({token_source}) must be at least {MIN_TOKEN_CHARS} characters of letters, digits "
                "and . _ ~ - (it travels in a URL path): e.g. `openssl rand -hex 24`"
            )
    problem = bind_problem(metrics_host) if metrics_port is not None else None
    if problem:
        raise UsageError(f"--metrics-host {metrics_host!r} (flag --metrics-host) {problem}")
    if not is_loopback_host(host) and not secret:
        raise UsageError(
            f"--listen {listen!r} ({listen_source}) is not a loopback address: anyone who reaches this machine could "
            f"send requests through it; pass --token (or set {TOKEN_ENV}) so that only your clients can"
        )
    return ProxySettings(
        tuple(mounts),
        host,
        port,
        db,
        metrics_port,
        metrics_host,
        secret or None,
        retention_days,
        burst_failures,
        burst_window_s,
        drain_s,
        network_checks,
    )


def public_url(host: str, port: int) -> str:
    """The URL a client on this machine uses for a listening address (a wildcard bind reads as loopback)."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def client_lines(settings: ProxySettings, url: str) -> list[str]:
    """What to paste into each client so that its traffic goes through the proxy at `url`, per upstream.

    With a token, the lines show `<TOKEN>` in its place: they are printed to a terminal or a service's journal,
    where a secret must not stand.
    """
    base = url + (TOKEN_PATH + TOKEN_PLACEHOLDER if settings.token else "")
    lines: list[str] = []
    for up in settings.upstreams:
        root = base + up.prefix
        name = up.provider or "unknown provider"
        lines.append(f"{up.prefix or '/'} -> {up.url} ({name})")
        anthropic = up.provider in (None, "anthropic")
        gemini = up.provider in (None, "gemini")
        openai = up.provider is None or up.provider in OPENAI_SHAPED
        if anthropic:
            lines.append(f"  Claude Code:  export ANTHROPIC_BASE_URL={root}")
            lines.append(f'  Anthropic SDK: anthropic.Anthropic(base_url="{root}")')
        if openai:
            sdk = root + up.client_suffix
            lines.append("  Codex (~/.codex/config.toml):")
            lines.append('    model_provider = "capdoctor"')
            lines.append("    [model_providers.capdoctor]")
            lines.append('    name = "capdoctor proxy"')
            lines.append(f'    base_url = "{sdk}"')
            lines.append('    env_key = "OPENAI_API_KEY"')
            lines.append('    wire_api = "responses"')
            lines.append(f'  OpenAI SDK:   openai.OpenAI(base_url="{sdk}")   # or export OPENAI_BASE_URL={sdk}')
        if gemini:
            lines.append(f"  Gemini CLI:   export GOOGLE_GEMINI_BASE_URL={root}")
    if settings.token:
        lines.append(
            f"Replace {TOKEN_PLACEHOLDER} with your token, or send it in the {TOKEN_HEADER} header and drop "
            f"{TOKEN_PATH}{TOKEN_PLACEHOLDER} from the URLs."
        )
    return lines
