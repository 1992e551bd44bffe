"""The OS "system proxy": macOS `scutil --proxy`, the Windows Internet Settings registry, GNOME, KDE.

Contract: one pure parser per OS output format (`parse_scutil`, `parse_reg_query`, `parse_gsettings`,
`parse_kioslaverc`), each returning a `SystemProxy` or None when no proxy is configured, plus one thin reader
(`read_system_proxy`) that runs the OS command with a timeout and picks the parser. Parsers are tested on
captured outputs of all three OSes. This module never raises for a missing tool or a malformed output (that
means "not configured / unknown"), never reads `os.environ` (the caller passes `ctx.env`), and never
evaluates a PAC script (it only reports its URL).
"""

from __future__ import annotations

import configparser
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

WINDOWS_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Internet Settings"
KDE_TYPES = {"0": "none", "1": "manual", "2": "pac", "3": "wpad", "4": "env"}
"""KDE `ProxyType` values (libproxy config-kde)."""


@dataclass(frozen=True)
class SystemProxy:
    """The system proxy as the OS stores it. URLs are `scheme://host:port`; `pac_url` is only reported.

    `source` names where it was read (`scutil --proxy`, the registry key, `gsettings`, `~/.config/kioslaverc`);
    `mode` is `manual`, `pac`, `wpad` or `env` (KDE "use environment variables").
    """

    source: str
    mode: str
    http: str | None = None
    https: str | None = None
    socks: str | None = None
    pac_url: str | None = None
    exceptions: tuple[str, ...] = ()

    def proxy_for(self, scheme: str) -> str | None:
        """The proxy URL a client honouring the system proxy would use for a `scheme` (http/https) URL."""
        if scheme == "https":
            return self.https or self.http or self.socks
        return self.http or self.socks

    def to_dict(self) -> dict[str, object]:
        """Machine-readable facts for `result.data["system_proxy"]`."""
        return vars(self) | {"exceptions": list(self.exceptions)}


def _url(scheme: str, host: str | None, port: str | int | None) -> str | None:
    host = (host or "").strip().strip("'\"")
    if not host:
        return None
    if "://" in host:
        scheme, host = host.split("://", 1)
        host = host.rstrip("/")
    p = str(port).strip() if port not in (None, "", 0, "0") else ""
    return f"{scheme}://{host}:{p}" if p and ":" not in host.split("]")[-1] else f"{scheme}://{host}"


def parse_scutil(text: str) -> SystemProxy | None:
    """Parse `scutil --proxy` (macOS): `Key : value` lines, with `<array>` blocks for ExceptionsList."""
    values: dict[str, str] = {}
    exceptions: list[str] = []
    in_array = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("ExceptionsList") and "<array>" in line:
            in_array = True
            continue
        if in_array:
            if line.startswith("}"):
                in_array = False
            elif " : " in line:
                exceptions.append(line.split(" : ", 1)[1].strip())
            continue
        if " : " in line:
            key, value = line.split(" : ", 1)
            values[key.strip()] = value.strip()

    def on(prefix: str) -> bool:
        return values.get(f"{prefix}Enable") == "1"

    http = _url("http", values.get("HTTPProxy"), values.get("HTTPPort")) if on("HTTP") else None
    https = _url("http", values.get("HTTPSProxy"), values.get("HTTPSPort")) if on("HTTPS") else None
    socks = _url("socks5", values.get("SOCKSProxy"), values.get("SOCKSPort")) if on("SOCKS") else None
    pac = values.get("ProxyAutoConfigURLString") if on("ProxyAutoConfig") else None
    if not (http or https or socks or pac):
        return None
    mode = "manual" if (http or https or socks) else "pac"
    return SystemProxy("scutil --proxy", mode, http, https, socks, pac, tuple(exceptions))


def parse_reg_query(text: str) -> SystemProxy | None:
    """Parse `reg query "HKCU\\...\\Internet Settings"` (Windows): `Name  REG_TYPE  value` lines.

    `ProxyServer` is either `host:port` for every protocol or `http=h:p;https=h:p;socks=h:p`.
    """
    values: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(\S+)\s+(REG_\w+)\s*(.*)$", line)
        if m:
            values[m.group(1)] = m.group(3).strip()
    enabled = values.get("ProxyEnable", "0x0").lower() not in ("0x0", "0", "")
    pac = values.get("AutoConfigURL") or None
    http = https = socks = None
    server = values.get("ProxyServer", "")
    if enabled and server:
        if "=" in server:
            for part in server.split(";"):
                if "=" in part:
                    proto, _, addr = part.partition("=")
                    proto = proto.strip().lower()
                    if proto == "http":
                        http = _url("http", addr, None)
                    elif proto == "https":
                        https = _url("http", addr, None)
                    elif proto == "socks":
                        socks = _url("socks4", addr, None)  # CPython maps socks= to socks4://
        else:
            http = https = _url("http", server, None)
    if not (http or https or socks or pac):
        return None
    exceptions = tuple(e.strip() for e in values.get("ProxyOverride", "").split(";") if e.strip())
    mode = "manual" if (http or https or socks) else "pac"
    return SystemProxy(f"registry {WINDOWS_KEY}", mode, http, https, socks, pac, exceptions)


