"""The `proxy` check with real parts: live and dead loopback proxies, clients' own proxy files, TLS
interception by a private CA on loopback, and the pure `assess` rules."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from capdoctor.checks.proxy import Facts, ProxyCheck, assess, read_client_proxies
from capdoctor.model import Cause, Status, Strength
from capdoctor.run.context import Context, Target
from capdoctor.run.runner import run_checks
from tests.conftest import free_port
from tests.support.netfixtures import Origin, private_ca, running_proxy, tls_server_context


def make_ctx(home: Path, env: dict[str, str] | None = None, base_url: str | None = None) -> Context:
    target = Target("openai", base_url, "gpt-test") if base_url else None
    return Context(
        env={"CAPDOCTOR_NO_NETWORK_LOOKUPS": "1", **(env or {})},
        home=home,
        cwd=home,
        target=target,
        deadline=time.monotonic() + 15,
        platform="linux",
    )


def test_no_target_no_proxy_passes_and_reports_facts(home: Path) -> None:
    r = ProxyCheck().run(make_ctx(home))
    assert r.status in (Status.PASS, Status.WARN)  # WARN only if this machine itself runs a TUN
    assert r.data["env_proxy"]["effective"] == {} and r.data["tls"]["applicable"] is False
    assert set(r.data) >= {
        "env_proxy",
        "system_proxy",
        "client_proxies",
        "tun",
        "fake_ip",
        "egress",
        "proxy_processes",
        "tls",
        "dead_proxies",
    }


def test_dead_env_proxy_is_strong_network_evidence(home: Path) -> None:
    port = free_port()
    r = ProxyCheck().run(make_ctx(home, {"HTTPS_PROXY": f"http://user:fake-pw-test@127.0.0.1:{port}"}))
    assert r.status == Status.FAIL
    (f,) = [f for f in r.findings if f.strength == Strength.STRONG]
    assert f.cause == Cause.NETWORK and "nothing is listening" in f.message
    assert f.next_steps[1].command == "unset HTTPS_PROXY"
    assert "fake-pw-test" not in json.dumps(r.to_dict())


def test_live_env_proxy_is_reported_not_blamed(home: Path, sim: Any) -> None:
    with running_proxy("ok") as proxy:
        r = ProxyCheck().run(make_ctx(home, {"HTTP_PROXY": proxy.url}, sim.base_url("openai")))
    assert r.data["dead_proxies"] == []
    assert r.data["env_proxy"]["effective"] == {"http": proxy.url}
    assert r.data["tls"]["applicable"] is False and "not applicable" in r.data["tls"]["reason"]
    assert not [f for f in r.findings if f.strength in (Strength.STRONG, Strength.MODERATE)]
    assert "HTTP_PROXY → " in r.summary


def test_clients_own_proxy_files_are_read_and_probed(home: Path) -> None:
    dead = free_port()
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"HTTPS_PROXY": f"http://127.0.0.1:{dead}", "NO_PROXY": "localhost", "OTHER": "x"}}),
        encoding="utf-8",
    )
    (home / ".codex").mkdir()
    (home / ".codex" / ".env").write_text(
        "# stale\nexport https_proxy='http://bob:fake-codex-pw@10.9.8.7:3128'\n", encoding="utf-8"
    )
    found = read_client_proxies(home)
    assert {(c["client"], c["variable"]) for c in found} == {
        ("Claude Code", "HTTPS_PROXY"),
        ("Claude Code", "NO_PROXY"),
        ("Codex", "https_proxy"),
    }
    assert all("fake-codex-pw" not in c["value"] for c in found)
    r = ProxyCheck().run(make_ctx(home))
    dead_rows = r.data["dead_proxies"]
    assert [d["source"] for d in dead_rows] == ["~/.claude/settings.json"]  # 10.9.8.7 is not loopback: not probed
    assert r.status == Status.FAIL
    assert "fake-codex-pw" not in json.dumps(r.to_dict())


def test_tls_interception_names_the_issuer(home: Path) -> None:
    ca = private_ca("Fake Corp Interception Test CA")
    with Origin(tls=tls_server_context(ca)) as origin:
        ctx = make_ctx(home, base_url=origin.base_url("localhost"))
        (r,) = run_checks([ProxyCheck()], ctx)
    assert r.status == Status.FAIL
    tls = r.data["tls"]
    assert tls["intercepted"] is True and tls["severity"] == "total"
    assert tls["issuer"].startswith("Fake Corp Interception Test CA")
    f = next(f for f in r.findings if "issuer" in f.data)
    assert "Fake Corp Interception Test CA" in f.message and f.strength == Strength.STRONG
    assert "TLS intercepted by Fake Corp" in r.summary


def test_tls_interception_trusted_via_users_ca_is_moderate(home: Path, tmp_path: Path) -> None:
    ca = private_ca("Netskope Test Root")
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    with Origin(tls=tls_server_context(ca)) as origin:
        r = ProxyCheck().run(make_ctx(home, {"SSL_CERT_FILE": str(pem)}, origin.base_url("localhost")))
    f = next(f for f in r.findings if "issuer" in f.data)
    assert f.strength == Strength.MODERATE and f.data["interceptor"] == "Netskope"
    assert f.data["accepted_by"] == ["SSL_CERT_FILE"]


# ------------------------------------------------------------------ the rules, table-driven


def facts(**kw: Any) -> Facts:
    base: dict[str, Any] = {
        "env_proxy": {"effective": {}, "sources": {}},
        "system_proxy": None,
        "client_proxies": [],
        "dead_proxies": [],
        "tun": {"active": False},
        "resolved": [],
        "fake_ip": None,
        "processes": [],
        "tls": {},
    }
    base.update(kw)
    return Facts(**base)


def test_tun_capturing_provider_traffic_is_weak_and_tun_elsewhere_is_context() -> None:
    on = assess(facts(tun={"active": True, "interface": "Meta", "label": "mihomo", "egress_interface": "Meta"}))
    assert [f.strength for f in on] == [Strength.WEAK] and "carries the traffic" in on[0].message
    aside = assess(facts(tun={"active": True, "interface": "wg0", "label": "WireGuard", "egress_interface": "eth0"}))
    assert [f.strength for f in aside] == [Strength.CONTEXT]


def test_fake_ip_is_weak_network_evidence_with_the_addresses() -> None:
    (f,) = assess(facts(fake_ip=True, resolved=["198.18.0.23"], host="api.openai.com"))
    assert f.strength == Strength.WEAK and "198.18.0.23" in f.message and f.data["host"] == "api.openai.com"


def test_system_proxy_without_env_variable_is_context() -> None:
    (f,) = assess(facts(system_proxy={"source": "scutil --proxy", "https": "http://127.0.0.1:7890"}))
    assert f.strength == Strength.CONTEXT and "browsers use it" in f.message
    assert (
        assess(
            facts(
                system_proxy={"source": "scutil --proxy", "https": "http://127.0.0.1:7890"},
                env_proxy={"effective": {"https": "http://127.0.0.1:7890"}, "sources": {}},
            )
        )
        == []
    )


def test_nothing_wrong_means_no_findings() -> None:
    assert assess(facts()) == []


def test_tls_blackhole_stays_within_the_run_deadline(home: Path) -> None:
    with socket.socket() as listener:  # completes TCP handshakes from its backlog, never answers TLS
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        ctx = make_ctx(home, base_url=f"https://127.0.0.1:{port}/v1")
        ctx.deadline = time.monotonic() + 2.0
        t0 = time.monotonic()
        (r,) = run_checks([ProxyCheck()], ctx)
        elapsed = time.monotonic() - t0
    assert r.status != Status.ERROR, r.summary
    assert elapsed < 2.0
    assert r.data["tls"]["checked"] is False and r.data["tls"]["intercepted"] is False


def test_codex_home_is_honoured_for_the_codex_env_file(home: Path, tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / ".env").write_text("HTTPS_PROXY=http://127.0.0.1:7890\n", encoding="utf-8")
    (found,) = read_client_proxies(home, {"CODEX_HOME": str(codex_home)})
    assert found == {
        "client": "Codex",
        "source": "$CODEX_HOME/.env",
        "variable": "HTTPS_PROXY",
        "value": "http://127.0.0.1:7890",
    }
    assert read_client_proxies(home, {}) == []


def test_malformed_client_files_are_skipped_not_fatal(home: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"env": {"HTTPS_PROXY": "http://127.0.0.1:1",}', encoding="utf-8")
    (home / ".codex").mkdir()
    (home / ".codex" / ".env").write_bytes(b"HTTPS_PROXY=http://127.0.0.1:7890\xff\n")
    (found,) = read_client_proxies(home)
    assert (found["client"], found["source"], found["variable"]) == ("Codex", "~/.codex/.env", "HTTPS_PROXY")
