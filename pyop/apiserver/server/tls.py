"""TLS of pyop's API servers: the test API server's self-signed serving certificate and the contexts for both ends,
and client certificates requested as Go's ``tls.RequestClientCert`` does (`request_client_certificates`).

kubectl (like every client-go client) never sends a bearer token over plain http, so a server that speaks only http
cannot be used with kubectl at all. kube-apiserver answers with a self-signed serving certificate when it is given
none (its "loopback" certificate); the test server does the same and writes the certificate into the kubeconfig
as ``certificate-authority-data``, so every kubeconfig-reading client (kubectl, the official ``kubernetes``
client, pyop's) verifies it without being told to skip verification.

The certificate comes from `pyop.manager.certificates` (one certificate maker in pyop): a self-signed P-256
certificate that is its own CA, generated in about a millisecond.

A server context negotiates as Go's crypto/tls server does (`serve_as_go`): in TLS 1.3 it prefers
TLS_AES_128_GCM_SHA256 (Go's order on AES hardware) and sends one session ticket after a handshake. OpenSSL's
defaults (AES-256 with SHA-384 first, two tickets) cost the server ~35 us more per handshake here, and an operator
opens a connection per request in flight (64 handshakes in a 2,000-object converge).
"""

from __future__ import annotations

import _ssl  # the C module: its shared library is where OpenSSL's symbols are found, and its DER encoding
import base64
import ctypes
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path

from pyop.manager.certificates import generate_self_signed_certificate

