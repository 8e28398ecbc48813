"""The certificates of self-managed webhook serving: a CA, and serving certificates it signs.

The API server verifies a webhook's certificate against the ``caBundle`` of its configuration; a bundle may list
several CAs, which is what lets the CA change without a moment where the served certificate is untrusted
(``rotation.py``). ECDSA P-256 as ``pyop.manager.certificates`` (generated in a millisecond); times come from the
caller's clock so that rotation can be tested on a fake one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["KeyPair", "issued_by", "new_ca", "new_serving_certificate", "not_after", "split_bundle", "subject_hosts"]

# Certificates are valid from a little before "now": clocks of API servers and nodes drift.
BACKDATE = timedelta(minutes=5)
_PEM_END = b"-----END CERTIFICATE-----"


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A certificate and its private key, PEM."""

    certificate: bytes
    key: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _usage(*, signing: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signing,
        crl_sign=signing,
        encipher_only=False,
        decipher_only=False,
    )


def new_ca(common_name: str, now: datetime, valid_for: timedelta) -> KeyPair:
    """A self-signed CA (path length 0: it signs serving certificates only)."""
    key = ec.generate_private_key(ec.SECP256R1())
    # The serial in the name keeps two CAs of one operator apart in tools that show subjects only.
    serial = x509.random_serial_number()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{common_name}-ca@{int(now.timestamp())}")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + valid_for)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(signing=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def new_serving_certificate(ca: KeyPair, hosts: Sequence[str], now: datetime, valid_for: timedelta) -> KeyPair:
    """A serving certificate for ``hosts`` (DNS names or IP addresses) signed by ``ca``, never outliving it."""
    if not hosts:
        raise ValueError("a serving certificate needs at least one host name")
    ca_certificate = x509.load_pem_x509_certificate(ca.certificate)
    ca_key = serialization.load_pem_private_key(ca.key, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key is not an ECDSA key")
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    expires = min(now + valid_for, ca_certificate.not_valid_after_utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(expires)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(signing=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_certificate.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return KeyPair(certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def split_bundle(bundle: bytes) -> list[bytes]:
    """The PEM certificates of a bundle, in order."""
    parts = []
    for chunk in bundle.split(_PEM_END):
        start = chunk.find(b"-----BEGIN CERTIFICATE-----")
        if start >= 0:
            parts.append(chunk[start:] + _PEM_END + b"\n")
    return parts


def not_after(certificate: bytes) -> datetime:
    """When a PEM certificate expires (UTC)."""
    return x509.load_pem_x509_certificate(certificate).not_valid_after_utc


def subject_hosts(certificate: bytes) -> list[str]:
    """The DNS names and IP addresses a PEM certificate is valid for."""
    loaded = x509.load_pem_x509_certificate(certificate)
    try:
        names = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [*names.get_values_for_type(x509.DNSName), *(str(ip) for ip in names.get_values_for_type(x509.IPAddress))]


def issued_by(certificate: bytes, ca_certificate: bytes) -> bool:
    """Whether ``ca_certificate`` signed ``certificate``."""
    leaf = x509.load_pem_x509_certificate(certificate)
    ca = x509.load_pem_x509_certificate(ca_certificate)
    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True
