"""Self-managed serving certificates at run time: one rotator, every replica serving from the Secret.

``--certificates=pyop`` instead of cert-manager, for webhooks (the manager) and aggregated API servers
(`pyop.apiserver.server.serving_certificates`). The state of ``rotation.py`` lives in one Secret of the server's
namespace (``tls.crt``/``tls.key`` served, ``ca.crt`` the trusted bundle, ``ca.key`` the signing CA's key, the
phase in annotations). The ``Rotator`` (the manager's leader; every replica of an aggregated server, which has no
leader election: the Secret's resourceVersion decides a race and the loser reads the winner's state next tick)
plans the next state each tick and injects the bundle into its ``InjectionTargets``: the operator's own
Mutating/ValidatingWebhookConfigurations and the conversion section of its CRDs, or the aggregated server's
APIServices (``spec.caBundle``, what kube-aggregator verifies the server with); by name, as the generated RBAC
allows those objects and nothing else. It adds trust before storing a state that uses it and stores a state before
removing trust it no longer uses, and every tick puts the bundle back where someone re-applied over it. The
``ReplicaSync`` runs on every replica (the API server calls any of them): it reads the Secret, writes the pair into
the server's certificate files and has its ``CertWatcher`` load it at once; it reports readiness (the Secret's
certificate is served and not expired) and the expiry metric.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, Gauge

from pyop.client.errors import AlreadyExistsError, ConflictError, NotFoundError
from pyop.webhook.certificates.authority import KeyPair, not_after
from pyop.webhook.certificates.rotation import PHASES, CertificateState, RotationPolicy, plan

if TYPE_CHECKING:
    from pyop.client.dynamic import DynamicClient
    from pyop.manager import Manager
    from pyop.manager.certwatcher import CertWatcher

__all__ = [
    "CertificateSettings",
    "InjectionTargets",
    "ReplicaSync",
    "Rotator",
    "ServedFiles",
    "certificates_from_environment",
    "decode_secret",
    "encode_secret",
    "setup_certificates",
]

log = logging.getLogger("pyop.webhook.certificates")

PHASE_ANNOTATION = "pyop.dev/certificate-phase"
SINCE_ANNOTATION = "pyop.dev/certificate-phase-since"
EXPIRY_METRIC = "pyop_webhook_certificate_expiration_timestamp_seconds"
READINESS_CHECK = "webhook-certificate"


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class InjectionTargets:
    """The objects whose caBundle the rotator keeps: its own, by name (kustomize's prefixed names; APIServices are
    named ``<version>.<group>``)."""

    mutating: tuple[str, ...] = ()
    validating: tuple[str, ...] = ()
    crds: tuple[str, ...] = ()
    apiservices: tuple[str, ...] = ()


class ServedFiles(Protocol):
    """Where a server loads its serving pair from, and the watcher that loads it (a `WebhookServer` is one)."""

    @property
    def certificate(self) -> Path: ...

    @property
    def key(self) -> Path: ...

    @property
    def cert_watcher(self) -> CertWatcher | None: ...


@dataclass
class CertificateSettings:
    """Where the certificates live and whom they are for; the defaults are Kubebuilder's kustomize names."""

    namespace: str
    secret_name: str = "webhook-server-cert"
    service_name: str = "webhook-service"
    extra_hosts: Sequence[str] = ()
    targets: InjectionTargets = field(default_factory=InjectionTargets)
    policy: RotationPolicy = field(default_factory=RotationPolicy)
    rotate_interval: float = 60.0  # seconds between the leader's checks
    sync_interval: float = 10.0  # seconds between a replica's reads of the Secret
    clock: Callable[[], datetime] = _utc_now

    @property
    def hosts(self) -> list[str]:
        """The names the API server calls the webhook Service by."""
        service = f"{self.service_name}.{self.namespace}.svc"
        return list(dict.fromkeys([service, f"{service}.cluster.local", *self.extra_hosts]))


# --- the Secret -----------------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def encode_secret(state: CertificateState, name: str, namespace: str) -> dict[str, Any]:
    """The Secret holding ``state`` (``kubernetes.io/tls``, so tools that read TLS Secrets read it)."""
    since = (state.changed_at or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": {PHASE_ANNOTATION: state.phase, SINCE_ANNOTATION: since},
            "labels": {"app.kubernetes.io/managed-by": "pyop"},
        },
        "type": "kubernetes.io/tls",
        "data": {
            "ca.crt": _b64(state.bundle),
            "ca.key": _b64(state.ca_key),
            "tls.crt": _b64(state.serving.certificate),
            "tls.key": _b64(state.serving.key),
        },
    }


