"""A self-signed serving certificate for the metrics endpoint when no certificate is mounted.

Kubebuilder serves metrics over HTTPS by default and, without cert-manager, with a certificate the manager
makes for itself at start-up; Prometheus then scrapes with `insecureSkipVerify` or, better, a mounted certificate
(`--metrics-cert-path`). Python's `ssl` can load certificates but cannot create one, and a TLS certificate is
ASN.1 plus a signature: the `cryptography` package does that (it is the maintained implementation everyone,
pip included, depends on), so we do not write DER encoders or shell out to an `openssl` binary that
distroless images lack.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

__all__ = ["generate_self_signed_certificate", "write_self_signed_certificate"]


def default_hosts() -> list[str]:
    return ["localhost", "127.0.0.1", "::1", socket.gethostname()]


def generate_self_signed_certificate(
    hosts: Sequence[str] | None = None, *, valid_for: timedelta = timedelta(days=365)
) -> tuple[bytes, bytes]:
    """(certificate PEM, private key PEM) for `hosts` (DNS names or IP addresses), ECDSA P-256.

    P-256 rather than RSA-2048 because it is generated in about a millisecond instead of a tenth of a
    second, and every TLS client in use accepts it.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    names = list(dict.fromkeys(hosts or default_hosts()))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{names[0]}@{int(datetime.now(UTC).timestamp())}")])
    alternative_names: list[x509.GeneralName] = []
    for host in names:
        try:
            alternative_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alternative_names.append(x509.DNSName(host))
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + valid_for)
        .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    certificate_pem = certificate.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return certificate_pem, key_pem


def write_self_signed_certificate(
    directory: Path, hosts: Sequence[str] | None = None, *, cert_name: str = "tls.crt", key_name: str = "tls.key"
) -> tuple[Path, Path]:
    """Generate a certificate into `directory` (key readable by the owner only); returns both paths."""
    certificate_pem, key_pem = generate_self_signed_certificate(hosts)
    directory.mkdir(parents=True, exist_ok=True)
    certificate_path = directory / cert_name
    key_path = directory / key_name
    certificate_path.write_bytes(certificate_pem)
    key_path.touch(mode=0o600)
    key_path.write_bytes(key_pem)
    return certificate_path, key_path
