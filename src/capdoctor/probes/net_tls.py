"""TLS interception: which certificate chain the API host presents, and which trust stores accept it.

Contract: `inspect_tls` opens one TLS connection (directly, or through an HTTP CONNECT proxy when one is
given, since the interceptor often *is* the proxy) without verification to read the presented chain, then
verifies the same host against certifi (what httpx uses), the OS store, and any CA file the user configured
for their clients (`SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `NODE_EXTRA_CA_CERTS`, `CODEX_CA_CERTIFICATE`…).
A chain that certifi rejects but another store accepts, or that nothing accepts, means a middlebox re-signs
traffic; the pure `judge` names its issuer. Never raises; never sends an HTTP request or any secret.
"""

from __future__ import annotations

import contextlib
import re
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CA_ENV_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CODEX_CA_CERTIFICATE")
"""Variables through which users point their clients at a custom (often corporate) CA bundle."""

KNOWN_INTERCEPTORS: tuple[tuple[str, str], ...] = (
    (r"zscaler", "Zscaler"),
    (r"netskope", "Netskope"),
    (r"mitmproxy", "mitmproxy"),
    (r"charles", "Charles Proxy"),
    (r"proxyman", "Proxyman"),
    (r"fiddler", "Fiddler"),
    (r"forti", "Fortinet FortiGate"),
    (r"palo ?alto", "Palo Alto Networks"),
    (r"blue ?coat|symantec web", "Blue Coat / Symantec proxy"),
    (r"cisco umbrella|opendns", "Cisco Umbrella"),
    (r"kaspersky", "Kaspersky (HTTPS scanning)"),
    (r"avast|avg ", "Avast/AVG (HTTPS scanning)"),
    (r"eset", "ESET (HTTPS scanning)"),
    (r"bitdefender", "Bitdefender (HTTPS scanning)"),
    (r"sophos", "Sophos"),
)
"""Issuer-name fingerprints of common TLS interceptors (beyond Zscaler: UNCONFIRMED, platform-facts A.8)."""


@dataclass(frozen=True)
class TlsReport:
    """What one TLS look found. `trusted_by` maps a store name to True/False (None: not tried)."""

    host: str
    port: int
    chain: tuple[Mapping[str, str], ...] = ()
    trusted_by: Mapping[str, bool | None] = field(default_factory=dict)
    verify_error: str | None = None
    error: str | None = None

    @property
    def issuer(self) -> str | None:
        """The issuer of the top certificate presented (the root or intermediate the chain hangs from)."""
        return self.chain[-1].get("issuer") if self.chain else None


def _name(name: Any) -> str:
    """`Org, Common Name` from a `cryptography` x509 Name, preferring organisation and common name."""
    from cryptography.x509.oid import NameOID

    picked: list[str] = []
    for oid in (NameOID.ORGANIZATION_NAME, NameOID.COMMON_NAME, NameOID.ORGANIZATIONAL_UNIT_NAME):
        values = name.get_attributes_for_oid(oid)
        if values:
            value = values[0].value
            picked.append(value if isinstance(value, str) else value.decode("utf-8", "replace"))
    return ", ".join(picked) or "unknown"


def describe(der: bytes) -> dict[str, str]:
    """Subject and issuer of one DER certificate (`unknown` where it does not parse). Pure.

    `cryptography`'s x509 reads it: the stdlib decodes only a *verified* peer's certificate (`getpeercert()`),
    and the interceptor's chain is read exactly when verification fails.
    """
    try:
        from cryptography import x509

        cert = x509.load_der_x509_certificate(der)
        return {"subject": _name(cert.subject), "issuer": _name(cert.issuer)}
    except (ImportError, ValueError):
        return {"subject": "unknown", "issuer": "unknown"}


_DER = 2
"""`_ssl.ENCODING_DER`: what 3.11 and 3.12's certificate objects take to give their DER (OpenSSL's ASN1 type)."""


def presented(sock: ssl.SSLSocket) -> list[bytes]:
    """The DER certificates the peer presented, leaf first, verified or not.

    Python 3.13 made `get_unverified_chain()` public; 3.11 and 3.12 have it only on the private `_sslobj`.
    Where neither exists, the leaf alone: its issuer is the CA that signed it, the name the finding needs.
    """
    getter = getattr(sock, "get_unverified_chain", None)
    if getter is None:
        getter = getattr(getattr(sock, "_sslobj", None), "get_unverified_chain", None)
    out: list[bytes] = []
    with contextlib.suppress(ssl.SSLError, ValueError, AttributeError, TypeError):
        for cert in (getter() if getter else None) or ():
            out.append(cert if isinstance(cert, bytes) else cert.public_bytes(_DER))
    if not out:
        leaf = sock.getpeercert(binary_form=True)
        if leaf:
            out.append(leaf)
    return out


def _chain(sock: ssl.SSLSocket) -> list[dict[str, str]]:
    return [describe(der) for der in presented(sock)]


