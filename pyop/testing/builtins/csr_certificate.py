"""The issued certificate a signer writes to a CSR's `status.certificate`, as kube-apiserver checks it
(pkg/apis/certificates/validation: validateCertificate, with its allowArbitraryCertificate tolerance).

A certificate that changes must be PEM: only ``CERTIFICATE`` blocks, none with headers, each holding one or more
DER certificates that parse, and at least one block; an empty value is fine (nothing issued yet). An update that
leaves the certificate as it is, or replaces one already stored that would not pass, is not checked (kube keeps
what it has). A failure is ``field.Invalid(status.certificate, "<certificate data>", err)``.

Bytes that do not parse as a certificate get Go's ``x509: malformed certificate`` (its words when the bytes are
not a DER SEQUENCE; Go names the broken part when they are, which ``cryptography`` does not report).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Final

from pyop.api.status import StatusCause
from pyop.testing.builtins.pem_blocks import pem_blocks

FIELD: Final = "status.certificate"
MALFORMED: Final = "x509: malformed certificate"


def certificate_problems(new_status: dict[str, Any], old_status: dict[str, Any]) -> list[StatusCause]:
    """The cause kube gives a write of ``new_status`` over ``old_status`` (both as stored: base64), or none."""
    new, old = new_status.get("certificate") or "", old_status.get("certificate") or ""
    if new == old or validate_certificate(_bytes(old)) is not None:
        return []
    error = validate_certificate(_bytes(new))
    if error is None:
        return []
    return [StatusCause("FieldValueInvalid", f"Invalid value: {json.dumps('<certificate data>')}: {error}", FIELD)]


def validate_certificate(pem: bytes) -> str | None:
    """None when ``pem`` is empty or sound; else the text of Go's error."""
    if not pem:
        return None
    blocks = 0
    for block in pem_blocks(pem):
        if block.type != b"CERTIFICATE":
            return f"only CERTIFICATE PEM blocks are allowed, found {json.dumps(block.type.decode('latin-1'))}"
        if block.headers:
            return "no PEM block headers are permitted"
        blocks += 1
        count = _certificates(block.data)
        if count is None:
            return MALFORMED
        if count == 0:
            return "found CERTIFICATE PEM block containing 0 certificates"
    if blocks == 0:
        return "must contain at least one CERTIFICATE PEM block"
    return None


def _certificates(der: bytes) -> int | None:
    """How many DER certificates ``der`` holds back to back (Go's x509.ParseCertificates); None if one is broken."""
    from cryptography import x509

    count = 0
    while der:
        length = _element_length(der)
        if length is None:
            return None
        try:
            x509.load_der_x509_certificate(der[:length])
        except ValueError:
            return None
        der = der[length:]
        count += 1
    return count


def _element_length(der: bytes) -> int | None:
    """The length of the DER SEQUENCE at the start of ``der`` (header included), or None if there is none."""
    if len(der) < 2 or der[0] != 0x30:
        return None
    first = der[1]
    if first < 0x80:
        header, length = 2, first
    else:
        size = first & 0x7F
        if not 1 <= size <= 4 or len(der) < 2 + size:
            return None
        header, length = 2 + size, int.from_bytes(der[2 : 2 + size], "big")
    return header + length if header + length <= len(der) else None


def _bytes(encoded: str) -> bytes:
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return b""  # decoding refuses what is not base64 before validation


__all__ = ["certificate_problems", "validate_certificate"]
