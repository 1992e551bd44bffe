"""TUN, fake-IP and proxy-process detection: pure classifiers on captured interface sets of all three OSes,
and for real inside a Linux network namespace with a TUN device carrying 198.18.0.1/30."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from capdoctor.probes.net_tun import (
    Interface,
    classify_interfaces,
    egress_source,
    interface_for_address,
    is_fake_ip,
    match_processes,
    read_interfaces,
    summarize,
)
from tests.support import netns

DATA = Path(__file__).parents[1] / "data" / "net"


def interfaces(name: str) -> list[Interface]:
    rows = json.loads((DATA / name).read_text(encoding="utf-8"))
    return [Interface(r["name"], tuple(r["addresses"]), r["up"], r["point_to_point"], r["flags"]) for r in rows]


def test_fake_ip_membership_is_explicit_not_is_private() -> None:
    import ipaddress

    assert ipaddress.ip_address("198.18.0.1").is_private  # why is_private cannot be used
    assert is_fake_ip("198.18.0.1") and is_fake_ip("198.19.255.254") and is_fake_ip("fc00::1")
    assert not is_fake_ip("192.168.1.1") and not is_fake_ip("198.20.0.1") and not is_fake_ip("not-an-ip")


def test_macos_utuns_alone_prove_nothing() -> None:
    ifaces = interfaces("ip_addr_macos_no_tun.json")
    cands = classify_interfaces(ifaces, egress="en0")
    assert {c.name for c in cands} == {"utun0", "utun1", "utun2", "utun3"}
    assert not any(c.counts for c in cands)
    assert summarize(cands, "en0")["active"] is False


def test_macos_clash_verge_utun1024_with_fake_ip_address_counts() -> None:
    ifaces = interfaces("ip_addr_macos_clash_verge_tun.json")
    egress = interface_for_address(ifaces, "198.18.0.1")
    assert egress == "utun1024"
    tun = summarize(classify_interfaces(ifaces, egress), egress)
    assert tun["active"] is True and tun["interface"] == "utun1024"
    assert "Clash Verge" in str(tun["label"])


def test_windows_mihomo_adapter_without_ptp_counts_and_down_tailscale_does_not() -> None:
    cands = {c.name: c for c in classify_interfaces(interfaces("ip_addr_windows_mihomo.json"), "Ethernet")}
    assert cands["Mihomo"].counts and "198.18.0.1" in cands["Mihomo"].reasons[0]
    assert not cands["Tailscale"].counts  # down
    assert "Ethernet" not in cands


def test_linux_singbox_tun_and_tailscale() -> None:
    cands = {c.name: c for c in classify_interfaces(interfaces("ip_addr_linux_singbox_tailscale.json"), "tun0")}
    assert cands["tun0"].counts and "is the interface the kernel uses" in " ".join(cands["tun0"].reasons)
    assert cands["tailscale0"].counts and cands["tailscale0"].label == "Tailscale"
    assert "docker0" not in cands and "eth0" not in cands


def test_proxy_processes_are_matched_case_and_exe_insensitively() -> None:
    got = match_processes(["bash", "verge-mihomo", "Clash Verge", "sing-box.exe", "ZSATunnel.exe", "python3"])
    assert dict(got) == {
        "verge-mihomo": "Clash Verge Rev (mihomo core)",
        "Clash Verge": "Clash Verge",
        "sing-box.exe": "sing-box",
        "ZSATunnel.exe": "Zscaler Client Connector",
    }


def test_readers_work_on_this_machine() -> None:
    ifaces = read_interfaces()
    assert any(i.name.startswith("lo") and "127.0.0.1" in i.addresses for i in ifaces)
    assert egress_source("127.0.0.1") == "127.0.0.1"
    assert interface_for_address(ifaces, "127.0.0.1") is not None


# ------------------------------------------------------------------ for real, in a network namespace


@pytest.fixture
def tun_namespace() -> Iterator[str]:
    """A fresh namespace with a mihomo-style TUN `Meta` at 198.18.0.1/30 as its default route, and a hosts file
    that answers the provider's name with a fake IP; removed afterwards."""
    hosts = "127.0.0.1 localhost\n198.18.0.7 api.fake-provider.test\n"
    with netns.namespace({"hosts": hosts}, need_tun=True) as name:
        for cmd in (
            ["tuntap", "add", "dev", "Meta", "mode", "tun"],
            ["addr", "add", "198.18.0.1/30", "dev", "Meta"],
            ["link", "set", "Meta", "up"],
            ["route", "add", "default", "dev", "Meta"],
        ):
            done = netns.ip("netns", "exec", name, "ip", *cmd)
            if done.returncode != 0:
                pytest.skip(f"cannot set up the TUN in the namespace ({' '.join(cmd)}): {done.stderr.strip()}")
        yield name


SCRIPT = """
import json, sys, time
from pathlib import Path
from capdoctor.run.context import Context, Target
from capdoctor.checks.proxy import ProxyCheck
ctx = Context(env={"CAPDOCTOR_NO_NETWORK_LOOKUPS": "1"}, home=Path(sys.argv[1]), cwd=Path(sys.argv[1]),
              target=Target("openai", "http://api.fake-provider.test/v1", "gpt-test"),
              deadline=time.monotonic() + 10)
r = ProxyCheck().run(ctx)
print(json.dumps({"status": r.status.value, "summary": r.summary, "data": r.data,
                  "findings": [f.to_dict() for f in r.findings]}, default=str))
"""


def test_proxy_check_sees_tun_mode_and_fake_ip_inside_a_namespace(tun_namespace: str, tmp_path: Path) -> None:
    done = subprocess.run(
        ["ip", "netns", "exec", tun_namespace, sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    tun = out["data"]["tun"]
    assert tun["active"] is True and tun["interface"] == "Meta"
    assert tun["egress_interface"] == "Meta"  # the UDP-connect method sees the route through the TUN
    assert out["data"]["egress"]["source_address"] == "198.18.0.1"
    assert out["data"]["fake_ip"] is True and out["data"]["resolved"] == ["198.18.0.7"]
    messages = " ".join(f["message"] for f in out["findings"])
    assert "TUN mode is on: Meta" in messages and "fake IP" in messages
    assert out["status"] == "warn"
    assert out["data"]["tls"]["applicable"] is False


def test_the_same_check_outside_the_namespace_sees_no_tun(tmp_path: Path) -> None:
    from capdoctor.checks.proxy import ProxyCheck
    from capdoctor.run.context import Context

    ctx = Context(env={"CAPDOCTOR_NO_NETWORK_LOOKUPS": "1"}, home=tmp_path, cwd=tmp_path)
    r = ProxyCheck().run(ctx)
    if any(c["counts"] for c in r.data["tun"]["interfaces"]):
        pytest.skip("this machine itself runs a TUN/VPN")
    assert r.data["tun"]["active"] is False and r.data["fake_ip"] is None
