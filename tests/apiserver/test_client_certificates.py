"""Client certificates as k8s.io/apiserver judges them: any certificate passes the handshake (Go's
tls.RequestClientCert), and each authenticator verifies the chain against its own bundle, through intermediate CAs
in the bundle or sent by the client. A certificate of an unknown CA is then a 401, or the user of a valid bearer
token sent with it (kube's union authenticator), never a failed connection and never anonymous."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from apiserver.helpers import FLUNDERS, CertificateAuthority, ClientCertificate, call
from apiserver.test_authentication import PROXY_HEADERS, forbidden_user, grant
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.apiserver.server.tls import request_client_certificates
from pyop.testing import TestAPIServer
from pyop.testing.aggregator.certificates import new_client_certificate
from pyop.webhook.certificates.authority import KeyPair


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _ca(name: str, issuer: KeyPair | None = None, path_length: int | None = None) -> KeyPair:
    """A CA: self-signed (a root, any path length by default), or an intermediate signed by ``issuer``."""
    now = datetime.now(UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    signer_key, issuer_name = key, subject
    if issuer is not None:
        loaded = serialization.load_pem_private_key(issuer.key, password=None)
        assert isinstance(loaded, ec.EllipticCurvePrivateKey)
        signer_key, issuer_name = loaded, x509.load_pem_x509_certificate(issuer.certificate).subject
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
        .sign(signer_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return KeyPair(_pem(certificate), key_pem)


@dataclass(frozen=True)
class Chain:
    root: KeyPair
    intermediate: KeyPair


def _client(
    folder: Path, issuer: KeyPair, name: str, *, send: bytes = b"", groups: tuple[str, ...] = ()
) -> ClientCertificate:
    """A client certificate signed by ``issuer``; ``send``: the certificates the client sends after its leaf."""
    folder.mkdir(parents=True, exist_ok=True)
    pair = new_client_certificate(issuer, name, datetime.now(UTC), timedelta(hours=1), groups)
    certificate_file, key_file = folder / f"{name}.crt", folder / f"{name}.key"
    certificate_file.write_bytes(pair.certificate + send)
    key_file.write_bytes(pair.key)
    return ClientCertificate(certificate_file, key_file)


def _chain() -> Chain:
    root = _ca("front-proxy-root")
    return Chain(root, _ca("front-proxy-intermediate", issuer=root, path_length=0))


def test_the_handshake_requests_any_certificate_on_this_interpreter() -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    assert request_client_certificates(context)
    assert context.verify_mode == ssl.CERT_OPTIONAL


async def test_an_unknown_ca_is_a_401_not_a_failed_handshake(server: AggregatedServer, tmp_path: Path) -> None:
    stranger = CertificateAuthority.create(tmp_path / "stranger", "stranger").client("front-proxy-client")
    status, body = await call(server, "GET", FLUNDERS, certificate=stranger, headers=PROXY_HEADERS)
    assert status == 401 and body["reason"] == "Unauthorized"  # not anonymous, and alice's headers count for nothing


async def test_an_unknown_ca_with_a_valid_token_is_the_tokens_user(
    server: AggregatedServer, core: TestAPIServer, tmp_path: Path
) -> None:
    core.add_user("bob-token", "bob")
    stranger = CertificateAuthority.create(tmp_path / "stranger", "stranger").client("front-proxy-client")
    status, body = await call(server, "GET", FLUNDERS, certificate=stranger, token="bob-token", headers=PROXY_HEADERS)
    assert status == 403 and forbidden_user(body) == "bob"  # bob (the token's), not alice (the headers')


def _request_header_options(bundle: bytes, folder: Path) -> RecommendedOptions:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.crt").write_bytes(bundle)
    options = RecommendedOptions()
    options.authentication.requestheader_client_ca_file = str(folder / "ca.crt")
    options.authentication.requestheader_allowed_names = ["front-proxy-client"]
    return options


async def test_request_header_chains_through_intermediates(
    core: TestAPIServer, group: APIGroupVersion, tmp_path: Path
) -> None:
    chain = _chain()
    cases = [
        # (the bundle, what the client sends after its leaf, the user the server takes it for)
        (chain.root.certificate, chain.intermediate.certificate, "alice"),  # root in the bundle, intermediate sent
        (chain.intermediate.certificate, b"", "alice"),  # the intermediate in the bundle is an anchor itself
        (chain.root.certificate + chain.intermediate.certificate, b"", "alice"),  # both in the bundle
        (chain.root.certificate, b"", None),  # no path: the intermediate is neither sent nor in the bundle
    ]
    for index, (bundle, sent, user) in enumerate(cases):
        folder = tmp_path / f"case-{index}"
        options = _request_header_options(bundle, folder)
        async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
            proxy = _client(folder, chain.intermediate, "front-proxy-client", send=sent)
            status, body = await call(server, "GET", FLUNDERS, certificate=proxy, headers=PROXY_HEADERS)
            if user is None:
                assert status == 401, (index, body)
            else:
                assert status == 403 and forbidden_user(body) == user, (index, body)


async def test_a_path_length_constraint_is_kept(core: TestAPIServer, group: APIGroupVersion, tmp_path: Path) -> None:
    root = _ca("strict-root", path_length=0)  # may sign leaves only
    intermediate = _ca("intermediate", issuer=root)
    options = _request_header_options(root.certificate, tmp_path)
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        proxy = _client(tmp_path, intermediate, "front-proxy-client", send=intermediate.certificate)
        status, _ = await call(server, "GET", FLUNDERS, certificate=proxy, headers=PROXY_HEADERS)
        assert status == 401


async def test_client_ca_file_chains_through_an_intermediate(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, tmp_path: Path
) -> None:
    chain = _chain()
    (tmp_path / "clients.crt").write_bytes(chain.root.certificate)
    options.authentication.client_ca_file = str(tmp_path / "clients.crt")
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        dave = _client(tmp_path, chain.intermediate, "dave", send=chain.intermediate.certificate, groups=("team-d",))
        await grant(core, "Group", "team-d", ["list"])  # dave's group, from his certificate's O
        status, body = await call(server, "GET", FLUNDERS, certificate=dave)
        assert status == 200, body
        status, body = await call(server, "GET", FLUNDERS, certificate=_client(tmp_path, chain.intermediate, "erin"))
        assert status == 401  # the intermediate not sent: no path to the bundle's root
