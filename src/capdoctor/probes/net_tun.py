"""TUN mode, fake-IP DNS and proxy-client processes: facts about what captures the user's traffic.

Contract: data tables (TUN interface names, proxy address ranges, proxy-client process names) plus pure
classifiers over plain values (`classify_interfaces`, `is_fake_ip`, `match_processes`,
`interface_for_address`), and three thin readers (`read_interfaces`, `egress_source`, `read_process_names`)
that import psutil inside the function and never raise. Policy routing (sing-tun/mihomo `auto_route` uses
table 2022) hides a TUN from the main routing table, so the egress interface is found with the UDP
connect/getsockname method, which sends no packet. This module must not treat a bare `utun*` as evidence
(macOS always has some) and must not rely on `ipaddress.is_private` for fake-IP (198.18.0.0/15 is "private").
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field

TUN_NAMES: tuple[tuple[str, str], ...] = (
    (r"^Meta$", "mihomo (Clash.Meta) TUN"),
    (r"^Mihomo$", "Clash Verge Rev TUN"),
    (r"^utun1024$", "Clash Verge Rev TUN (macOS)"),
    (r"^singbox_tun$", "v2rayN sing-box TUN"),
    (r"^sing-?box", "sing-box TUN"),
    (r"^(?i:clash)", "Clash TUN"),
    (r"^tun\d+$", "TUN device (sing-box, OpenVPN…)"),
    (r"^wg\d*$|^wg-", "WireGuard"),
    (r"^(?i:tailscale)\d*$", "Tailscale"),
    (r"^(?i:nordlynx)$", "NordVPN (NordLynx)"),
    (r"^(?i:proton)", "Proton VPN"),
    (r"^(?i:wintun)", "WinTun adapter"),
    (r"^ppp\d+$", "PPP/VPN link"),
    (r"^zt\w+$", "ZeroTier"),
    (r"^utun\d+$", "macOS utun (system services use these too)"),
)
"""Interface-name patterns, first match wins; the label names the likely owner (platform-facts A.3)."""

WEAK_NAMES = frozenset({r"^utun\d+$"})
"""Patterns whose mere presence proves nothing (macOS always has a few utun interfaces)."""

PROXY_RANGES: tuple[tuple[str, str], ...] = (
    ("198.18.0.0/15", "fake-IP range (mihomo/Clash/sing-box default)"),
    ("fc00::/18", "sing-box fake-IP IPv6 range"),
    ("172.18.0.0/30", "sing-box TUN address"),
    ("172.19.0.0/30", "sing-box TUN address (older default)"),
    ("100.64.0.0/10", "CGNAT / Tailscale node range"),
)
"""Addresses that mark a proxy TUN when carried by an interface (platform-facts A.4)."""

FAKE_IP_RANGES = ("198.18.0.0/15", "fc00::/18")
"""DNS answers inside these mean a fake-IP resolver (TUN / DNS hijack) answered, not the real DNS."""

PROXY_PROCESSES: tuple[tuple[str, str], ...] = (
    ("verge-mihomo", "Clash Verge Rev (mihomo core)"),
    ("verge-mihomo-alpha", "Clash Verge Rev (mihomo alpha core)"),
    ("clash-verge", "Clash Verge"),
    ("clash verge", "Clash Verge"),
    ("mihomo", "mihomo (Clash.Meta)"),
    ("clash", "Clash"),
    ("clash-meta", "Clash.Meta"),
    ("clashx", "ClashX"),
    ("clashx pro", "ClashX Pro"),
    ("clash for windows", "Clash for Windows"),
    ("flclash", "FlClash"),
    ("clash-nyanpasu", "Clash Nyanpasu"),
    ("sing-box", "sing-box"),
    ("sing-box-client", "sing-box"),
    ("xray", "Xray"),
    ("wxray", "Xray"),
    ("v2ray", "V2Ray"),
    ("wv2ray", "V2Ray"),
    ("v2rayn", "v2rayN"),
    ("v2raya", "v2rayA"),
    ("nekoray", "NekoRay"),
    ("nekobox", "NekoBox"),
    ("hiddify", "Hiddify"),
    ("hysteria", "Hysteria"),
    ("naive", "NaiveProxy"),
    ("tuic-client", "TUIC"),
    ("surge", "Surge"),
    ("shadowrocket", "Shadowrocket"),
    ("stash", "Stash"),
    ("tailscaled", "Tailscale"),
    ("openvpn", "OpenVPN"),
    ("wireguard", "WireGuard"),
    ("mitmproxy", "mitmproxy (TLS interception)"),
    ("mitmdump", "mitmproxy (TLS interception)"),
    ("charles", "Charles Proxy (TLS interception)"),
    ("proxyman", "Proxyman (TLS interception)"),
    ("fiddler", "Fiddler (TLS interception)"),
    ("zsatunnel", "Zscaler Client Connector"),
    ("zsatray", "Zscaler Client Connector"),
    ("stagentsvc", "Netskope client"),
    ("nsagent", "Netskope client"),
)
"""Process names (lower-case, without `.exe`) of proxy/VPN/interception clients (platform-facts A.6)."""


@dataclass(frozen=True)
class Interface:
    """One network interface as psutil reports it, reduced to plain values."""

    name: str
    addresses: tuple[str, ...] = ()
    up: bool = False
    point_to_point: bool = False
    flags: str = ""


@dataclass(frozen=True)
class TunCandidate:
    """An interface that looks like a tunnel: who probably owns it, and why it counts (or does not)."""

    name: str
    label: str
    up: bool
    point_to_point: bool
    addresses: tuple[str, ...]
    proxy_ranges: tuple[str, ...]
    counts: bool
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        """Machine-readable facts for `result.data["tun"]["interfaces"]`."""
        return vars(self) | {k: list(getattr(self, k)) for k in ("addresses", "proxy_ranges", "reasons")}


def _in(addr: str, nets: Iterable[str]) -> list[str]:
    try:
        ip = ipaddress.ip_address(addr.split("%")[0])
    except ValueError:
        return []
    return [n for n in nets if ip.version == ipaddress.ip_network(n).version and ip in ipaddress.ip_network(n)]


def is_fake_ip(addr: str) -> bool:
    """True when `addr` lies in a fake-IP range (tested explicitly: Python calls 198.18.0.0/15 private)."""
    return bool(_in(addr, FAKE_IP_RANGES))


def proxy_range_of(addr: str) -> str | None:
    """The label of the proxy range `addr` falls in, or None."""
    hits = _in(addr, [n for n, _ in PROXY_RANGES])
    return dict(PROXY_RANGES)[hits[0]] if hits else None


def classify_interfaces(interfaces: Iterable[Interface], egress: str | None = None) -> list[TunCandidate]:
    """The interfaces that look like tunnels, each marked `counts` when it is evidence of a proxy TUN.

    Why these rules: a tunnel counts when it is up *and* either carries a proxy-range address, or is the
    interface the kernel picks for the provider (`egress`), or has a proxy client's own name. A `utun*`
    counts only through the first two, since macOS keeps several for system services.
    """
    out: list[TunCandidate] = []
    for iface in interfaces:
        label = None
        weak = False
        for pattern, name in TUN_NAMES:
            if re.search(pattern, iface.name):
                label, weak = name, pattern in WEAK_NAMES
                break
        ranges = tuple(r for r in (proxy_range_of(a) for a in iface.addresses) if r)
        if label is None and not ranges and not (iface.point_to_point and iface.name == egress):
            continue
        reasons: list[str] = []
        if ranges:
            reasons.append(f"carries {', '.join(a for a in iface.addresses if proxy_range_of(a))} ({ranges[0]})")
        if egress and iface.name == egress:
            reasons.append("is the interface the kernel uses to reach the provider")
        if label and not weak:
            reasons.append(f"name matches {label}")
        counts = iface.up and bool(ranges or (egress and iface.name == egress) or (label and not weak))
        out.append(
            TunCandidate(
                iface.name,
                label or "point-to-point interface",
                iface.up,
                iface.point_to_point,
                iface.addresses,
                ranges,
                counts,
                tuple(reasons),
            )
        )
    return out


def interface_for_address(interfaces: Iterable[Interface], addr: str) -> str | None:
    """The name of the interface that owns `addr` (the source address the kernel chose), or None."""
    for iface in interfaces:
        if addr in (a.split("%")[0] for a in iface.addresses):
            return iface.name
    return None


def match_processes(names: Iterable[str]) -> list[tuple[str, str]]:
    """(process name, client label) for every running process that is a known proxy/VPN/interception client."""
    table = dict(PROXY_PROCESSES)
    seen: dict[str, str] = {}
    for raw in names:
        key = raw.lower().removesuffix(".exe").strip()
        if key in table and raw not in seen:
            seen[raw] = table[key]
    return sorted(seen.items())


def read_interfaces() -> list[Interface]:
    """The machine's interfaces via psutil (empty on failure). Up means admin-up: a TUN without carrier is
    still the interface traffic is routed to."""
    try:
        import psutil

        addrs = psutil.net_if_addrs()
        stats = psutil.net_if_stats()
    except Exception:
        return []
    out = []
    for name, entries in addrs.items():
        st = stats.get(name)
        flags = getattr(st, "flags", "") or ""
        ips = tuple(e.address for e in entries if e.family in (socket.AF_INET, socket.AF_INET6))
        ptp = "pointopoint" in flags or any(e.ptp for e in entries if e.family == socket.AF_INET)
        up = bool(st and (st.isup or "up" in flags.split(",")))
        out.append(Interface(name, ips, up, ptp, flags))
    return out


def egress_source(addr: str) -> str | None:
    """The source address the kernel would use to reach `addr` (UDP connect + getsockname; no packet sent).

    Why: it honours policy routing, so a TUN installed in a side table (sing-tun table 2022) shows up here
    even though `ip route` / `/proc/net/route` still name the physical NIC.
    """
    try:
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((addr, 443))
            src: str = s.getsockname()[0]
            return src
    except OSError:
        return None


def read_process_names() -> list[str]:
    """Names of running processes (empty on failure; other users' processes may be hidden)."""
    try:
        import psutil

        return [str(p.info.get("name") or "") for p in psutil.process_iter(["name"])]
    except Exception:
        return []


def resolve(host: str, port: int = 443) -> list[str]:
    """The addresses `host` resolves to (empty on failure), as the system resolver answers them."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(i[4][0]) for i in infos))


def summarize(candidates: Iterable[TunCandidate], egress_iface: str | None) -> dict[str, object]:
    """`result.data["tun"]`: whether TUN mode is active, through which interface, and the candidates."""
    cands = list(candidates)
    active = [c for c in cands if c.counts]
    return {
        "active": bool(active),
        "interface": active[0].name if active else None,
        "label": active[0].label if active else None,
        "egress_interface": egress_iface,
        "interfaces": [c.to_dict() for c in cands],
    }
