"""Self-managed webhook certificates: the rotation schedule on a fake clock, the Secret, CA injection into the
operator's webhook configuration and CRD on the test API server, and a full CA rotation served by three replicas
behind one Service address under continuous admission and conversion calls, with no failed call."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from prometheus_client import CollectorRegistry
from testing_server.conversion_fixtures import GROUP as CONV_GROUP
from testing_server.conversion_fixtures import good_answer, widget, widget_crd

from pyop.client import Client
from pyop.manager import Manager, ManagerOptions
from pyop.manager.certificates import write_self_signed_certificate
from pyop.testing import TestAPIServer, schemaless_crd
from pyop.testing.certificates import served_certificate
from pyop.webhook.certificates import (
    CertificateSettings,
    InjectionTargets,
    ReplicaSync,
    RotationPolicy,
    Rotator,
    authority,
)
from pyop.webhook.certificates.authority import issued_by, split_bundle, subject_hosts
from pyop.webhook.certificates.rotation import CA_OVERLAP, LEAF_OVERLAP, STABLE, plan
from pyop.webhook.certificates.runtime import EXPIRY_METRIC, decode_secret, encode_secret, setup_certificates
from pyop.webhook.server import WebhookServer

HOSTS = ["webhook-service.system.svc", "webhook-service.system.svc.cluster.local", "127.0.0.1"]
POLICY = RotationPolicy()
T0 = datetime(2030, 1, 1, tzinfo=UTC)
CA_RENEWAL = T0 + POLICY.ca_validity * (1 - POLICY.renew_fraction) + timedelta(seconds=1)
GUARD = 10.0


class FakeClock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


def step(state: Any, now: datetime) -> Any:
    return plan(state, common_name="webhook-service", hosts=HOSTS, now=now, policy=POLICY)


# --- the schedule ------------------------------------------------------------------------------------------


def test_a_ca_rotation_trusts_the_new_ca_before_using_it_and_drops_the_old_one_after() -> None:
    first = step(None, T0)
    assert first.phase == STABLE and len(first.trusted) == 1 and issued_by(first.serving.certificate, first.trusted[0])
    assert set(HOSTS) <= set(subject_hosts(first.serving.certificate))
    assert step(first, T0 + timedelta(days=30)) is None  # nothing due

    trusting = step(first, CA_RENEWAL)
    assert trusting.phase == CA_OVERLAP
    assert trusting.trusted[1:] == first.trusted and trusting.serving == first.serving  # old certificate kept
    assert step(trusting, CA_RENEWAL + POLICY.overlap - timedelta(seconds=1)) is None  # waits the overlap

    serving = step(trusting, CA_RENEWAL + POLICY.overlap)
    assert serving.phase == LEAF_OVERLAP and serving.trusted == trusting.trusted  # both CAs still trusted
    assert issued_by(serving.serving.certificate, serving.trusted[0])
    assert not issued_by(serving.serving.certificate, first.trusted[0])

    assert step(serving, CA_RENEWAL + POLICY.overlap * 2 - timedelta(seconds=1)) is None
    done = step(serving, CA_RENEWAL + POLICY.overlap * 2)
    assert done.phase == STABLE and done.trusted == serving.trusted[:1] and done.serving == serving.serving


def test_a_serving_certificate_is_renewed_in_its_last_third_by_the_same_ca() -> None:
    first = step(None, T0)
    renewal = T0 + POLICY.serving_validity * (1 - POLICY.renew_fraction)
    assert step(first, renewal - timedelta(seconds=1)) is None
    renewed = step(first, renewal)
    assert renewed.trusted == first.trusted and renewed.serving != first.serving
    assert issued_by(renewed.serving.certificate, first.trusted[0])


def test_new_hosts_get_a_new_serving_certificate() -> None:
    first = step(None, T0)
    moved = plan(first, common_name="webhook-service", hosts=["other.system.svc"], now=T0, policy=POLICY)
    assert moved is not None and "other.system.svc" in subject_hosts(moved.serving.certificate)


def test_a_policy_whose_overlaps_do_not_fit_the_renewal_window_is_refused() -> None:
    with pytest.raises(ValueError, match="two overlaps"):
        RotationPolicy(ca_validity=timedelta(hours=1), overlap=timedelta(minutes=20))


def test_the_secret_holds_the_whole_state() -> None:
    state = step(step(None, T0), CA_RENEWAL)
    secret = encode_secret(state, "webhook-server-cert", "system")
    assert secret["type"] == "kubernetes.io/tls"
    assert decode_secret(secret) == state
    assert decode_secret({"data": {"tls.crt": "eA=="}}) is None


# --- on the test API server ----------------------------------------------------------------------------------


def allow(body: bytes) -> dict[str, Any]:
    review = json.loads(body)
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": review["request"]["uid"], "allowed": True},
    }


@dataclass
class Replica:
    server: WebhookServer
    sync: ReplicaSync
    task: asyncio.Task[None] | None = None


class RoundRobin:
    """A Service: TCP connections spread over the replicas in turn (TLS passes through untouched)."""

    def __init__(self, backends: list[int]) -> None:
        self.backends = itertools.cycle(backends)
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._connect, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        port = next(self.backends)
        try:
            backend_reader, backend_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.close()
            return

        async def pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    target.write(data)
                    await target.drain()
            with contextlib.suppress(OSError):
                target.close()

        await asyncio.gather(pipe(reader, backend_writer), pipe(backend_reader, writer))

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()


@dataclass
class Cluster:
    server: TestAPIServer
    client: Client
    clock: FakeClock
    settings: CertificateSettings
    rotator: Rotator
    replicas: list[Replica]
    url: str
    failures: list[str] = field(default_factory=list)
    calls: int = 0

    def secret_state(self) -> Any:
        return decode_secret(self.server.store.get("secrets", "system", "webhook-server-cert"))

    def configuration_bundle(self) -> bytes:
        stored = self.server.store.get("validatingwebhookconfigurations.admissionregistration.k8s.io", "", "vcheck")
        assert stored is not None
        return base64.b64decode(stored["webhooks"][0]["clientConfig"]["caBundle"])

    def crd_bundle(self) -> bytes:
        stored = self.server.store.get("customresourcedefinitions.apiextensions.k8s.io", "", f"widgets.{CONV_GROUP}")
        assert stored is not None
        return base64.b64decode(stored["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"])

    async def propagated(self) -> None:
        """Until every replica serves the Secret's certificate (the replicas sync every 20 ms)."""
        state = self.secret_state()
        async with asyncio.timeout(GUARD):
            while not all(replica.sync.serving == state.serving for replica in self.replicas):
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # a few more calls on the new state

    async def rotate_at(self, moment: datetime) -> Any:
        self.clock.now = moment
        state = await self.rotator.tick()
        await self.propagated()
        return state


