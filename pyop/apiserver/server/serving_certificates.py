"""An aggregated API server's own serving certificate (``--serving-cert-secret``; ``--certificates=pyop`` of
``pyop create apiserver``): no cert-manager.

kube-aggregator verifies an aggregated server's certificate with its APIService's ``spec.caBundle``, for the name
``<service>.<namespace>.svc``. With ``--serving-cert-secret`` the server does what cert-manager and its CA injector
would do, with the webhooks' machinery (`pyop.webhook.certificates`): its `Rotator` makes a CA and a serving
certificate for the Service's DNS names, keeps them in the Secret, renews them with an overlap, and keeps the CA
bundle in the caBundle of the APIService of every group version the server serves (``<version>.<group>``); its
`ReplicaSync` writes the Secret's pair into ``--cert-dir`` and loads it into the listener. Every replica runs both
(an aggregated server has no leader election): the Secret's resourceVersion settles a race, and each round puts the
bundle back into an APIService someone re-applied without it.

At start one round of each runs before the server listens (so a test or a probe meets the Secret's certificate at
once); when the cluster cannot be reached then, the server serves the self-signed pair of ``--cert-dir`` and its
``serving-certificate`` readiness check fails until a later round loads the Secret's pair. The RBAC this needs:
get/update (and create) of the Secret in its namespace, get/update/patch of its APIServices.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry

from pyop.manager.certwatcher import CertWatcher
from pyop.webhook.certificates import CertificateSettings, ReplicaSync, Rotator

if TYPE_CHECKING:
    from pyop.apiserver.server.options import SecureServingOptions
    from pyop.client.dynamic import DynamicClient

log = logging.getLogger("pyop.apiserver.certificates")

IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
READINESS_CHECK = "serving-certificate"
EXPIRY_METRIC = "pyop_apiserver_serving_certificate_expiration_timestamp_seconds"


def pod_namespace(path: Path = IN_CLUSTER_NAMESPACE) -> str:
    """The pod's namespace from its service-account mount ("" off a cluster), as client-go's in-cluster config."""
    try:
        return path.read_text().strip()
    except OSError:
        return ""


@dataclass
class _ServedFiles:
    """The listener's pair in --cert-dir and the watcher that loads it (`pyop.webhook.certificates.ServedFiles`)."""

    certificate: Path
    key: Path
    cert_watcher: CertWatcher | None = None


def apiservice_names(group_versions: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The APIService of each (group, version): ``<version>.<group>``, as kube-aggregator requires."""
    return tuple(dict.fromkeys(f"{version}.{group}" for group, version in group_versions))


class SelfManagedCertificates:
    """The rotator and the replica sync of one server (`start` with its listener's context, `stop`)."""

    def __init__(
        self,
        client: DynamicClient,
        settings: CertificateSettings,
        certificate_file: Path,
        key_file: Path,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.files = _ServedFiles(certificate_file, key_file)
        self.rotator = Rotator(client, settings)
        self.sync = ReplicaSync(client, settings, self.files, registry, metric=EXPIRY_METRIC)
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    def from_options(
        cls,
        serving: SecureServingOptions,
        client: DynamicClient,
        certificate_file: Path,
        key_file: Path,
        registry: CollectorRegistry | None = None,
    ) -> SelfManagedCertificates:
        """From the --serving-cert-* flags; `ValueError` when no namespace is given and none can be found."""
        namespace = serving.serving_cert_namespace or pod_namespace()
        if not namespace:
            raise ValueError(
                "--serving-cert-secret needs --serving-cert-namespace here (not in a pod: no service-account "
                f"namespace at {IN_CLUSTER_NAMESPACE})"
            )
        settings = CertificateSettings(
            namespace=namespace,
            secret_name=serving.serving_cert_secret,
            service_name=serving.serving_cert_service,
            rotate_interval=serving.rotate_interval,
            sync_interval=serving.sync_interval,
        )
        return cls(client, settings, certificate_file, key_file, registry)

    @property
    def bundle(self) -> bytes:
        """The CA bundle the APIServices get (PEM; empty until the Secret was read)."""
        return self.sync.bundle

    def ca_file(self) -> Path:
        """The bundle as a file next to the served pair (``ca.crt``), for clients that take a CA file."""
        path = self.files.certificate.with_name("ca.crt")
        if not path.is_file() or path.read_bytes() != self.bundle:
            path.write_bytes(self.bundle)
        return path

    async def readiness(self) -> None:
        """The ``serving-certificate`` readiness check: the Secret's certificate is served and valid."""
        if not self.sync.ready():
            raise RuntimeError(f"not serving the certificate of Secret {self.settings.secret_name} yet")

    async def start(self, context: ssl.SSLContext, group_versions: Sequence[tuple[str, str]]) -> None:
        """One round of each now (errors logged: the loops retry), then both loops in the background."""
        self.settings.targets = replace(self.settings.targets, apiservices=apiservice_names(group_versions))
        self.files.cert_watcher = CertWatcher(
            context, self.files.certificate, self.files.key, interval=self.settings.sync_interval
        )
        for step, what in ((self.rotator.tick, "rotating"), (self.sync.tick, "loading")):
            try:
                await step()
            except Exception as error:  # noqa: BLE001 - the cluster may come later; the loops retry
                log.warning("%s the serving certificate failed at start (retrying): %s", what, error)
        self._tasks = [
            asyncio.create_task(self.rotator.run(), name="pyop-apiserver-certificate-rotator"),
            asyncio.create_task(self.sync.run(), name="pyop-apiserver-certificate-sync"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []


__all__ = ["EXPIRY_METRIC", "READINESS_CHECK", "SelfManagedCertificates", "apiservice_names", "pod_namespace"]
