"""Options -> Config: what the server runs with, from validated options and the recommended defaults.

k8s.io/apiserver's ``RecommendedOptions.ApplyTo`` steps, in order:

- serving: the --tls-cert-file pair, else a self-signed certificate kept in --cert-dir (``apiserver.crt``,
  ``apiserver.key``; made once, reused on restart: kube's MaybeDefaultWithSelfSignedCerts); with pyop's
  --serving-cert-secret that pair is replaced by the one the server makes and keeps in the Secret, its CA injected
  into the APIServices (`pyop.apiserver.server.serving_certificates`);
- authentication: the request-header settings from flags, else from ConfigMap kube-system/extension-apiserver-
  authentication (unless --authentication-skip-lookup; a failed lookup is fatal unless
  --authentication-tolerate-lookup-failure), the client CA likewise, TokenReviews through --authentication-kubeconfig
  (in-cluster by default; without any, bearer tokens are refused); the CA files and the ConfigMap's settings are
  read again while the server runs (`pyop.apiserver.authentication.dynamic`);
- authorization: SubjectAccessReviews through --authorization-kubeconfig (in-cluster by default; without any, only the
  always-allowed paths and groups pass);
- storage: the --storage-backend under the watch cache.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyop.apiserver.admission.namespaces import NamespaceLifecycle
from pyop.apiserver.authentication.delegating import (
    ClientCertificateAuthenticator,
    DelegatingAuthenticator,
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
    TokenReviewAuthenticator,
)
from pyop.apiserver.authentication.dynamic import ConfigMapSettings, FileBundle, reloading
from pyop.apiserver.authentication.x509 import CertificateBundle
from pyop.apiserver.authorization.delegating import DelegatingAuthorizer
from pyop.apiserver.server.cluster import (
    ClusterClient,
    ReviewObserver,
    client_ca_from_config_map,
    client_config,
    request_header_from_config_map,
)
from pyop.apiserver.server.health import Check, HealthChecks
from pyop.apiserver.server.metrics import ServerMetrics
from pyop.apiserver.server.options import OptionsError, RecommendedOptions, check
from pyop.apiserver.server.serving_certificates import READINESS_CHECK, SelfManagedCertificates
from pyop.apiserver.server.storage import store_for
from pyop.apiserver.storage.store import Store
from pyop.client import ConfigError

log = logging.getLogger("pyop.apiserver")

SERVING_HOSTS = ("localhost", "127.0.0.1")


@dataclass
class ServingConfig:
    bind_address: str
    port: int
    certificate_pem: bytes
    key_pem: bytes
    certificate_file: Path
    key_file: Path


@dataclass
class Config:
    """A server's complete configuration; `pyop.apiserver.server.aggregated.AggregatedServer` runs it."""

    options: RecommendedOptions
    serving: ServingConfig
    authenticator: DelegatingAuthenticator
    authorizer: DelegatingAuthorizer
    store: Store
    health: HealthChecks = field(default_factory=HealthChecks)
    metrics: ServerMetrics = field(default_factory=ServerMetrics)
    clients: list[ClusterClient] = field(default_factory=list)  # closed with the server
    core: ClusterClient | None = None  # the cluster's core API (namespaces), when reachable
    namespaces: NamespaceLifecycle | None = None  # admission of creates (None: disabled, or no cluster)
    serving_certificates: SelfManagedCertificates | None = None  # --serving-cert-secret's rotator and sync
    background: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)  # loops the server runs

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        close = getattr(self.store, "close", None)  # the backend's watch thread, connections, file lock
        if callable(close):
            close()


def serving_certificate(options: RecommendedOptions) -> ServingConfig:
    serving = options.secure_serving
    if serving.tls_cert_file:
        certificate_file, key_file = Path(serving.tls_cert_file), Path(serving.tls_private_key_file)
    else:
        folder = Path(serving.cert_dir)
        certificate_file, key_file = folder / "apiserver.crt", folder / "apiserver.key"
        if not (certificate_file.is_file() and key_file.is_file()):
            from pyop.manager.certificates import write_self_signed_certificate

            write_self_signed_certificate(
                folder, list(SERVING_HOSTS), cert_name="apiserver.crt", key_name="apiserver.key"
            )
            log.info("generated a self-signed serving certificate in %s", folder)
    return ServingConfig(
        serving.bind_address,
        serving.secure_port,
        certificate_file.read_bytes(),
        key_file.read_bytes(),
        certificate_file,
        key_file,
    )