def configuration(url: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "vcheck"},
        "webhooks": [
            {
                "name": "vgizmo.kb.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {"url": f"{url}/validate"},
                "rules": [
                    {
                        "apiGroups": ["hooks.pyop.dev"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["gizmos"],
                    }
                ],
            }
        ],
    }


@pytest_asyncio.fixture
async def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Cluster]:
    """Three replicas behind one address; the fake clock starts now (real TLS checks validity against the real
    time, so certificates issued at fake times months ahead are backdated to stay valid now)."""
    monkeypatch.setattr(authority, "BACKDATE", timedelta(days=800))
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    async with TestAPIServer() as server:
        server.operations.create(
            server.resources.lookup("", "v1", "namespaces"), "", {"metadata": {"name": "system"}}, _options()
        )
        server.add_crd(schemaless_crd("hooks.pyop.dev", "Gizmo", "gizmos", version="v1"))
        replicas = []
        for index in range(3):
            folder = tmp_path / f"replica-{index}"
            write_self_signed_certificate(folder, ["127.0.0.1"])  # the throwaway pair setup_certificates writes
            webhook_server = WebhookServer(host="127.0.0.1", port=0, cert_dir=str(folder))

            async def validate(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
                return 200, allow(body)

            async def convert(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
                return 200, good_answer(json.loads(body))

            webhook_server.register("/validate", validate)
            webhook_server.register("/convert", convert)
            await webhook_server.start()
            replicas.append(webhook_server)
        balancer = RoundRobin([replica.http.bound[1] for replica in replicas])  # type: ignore[union-attr,index]
        url = f"https://127.0.0.1:{await balancer.start()}"
        server.add_crd(widget_crd(f"{url}/convert"))
        server.install_webhooks(configuration(url), url=url)  # no caBundle yet: the rotator injects it
        client = Client(server.client_config())
        settings = CertificateSettings(
            namespace="system",
            extra_hosts=("127.0.0.1",),
            targets=InjectionTargets(validating=("vcheck",), crds=(f"widgets.{CONV_GROUP}",)),
            sync_interval=0.02,
            clock=clock,
        )
        rotator = Rotator(client.dynamic, settings)
        syncs = [ReplicaSync(client.dynamic, settings, replica, CollectorRegistry()) for replica in replicas]
        cluster = Cluster(server, client, clock, settings, rotator, [], url)
        cluster.replicas = [Replica(replica, sync) for replica, sync in zip(replicas, syncs, strict=True)]
        try:
            yield cluster
        finally:
            for replica in cluster.replicas:
                if replica.task is not None:
                    replica.task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await replica.task
                await replica.server.stop()
            await balancer.stop()
            await client.close()


def _options() -> Any:
    from pyop.apiserver.registry.operations import WriteOptions

    return WriteOptions(field_manager="test")


def start_syncing(cluster: Cluster) -> None:
    for replica in cluster.replicas:
        replica.task = asyncio.create_task(replica.sync.run())


@contextlib.asynccontextmanager
async def load(cluster: Cluster, workers: int = 4) -> AsyncIterator[None]:
    """Creates (an admission call each) and v2 reads (a conversion call each) without pause."""
    gizmos = cluster.client.dynamic
    counter = itertools.count()

    async def worker() -> None:
        gizmo_resource = await gizmos.resource("hooks.pyop.dev/v1", "Gizmo")
        widgets_v2 = await gizmos.resource(f"{CONV_GROUP}/v2", "Widget")
        while True:
            number = next(counter)
            try:
                await gizmos.create(gizmo_resource, {"metadata": {"name": f"g{number}"}, "spec": {}}, "default")
                await gizmos.get(widgets_v2, "w", "default")
                cluster.calls += 2
            except Exception as error:  # every failure counts, whatever it is
                cluster.failures.append(f"{type(error).__name__}: {error}")

    await cluster.client.dynamic.create(
        await gizmos.resource(f"{CONV_GROUP}/v1", "Widget"), widget("w", "v1", 5), "default"
    )
    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def bootstrap(cluster: Cluster) -> Any:
    state = await cluster.rotator.tick()
    start_syncing(cluster)
    await cluster.propagated()
    return state


async def test_the_leader_makes_the_secret_and_injects_its_ca_into_the_configuration_and_the_crd(
    cluster: Cluster,
) -> None:
    assert not any(replica.sync.ready() for replica in cluster.replicas)  # the throwaway pair is not ready
    state = await bootstrap(cluster)
    assert cluster.secret_state() == state
    assert cluster.configuration_bundle() == state.bundle and cluster.crd_bundle() == state.bundle
    for replica in cluster.replicas:
        assert replica.sync.ready()
        served = await served_certificate("127.0.0.1", replica.server.http.bound[1])  # type: ignore[union-attr,index]
        assert served == _der(state.serving.certificate)
    # A re-applied configuration with no caBundle is repaired at the next tick.
    cluster.server.install_webhooks(configuration(cluster.url), url=cluster.url)
    await cluster.rotator.tick()
    assert cluster.configuration_bundle() == state.bundle


async def test_a_full_ca_rotation_under_load_fails_no_call(cluster: Cluster) -> None:
    first = await bootstrap(cluster)
    async with load(cluster):
        await asyncio.sleep(0.2)
        start = cluster.clock.now
        renewed = await cluster.rotate_at(start + POLICY.serving_validity * (2 / 3) + timedelta(seconds=1))
        assert renewed.trusted == first.trusted and renewed.serving != first.serving
        ca_renewal = start + (CA_RENEWAL - T0)
        trusting = await cluster.rotate_at(ca_renewal)
        assert trusting.phase == CA_OVERLAP and cluster.configuration_bundle() == trusting.bundle
        serving = await cluster.rotate_at(ca_renewal + POLICY.overlap)
        assert serving.phase == LEAF_OVERLAP
        done = await cluster.rotate_at(ca_renewal + POLICY.overlap * 2)
        assert done.phase == STABLE
        await asyncio.sleep(0.2)
    assert cluster.failures == [], cluster.failures[:5]
    assert cluster.calls > 20  # calls were made all along (a figure, not a speed claim)
    assert split_bundle(cluster.configuration_bundle()) == [done.trusted[0]] == split_bundle(cluster.crd_bundle())
    assert not issued_by(done.serving.certificate, first.trusted[0])
    for replica in cluster.replicas:
        served = await served_certificate("127.0.0.1", replica.server.http.bound[1])  # type: ignore[union-attr,index]
        assert served == _der(done.serving.certificate)
        assert replica.sync.ready()


async def test_rotating_the_ca_and_the_certificate_at_once_fails_calls(cluster: Cluster) -> None:
    """The control: what the schedule prevents (kubebuilder #5253) is seen by the same load."""
    await bootstrap(cluster)
    for replica in cluster.replicas:  # the replicas are slower than the API server to pick the change up
        assert replica.task is not None
        replica.task.cancel()
    moment = cluster.clock.now + (CA_RENEWAL - T0)
    at_once = plan(None, common_name="webhook-service", hosts=cluster.settings.hosts, now=moment, policy=POLICY)
    assert at_once is not None
    async with load(cluster):
        await asyncio.sleep(0.1)
        await cluster.rotator.inject(at_once.bundle)
        await asyncio.sleep(0.3)
    assert any("certificate" in failure.lower() for failure in cluster.failures), cluster.failures[:3]


async def test_the_expiry_metric_and_readiness_follow_the_served_certificate(cluster: Cluster) -> None:
    state = await bootstrap(cluster)
    sync = cluster.replicas[0].sync
    registry = CollectorRegistry()
    probe = ReplicaSync(cluster.client.dynamic, cluster.settings, cluster.replicas[0].server, registry)
    await probe.tick()
    expires = registry.get_sample_value(EXPIRY_METRIC, {"certificate": "serving"})
    assert expires == _not_after(state.serving.certificate).timestamp()
    assert registry.get_sample_value(EXPIRY_METRIC, {"certificate": "ca"}) == _not_after(state.trusted[0]).timestamp()
    cluster.clock.now = _not_after(state.serving.certificate) + timedelta(seconds=1)
    assert not sync.ready()  # expired: not ready until the leader renews it


async def test_setup_wires_the_rotator_on_the_leader_and_the_sync_on_every_replica(tmp_path: Path) -> None:
    async with TestAPIServer() as server:
        manager = Manager(
            ManagerOptions(
                config=server.client_config(),
                webhook_host="127.0.0.1",
                webhook_port=0,
                webhook_cert_path=str(tmp_path / "certs"),
                handle_signals=False,
            )
        )

        async def validate(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
            return 200, allow(body)

        manager.get_webhook_server().register("/validate", validate)
        settings = CertificateSettings(namespace="default", extra_hosts=("127.0.0.1",), sync_interval=0.02)
        sync = setup_certificates(manager, settings)
        assert (tmp_path / "certs" / "tls.crt").is_file()  # a throwaway pair so the server can listen
        async with manager:
            async with asyncio.timeout(GUARD):
                while not sync.ready():
                    await asyncio.sleep(0.02)
            secret = server.store.get("secrets", "default", "webhook-server-cert")
            assert secret is not None and decode_secret(secret) is not None
            served = await served_certificate("127.0.0.1", manager.get_webhook_server().http.bound[1])  # type: ignore[union-attr,index]
            assert served == _der(decode_secret(secret).serving.certificate)  # type: ignore[union-attr]


def _der(pem: bytes) -> bytes:
    import ssl

    return ssl.PEM_cert_to_DER_cert(pem.decode())


def _not_after(pem: bytes) -> datetime:
    from pyop.webhook.certificates.authority import not_after

    return not_after(pem)


def test_the_environment_of_config_default_configures_the_certificates(tmp_path: Path) -> None:
    from pyop.webhook.certificates import certificates_from_environment

    def manager() -> Manager:
        made = Manager(ManagerOptions(handle_signals=False, webhook_cert_path=str(tmp_path / "certs")))
        made.get_webhook_server()
        return made

    assert certificates_from_environment(manager(), {}) is None  # cert-manager mounts the certificate
    with pytest.raises(ValueError, match="POD_NAMESPACE"):
        certificates_from_environment(manager(), {"WEBHOOK_CERTIFICATES": "pyop"})
    sync = certificates_from_environment(
        manager(),
        {
            "WEBHOOK_CERTIFICATES": "pyop",
            "POD_NAMESPACE": "fleet-system",
            "WEBHOOK_SERVICE_NAME": "fleet-webhook-service",
            "WEBHOOK_VALIDATING_CONFIGURATIONS": "fleet-validating-webhook-configuration",
            "WEBHOOK_CONVERSION_CRDS": "a.example.com, b.example.com",
        },
    )
    assert sync is not None
    settings = sync.settings
    assert settings.hosts[:2] == [
        "fleet-webhook-service.fleet-system.svc",
        "fleet-webhook-service.fleet-system.svc.cluster.local",
    ]
    assert settings.targets == InjectionTargets(
        validating=("fleet-validating-webhook-configuration",), crds=("a.example.com", "b.example.com")
    )