def _gvalue(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith("uint32 "):
        raw = raw[7:]
    return raw.strip("'\"")


def parse_gsettings(text: str) -> SystemProxy | None:
    """Parse `gsettings list-recursively org.gnome.system.proxy` (GNOME): `schema key value` lines."""
    values: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        parts = line.strip().split(None, 2)
        if len(parts) == 3 and parts[0].startswith("org.gnome.system.proxy"):
            values[(parts[0], parts[1])] = parts[2]
    base = "org.gnome.system.proxy"
    mode = _gvalue(values.get((base, "mode"), "'none'"))
    if mode == "auto":
        pac = _gvalue(values.get((base, "autoconfig-url"), "''")) or None
        return SystemProxy("gsettings org.gnome.system.proxy", "pac" if pac else "wpad", pac_url=pac)
    if mode != "manual":
        return None

    def server(proto: str, scheme: str) -> str | None:
        host = _gvalue(values.get((f"{base}.{proto}", "host"), "''"))
        port = _gvalue(values.get((f"{base}.{proto}", "port"), "0"))
        return _url(scheme, host, port)

    ignore = values.get((base, "ignore-hosts"), "[]").strip().strip("@as").strip()
    exceptions = tuple(h.strip().strip("'\"") for h in ignore.strip("[]").split(",") if h.strip().strip("'\""))
    http, https, socks = server("http", "http"), server("https", "http"), server("socks", "socks5")
    if not (http or https or socks):
        return None
    return SystemProxy("gsettings org.gnome.system.proxy", "manual", http, https, socks, None, exceptions)


def _kde_url(value: str, scheme: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if scheme.startswith("socks"):  # KDE writes socks://; it means SOCKS5
        value = value.split("://", 1)[-1]
    if " " in value:  # KDE stores "scheme://host port"
        host, _, port = value.rpartition(" ")
        return _url(scheme, host, port)
    return _url(scheme, value, None)


def parse_kioslaverc(text: str, source: str = "~/.config/kioslaverc") -> SystemProxy | None:
    """Parse KDE's `kioslaverc` `[Proxy Settings]` group: ProxyType 1 manual, 2 PAC, 3 WPAD, 4 environment."""
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        cp.read_string(text)
    except configparser.Error:
        return None
    if not cp.has_section("Proxy Settings"):
        return None
    sec = cp["Proxy Settings"]
    mode = KDE_TYPES.get(sec.get("ProxyType", "0").strip(), "none")
    if mode == "none":
        return None
    if mode == "pac":
        pac = sec.get("Proxy Config Script", "").strip() or None
        return SystemProxy(source, "pac", pac_url=pac)
    if mode in ("wpad", "env"):
        return SystemProxy(source, mode)
    http = _kde_url(sec.get("httpProxy", ""), "http")
    https = _kde_url(sec.get("httpsProxy", ""), "http")
    socks = _kde_url(sec.get("socksProxy", ""), "socks5")
    exceptions = tuple(e.strip() for e in sec.get("NoProxyFor", "").split(",") if e.strip())
    if not (http or https or socks):
        return None
    return SystemProxy(source, "manual", http, https, socks, None, exceptions)


Runner = Callable[[list[str], float], "str | None"]


def run_command(argv: list[str], timeout: float) -> str | None:
    """Run `argv` and return its stdout, or None when the tool is missing, fails or overruns."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def read_system_proxy(
    platform: str,
    env: Mapping[str, str],
    home: Path,
    timeout: float = 2.0,
    run: Runner = run_command,
) -> SystemProxy | None:
    """The system proxy on this OS, or None when none is configured (or it cannot be read).

    Why per desktop on Linux: there is no OS-wide setting; GNOME and KDE keep their own, which browsers use but
    Python/Node/Rust clients ignore — a proxy that "works in the browser" may be invisible to the CLI.
    """
    if platform == "darwin":
        out = run(["scutil", "--proxy"], timeout)
        return parse_scutil(out) if out else None
    if platform == "win32":
        out = run(["reg", "query", WINDOWS_KEY], timeout)
        return parse_reg_query(out) if out else None
    xdg = env.get("XDG_CONFIG_HOME")
    kde_file = (Path(xdg) if xdg else home / ".config") / "kioslaverc"
    desktop = env.get("XDG_CURRENT_DESKTOP", "").lower()
    if "kde" not in desktop:
        out = run(["gsettings", "list-recursively", "org.gnome.system.proxy"], timeout) if desktop else None
        found = parse_gsettings(out) if out else None
        if found:
            return found
    try:
        text = kde_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    shown = str(kde_file).replace(str(home), "~", 1)
    return parse_kioslaverc(text, source=shown)