async def _cluster(kubeconfig: str, what: str, observe: ReviewObserver | None = None) -> ClusterClient | None:
    """A client of the cluster: the kubeconfig's, or in-cluster for ""; None (with a warning) when there is none
    and none was asked for explicitly."""
    try:
        return ClusterClient(await client_config(kubeconfig), observe)
    except (ConfigError, OSError, ValueError) as error:
        if kubeconfig:
            raise OptionsError([f'--{what}-kubeconfig "{kubeconfig}": cannot be loaded: {error}']) from None
        log.warning("no --%s-kubeconfig and not in a cluster (%s): %s is not delegated", what, error, what)
        return None


async def _authenticator(
    options: RecommendedOptions,
    clients: list[ClusterClient],
    metrics: ServerMetrics,
    background: list[Callable[[], Coroutine[Any, Any, None]]],
) -> DelegatingAuthenticator:
    authn = options.authentication
    cluster = await _cluster(authn.remote_kubeconfig_file, "authentication", metrics.observe_review)
    if cluster is not None:
        clients.append(cluster)
    request_header: RequestHeaderConfig | None = None
    client_ca: CertificateBundle | None = None
    try:
        if authn.requestheader_client_ca_file:
            request_header = RequestHeaderConfig(
                CertificateBundle.from_file(authn.requestheader_client_ca_file),
                list(authn.requestheader_allowed_names),
                list(authn.requestheader_username_headers),
                list(authn.requestheader_group_headers),
                list(authn.requestheader_extra_headers_prefix),
                list(authn.requestheader_uid_headers),
            )
        if authn.client_ca_file:
            client_ca = CertificateBundle.from_file(authn.client_ca_file)
    except ValueError as error:
        raise OptionsError([str(error)]) from None
    if (request_header is None or client_ca is None) and not authn.skip_in_cluster_lookup and cluster is not None:
        try:
            data = await cluster.authentication_config_map()  # None: not there, nothing to add (as kube)
            if data is not None:
                request_header = request_header or request_header_from_config_map(data)
                client_ca = client_ca or client_ca_from_config_map(data)
        except Exception as error:
            if not authn.tolerate_in_cluster_lookup_failure:
                raise OptionsError(
                    [
                        f"cannot read the request-header settings from the cluster ({error}); "
                        "give --requestheader-client-ca-file, or --authentication-skip-lookup, or "
                        "--authentication-tolerate-lookup-failure"
                    ]
                ) from None
            log.warning("cannot read kube-system/extension-apiserver-authentication: %s", error)
    tokens = TokenReviewAuthenticator(cluster, ttl=authn.cache_ttl) if cluster is not None else None
    authenticator = DelegatingAuthenticator(
        request_header=RequestHeaderAuthenticator(request_header) if request_header else None,
        client_certificate=ClientCertificateAuthenticator(client_ca) if client_ca else None,
        tokens=tokens,
        anonymous=authn.anonymous,
    )
    background.extend(_reloads(options, authenticator, cluster))
    return authenticator


def _reloads(
    options: RecommendedOptions, authenticator: DelegatingAuthenticator, cluster: ClusterClient | None
) -> list[Callable[[], Coroutine[Any, Any, None]]]:
    """The loop that reads the CA files and the ConfigMap's settings again (kube's dynamic CA content)."""
    authn = options.authentication
    checks: list[Callable[[], bool | Awaitable[bool]]] = []
    header, client = authenticator.request_header, authenticator.client_certificate
    if authn.requestheader_client_ca_file and header is not None:
        config = header.config
        path = authn.requestheader_client_ca_file
        checks.append(FileBundle(path, lambda bundle: setattr(config, "client_ca", bundle), config.client_ca.pem).check)
    if authn.client_ca_file and client is not None:
        path = authn.client_ca_file
        checks.append(FileBundle(path, lambda bundle: setattr(client, "client_ca", bundle), client.client_ca.pem).check)
    from_config_map = (not authn.requestheader_client_ca_file, not authn.client_ca_file)
    if cluster is not None and not authn.skip_in_cluster_lookup and any(from_config_map):
        settings = ConfigMapSettings(
            cluster, authenticator, request_header=from_config_map[0], client_ca=from_config_map[1]
        )
        checks.append(settings.check)
    return [reloading(checks, authn.ca_reload_interval)] if checks else []


