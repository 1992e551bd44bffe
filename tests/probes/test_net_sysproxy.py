"""System-proxy parsers on captured outputs of macOS, Windows, GNOME and KDE, and the per-OS reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from capdoctor.probes.net_sysproxy import (
    parse_gsettings,
    parse_kioslaverc,
    parse_reg_query,
    parse_scutil,
    read_system_proxy,
)

DATA = Path(__file__).parents[1] / "data" / "net"


def sample(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_scutil_manual_reads_every_protocol_and_exceptions() -> None:
    sp = parse_scutil(sample("scutil_manual.txt"))
    assert sp is not None and sp.mode == "manual" and sp.source == "scutil --proxy"
    assert (sp.http, sp.https, sp.socks) == (
        "http://127.0.0.1:7890",
        "http://127.0.0.1:7890",
        "socks5://127.0.0.1:7891",
    )
    assert sp.exceptions == ("127.0.0.1", "localhost", "*.local", "192.168.0.0/16")
    assert sp.proxy_for("https") == "http://127.0.0.1:7890"


def test_scutil_pac_only_and_none() -> None:
    sp = parse_scutil(sample("scutil_pac.txt"))
    assert sp is not None and sp.mode == "pac" and sp.pac_url == "http://127.0.0.1:33331/commands/pac"
    assert sp.proxy_for("https") is None
    assert parse_scutil(sample("scutil_none.txt")) is None
    assert parse_scutil("") is None


def test_registry_single_server_applies_to_all_protocols() -> None:
    sp = parse_reg_query(sample("reg_query_manual.txt"))
    assert sp is not None and sp.http == sp.https == "http://127.0.0.1:7897"
    assert "<local>" in sp.exceptions and "127.*" in sp.exceptions


def test_registry_per_protocol_maps_socks_like_cpython() -> None:
    sp = parse_reg_query(sample("reg_query_per_protocol.txt"))
    assert sp is not None
    assert (sp.http, sp.https, sp.socks) == (
        "http://127.0.0.1:10809",
        "http://127.0.0.1:10809",
        "socks4://127.0.0.1:10808",
    )


def test_registry_pac_is_reported_and_disabled_proxy_ignored() -> None:
    sp = parse_reg_query(sample("reg_query_pac.txt"))
    assert sp is not None and sp.mode == "pac" and sp.pac_url == "http://wpad.corp.example/proxy.pac"
    assert sp.http is None  # ProxyEnable 0: the stale ProxyServer value is not in use
    assert parse_reg_query(sample("reg_query_disabled.txt")) is None


def test_gsettings_manual_auto_none() -> None:
    sp = parse_gsettings(sample("gsettings_manual.txt"))
    assert sp is not None and sp.http == "http://127.0.0.1:7890" and sp.socks == "socks5://127.0.0.1:7891"
    assert sp.exceptions == ("localhost", "127.0.0.0/8", "::1")
    auto = parse_gsettings(sample("gsettings_auto.txt"))
    assert auto is not None and auto.mode == "pac" and auto.pac_url == "http://wpad.corp.example/wpad.dat"
    assert parse_gsettings(sample("gsettings_none.txt")) is None


def test_kioslaverc_manual_host_space_port_form() -> None:
    sp = parse_kioslaverc(sample("kioslaverc_manual.txt"))
    assert sp is not None and sp.https == "http://127.0.0.1:7890" and sp.socks == "socks5://127.0.0.1:7891"
    assert sp.exceptions == ("localhost", "127.0.0.1")
    pac = parse_kioslaverc(sample("kioslaverc_pac.txt"))
    assert pac is not None and pac.pac_url == "http://wpad.corp.example/proxy.pac"
    assert parse_kioslaverc(sample("kioslaverc_none.txt")) is None
    assert parse_kioslaverc("not [an ini") is None


@pytest.mark.parametrize(
    ("platform", "argv0", "name", "expected"),
    [
        ("darwin", "scutil", "scutil_manual.txt", "http://127.0.0.1:7890"),
        ("win32", "reg", "reg_query_manual.txt", "http://127.0.0.1:7897"),
    ],
)
def test_reader_runs_the_platform_command(platform: str, argv0: str, name: str, expected: str, tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def run(argv: list[str], timeout: float) -> str | None:
        calls.append(argv)
        return sample(name)

    sp = read_system_proxy(platform, {}, tmp_path, run=run)
    assert calls and calls[0][0] == argv0
    assert sp is not None and sp.proxy_for("https") == expected


def test_reader_on_linux_uses_gnome_in_a_gnome_session_and_kde_file_otherwise(tmp_path: Path) -> None:
    def run(argv: list[str], timeout: float) -> str | None:
        return sample("gsettings_manual.txt") if argv[0] == "gsettings" else None

    gnome = read_system_proxy("linux", {"XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}, tmp_path, run=run)
    assert gnome is not None and gnome.source.startswith("gsettings")
    assert read_system_proxy("linux", {}, tmp_path, run=run) is None  # no desktop, no kioslaverc
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "kioslaverc").write_text(sample("kioslaverc_manual.txt"), encoding="utf-8")
    kde = read_system_proxy("linux", {"XDG_CONFIG_HOME": str(cfg), "XDG_CURRENT_DESKTOP": "KDE"}, tmp_path, run=run)
    assert kde is not None and kde.https == "http://127.0.0.1:7890" and "kioslaverc" in kde.source


def test_reader_survives_a_missing_tool(tmp_path: Path) -> None:
    assert read_system_proxy("darwin", {}, tmp_path, run=lambda argv, t: None) is None
    # the real runner with a command that does not exist returns None instead of raising
    from capdoctor.probes.net_sysproxy import run_command

    assert run_command(["capdoctor-no-such-tool-test"], 1.0) is None
