"""The production connector of agents.data.http against a local TLS server with a throw-away certificate.

Only the last step is redirected: ``socket.create_connection`` to the checked public address is sent to
127.0.0.1 instead. Resolution, the address check, TLS with SNI, certificate and host name verification,
and the request all run as in production.
"""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agents.data.http import FetchError, http_fetcher, public_https_connector
from tests.agents.data.test_http import BODY, DATA, HOSTS, SEC, USER_AGENT, Site

PUBLIC_ADDRESS = "93.184.215.14"  # what the fake resolver answers; never dialled


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(tz=datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


@pytest.fixture
def tls_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A TLS server for SEC's test name; the connector's dial of the public address lands on it."""
    cert_file, key_file = self_signed(tmp_path, SEC)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert_file, key_file)
    Site.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    httpd.socket = server_tls.wrap_socket(httpd.socket, server_side=True)
    real_create_connection = socket.create_connection

    def dial(address: tuple[str, int], timeout: float, *rest: Any) -> socket.socket:
        assert address == (PUBLIC_ADDRESS, 443)  # the checked address, on the https port
        return real_create_connection(("127.0.0.1", httpd.server_address[1]), timeout)

    monkeypatch.setattr(socket, "create_connection", dial)  # the one socket the connector opens
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield cert_file
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def tls_fetcher(cert_file: Path) -> Any:
    return http_fetcher(
        user_agent=USER_AGENT,
        per_second=100,
        allowed_hosts=HOSTS,
        connect=public_https_connector(
            resolve=lambda host, timeout: [PUBLIC_ADDRESS],
            context=ssl.create_default_context(cafile=str(cert_file)),
        ),
    )


def test_the_production_connector_fetches_over_verified_tls(tls_site: Path) -> None:
    assert tls_fetcher(tls_site)(f"https://{SEC}/gzipped?a=1") == BODY
    assert [(request["host"], request["path"]) for request in Site.seen] == [(SEC, "/gzipped?a=1")]


def test_a_certificate_for_another_name_is_refused(tls_site: Path) -> None:
    # The certificate names SEC's test host only; the same server reached as DATA must fail verification.
    with pytest.raises(
        FetchError, match=rf"^https://{DATA}/plain could not be reached: .*CERTIFICATE_VERIFY"
    ):
        tls_fetcher(tls_site)(f"https://{DATA}/plain")
    assert Site.seen == []
