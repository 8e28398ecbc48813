"""The aggregator's front-proxy identity: a request-header CA and the client certificate it signs.

kube-apiserver proxies to aggregated servers with ``--proxy-client-cert-file``, a client certificate (kubeadm names
it ``front-proxy-client``) signed by the CA in ``--requestheader-client-ca-file``. An aggregated server trusts the
``X-Remote-*`` identity headers of a request only when the connection presents a certificate that CA signed, with a
common name in ``requestheader-allowed-names``. The CA is its own, not the serving CA (kube's docs warn against
reusing one CA for both kinds of clients). ECDSA P-256 from `pyop.webhook.certificates.authority`, pyop's CA maker.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyop.webhook.certificates.authority import BACKDATE, KeyPair, new_ca

FRONT_PROXY_CLIENT = "front-proxy-client"
VALID_FOR = timedelta(days=365)


def new_client_certificate(
    ca: KeyPair, common_name: str, now: datetime, valid_for: timedelta, organizations: tuple[str, ...] = ()
) -> KeyPair:
    """A TLS client certificate (extended key usage clientAuth) for ``common_name`` signed by ``ca``; the
    organizations become the subject's O= entries (groups, for a server that authenticates client certificates)."""
    ca_certificate = x509.load_pem_x509_certificate(ca.certificate)
    ca_key = serialization.load_pem_private_key(ca.key, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key is not an ECDSA key")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization) for organization in organizations),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + valid_for, ca_certificate.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return KeyPair(certificate.public_bytes(serialization.Encoding.PEM), key_pem)


@dataclass(frozen=True)
class FrontProxyIdentity:
    """The request-header CA and the front-proxy client certificate (with files ``ssl`` can load)."""

    ca: KeyPair
    client: KeyPair
    certificate_file: Path
    key_file: Path

    @classmethod
    def generate(cls, folder: Path, common_name: str = FRONT_PROXY_CLIENT) -> FrontProxyIdentity:
        """A fresh CA and client certificate; the client pair is written to ``folder`` (key owner-only), as
        ``ssl.SSLContext.load_cert_chain`` reads files only."""
        now = datetime.now(UTC)
        ca = new_ca("front-proxy", now, VALID_FOR)
        client = new_client_certificate(ca, common_name, now, VALID_FOR)
        folder.mkdir(parents=True, exist_ok=True)
        certificate_file, key_file = folder / "front-proxy-client.crt", folder / "front-proxy-client.key"
        certificate_file.write_bytes(client.certificate)
        key_file.touch(mode=0o600)
        key_file.write_bytes(client.key)
        return cls(ca, client, certificate_file, key_file)

    def client_context(self, ca_bundle: bytes | None, *, insecure: bool = False) -> ssl.SSLContext:
        """The context a proxied connection uses: presents the client certificate, verifies the backend against
        ``ca_bundle`` (the APIService's caBundle; the system's roots when empty, as client-go does), or not at
        all when the APIService says ``insecureSkipTLSVerify``."""
        if insecure:  # not create_default_context(): it would load the system's roots only to ignore them
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif ca_bundle:
            context = ssl.create_default_context(cadata=ca_bundle.decode("ascii"))
        else:
            context = ssl.create_default_context()
        context.load_cert_chain(self.certificate_file, self.key_file)
        return context
