"""An aggregated API server's TLS negotiates as kube-apiserver's Go crypto/tls does, as the test server's does
(tests/testing_server/test_serving_tls.py): TLS_AES_128_GCM_SHA256 preferred in TLS 1.3 over OpenSSL's
TLS_AES_256_GCM_SHA384, with client certificates still requested."""

from __future__ import annotations

import ssl

from testing_server.helpers import tls_exchange

from pyop.apiserver import AggregatedServer


async def _negotiated(server: AggregatedServer) -> tuple[str, str, bytes]:
    """(TLS version, cipher suite, the answer's status line) of one request on a new connection, from a client
    that offers OpenSSL's TLS 1.3 order and trusts anything (the suite is what is checked here)."""
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    assert [c["name"] for c in client.get_ciphers()][0] == "TLS_AES_256_GCM_SHA384"
    version, suite, answer = await tls_exchange(server.url, client)
    return version, suite, answer.split(b"\r\n", 1)[0]


async def test_tls13_prefers_aes_128_gcm_and_sends_one_ticket(server: AggregatedServer) -> None:
    version, suite, status_line = await _negotiated(server)
    assert (version, suite) == ("TLSv1.3", "TLS_AES_128_GCM_SHA256")
    assert status_line.startswith(b"HTTP/1.1 ")
    context = server.ssl_context()
    assert context.num_tickets == 1
    assert context.verify_mode in (ssl.CERT_NONE, ssl.CERT_OPTIONAL)  # certificates requested, not required
