"""--serving-cert-secret (pyop's own certificates, no cert-manager), end to end through the test API server as
kube-aggregator: the server makes its CA and serving certificate, keeps them in a Secret, and injects the CA into
the caBundle of its APIService, which it registered without one; the aggregator then verifies the server's
certificate against that caBundle, for the Service's DNS name, and kubectl reaches the server through it."""

from __future__ import annotations

import asyncio
import base64
import shutil
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from cryptography import x509

from apiserver.helpers import kubectl
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.client import Client, Transport
from pyop.testing import TestAPIServer
from pyop.testing.aggregator import service_name_for
from pyop.webhook.certificates.authority import issued_by, subject_hosts

SECRET = "apiserver-serving-cert"
APISERVICE = "v1alpha1.wardle.example.com"
FLUNDER = "apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: f1\n  namespace: default\n"
SERVICE = service_name_for("wardle.example.com", "v1alpha1")  # the ExternalName Service register_api_service makes


@pytest.fixture
def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the aggregation with the real kubectl")
    return found


def self_managed(rotate_interval: float) -> RecommendedOptions:
    """The request-header settings from the test server's ConfigMap (its aggregator's CA), pyop's certificates."""
    options = RecommendedOptions()
    options.secure_serving.serving_cert_secret = SECRET
    options.secure_serving.serving_cert_namespace = "default"
    options.secure_serving.serving_cert_service = SERVICE
    options.secure_serving.rotate_interval = rotate_interval
    options.secure_serving.sync_interval = 0.1
    return options


async def get_objects(core: TestAPIServer, api_version: str, kind: str, name: str, namespace: str | None = None):  # type: ignore[no-untyped-def]
    async with Client(Transport(core.client_config())) as client:
        resource = await client.dynamic.resource(api_version, kind)
        return await client.dynamic.get(resource, name, namespace)


async def served_certificate(server: AggregatedServer) -> bytes:
    """The certificate the listener presents (PEM), read without verifying it."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    host, port = server.url.removeprefix("https://").rsplit(":", 1)
    _, writer = await asyncio.open_connection(host, int(port), ssl=context)
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    writer.close()
    return ssl.DER_cert_to_PEM_cert(der).encode()


async def raw_get(core: TestAPIServer, path: str) -> tuple[int, str]:
    """A GET through the test server as its admin: the status and the body as text."""
    import aiohttp

    headers = {"Authorization": f"Bearer {core.token}"}
    assert core.certificate is not None
    async with (
        aiohttp.ClientSession() as session,
        session.get(core.url + path, headers=headers, ssl=core.certificate.client_context()) as response,
    ):
        return response.status, await response.text()


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await asyncio.sleep(0.05)


async def test_the_ca_is_injected_and_the_aggregator_verifies_the_server_with_it(
    core: TestAPIServer,
    group: APIGroupVersion,
    kubectl_binary: str,
    tmp_path: Path,
) -> None:
    options = self_managed(rotate_interval=3600)  # rounds by hand below, after the first one at start
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        secret = await get_objects(core, "v1", "Secret", SECRET, "default")
        assert secret["type"] == "kubernetes.io/tls"
        ca = base64.b64decode(secret["data"]["ca.crt"])
        served = await served_certificate(server)
        # The listener serves the Secret's certificate, made for the Service's names, signed by its CA.
        assert x509.load_pem_x509_certificate(served) == x509.load_pem_x509_certificate(
            base64.b64decode(secret["data"]["tls.crt"])
        )
        assert issued_by(served, ca)
        assert f"{SERVICE}.default.svc" in subject_hosts(served)

        # Registered without a caBundle: kube's availability check does not verify (Available), but the proxy does,
        # against the system's roots, which do not know pyop's CA.
        registered = await core.register_api_service("wardle.example.com", "v1alpha1", server.url)
        assert "caBundle" not in registered["spec"]
        kubeconfig = core.kubeconfig_path
        path = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
        refused = await kubectl(kubectl_binary, kubeconfig, tmp_path, "get", "--raw", path)
        assert refused.returncode != 0
        assert "503" in refused.stderr or "ServiceUnavailable" in refused.stderr, refused.stderr
        status, body = await raw_get(core, path)
        assert status == 503 and "tls: failed to verify certificate" in body, body

        await server.config.serving_certificates.rotator.tick()  # type: ignore[union-attr]
        apiservice = await get_objects(core, "apiregistration.k8s.io/v1", "APIService", APISERVICE)
        assert base64.b64decode(apiservice["spec"]["caBundle"]) == ca
        conditions = {c["type"]: c for c in apiservice["status"]["conditions"]}
        assert conditions["Available"]["status"] == "True"

        async def listed() -> bool:  # once the aggregator has fetched the server's discovery again
            result = await kubectl(kubectl_binary, kubeconfig, tmp_path / "after", "get", "flunders", "-n", "default")
            return result.returncode == 0

        await eventually(listed)
        created = await kubectl(
            kubectl_binary, kubeconfig, tmp_path, "create", "-f", "-",
            stdin=FLUNDER,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        read = await kubectl(
            kubectl_binary, kubeconfig, tmp_path, "get", "flunder", "f1", "-n", "default", "-o", "name"
        )
        assert read.stdout.strip() == "flunder.wardle.example.com/f1", read.stderr


async def test_a_cabundle_someone_removes_is_put_back_and_a_wrong_one_is_refused(
    core: TestAPIServer, group: APIGroupVersion, kubectl_binary: str, tmp_path: Path
) -> None:
    options = self_managed(rotate_interval=0.1)
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        stranger = server.config.serving.certificate_pem  # the self-signed pair of --cert-dir it started with
        assert server.ca_pem != stranger
        # Someone applies the APIService with a caBundle that is not the server's CA (the aggregator would verify
        # the server against it and refuse it): the next round puts the server's own CA back.
        await core.register_api_service("wardle.example.com", "v1alpha1", server.url, ca_bundle=stranger)

        async def injected() -> bool:
            apiservice = await get_objects(core, "apiregistration.k8s.io/v1", "APIService", APISERVICE)
            return base64.b64decode(apiservice["spec"].get("caBundle", "")) == server.ca_pem

        await eventually(injected)
        listed = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "get", "flunders", "-n", "default")
        assert listed.returncode == 0, listed.stderr
        # Ready (the serving-certificate check of /readyz) once the Secret's certificate is served.
        await server.config.serving_certificates.readiness()  # type: ignore[union-attr]
        assert server.ca_file.read_bytes() == server.ca_pem  # for clients that take a CA file