def decode_secret(secret: dict[str, Any] | None) -> CertificateState | None:
    """The state a Secret holds; None when it is missing or incomplete (the leader then starts afresh)."""
    from pyop.webhook.certificates.authority import split_bundle

    if not secret:
        return None
    data = secret.get("data") or {}
    try:
        decoded = {key: base64.b64decode(data[key]) for key in ("ca.crt", "ca.key", "tls.crt", "tls.key")}
    except (KeyError, ValueError, TypeError):
        return None
    annotations = (secret.get("metadata") or {}).get("annotations") or {}
    phase = annotations.get(PHASE_ANNOTATION, "stable")
    try:
        since = datetime.strptime(annotations.get(SINCE_ANNOTATION, ""), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        since = None
    trusted = tuple(split_bundle(decoded["ca.crt"]))
    if not trusted or phase not in PHASES:
        return None
    return CertificateState(trusted, decoded["ca.key"], KeyPair(decoded["tls.crt"], decoded["tls.key"]), phase, since)


# --- the leader ---------------------------------------------------------------------------------------------


class Rotator:
    """The leader's loop: plan, inject, store."""

    def __init__(self, client: DynamicClient, settings: CertificateSettings) -> None:
        self.client = client
        self.settings = settings
        self.rotations = 0

    async def _secret(self) -> dict[str, Any] | None:
        secrets = await self.client.resource("v1", "Secret")
        try:
            return await self.client.get(secrets, self.settings.secret_name, self.settings.namespace)
        except NotFoundError:
            return None

    async def tick(self) -> CertificateState | None:
        """One round; returns the state in force afterwards (None if storing lost a race: next tick)."""
        settings = self.settings
        secret = await self._secret()
        current = decode_secret(secret)
        planned = plan(
            current,
            common_name=settings.service_name,
            hosts=settings.hosts,
            now=settings.clock(),
            policy=settings.policy,
        )
        if planned is None:
            assert current is not None
            await self.inject(current.bundle)  # repairs a bundle someone re-applied over
            return current
        adds_trust = current is None or not set(planned.trusted) <= set(current.trusted)
        if adds_trust:
            await self.inject(planned.bundle)
        if not await self._store(secret, planned):
            return None
        if not adds_trust:
            await self.inject(planned.bundle)
        self.rotations += 1
        log.info("serving certificates changed", extra={"phase": planned.phase, "secret": settings.secret_name})
        return planned

    async def _store(self, secret: dict[str, Any] | None, state: CertificateState) -> bool:
        settings = self.settings
        body = encode_secret(state, settings.secret_name, settings.namespace)
        secrets = await self.client.resource("v1", "Secret")
        try:
            if secret is None:
                await self.client.create(secrets, body, settings.namespace)
            else:
                body["metadata"]["resourceVersion"] = secret["metadata"]["resourceVersion"]
                await self.client.update(secrets, body, settings.namespace)
        except (AlreadyExistsError, ConflictError):
            log.info("the certificate Secret changed meanwhile; planning again at the next tick")
            return False
        return True

    async def inject(self, bundle: bytes) -> None:
        """Set ``bundle`` as the caBundle of every target that exists (a missing one is installed later)."""
        encoded = _b64(bundle)
        targets = self.settings.targets
        kinds = (
            ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", targets.mutating),
            ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", targets.validating),
        )
        for api_version, kind, names in kinds:
            if not names:
                continue
            resource = await self.client.resource(api_version, kind)
            for name in names:
                await self._inject_one(resource, name, encoded, _webhook_client_configs)
        if targets.crds:
            resource = await self.client.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            for name in targets.crds:
                await self._inject_one(resource, name, encoded, _conversion_client_configs)
        if targets.apiservices:
            resource = await self.client.resource("apiregistration.k8s.io/v1", "APIService")
            for name in targets.apiservices:
                await self._inject_one(resource, name, encoded, _apiservice_client_configs)

    async def _inject_one(
        self, resource: Any, name: str, encoded: str, client_configs: Callable[[dict[str, Any]], list[dict[str, Any]]]
    ) -> None:
        try:
            obj = await self.client.get(resource, name)
        except NotFoundError:
            return
        configs = client_configs(obj)
        if all(config.get("caBundle") == encoded for config in configs):
            return
        for config in configs:
            config["caBundle"] = encoded
        try:
            await self.client.update(resource, obj)
        except ConflictError:
            log.info("%s %s changed meanwhile; injecting again at the next tick", obj.get("kind", "object"), name)

    async def run(self) -> None:
        """Tick every ``rotate_interval`` seconds; errors are logged and retried, never fatal to the manager."""
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("rotating the serving certificates failed; retrying")
            await asyncio.sleep(self.settings.rotate_interval)


def _webhook_client_configs(configuration: dict[str, Any]) -> list[dict[str, Any]]:
    return [hook.setdefault("clientConfig", {}) for hook in configuration.get("webhooks") or []]


def _apiservice_client_configs(apiservice: dict[str, Any]) -> list[dict[str, Any]]:
    """An APIService's spec holds its caBundle; a Local one (no service) has none, and one that skips verification
    may not have one (apiregistration's validation refuses both together)."""
    spec = apiservice.setdefault("spec", {})
    if not spec.get("service") or spec.get("insecureSkipTLSVerify"):
        return []
    return [spec]


def _conversion_client_configs(crd: dict[str, Any]) -> list[dict[str, Any]]:
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return []
    return [conversion.setdefault("webhook", {}).setdefault("clientConfig", {})]


# --- every replica ------------------------------------------------------------------------------------------


class ReplicaSync:
    """Keeps the server's certificate files equal to the Secret's pair; readiness and the expiry metric."""

    def __init__(
        self,
        client: DynamicClient,
        settings: CertificateSettings,
        server: ServedFiles,
        registry: CollectorRegistry | None = None,
        *,
        metric: str = EXPIRY_METRIC,
    ) -> None:
        self.client = client
        self.settings = settings
        self.server = server
        self.serving: KeyPair | None = None  # the Secret's pair, once written and loaded
        self.bundle: bytes = b""  # the Secret's trusted CAs (what is injected), once read
        self.expiry = Gauge(
            metric,
            "When the serving certificate and its CA expire (Unix time).",
            ["certificate"],
            registry=registry,
        )

    def ready(self) -> bool:
        """Readiness: the Secret's certificate is served and has not expired."""
        return self.serving is not None and self.settings.clock() < not_after(self.serving.certificate)

    async def tick(self) -> bool:
        """Read the Secret; True when a new pair went into service."""
        secrets = await self.client.resource("v1", "Secret")
        try:
            secret = await self.client.get(secrets, self.settings.secret_name, self.settings.namespace)
        except NotFoundError:
            return False  # the leader has not made it yet
        state = decode_secret(secret)
        if state is None:
            return False
        self.expiry.labels(certificate="serving").set(not_after(state.serving.certificate).timestamp())
        self.expiry.labels(certificate="ca").set(min(not_after(ca) for ca in state.trusted).timestamp())
        self.bundle = state.bundle
        if state.serving == self.serving:
            return False
        _write_atomically(self.server.key, state.serving.key, mode=0o600)
        _write_atomically(self.server.certificate, state.serving.certificate)
        watcher = self.server.cert_watcher
        if watcher is not None and not watcher.check():
            # The watcher saw no change (a file system reusing inode, size and time) or could not load the pair:
            # load it here, so that a bad pair raises (logged by run(), retried) instead of passing for served.
            watcher.context.load_cert_chain(self.server.certificate, self.server.key)
        self.serving = state.serving
        log.info("serving the certificate from the Secret", extra={"secret": self.settings.secret_name})
        return True

    async def run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("reading the serving certificate Secret failed; retrying")
            await asyncio.sleep(self.settings.sync_interval)


def _write_atomically(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write then rename, so that a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_bytes(data)
    os.chmod(staging, mode)
    os.replace(staging, path)


# --- wiring into a manager -----------------------------------------------------------------------------------


def setup_certificates(manager: Manager, settings: CertificateSettings) -> ReplicaSync:
    """Serve the manager's webhooks with self-managed certificates (call after registering the webhooks).

    Until the Secret's pair is loaded the server starts with a throwaway self-signed pair (it must listen to be
    probed) and the ``webhook-certificate`` readiness check fails, so the Service sends it no calls."""
    from pyop.manager.certificates import generate_self_signed_certificate

    server = manager.get_webhook_server()
    if not (server.certificate.is_file() and server.key.is_file()):
        certificate, key = generate_self_signed_certificate(settings.hosts, valid_for=timedelta(hours=1))
        _write_atomically(server.key, key, mode=0o600)
        _write_atomically(server.certificate, certificate)
    sync = ReplicaSync(manager.client.dynamic, settings, server, manager.metrics.registry)
    rotator = Rotator(manager.client.dynamic, settings)
    manager.add_runnable(rotator.run, needs_leader_election=True)
    manager.add_runnable(sync.run, needs_leader_election=False)
    manager.add_readyz_check(READINESS_CHECK, sync.ready)
    return sync


# The environment the kustomize config of `--certificates=pyop` gives the manager (config/default).
MODE_VARIABLE = "WEBHOOK_CERTIFICATES"


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (value or "").split(",") if name.strip())


def certificates_from_environment(
    manager: Manager, environ: Mapping[str, str] | None = None
) -> ReplicaSync | None:
    """``setup_certificates`` from the variables config/default sets when the project uses ``--certificates=pyop``
    (``WEBHOOK_CERTIFICATES=pyop``, ``POD_NAMESPACE``, the Secret, Service, configuration and CRD names); None, and
    nothing set up, otherwise (cert-manager mounts the certificate)."""
    env = os.environ if environ is None else environ
    if env.get(MODE_VARIABLE, "") != "pyop":
        return None
    namespace = env.get("POD_NAMESPACE", "")
    if not namespace:
        raise ValueError(f"{MODE_VARIABLE}=pyop needs POD_NAMESPACE (the downward API's metadata.namespace)")
    settings = CertificateSettings(
        namespace=namespace,
        secret_name=env.get("WEBHOOK_SECRET_NAME") or "webhook-server-cert",
        service_name=env.get("WEBHOOK_SERVICE_NAME") or "webhook-service",
        targets=InjectionTargets(
            mutating=_names(env.get("WEBHOOK_MUTATING_CONFIGURATIONS")),
            validating=_names(env.get("WEBHOOK_VALIDATING_CONFIGURATIONS")),
            crds=_names(env.get("WEBHOOK_CONVERSION_CRDS")),
        ),
    )
    return setup_certificates(manager, settings)
