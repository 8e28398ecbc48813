"""The test server's TLS negotiates as kube-apiserver's Go crypto/tls does: TLS_AES_128_GCM_SHA256 preferred in
TLS 1.3, one session ticket per handshake; clients offering only other suites, or only TLS 1.2, still connect."""

from __future__ import annotations

import ctypes
import ssl
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pyop.apiserver.server import tls
from pyop.testing import TestAPIServer
from testing_server.helpers import tls_exchange

_NEW_SESSION_TICKET = 4  # the handshake message type (RFC 8446 4; ssl's private _TLSMessageType.NEWSESSION_TICKET)


def _client(server: TestAPIServer) -> ssl.SSLContext:
    context = server.ssl_context()
    assert context is not None
    return context


def _only_tls13_suites(context: ssl.SSLContext, suites: str) -> None:
    """Restrict a client context's TLS 1.3 suites (Python's ssl has no call for it)."""
    context.check_hostname = False  # the pointer check sets each verify mode in turn, CERT_NONE included
    found = tls._ssl_ctx(context)  # noqa: SLF001 - the module's checked pointer lookup
    context.check_hostname = True
    if found is None:
        pytest.skip("OpenSSL's SSL_CTX is not reachable through ctypes here")
    library, pointer = found
    library.SSL_CTX_set_ciphersuites.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    assert library.SSL_CTX_set_ciphersuites(pointer, suites.encode()) == 1


async def test_tls13_prefers_aes_128_gcm_as_go_servers_do(server: TestAPIServer) -> None:
    client = _client(server)  # offers OpenSSL's order: TLS_AES_256_GCM_SHA384 first
    assert [c["name"] for c in client.get_ciphers()][0] == "TLS_AES_256_GCM_SHA384"
    version, suite, answer = await tls_exchange(server.url, client)
    assert (version, suite) == ("TLSv1.3", "TLS_AES_128_GCM_SHA256")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"\r\n\r\nok")


async def test_one_session_ticket_per_handshake(server: TestAPIServer) -> None:
    client = _client(server)
    tickets: list[Any] = []

    def count(_conn: Any, direction: str, _version: Any, _content: Any, message: Any, _data: bytes) -> None:
        if direction == "read" and message == _NEW_SESSION_TICKET:
            tickets.append(message)

    client._msg_callback = count  # type: ignore[attr-defined]  # noqa: SLF001 - CPython's message hook
    for connections in (1, 2):
        await tls_exchange(server.url, client)
        assert len(tickets) == connections


@pytest.mark.parametrize("suite", ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"])
async def test_a_client_offering_only_another_tls13_suite_gets_it(server: TestAPIServer, suite: str) -> None:
    client = _client(server)
    _only_tls13_suites(client, suite)
    version, negotiated, answer = await tls_exchange(server.url, client)
    assert (version, negotiated) == ("TLSv1.3", suite)
    assert answer.endswith(b"ok")


async def test_a_tls12_client_still_connects(server: TestAPIServer) -> None:
    client = _client(server)
    client.maximum_version = ssl.TLSVersion.TLSv1_2
    version, suite, answer = await tls_exchange(server.url, client)
    assert version == "TLSv1.2" and suite.startswith("ECDHE-ECDSA-")
    assert answer.endswith(b"ok")


def test_without_ctypes_the_suites_stay_openssls_and_one_ticket_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tls, "_ssl_ctx", lambda _context: None)
    context = tls.ServingCertificate.generate().server_context(Path(tempfile.mkdtemp()))
    assert tls.serve_as_go(context) is False
    assert context.num_tickets == 1
    assert [c["name"] for c in context.get_ciphers()][0] == "TLS_AES_256_GCM_SHA384"


def test_serve_as_go_sets_gos_order_on_a_server_context() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    assert context.num_tickets == 2  # OpenSSL's default
    assert tls.serve_as_go(context) is True
    assert context.num_tickets == 1
    names = [c["name"] for c in context.get_ciphers()]
    assert names[:3] == tls.GO_TLS13_CIPHER_SUITES.split(":")