SERVING_HOSTS = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class ServingCertificate:
    """A PEM certificate (also the CA clients trust) and its private key."""

    certificate_pem: bytes
    key_pem: bytes

    @classmethod
    def generate(cls) -> ServingCertificate:
        certificate, key = generate_self_signed_certificate(list(SERVING_HOSTS))
        return cls(certificate, key)

    @property
    def ca_data(self) -> str:
        """The kubeconfig's ``certificate-authority-data`` (base64 of the PEM)."""
        return base64.b64encode(self.certificate_pem).decode("ascii")

    def write(self, folder: Path) -> tuple[Path, Path]:
        """``ca.crt`` (the certificate, readable) and ``tls.key`` (owner only) in ``folder``."""
        certificate_path, key_path = folder / "ca.crt", folder / "tls.key"
        certificate_path.write_bytes(self.certificate_pem)
        key_path.touch(mode=0o600)
        key_path.write_bytes(self.key_pem)
        return certificate_path, key_path

    def server_context(self, folder: Path) -> ssl.SSLContext:
        """The listening socket's context (``ssl`` loads chains from files only: written to ``folder``)."""
        certificate_path, key_path = self.write(folder)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certificate_path, key_path)
        serve_as_go(context)
        return context

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this certificate only (for raw HTTP clients in tests)."""
        return ssl.create_default_context(cadata=self.certificate_pem.decode("ascii"))


# --- OpenSSL's own calls on a context (what Python's ssl has no method for) ---------------------------------------


def _ssl_ctx(context: ssl.SSLContext) -> tuple[ctypes.CDLL, int] | None:
    """The libssl the ``_ssl`` module is linked with and ``context``'s ``SSL_CTX`` pointer, after checking that the
    pointer found is the context's (its OpenSSL verify mode follows ``verify_mode``); None where that cannot be
    done (another interpreter, OpenSSL linked statically)."""
    if sys.implementation.name != "cpython":
        return None
    try:
        library = ctypes.CDLL(_ssl.__file__)
        get_mode = library.SSL_CTX_get_verify_mode
    except (OSError, AttributeError):
        return None
    get_mode.argtypes, get_mode.restype = [ctypes.c_void_p], ctypes.c_int
    # PySSLContext begins with PyObject_HEAD, then its SSL_CTX pointer.
    pointer = ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value
    if not pointer:
        return None
    previous = context.verify_mode
    try:
        for mode, expected in ((ssl.CERT_OPTIONAL, 1), (ssl.CERT_REQUIRED, 3), (ssl.CERT_NONE, 0)):
            context.verify_mode = mode
            if get_mode(pointer) != expected:
                return None
    finally:
        context.verify_mode = previous
    return library, pointer


# Go's TLS 1.3 cipher suites in the order its server prefers them on a machine with AES hardware (crypto/tls
# defaultCipherSuitesTLS13); OpenSSL's default puts TLS_AES_256_GCM_SHA384 first.
GO_TLS13_CIPHER_SUITES = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"


def serve_as_go(context: ssl.SSLContext) -> bool:
    """Make a server context negotiate TLS 1.3 as a Go server (kube-apiserver) does: one session ticket per
    handshake (crypto/tls sends one; OpenSSL two, each an encryption of the session the server must make) and
    Go's cipher suite preference, AES-128-GCM with SHA-256 first (cheaper key schedule and records than OpenSSL's
    AES-256/SHA-384; every TLS 1.3 client offers it). True when the suites were set; where ctypes cannot reach
    OpenSSL the suites stay OpenSSL's (the ticket count is set either way)."""
    if context.num_tickets > 1:  # what a server context accepts (a client context refuses the setter)
        context.num_tickets = 1
    found = _ssl_ctx(context)
    if found is None:
        return False
    library, pointer = found
    try:
        set_suites = library.SSL_CTX_set_ciphersuites
    except AttributeError:
        return False
    set_suites.argtypes, set_suites.restype = [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_int
    return bool(set_suites(pointer, GO_TLS13_CIPHER_SUITES.encode("ascii")))


# --- client certificates as Go's tls.RequestClientCert asks for them ----------------------------------------------

_SSL_VERIFY_PEER = 1
_VERIFY_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


@_VERIFY_CALLBACK
def _accept_any(_preverified: int, _store: int | None) -> int:
    """OpenSSL's verify callback: every chain passes the handshake (the authenticators verify it afterwards)."""
    return 1


def request_client_certificates(context: ssl.SSLContext) -> bool:
    """Ask clients for a certificate and let any one through the handshake, as k8s.io/apiserver's listener does
    (``tls.RequestClientCert``: requested, never verified there); the authenticators then verify the chain
    against their own CA bundles (`pyop.apiserver.authentication.x509`), so a certificate of an unknown CA is an
    authentication failure of that request, not a failed handshake. True when it is in place.

    Python's ``ssl`` has no verify callback: ``CERT_OPTIONAL`` fails the handshake for a certificate its trust
    store does not chain. This sets OpenSSL's own callback on the context's ``SSL_CTX`` (through ctypes, from the
    libssl the ``_ssl`` module is linked with; ``ssl`` keeps the callback when it changes the verify mode), after
    checking that the pointer found is the context's (its verify mode follows ``verify_mode``). Where that cannot
    be done (another interpreter, OpenSSL linked statically), it returns False and changes nothing: the caller
    falls back to verifying in the handshake."""
    found = _ssl_ctx(context)
    if found is None:
        return False
    library, pointer = found
    try:
        get_mode, set_verify = library.SSL_CTX_get_verify_mode, library.SSL_CTX_set_verify
    except AttributeError:
        return False
    set_verify.argtypes, set_verify.restype = [ctypes.c_void_p, ctypes.c_int, _VERIFY_CALLBACK], None
    set_verify(pointer, _SSL_VERIFY_PEER, _accept_any)
    context.verify_mode = ssl.CERT_OPTIONAL  # the same mode; ssl keeps the callback just set
    return get_mode(pointer) == _SSL_VERIFY_PEER


def peer_chain(ssl_object: ssl.SSLObject) -> list[bytes]:
    """The client's certificate chain as it sent it (DER, leaf first; empty without a certificate): the
    intermediates the authenticators build a path through. Python 3.13 has ``get_unverified_chain``; before, the
    C object behind the SSLObject has it."""
    getter = getattr(ssl_object, "get_unverified_chain", None) or getattr(
        getattr(ssl_object, "_sslobj", None), "get_unverified_chain", None
    )
    chain = getter() if callable(getter) else None
    der: list[bytes] = []
    for certificate in chain or []:
        if certificate is None:
            continue
        der.append(certificate if isinstance(certificate, bytes) else certificate.public_bytes(_ssl.ENCODING_DER))
    return der
