"""TLS interception: a loopback TLS server whose certificate a private trustme CA signed plays the
interceptor; the probe must name that issuer and say which trust stores accept it."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Any, cast

import pytest

from capdoctor.probes.net_tls import TlsReport, describe, inspect_tls, judge, presented
from tests.support.netfixtures import Origin, private_ca, running_proxy, tls_server_context

ISSUER = "Fake Corp Interception Test CA"


def test_private_ca_is_named_and_total_when_no_store_trusts_it() -> None:
    ca = private_ca(ISSUER)
    with Origin(tls=tls_server_context(ca)) as origin:
        report = inspect_tls("localhost", origin.port, {}, 5.0)
    assert report.error is None and report.trusted_by["certifi"] is False
    assert report.issuer is not None and report.issuer.startswith(ISSUER)
    j = judge(report)
    assert j.intercepted and j.severity == "total" and ISSUER in j.message
    assert "unable to get local issuer certificate" in j.message


def test_partial_when_the_users_configured_ca_file_trusts_it(tmp_path: Path) -> None:
    ca = private_ca("Zscaler Root CA test")
    pem = tmp_path / "corp-ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    with Origin(tls=tls_server_context(ca)) as origin:
        report = inspect_tls("localhost", origin.port, {"NODE_EXTRA_CA_CERTS": str(pem)}, 5.0)
    assert report.trusted_by["certifi"] is False and report.trusted_by["NODE_EXTRA_CA_CERTS"] is True
    j = judge(report)
    assert j.intercepted and j.severity == "partial" and j.interceptor == "Zscaler"
    assert j.accepted_by == ("NODE_EXTRA_CA_CERTS",) and "Zscaler" in j.message


def test_inspection_goes_through_the_clients_connect_proxy() -> None:
    ca = private_ca(ISSUER)
    with Origin(tls=tls_server_context(ca)) as origin, running_proxy("ok") as proxy:
        report = inspect_tls("localhost", origin.port, {}, 5.0, proxy=("127.0.0.1", proxy.port))
        assert proxy.requests and all(m == "CONNECT" for m, _ in proxy.requests)
    assert report.issuer is not None and report.issuer.startswith(ISSUER)
    j = judge(report)
    assert j.intercepted and f"issued by '{report.issuer}'" in j.message


def test_the_chain_names_subject_and_issuer_as_the_certificate_says() -> None:
    """The chain is read from its DER (`cryptography`), so 3.13's public `get_unverified_chain` (bytes) and
    3.11's private one (objects) give the same names: the leaf's subject, and its issuer, the CA."""
    ca = private_ca(ISSUER)
    with Origin(tls=tls_server_context(ca)) as origin:
        report = inspect_tls("localhost", origin.port, {}, 5.0)
    [leaf] = report.chain
    assert leaf["subject"].startswith("trustme") and leaf["issuer"].startswith(ISSUER)
    assert "unknown" not in (leaf["subject"], leaf["issuer"])


class _LeafOnly:
    """A TLS socket seen through the public API alone: no `get_unverified_chain`, public or private."""

    def __init__(self, sock: ssl.SSLSocket) -> None:
        self._sock = sock

    def getpeercert(self, binary_form: bool = False) -> Any:
        return self._sock.getpeercert(binary_form)


def test_without_the_chain_the_leaf_still_names_its_issuer() -> None:
    ca = private_ca(ISSUER)
    look = ssl.create_default_context()
    look.check_hostname, look.verify_mode = False, ssl.CERT_NONE
    with (
        Origin(tls=tls_server_context(ca)) as origin,
        socket.create_connection(("127.0.0.1", origin.port), timeout=5) as raw,
        look.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        full = presented(tls)
        leaf = presented(cast(ssl.SSLSocket, _LeafOnly(tls)))
    assert leaf == full[:1] and describe(leaf[0])["issuer"].startswith(ISSUER)


def test_a_certificate_that_does_not_parse_is_unknown_not_a_crash() -> None:
    assert describe(b"not a certificate") == {"subject": "unknown", "issuer": "unknown"}


def test_a_proxy_refusing_connect_is_an_error_not_an_interception() -> None:
    with running_proxy("407") as proxy:
        report = inspect_tls("localhost", 9, {}, 3.0, proxy=("127.0.0.1", proxy.port))
    assert report.error is not None and "407" in report.error
    assert judge(report).intercepted is False


@pytest.mark.parametrize(
    ("trusted", "intercepted"),
    [
        ({"certifi": True, "os": True}, False),
        ({"certifi": False, "os": True}, True),
        ({"certifi": None, "os": None}, False),
    ],
)
def test_judge_table(trusted: dict[str, bool | None], intercepted: bool) -> None:
    report = TlsReport("api.test", 443, ({"subject": "api.test", "issuer": "Some Issuer"},), trusted)
    assert judge(report).intercepted is intercepted
