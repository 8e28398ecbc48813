"""The test API server's TLS: a self-signed CA certificate it serves, and the contexts for both ends.

kubectl (like every client-go client) never sends a bearer token over plain http, so a server that speaks only http
cannot be used with kubectl at all. kube-apiserver answers with a self-signed serving certificate when it is given
none (its "loopback" certificate); the test server does the same and writes the certificate into the kubeconfig
as ``certificate-authority-data``, so every kubeconfig-reading client (kubectl, the official ``kubernetes``
client, pyop's) verifies it without being told to skip verification.

The certificate comes from `pyop.manager.certificates` (one certificate maker in pyop): a self-signed P-256
certificate that is its own CA, generated in about a millisecond.
"""

from __future__ import annotations

import base64
import ssl
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
        return context

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this certificate only (for raw HTTP clients in tests)."""
        return ssl.create_default_context(cadata=self.certificate_pem.decode("ascii"))
