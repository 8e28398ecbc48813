"""A CertificateSigningRequest's `spec.request` is checked on create as kube-apiserver's validateCSR checks it: the
first PEM block must be a CERTIFICATE REQUEST that parses and whose signature verifies; otherwise one 422 cause at
`spec.request` whose value is printed as Go prints a []byte and whose text is Go's error."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pyop.testing.builtins.csr_request import go_bytes
from pyop.testing.builtins.pem_blocks import PemBlock, pem_blocks
from testing_server.helpers import Api

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
KEYS = {
    "ecdsa": lambda: ec.generate_private_key(ec.SECP256R1()),
    "rsa": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "ed25519": ed25519.Ed25519PrivateKey.generate,
}
FAILURES = {
    "ecdsa": "x509: ECDSA verification failure",
    "rsa": "crypto/rsa: verification error",
    "ed25519": "x509: Ed25519 verification failure",
}


def der_request(kind: str) -> bytes:
    key = KEYS[kind]()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "web")])
    algorithm = None if kind == "ed25519" else hashes.SHA256()
    return (
        x509.CertificateSigningRequestBuilder()
        .subject_name(subject)
        .sign(key, algorithm)
        .public_bytes(serialization.Encoding.DER)
    )


def pem(kind: bytes, der: bytes) -> bytes:
    body = base64.encodebytes(der).replace(b"\n", b"")
    lines = b"\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return b"-----BEGIN " + kind + b"-----\n" + lines + b"\n-----END " + kind + b"-----\n"


async def create(api: Api, name: str, request: bytes | None) -> tuple[int, dict[str, Any]]:
    spec: dict[str, Any] = {"signerName": "example.com/serving", "usages": ["digital signature", "server auth"]}
    if request is not None:
        spec["request"] = base64.b64encode(request).decode()
    return await api.post(CSRS, {"metadata": {"name": name}, "spec": spec})


def assert_invalid(name: str, answer: dict[str, Any], value: str, detail: str) -> None:
    message = f"Invalid value: {value}: {detail}"
    assert answer["reason"] == "Invalid"
    assert answer["message"] == (
        f'CertificateSigningRequest.certificates.k8s.io "{name}" is invalid: spec.request: {message}'
    )
    assert answer["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": message, "field": "spec.request"}]


@pytest.mark.parametrize("kind", sorted(KEYS))
async def test_a_signed_request_is_accepted_and_a_tampered_signature_refused(api: Api, kind: str) -> None:
    der = der_request(kind)
    status, created = await create(api, f"good-{kind}", b"kubelet says:\n" + pem(b"CERTIFICATE REQUEST", der))
    assert status == 201, created  # text before the block is skipped, as pem.Decode skips it
    tampered = der[:-1] + bytes([der[-1] ^ 0x01])  # the last byte of the signature
    request = pem(b"CERTIFICATE REQUEST", tampered)
    status, answer = await create(api, f"bad-{kind}", request)
    assert status == 422
    assert_invalid(f"bad-{kind}", answer, go_bytes(request), FAILURES[kind])
    status, _ = await api.get(f"{CSRS}/bad-{kind}")
    assert status == 404


async def test_signatures_go_will_not_verify(api: Api) -> None:
    sha256_rsa = bytes.fromhex("06092a864886f70d01010b")  # the OID sha256WithRSAEncryption
    der = der_request("rsa")
    assert der.count(sha256_rsa) == 1  # only the outer signatureAlgorithm (the signed part has no OID of it)
    md5 = pem(b"CERTIFICATE REQUEST", der.replace(sha256_rsa, bytes.fromhex("06092a864886f70d010104")))
    status, answer = await create(api, "md5", md5)
    assert status == 422
    assert_invalid("md5", answer, go_bytes(md5), "x509: cannot verify signature: insecure algorithm MD5-RSA")

    key = dsa.generate_private_key(2048)  # Go parses DSA keys but verifies no DSA signature
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "web")])
    signed = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    request = signed.public_bytes(serialization.Encoding.PEM)
    status, answer = await create(api, "dsa", request)
    assert status == 422
    assert_invalid("dsa", answer, go_bytes(request), "x509: cannot verify signature: algorithm unimplemented")


async def test_what_is_not_a_certificate_request_pem_block(api: Api) -> None:
    der = der_request("ecdsa")
    cases = {
        "text": b"this is not a CSR",
        "other-type": pem(b"CERTIFICATE", der),  # the first block decides, as ParseCSR takes only it
        "other-first": pem(b"PUBLIC KEY", b"\x30\x00") + pem(b"CERTIFICATE REQUEST", der),
        "unterminated": b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.b64encode(der) + b"\n",
        "empty": b"",
    }
    for name, request in cases.items():
        status, answer = await create(api, name, request)
        assert status == 422, (name, answer)
        assert_invalid(name, answer, go_bytes(request), "PEM block type must be CERTIFICATE REQUEST")
    status, answer = await create(api, "missing", None)
    assert status == 422
    assert_invalid("missing", answer, "[]byte(nil)", "PEM block type must be CERTIFICATE REQUEST")


async def test_a_block_that_is_not_pkcs10_is_refused(api: Api) -> None:
    request = pem(b"CERTIFICATE REQUEST", b"\x30\x03\x02\x01\x01")
    status, answer = await create(api, "garbage", request)
    assert status == 422
    assert answer["details"]["causes"][0]["field"] == "spec.request"
    assert answer["details"]["causes"][0]["message"].startswith(f"Invalid value: {go_bytes(request)}: asn1: ")


def test_go_byte_slices_and_pem_blocks() -> None:
    assert go_bytes(b"-\x00\x0a") == "[]byte{0x2d, 0x0, 0xa}"
    assert go_bytes(b"") == "[]byte{}"
    block = b"-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\n\nAAEC\n-----END X-----\n"
    found = PemBlock(b"X", {b"Proc-Type": b"4,ENCRYPTED"}, b"\x00\x01\x02")
    assert list(pem_blocks(b"junk\n" + block)) == [found]
    broken = b"-----BEGIN X-----\n!!!!\n-----END X-----\n"
    assert list(pem_blocks(broken + block)) == [found]  # a broken block is passed over
    assert list(pem_blocks(b"-----BEGIN X-----\nAAEC\n-----END Y-----\n")) == []
    two = b"-----BEGIN A-----\nAA==\n-----END A-----\ntext\n-----BEGIN B-----\nAQ==\n-----END B-----\n"
    assert list(pem_blocks(two)) == [PemBlock(b"A", {}, b"\x00"), PemBlock(b"B", {}, b"\x01")]
