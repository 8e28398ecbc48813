"""The etcd client's TLS options against an etcd that requires client certificates (--client-cert-auth)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.client import EtcdClient, EtcdError, TLSOptions
from pyop.apiserver.storage.etcd.local import LocalEtcd
from pyop.apiserver.storage.factory import backend_from_flags


def issue(folder: Path, name: str, ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None) -> tuple[Path, Path]:
    """A certificate and key (files): a CA when ``ca`` is None, else signed by it for server and client use."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca[0].subject if ca else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca is None, path_length=None), critical=True)
    )
    if ca is not None:
        usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    certificate = builder.sign(ca[1] if ca else key, hashes.SHA256())
    certificate_file, key_file = folder / f"{name}.crt", folder / f"{name}.key"
    certificate_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return certificate_file, key_file


def test_client_certificates_are_sent_and_required(etcd: LocalEtcd, tmp_path: Path) -> None:
    ca_file, ca_key_file = issue(tmp_path, "etcd-ca", None)
    ca = (
        x509.load_pem_x509_certificate(ca_file.read_bytes()),
        serialization.load_pem_private_key(ca_key_file.read_bytes(), None),
    )
    assert isinstance(ca[1], ec.EllipticCurvePrivateKey)
    server_cert, server_key = issue(tmp_path, "etcd-server", (ca[0], ca[1]))
    client_cert, client_key = issue(tmp_path, "apiserver-etcd-client", (ca[0], ca[1]))
    tls = TLSOptions(str(ca_file), str(client_cert), str(client_key))
    secure = LocalEtcd(etcd.binary, server_tls=(str(server_cert), str(server_key), str(ca_file)), client_tls=tls)
    secure.start()
    try:
        backend = backend_from_flags(
            "etcd3",
            etcd_servers=[secure.url],
            etcd_cafile=str(ca_file),
            etcd_certfile=str(client_cert),
            etcd_keyfile=str(client_key),
        )
        assert isinstance(backend, EtcdBackend)
        written = backend.commit(
            "pods", "ADDED", "default", "a", {"metadata": {"name": "a", "namespace": "default"}}, None
        )
        assert backend.load().revision >= written
        backend.close()
        without_certificate = EtcdClient(secure.url, tls=TLSOptions(str(ca_file)), timeout=2.0)
        with pytest.raises(EtcdError):
            without_certificate.range(b"/registry/")
    finally:
        secure.stop()


def test_bad_storage_flags_name_the_flag() -> None:
    with pytest.raises(ValueError, match="--storage-backend='sql' is not one of memory, file, etcd3"):
        backend_from_flags("sql")
    with pytest.raises(ValueError, match="needs --etcd-servers"):
        backend_from_flags("etcd3")
    with pytest.raises(ValueError, match="--etcd-certfile and --etcd-keyfile go together"):
        backend_from_flags("etcd3", etcd_servers=["https://127.0.0.1:2379"], etcd_certfile="c.crt")
    with pytest.raises(ValueError, match="needs --storage-path"):
        backend_from_flags("file")
