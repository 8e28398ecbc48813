"""Client certificates: whether a peer certificate was issued by one of a bundle's CAs, and whom it names.

The TLS layer (Python's ``ssl``, with ``CERT_OPTIONAL`` over the union of the trusted bundles) has already verified
the chain to *some* trusted CA; each authenticator then needs to know which bundle issued it (a front proxy's
certificate is trusted for the identity headers only when the request-header CA signed it, kube's
``x509request.Verifier``), so the leaf is checked against its own bundle here, with cryptography. Direct issuance
only: a chain through intermediates needs the intermediates, which the server side of ``ssl`` does not expose.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class PeerCertificate:
    """The client's leaf certificate as presented on the connection."""

    certificate: x509.Certificate

    @classmethod
    def from_der(cls, der: bytes) -> PeerCertificate:
        return cls(x509.load_der_x509_certificate(der))

    @property
    def common_name(self) -> str:
        names = self.certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return str(names[0].value) if names else ""

    @property
    def organizations(self) -> list[str]:
        return [str(a.value) for a in self.certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


class CertificateBundle:
    """A CA bundle (PEM): which of its CAs, if any, issued a certificate that is valid now for client auth."""

    def __init__(self, pem: bytes, source: str = "") -> None:
        self.pem = pem
        self.source = source
        try:
            self.authorities = x509.load_pem_x509_certificates(pem)
        except ValueError as error:
            raise ValueError(f"{source or 'CA bundle'}: not a PEM certificate bundle ({error})") from None

    @classmethod
    def from_file(cls, path: str | Path) -> CertificateBundle:
        return cls(Path(path).read_bytes(), str(path))

    def verify(self, peer: PeerCertificate, now: datetime | None = None) -> str:
        """ "" when a CA of the bundle issued ``peer`` and it is valid for client authentication now; else why not."""
        certificate = peer.certificate
        moment = now or datetime.now(UTC)
        if not certificate.not_valid_before_utc <= moment <= certificate.not_valid_after_utc:
            return "x509: certificate has expired or is not yet valid"
        try:
            usages = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
            if (
                ExtendedKeyUsageOID.CLIENT_AUTH not in usages
                and ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE not in usages
            ):
                return "x509: certificate specifies an incompatible key usage"
        except x509.ExtensionNotFound:
            pass
        for authority in self.authorities:
            if authority.subject != certificate.issuer:
                continue
            try:
                certificate.verify_directly_issued_by(authority)
            except (ValueError, TypeError, Exception):  # noqa: BLE001 - InvalidSignature and friends: try the next
                continue
            return ""
        return "x509: certificate signed by unknown authority"


__all__ = ["CertificateBundle", "PeerCertificate"]
