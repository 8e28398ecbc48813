"""A bundle remembers the chains it found valid (pyop.apiserver.authentication.x509): the remembered verdict is
the verdict judged afresh at every moment, before, inside and after the validity windows of the leaf, the CA and
an intermediate (Hypothesis: random sequences of moments, for a direct leaf, a leaf through an intermediate the
client sent, and a leaf of another CA); the signature checks run once per chain; a parsed certificate is the
same object for the same DER."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.apiserver.authentication import x509 as verdicts
from pyop.apiserver.authentication.x509 import CertificateBundle, PeerCertificate

T = datetime(2030, 1, 1, tzinfo=UTC)


def _certificate(
    name: str, key: Any, issuer: tuple[x509.Name, Any] | None, since: timedelta, until: timedelta, *, ca: bool
) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name, signer = issuer if issuer is not None else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(T + since)
        .not_valid_after(T + until)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _der(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.DER)


def _setup() -> tuple[CertificateBundle, dict[str, tuple[bytes, tuple[bytes, ...]]]]:
    root_key, middle_key, other_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = _certificate("root", root_key, None, timedelta(days=-10), timedelta(days=5), ca=True)
    middle = _certificate(
        "middle", middle_key, (root.subject, root_key), timedelta(days=-2), timedelta(days=1), ca=True
    )
    other = _certificate("other", other_key, None, timedelta(days=-10), timedelta(days=10), ca=True)
    leaves = {}
    for name, (issuer, issuer_key), since, until in (
        ("direct", (root, root_key), timedelta(days=-1), timedelta(days=2)),
        ("through-middle", (middle, middle_key), timedelta(hours=-30), timedelta(days=3)),
        ("of-another-ca", (other, other_key), timedelta(days=-1), timedelta(days=2)),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        leaves[name] = _certificate(name, key, (issuer.subject, issuer_key), since, until, ca=False)
    bundle = CertificateBundle(root.public_bytes(serialization.Encoding.PEM))
    chains = {
        "direct": (_der(leaves["direct"]), ()),
        "through-middle": (_der(leaves["through-middle"]), (_der(middle),)),
        "of-another-ca": (_der(leaves["of-another-ca"]), ()),
    }
    return bundle, chains


@pytest.fixture(scope="module")
def setup() -> tuple[CertificateBundle, dict[str, tuple[bytes, tuple[bytes, ...]]]]:
    return _setup()


MOMENTS = st.lists(st.integers(min_value=-15 * 24, max_value=12 * 24), min_size=1, max_size=8)  # hours from T


@settings(max_examples=150, deadline=None)
@given(hours=MOMENTS, which=st.sampled_from(["direct", "through-middle", "of-another-ca"]))
def test_remembered_verdicts_equal_fresh_ones(
    setup: tuple[CertificateBundle, dict[str, tuple[bytes, tuple[bytes, ...]]]], hours: list[int], which: str
) -> None:
    bundle, chains = setup
    peer = PeerCertificate.from_der(*chains[which])
    for hour in hours:
        moment = T + timedelta(hours=hour)
        assert bundle.verify(peer, moment) == bundle._verify(peer, moment)  # noqa: SLF001 - the judgement itself


def test_a_chain_is_judged_once_until_it_could_change(monkeypatch: pytest.MonkeyPatch) -> None:
    bundle, chains = _setup()
    peer = PeerCertificate.from_der(*chains["through-middle"])
    signature_checks = []
    signed_by = verdicts._signed_by  # noqa: SLF001

    def counted(*args: Any) -> bool:
        signature_checks.append(1)
        return signed_by(*args)

    monkeypatch.setattr(verdicts, "_signed_by", counted)
    assert bundle.verify(peer, T) == ""
    checked = len(signature_checks)
    assert checked > 0
    assert bundle.verify(peer, T + timedelta(hours=20)) == ""  # within every window: remembered
    assert len(signature_checks) == checked
    assert bundle.verify(peer, T - timedelta(hours=1)) == ""  # before the remembered verdict: judged again
    assert len(signature_checks) > checked
    # the intermediate expires first (T + 1 day): no longer a path
    assert bundle.verify(peer, T + timedelta(days=1, hours=1)) == "x509: certificate signed by unknown authority"
    assert bundle.verify(peer, T + timedelta(days=4)) == "x509: certificate has expired or is not yet valid"


def test_a_parsed_certificate_is_the_same_object_for_the_same_der() -> None:
    _bundle, chains = _setup()
    der, chain = chains["through-middle"]
    first = PeerCertificate.from_der(der, chain)
    assert PeerCertificate.from_der(der, chain) is first
    alone = PeerCertificate.from_der(der)
    assert alone is not first and alone.intermediates == ()
    assert first.certificate == x509.load_der_x509_certificate(der) and len(first.intermediates) == 1
