"""`AggregatedServer`: an aggregated API server serving the user's `APIGroupVersion`s over HTTPS.

A `GenericAPIServer` (the test API server's request stages) over its own registry. A request meets, in order:
delegated authentication (request-header client certificate, client certificate, TokenReview, anonymous),
delegated authorization (always-allowed paths and groups, SubjectAccessReview), then health, metrics, /version,
/openapi, discovery, or the generic registry (CRUD, list with selectors and pagination, watch with bookmarks, the
status subresource, optimistic concurrency, generation, finalizers, dry-run, Table output, Status errors) with the
kinds' typed strategies. Every request is counted in ``apiserver_request_total``.

Lifecycle: `start` listens (``port`` 0: any free port), `stop` ends watches, closes the listener and the cluster
clients. `serve_until_signal` runs until SIGTERM or SIGINT and then shuts down gracefully: ``/readyz`` fails at once
(its ``shutdown`` check), the listener stays open --shutdown-delay-duration longer so load balancers notice, then open
watches end and in-flight requests get a moment to finish.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import shutil
import signal
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.authorizer import AttributesAuthorizer
from pyop.apiserver.endpoints.discovery_aggregated import wants_aggregated
from pyop.apiserver.endpoints.handlers import json_response
from pyop.apiserver.endpoints.routing import DiscoveryPath, Target
from pyop.apiserver.groups import APIGroupVersion, ServedKind, served_kinds
from pyop.apiserver.registry.aggregated import AggregatedOperations
from pyop.apiserver.registry.clock import utc_now
from pyop.apiserver.registry.resources import ResourceRegistry
from pyop.apiserver.server.config import SERVING_HOSTS, Config, build_config
from pyop.apiserver.server.generic import GenericAPIServer
from pyop.apiserver.server.options import RecommendedOptions
from pyop.apiserver.server.tls import request_client_certificates, serve_as_go
from pyop.client import ClientConfig
from pyop.manager.certificates import write_self_signed_certificate
from pyop.manager.certwatcher import CertWatcher

log = logging.getLogger("pyop.apiserver")


class AggregatedServer(GenericAPIServer):
    """Serves ``groups`` with ``config`` (from `build_config`); see the module docstring."""

    def __init__(
        self,
        groups: Sequence[APIGroupVersion],
        config: Config,
        *,
        clock: Callable[[], datetime] = utc_now,
        kubernetes_version: str = PINNED_KUBERNETES_VERSION,
    ) -> None:
        self.groups = list(groups)
        self.config = config
        # (storage key, version) -> the served kind; a kind in several versions is one storage key, converted
        self.kinds: dict[tuple[str, str], ServedKind] = {
            (kind.resource_type.storage_key, kind.resource_type.version): kind
            for kind in served_kinds(self.groups, kubernetes_version)
        }
        strategies = {key: kind.strategy for key, kind in self.kinds.items() if kind.strategy is not None}
        operations = AggregatedOperations(
            config.store,
            ResourceRegistry([kind.resource_type for kind in self.kinds.values()]),
            clock=clock,
            users={},
            bookmark_interval=config.options.bookmark_interval,
            strategies=strategies,
        )
        super().__init__(
            operations,
            authenticator=config.authenticator,
            authorizer=AttributesAuthorizer(config.authorizer.authorize),
            version=_version_info(),
        )
        self.operations: AggregatedOperations = operations
        self.openapi_documents.every_builtin_v2 = False  # /openapi/v2: its kinds and what they reference
        self._shutting_down = False
        self._stopped = asyncio.Event()
        self._tempdir: Path | None = None  # for_testing's
        self._certificate_reload: asyncio.Task[None] | None = None
        self._background: list[asyncio.Task[None]] = []  # config.background's loops (CA reloads)
        self._routes: dict[int, tuple[Target | DiscoveryPath | None, str]] = {}  # request -> its route (metrics)
        config.health.add("shutdown", self._not_shutting_down, endpoints=("readyz",))
        self.add_path("/metrics", self._metrics)

    # --- lifecycle ---------------------------------------------------------------------------------------------

    async def __aenter__(self) -> AggregatedServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _not_shutting_down(self) -> None:
        if self._shutting_down:
            raise RuntimeError("the server is shutting down")

    def ssl_context(self) -> ssl.SSLContext:
        """The listener's TLS: the serving pair; client certificates requested and checked against the trusted CAs."""
        serving = self.config.serving
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(serving.certificate_file, serving.key_file)
        serve_as_go(context)  # TLS 1.3 as kube-apiserver negotiates it (and ~35 us less per handshake)
        if request_client_certificates(context):  # any certificate passes; the authenticators verify the chain
            return context
        trusted = self.config.authenticator.trusted_ca_pem()  # else the handshake verifies against every CA
        if trusted:
            context.load_verify_locations(cadata=trusted.decode("ascii"))
            context.verify_mode = ssl.CERT_OPTIONAL
            context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # an intermediate CA of a bundle is an anchor
        return context

    async def start(self) -> None:
        serving = self.config.serving
        follow = getattr(self.store, "follow", None)  # other replicas' writes (etcd's watch), on this loop
        if callable(follow):
            follow(asyncio.get_running_loop().call_soon_threadsafe)
        context = self.ssl_context()
        if self.config.serving_certificates is not None:  # --serving-cert-secret: the Secret's pair, CA injected
            await self.config.serving_certificates.start(context, [(g.group, g.version) for g in self.groups])
        await self.listen(serving.bind_address, serving.port, context)
        self._background = [asyncio.create_task(loop()) for loop in self.config.background]
        if self.config.options.secure_serving.tls_cert_file:  # cert-manager renews it in place: reload it
            watcher = CertWatcher(
                context,
                serving.certificate_file,
                serving.key_file,
                interval=self.config.options.secure_serving.reload_interval,
            )
            self._certificate_reload = asyncio.create_task(watcher.run())
        log.info("serving %s on %s", ", ".join(g.group_version for g in self.groups), self.url)

    async def stop(self) -> None:
        self._shutting_down = True
        if self._certificate_reload is not None:
            self._certificate_reload.cancel()
            self._certificate_reload = None
        if self.config.serving_certificates is not None:
            await self.config.serving_certificates.stop()
        for task in self._background:
            task.cancel()
        self._background = []
        await super().stop()
        await self.config.close()
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None
        self._stopped.set()

    async def shutdown(self) -> None:
        """Graceful: not ready at once, then --shutdown-delay-duration later the listener closes."""
        if self._shutting_down:
            return
        self._shutting_down = True
        delay = self.config.options.shutdown_delay
        if delay > 0:
            log.info("shutting down in %ss (readyz fails meanwhile)", delay)
            await asyncio.sleep(delay)
        await self.stop()

    async def serve_until_signal(self) -> None:
        """Run until SIGTERM or SIGINT, then shut down gracefully."""
        await self.start()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, lambda: asyncio.ensure_future(self.shutdown()))
        try:
            await self._stopped.wait()
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    # --- what clients need -------------------------------------------------------------------------------------

    @property
    def ca_pem(self) -> bytes:
        """The serving certificate (self-signed: its own CA), or the Secret's CA bundle with --serving-cert-secret:
        an APIService's caBundle, decoded."""
        certificates = self.config.serving_certificates
        if certificates is not None and certificates.bundle:
            return certificates.bundle
        return self.config.serving.certificate_pem

    @property
    def ca_file(self) -> Path:
        certificates = self.config.serving_certificates
        if certificates is not None and certificates.bundle:
            return certificates.ca_file()
        return self.config.serving.certificate_file

    def client_config(self, **overrides: Any) -> ClientConfig:
        """pyop's client settings for talking to this server directly (``token=...`` for a bearer token)."""
        return ClientConfig(**{"server": self.url, "ca_file": str(self.ca_file), **overrides})

    def kubeconfig_dict(self, token: str | None = None, **user: str) -> dict[str, Any]:
        """A kubeconfig for this server directly (kubectl, the official client); ``user``: kubeconfig user fields
        (``client-certificate``, ``client-key``)."""
        user_entry: dict[str, Any] = dict(user)
        if token:
            user_entry["token"] = token
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "aggregated",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_pem).decode("ascii"),
                    },
                }
            ],
            "users": [{"name": "aggregated", "user": user_entry}],
            "contexts": [{"name": "aggregated", "context": {"cluster": "aggregated", "user": "aggregated"}}],
            "current-context": "aggregated",
        }

    @classmethod
    @contextlib.asynccontextmanager
    async def for_testing(
        cls,
        groups: Sequence[APIGroupVersion],
        test_api_server: Any,
        *,
        options: RecommendedOptions | None = None,
        register: bool = True,
    ) -> AsyncIterator[AggregatedServer]:
        """This server in process, for a test, delegating to ``test_api_server`` (a started
        `pyop.testing.TestAPIServer`): TokenReviews and SubjectAccessReviews go to it, the request-header settings
        come from its extension-apiserver-authentication ConfigMap, and (``register``) an APIService per group version
        points it at this server, so clients of the test server reach this one through its aggregation::

            async with AggregatedServer.for_testing([GROUP], test_api_server) as server:
                ...  # kubectl --kubeconfig test_api_server.kubeconfig_path get flunders
        """
        folder = Path(tempfile.mkdtemp(prefix="pyop-apiserver-"))
        options = options or RecommendedOptions()
        options.secure_serving.bind_address = "127.0.0.1"
        options.secure_serving.secure_port = 0
        if not options.secure_serving.tls_cert_file:
            # Valid for the names the test server's aggregator dials (its ExternalName Services) and for loopback.
            options.secure_serving.cert_dir = str(folder / "certificates")
            hosts = [*SERVING_HOSTS, *filter(None, (service_host(test_api_server, group) for group in groups))]
            write_self_signed_certificate(
                folder / "certificates", hosts, cert_name="apiserver.crt", key_name="apiserver.key"
            )
        kubeconfig = str(test_api_server.kubeconfig_path)
        options.authentication.remote_kubeconfig_file = options.authentication.remote_kubeconfig_file or kubeconfig
        options.authorization.remote_kubeconfig_file = options.authorization.remote_kubeconfig_file or kubeconfig
        if options.bookmark_interval == RecommendedOptions().bookmark_interval:
            options.bookmark_interval = 1.0
        try:
            config = await build_config(options)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        try:
            server = cls(groups, config)
        except BaseException:
            await config.close()
            shutil.rmtree(folder, ignore_errors=True)
            raise
        server._tempdir = folder
        try:
            await server.start()
            if register:
                for group in server.groups:
                    await register_with(test_api_server, group, server)
            yield server
        finally:
            await server.stop()

    # --- the request path (GenericAPIServer's hooks) -----------------------------------------------------------

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        """Every request, counted in the metrics (in flight, then by verb, resource and code)."""
        started = time.perf_counter()
        kind = "readOnly" if request.method in ("GET", "HEAD", "OPTIONS") else "mutating"
        inflight = self.config.metrics.inflight.labels(kind)
        inflight.inc()
        try:
            response = await super().handle(request)
        finally:
            inflight.dec()
            target, verb = self._routes.pop(id(request), (None, ""))
        self._observe(request, target, verb, response.status, time.perf_counter() - started)
        return response

    def routed(self, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str) -> None:
        self._routes[id(request)] = (target, verb)

    async def intercept(
        self, request: web.BaseRequest, user: UserInfo, target: Target | DiscoveryPath | None, verb: str
    ) -> web.StreamResponse | None:
        """The health endpoints (after authorization: /healthz, /livez, /readyz are always allowed by default), and
        NamespaceLifecycle before a create (the registry runs synchronously, the cluster is asked here)."""
        if target is None and self.config.health.is_health_path(request.path):
            return await self.config.health.respond(request)
        lifecycle = self.config.namespaces
        creates = verb == "create" and isinstance(target, Target) and not (target.name or target.subresource)
        if lifecycle is not None and creates and isinstance(target, Target) and target.namespace:
            await lifecycle.admit_create(target.namespace)
        return None

    def discovery(self, request: web.BaseRequest, target: DiscoveryPath) -> web.Response:
        """``/api`` has no versions here (no core group); the rest as every server answers it."""
        if target.legacy and target.version is None and not wants_aggregated(request.headers.get("Accept", "")):
            return json_response({"kind": "APIVersions", "versions": [], "serverAddressByClientCIDRs": []})
        return super().discovery(request, target)

    async def _metrics(self, request: web.BaseRequest) -> web.StreamResponse:
        body, content_type = self.config.metrics.exposition()
        response = web.Response(body=body)
        response.headers["Content-Type"] = content_type
        return response

    def _observe(self, request: web.BaseRequest, target: Any, verb: str, code: int, seconds: float) -> None:
        if isinstance(target, Target):
            scope = "resource" if target.name else ("namespace" if target.namespace else "cluster")
            group, version, resource, subresource = target.group, target.version, target.plural, target.subresource
        else:
            scope = group = version = resource = subresource = ""
        self.config.metrics.observe(
            verb=verb if isinstance(target, Target) else "",
            method=request.method,
            dry_run=bool(request.query.getall("dryRun", [])),
            group=group,
            version=version,
            resource=resource,
            subresource=subresource,
            scope=scope,
            code=code,
            seconds=seconds,
        )


def _version_info() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("pyop-kit")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        release = "0.0.0"
    major, minor, *_ = (release.split(".") + ["0", "0"])[:3]
    return {
        "major": major,
        "minor": minor,
        "gitVersion": f"v{release}",
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "pyop",
        "platform": "python",
    }


def service_host(test_api_server: Any, group: APIGroupVersion) -> str:
    """The DNS name the test API server's aggregator dials for ``group``: its ExternalName Service's ("" without an
    aggregator)."""
    aggregator = getattr(test_api_server, "aggregator", None)
    host = getattr(aggregator, "service_host", None)
    return str(host(group.group, group.version)) if callable(host) else ""


async def register_with(test_api_server: Any, group: APIGroupVersion, server: AggregatedServer) -> None:
    """An APIService for ``group`` in the test API server, pointing at ``server`` (its local URL and CA)."""
    register = getattr(test_api_server, "register_api_service", None)
    if register is None:
        raise RuntimeError(
            "this pyop.testing.TestAPIServer has no aggregator (register_api_service); "
            "use for_testing(..., register=False) and talk to the server directly"
        )
    await register(group.group, group.version, server.url, ca_bundle=server.ca_pem)


__all__ = ["AggregatedServer", "register_with", "service_host"]
