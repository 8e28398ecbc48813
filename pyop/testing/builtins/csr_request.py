"""A CertificateSigningRequest's `spec.request` as kube-apiserver checks it (pkg/apis/certificates/validation:
validateCSR, with pkg/apis/certificates.ParseCSR and Go's CertificateRequest.CheckSignature).

The request must hold a PEM block (the first one Go's `pem.Decode` finds: pem_blocks) of type
``CERTIFICATE REQUEST``, whose bytes parse as a PKCS#10 request, whose signature verifies with the request's own
public key. A failure is one cause, ``field.Invalid(spec.request, csr.Spec.Request, err)``: the bad value printed
as Go's ``%#v`` prints a ``[]byte`` (``[]byte{0x2d, 0x2d, ...}``) and the error's text, which is Go's for each
step:

- no such block: ``PEM block type must be CERTIFICATE REQUEST`` (ParseCSR's own words);
- a signature that does not verify: crypto/rsa's ``crypto/rsa: verification error``, or crypto/x509's
  ``x509: ECDSA verification failure`` / ``x509: Ed25519 verification failure``; an MD5 signature is Go's
  InsecureAlgorithmError, a key Go cannot verify with its ErrUnsupportedAlgorithm.

Bytes that do not parse as a request get one fixed text: Go's encoding/asn1 names the tag and offset where it gave
up, which ``cryptography`` does not report.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from pyop.api.status import StatusCause
from pyop.testing.builtins.pem_blocks import pem_blocks

FIELD: Final = "spec.request"
NOT_A_REQUEST: Final = "PEM block type must be CERTIFICATE REQUEST"
MALFORMED: Final = "asn1: structure error: not a PKCS#10 certificate request"
UNSUPPORTED: Final = "x509: cannot verify signature: algorithm unimplemented"


def request_problems(spec: dict[str, Any]) -> list[StatusCause]:
    """The cause kube's validateCSR gives ``spec`` (the CSR's spec as stored: ``request`` base64), or none."""
    encoded = spec.get("request")
    raw = _decoded(encoded) if isinstance(encoded, str) else None
    if raw is None:
        raw = b""  # decoding has refused what is not base64 already; a missing request is an empty one
    error = _validate(raw)
    if error is None:
        return []
    shown = "[]byte(nil)" if encoded is None else go_bytes(raw)
    return [StatusCause("FieldValueInvalid", f"Invalid value: {shown}: {error}", FIELD)]


def go_bytes(data: bytes) -> str:
    """``data`` as Go's ``fmt.Sprintf("%#v", []byte(...))`` prints it."""
    return "[]byte{" + ", ".join(f"0x{byte:x}" for byte in data) + "}"


def _decoded(encoded: str) -> bytes | None:
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _validate(raw: bytes) -> str | None:
    """None when the request is sound; else the text of Go's error."""
    block = next(pem_blocks(raw), None)  # ParseCSR reads the first block only
    if block is None or block.type != b"CERTIFICATE REQUEST":
        return NOT_A_REQUEST
    from cryptography import x509

    try:
        request = x509.load_der_x509_csr(block.data)
    except ValueError:
        return MALFORMED
    return _signature_problem(request)


def _signature_problem(request: Any) -> str | None:
    """CertificateRequest.CheckSignature (SHA-1 allowed for requests; MD5 never)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    try:
        if isinstance(request.signature_hash_algorithm, hashes.MD5):
            return "x509: cannot verify signature: insecure algorithm MD5-RSA"
        key = request.public_key()
        if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey):
            return UNSUPPORTED
        valid = request.is_signature_valid
    except (UnsupportedAlgorithm, ValueError):  # a signature or key algorithm cryptography cannot use either
        return UNSUPPORTED
    if valid:
        return None
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    return "x509: Ed25519 verification failure"


__all__ = ["go_bytes", "request_problems"]