async def _authorizer(
    options: RecommendedOptions, clients: list[ClusterClient], metrics: ServerMetrics
) -> DelegatingAuthorizer:
    authz = options.authorization
    same = authz.remote_kubeconfig_file == options.authentication.remote_kubeconfig_file and clients
    cluster = (
        clients[0] if same else await _cluster(authz.remote_kubeconfig_file, "authorization", metrics.observe_review)
    )
    if cluster is not None and cluster not in clients:
        clients.append(cluster)
    return DelegatingAuthorizer(
        cluster,
        allow_ttl=authz.allow_cache_ttl,
        deny_ttl=authz.deny_cache_ttl,
        always_allow_paths=authz.always_allow_paths,
        always_allow_groups=authz.always_allow_groups,
    )


async def build_config(options: RecommendedOptions) -> Config:
    """Validated options -> a complete Config (raises `OptionsError`, one line per problem)."""
    check(options)
    clients: list[ClusterClient] = []
    background: list[Callable[[], Coroutine[Any, Any, None]]] = []
    metrics = ServerMetrics()
    health = HealthChecks()
    try:
        serving = serving_certificate(options)
        authenticator = await _authenticator(options, clients, metrics, background)
        authorizer = await _authorizer(options, clients, metrics)
        core = clients[0] if clients and not options.kubeconfig else None
        if options.kubeconfig:
            core = ClusterClient(await client_config(options.kubeconfig), metrics.observe_review)
            clients.append(core)
        certificates = _self_managed_certificates(options, serving, core, metrics)
        try:
            store = store_for(options.storage)
        except ValueError as error:
            raise OptionsError([str(error)]) from None
    except BaseException:
        for client in clients:
            await client.close()
        raise
    namespaces = None
    if core is not None and "NamespaceLifecycle" not in options.disable_admission_plugins:
        namespaces = NamespaceLifecycle(core)
    if certificates is not None:
        health.add(READINESS_CHECK, certificates.readiness, endpoints=("readyz",))
    storage_check = storage_health_check(store)
    if storage_check is not None:
        health.add("etcd", storage_check)  # kube's name, in all three endpoints
    return Config(
        options,
        serving,
        authenticator,
        authorizer,
        store,
        health=health,
        metrics=metrics,
        clients=clients,
        core=core,
        namespaces=namespaces,
        serving_certificates=certificates,
        background=background,
    )


def _self_managed_certificates(
    options: RecommendedOptions, serving: ServingConfig, core: ClusterClient | None, metrics: ServerMetrics
) -> SelfManagedCertificates | None:
    """--serving-cert-secret's rotator, which needs the cluster (the Secret, the APIServices)."""
    if not options.secure_serving.serving_cert_secret:
        return None
    if core is None:
        raise OptionsError(
            ["--serving-cert-secret needs the cluster (--kubeconfig, or in-cluster): it keeps the Secret there"]
        )
    try:
        return SelfManagedCertificates.from_options(
            options.secure_serving, core.client, serving.certificate_file, serving.key_file, metrics.registry
        )
    except ValueError as error:
        raise OptionsError([str(error)]) from None


def storage_health_check(store: Store) -> Check | None:
    """etcd's health (its status call, off the event loop) for a store over etcd; None for the others."""
    status = getattr(getattr(getattr(store, "backend", None), "client", None), "status", None)
    if not callable(status):
        return None

    async def check() -> None:
        await asyncio.to_thread(status)

    return check


__all__ = ["Config", "ServingConfig", "build_config", "serving_certificate"]
