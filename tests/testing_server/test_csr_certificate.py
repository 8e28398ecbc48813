"""The certificate a signer writes to a CSR's `status.certificate` is checked when it changes, as kube-apiserver's
validateCertificate checks it: CERTIFICATE PEM blocks only, without headers, each holding certificates that parse,
at least one; a failure is a 422 at `status.certificate` with the value shown as "<certificate data>"."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pyop.testing.builtins.csr_certificate import certificate_problems, validate_certificate
from pyop.testing.builtins.pem_blocks import pem_blocks
from testing_server.helpers import Api
from testing_server.test_csr_approval import APPROVED, CSRS, make_csr, pem_certificate, with_conditions
from testing_server.test_csr_request import pem


def der_of(certificate_b64: str) -> bytes:
    """The DER of a one-certificate PEM as the status holds it (base64)."""
    [found] = pem_blocks(base64.b64decode(certificate_b64))
    return found.data


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def _approved(api: Api) -> dict[str, Any]:
    csr = await make_csr(api)
    status, approved = await api.put(f"{CSRS}/web/approval", with_conditions(csr, APPROVED))
    assert status == 200, approved
    return approved


async def test_a_chain_of_certificates_is_issued(api: Api) -> None:
    approved = await _approved(api)
    leaf, ca = der_of(pem_certificate("web")), der_of(pem_certificate("ca"))
    chain = b64(pem(b"CERTIFICATE", leaf) + pem(b"CERTIFICATE", ca))
    status, signed = await api.put(
        f"{CSRS}/web/status", with_conditions(approved, *approved["status"]["conditions"], certificate=chain)
    )
    assert status == 200, signed
    assert signed["status"]["certificate"] == chain


@pytest.mark.parametrize(
    ("pem", "error"),
    [
        (b"not a certificate", "must contain at least one CERTIFICATE PEM block"),
        (
            pem(b"CERTIFICATE REQUEST", b"\x30\x00"),
            'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
        ),
        (
            pem(b"CERTIFICATE", b"\x30\x00").replace(b"-----\n", b"-----\nProc-Type: 4,ENCRYPTED\n\n", 1),
            "no PEM block headers are permitted",
        ),
        (pem(b"CERTIFICATE", b"\x04\x01\x00"), "x509: malformed certificate"),
        (pem(b"CERTIFICATE", b""), "found CERTIFICATE PEM block containing 0 certificates"),
    ],
    ids=["no-block", "other-type", "headers", "not-der", "empty-block"],
)
async def test_what_kube_refuses_as_an_issued_certificate(api: Api, pem: bytes, error: str) -> None:
    approved = await _approved(api)
    body = with_conditions(approved, *approved["status"]["conditions"], certificate=b64(pem))
    status, answer = await api.put(f"{CSRS}/web/status", body)
    assert status == 422, answer
    message = f'Invalid value: "<certificate data>": {error}'
    assert answer["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": message, "field": "status.certificate"}
    ]
    assert (
        answer["message"]
        == f'CertificateSigningRequest.certificates.k8s.io "web" is invalid: status.certificate: {message}'
    )


def test_only_a_changed_certificate_over_a_sound_one_is_checked() -> None:
    sound = pem_certificate()
    bad = b64(b"not a certificate")
    assert certificate_problems({"certificate": bad}, {"certificate": bad}) == []  # unchanged
    assert certificate_problems({"certificate": sound}, {"certificate": bad}) == []  # the stored one would not pass
    assert [c.field for c in certificate_problems({"certificate": bad}, {"certificate": sound})] == [
        "status.certificate"
    ]
    assert certificate_problems({}, {"certificate": sound}) == []  # removing it is another rule's (may not modify)
    two_in_one = b64(pem(b"CERTIFICATE", der_of(sound) + der_of(pem_certificate("ca"))))
    assert validate_certificate(base64.b64decode(two_in_one)) is None  # x509.ParseCertificates reads them all
    assert validate_certificate(b"") is None
