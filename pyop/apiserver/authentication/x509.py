"""Client certificates: whether a peer certificate chains to one of a bundle's CAs, and whom it names.

As Go's ``x509.Certificate.Verify`` with the options k8s.io/apiserver's authenticators use: the bundle's
certificates are the roots (every one a trust anchor, an intermediate CA in the bundle included), the other
certificates the client sent are the intermediates a path may go through, every certificate on the path must be
valid now, each issuer above the leaf a CA, and the leaf usable for client authentication. Each authenticator
checks against its own bundle (a front proxy's certificate is trusted for the identity headers only when it chains
to the request-header CA, kube's ``x509request.Verifier``). The TLS layer asks for a certificate without verifying
it (`pyop.apiserver.server.tls.request_client_certificates`), so this is where a chain is judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class PeerCertificate:
    """The client's leaf certificate as presented on the connection."""

    certificate: x509.Certificate
    intermediates: tuple[x509.Certificate, ...] = ()  # what the client sent after its leaf

    @classmethod
    def from_der(cls, der: bytes, chain: tuple[bytes, ...] = ()) -> PeerCertificate:
        """The leaf and the rest of the chain the client sent (DER); unparsable extras are left out. Remembered
        per DER (~10 µs of parsing per request otherwise: a client sends the same certificate on every request),
        and so the same object, which `CertificateBundle.verify` remembers its verdict for."""
        key = (der, chain)
        known = _PARSED.get(key)
        if known is None:
            known = cls._parse(der, chain)
            if len(_PARSED) >= _REMEMBERED:
                _PARSED.clear()
            _PARSED[key] = known
        return known

    @classmethod
    def _parse(cls, der: bytes, chain: tuple[bytes, ...]) -> PeerCertificate:
        intermediates = []
        for item in chain:
            try:
                intermediates.append(x509.load_der_x509_certificate(item))
            except ValueError:
                continue
        return cls(x509.load_der_x509_certificate(der), tuple(intermediates))

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
        # id(peer) -> (peer, verified at, verified until): chains found valid, see `verify`
        self._verified: dict[int, tuple[PeerCertificate, datetime, datetime]] = {}
        try:
            self.authorities = x509.load_pem_x509_certificates(pem)
        except ValueError as error:
            raise ValueError(f"{source or 'CA bundle'}: not a PEM certificate bundle ({error})") from None

    @classmethod
    def from_file(cls, path: str | Path) -> CertificateBundle:
        return cls(Path(path).read_bytes(), str(path))

    def verify(self, peer: PeerCertificate, now: datetime | None = None) -> str:
        """ "" when ``peer`` chains to a CA of the bundle (through the intermediates it sent, if need be) and is
        valid for client authentication now; else why not, in Go's words.

        A chain found valid at a moment is remembered until the first expiry of the leaf, the bundle's CAs and the
        intermediates sent: the signature checks are ~0.4 ms, paid by every request of a front proxy or client
        otherwise. Exact: the path found is made of certificates valid then, which stay valid (they were already
        past their start) until that expiry, and the rest of the verdict (usages, signatures, path lengths) does
        not change with time; a moment before the verdict, or a chain that failed, is judged again."""
        moment = now or datetime.now(UTC)
        known = self._verified.get(id(peer))
        if known is not None and known[0] is peer and known[1] <= moment <= known[2]:
            return ""
        failure = self._verify(peer, moment)
        if not failure:
            if len(self._verified) >= _REMEMBERED:
                self._verified.clear()
            until = min(c.not_valid_after_utc for c in (peer.certificate, *self.authorities, *peer.intermediates))
            self._verified[id(peer)] = (peer, moment, until)  # the entry holds peer: its id is not reused
        return failure

    def _verify(self, peer: PeerCertificate, moment: datetime) -> str:
        certificate = peer.certificate
        if not _valid_at(certificate, moment):
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
        if self._chains(certificate, peer.intermediates, moment, 0, {certificate.fingerprint(SHA256())}):
            return ""
        return "x509: certificate signed by unknown authority"

    def _chains(
        self,
        certificate: x509.Certificate,
        intermediates: tuple[x509.Certificate, ...],
        moment: datetime,
        below: int,
        seen: set[bytes],
    ) -> bool:
        """Whether a path leads from ``certificate`` (with ``below`` intermediates under it) to an anchor: one of
        the bundle's, or through one of the intermediates; every issuer's path length constraint holds."""
        for authority in self.authorities:
            if _signed_by(certificate, authority) and _valid_at(authority, moment) and _allows(authority, below):
                return True
        if below >= MAX_PATH_LENGTH:
            return False
        for intermediate in intermediates:
            fingerprint = intermediate.fingerprint(SHA256())
            if fingerprint in seen or not _is_ca(intermediate) or not _valid_at(intermediate, moment):
                continue
            if (
                _signed_by(certificate, intermediate)
                and _allows(intermediate, below)
                and self._chains(intermediate, intermediates, moment, below + 1, seen | {fingerprint})
            ):
                return True
        return False


MAX_PATH_LENGTH = 8  # intermediates between a leaf and an anchor (Go has no fixed bound; clients send few)
_REMEMBERED = 256  # parsed certificates and verdicts kept (a server sees a front proxy's and a few clients')
_PARSED: dict[tuple[bytes, tuple[bytes, ...]], PeerCertificate] = {}


def _valid_at(certificate: x509.Certificate, moment: datetime) -> bool:
    return certificate.not_valid_before_utc <= moment <= certificate.not_valid_after_utc


def _allows(issuer: x509.Certificate, below: int) -> bool:
    """The issuer's pathLenConstraint admits ``below`` intermediates under it (Go's MaxPathLen check)."""
    try:
        length = issuer.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length
    except x509.ExtensionNotFound:
        return True
    return length is None or below <= length


def _is_ca(certificate: x509.Certificate) -> bool:
    try:
        return bool(certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


def _signed_by(certificate: x509.Certificate, issuer: x509.Certificate) -> bool:
    if issuer.subject != certificate.issuer:
        return False
    try:
        certificate.verify_directly_issued_by(issuer)
    except Exception:  # noqa: BLE001 - InvalidSignature, an unsupported key type, a mismatched name: not this one
        return False
    return True


__all__ = ["CertificateBundle", "PeerCertificate"]
