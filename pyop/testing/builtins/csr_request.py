"""A CertificateSigningRequest's `spec.request` as kube-apiserver checks it (pkg/apis/certificates/validation:
validateCSR, with pkg/apis/certificates.ParseCSR and Go's CertificateRequest.CheckSignature).

The request must hold a PEM block (the first one Go's `pem.Decode` finds) of type ``CERTIFICATE REQUEST``, whose
bytes parse as a PKCS#10 request, whose signature verifies with the request's own public key. A failure is one
cause, ``field.Invalid(spec.request, csr.Spec.Request, err)``: the bad value printed as Go's ``%#v`` prints a
``[]byte`` (``[]byte{0x2d, 0x2d, ...}``) and the error's text, which is Go's for each step:

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
import re
from typing import Any, Final

from pyop.api.status import StatusCause

FIELD: Final = "spec.request"
NOT_A_REQUEST: Final = "PEM block type must be CERTIFICATE REQUEST"
MALFORMED: Final = "asn1: structure error: not a PKCS#10 certificate request"
UNSUPPORTED: Final = "x509: cannot verify signature: algorithm unimplemented"
_BEGIN: Final = re.compile(rb"-----BEGIN ([^\r\n]*)-----[ \t]*\r?\n")


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
    block = first_pem_block(raw)
    if block is None or block[0] != b"CERTIFICATE REQUEST":
        return NOT_A_REQUEST
    from cryptography import x509

    try:
        request = x509.load_der_x509_csr(block[1])
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


def first_pem_block(data: bytes) -> tuple[bytes, bytes] | None:
    """(type, bytes) of the first well-formed PEM block in ``data``, as Go's ``pem.Decode`` finds it: text before
    it is skipped, and a block whose end line or base64 body is broken is passed over for the next one."""
    position = 0
    while (begin := _BEGIN.search(data, position)) is not None:
        kind = begin.group(1)
        end_marker = b"-----END " + kind + b"-----"
        end = data.find(end_marker, begin.end())
        position = begin.end()
        if end < 0:
            continue
        body = _without_headers(data[begin.end() : end])
        try:
            return kind, base64.b64decode(b"".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
    return None


def _without_headers(body: bytes) -> bytes:
    """The base64 lines of a block body: RFC 1421 headers (``Key: value`` lines ending at a blank line) dropped."""
    lines = body.split(b"\n")
    if lines and b":" in lines[0]:
        for index, line in enumerate(lines):
            if not line.strip():
                return b"\n".join(lines[index + 1 :])
        return b""
    return body


__all__ = ["first_pem_block", "go_bytes", "request_problems"]