def _open(host: str, port: int, proxy: tuple[str, int] | None, timeout: float) -> socket.socket:
    """A TCP socket to host:port, through an HTTP CONNECT proxy when given."""
    if proxy is None:
        return socket.create_connection((host, port), timeout=timeout)
    sock = socket.create_connection(proxy, timeout=timeout)
    sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    if not re.match(rb"HTTP/1\.[01] 2\d\d", head):
        sock.close()
        first = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
        raise OSError(f"proxy refused CONNECT: {first}")
    return sock


def _handshake(
    host: str, port: int, proxy: tuple[str, int] | None, timeout: float, context: ssl.SSLContext
) -> ssl.SSLSocket:
    raw = _open(host, port, proxy, timeout)
    try:
        return context.wrap_socket(raw, server_hostname=host)
    except BaseException:
        raw.close()
        raise


def contexts(env: Mapping[str, str]) -> dict[str, ssl.SSLContext]:
    """The trust stores to try: certifi (httpx's default), the OS store, and each CA file the user set."""
    out: dict[str, ssl.SSLContext] = {}
    try:
        import certifi

        out["certifi"] = ssl.create_default_context(cafile=certifi.where())
    except (ImportError, OSError, ssl.SSLError):
        pass
    os_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        paths = ssl.get_default_verify_paths()
        if paths.openssl_cafile:
            with contextlib.suppress(OSError, ssl.SSLError):
                os_ctx.load_verify_locations(cafile=paths.openssl_cafile)
        if paths.openssl_capath:
            with contextlib.suppress(OSError, ssl.SSLError):
                os_ctx.load_verify_locations(capath=paths.openssl_capath)
        import sys

        if sys.platform == "win32":
            os_ctx.load_default_certs()
        out["os"] = os_ctx
    except (OSError, ssl.SSLError):
        pass
    for var in CA_ENV_VARS:
        path = env.get(var)
        if path:
            try:
                out[var] = ssl.create_default_context(cafile=path)
            except (OSError, ssl.SSLError):
                continue
    return out


def inspect_tls(
    host: str, port: int, env: Mapping[str, str], timeout: float, proxy: tuple[str, int] | None = None
) -> TlsReport:
    """Read the chain `host:port` presents and try each trust store on it, all within `timeout`. Never raises.

    Stores not tried before the time is up are reported as None (unknown).
    """
    import time

    end = time.monotonic() + timeout

    def left() -> float:
        return max(0.05, end - time.monotonic())

    look = ssl.create_default_context()
    look.check_hostname = False
    look.verify_mode = ssl.CERT_NONE
    try:
        with _handshake(host, port, proxy, left(), look) as s:
            chain = _chain(s)
    except (OSError, ssl.SSLError, ValueError) as exc:
        return TlsReport(host, port, error=f"{type(exc).__name__}: {exc}")
    trusted: dict[str, bool | None] = {}
    verify_error = None
    for name, ctx in contexts(env).items():
        if time.monotonic() >= end:
            trusted[name] = None
            continue
        try:
            with _handshake(host, port, proxy, left(), ctx):
                trusted[name] = True
        except ssl.SSLCertVerificationError as exc:
            trusted[name] = False
            if name == "certifi":
                verify_error = exc.verify_message or str(exc)
        except (OSError, ssl.SSLError, ValueError):
            trusted[name] = None
    return TlsReport(host, port, tuple(chain), trusted, verify_error)


@dataclass(frozen=True)
class TlsJudgement:
    """The reading of a `TlsReport`: intercepted or not, by whom, and how badly clients are affected.

    `severity` is `none`, `partial` (some stores accept it: clients that use certifi fail) or `total`
    (no store accepts it: every client fails).
    """

    intercepted: bool
    severity: str
    issuer: str | None
    interceptor: str | None
    accepted_by: tuple[str, ...]
    message: str


def judge(report: TlsReport) -> TlsJudgement:
    """Decide whether `report` shows interception and name the issuer. Pure.

    Why certifi is the reference: it is Mozilla's public CA list, which the providers' real certificates chain
    to; a chain it rejects was not issued to the provider by a public CA.
    """
    issuer = report.issuer
    accepted = tuple(sorted(k for k, v in report.trusted_by.items() if v))
    label = None
    for pattern, name in KNOWN_INTERCEPTORS:
        if issuer and re.search(pattern, issuer, re.I):
            label = name
            break
    if report.error or report.trusted_by.get("certifi") is not False:
        return TlsJudgement(
            False,
            "none",
            issuer,
            label,
            accepted,
            f"certificate chain verifies against the public CA bundle (issuer {issuer})"
            if report.trusted_by.get("certifi")
            else "TLS chain not checked",
        )
    who = f"{label} ({issuer})" if label else f"'{issuer}'"
    if accepted:
        return TlsJudgement(
            True,
            "partial",
            issuer,
            label,
            accepted,
            f"TLS to {report.host} is intercepted: the certificate is issued by {who}, which is "
            f"not a public CA; it is trusted only via {', '.join(accepted)}, so clients that use "
            f"the public bundle fail with 'certificate verify failed'",
        )
    return TlsJudgement(
        True,
        "total",
        issuer,
        label,
        accepted,
        f"TLS to {report.host} presents a certificate issued by {who}, which no trust store here "
        f"accepts ({report.verify_error or 'verify failed'}): a middlebox is intercepting and "
        f"every client will fail",
    )
