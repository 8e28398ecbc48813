"""``TestAPIServer``: a real HTTP server on 127.0.0.1 with Kubernetes API semantics, for tests.

It plays the role envtest's kube-apiserver plays for Go operators: clients talk to it over real
sockets with a kubeconfig, so the code under test is the code that runs against a cluster.

It is a `GenericAPIServer` (pyop/apiserver/server/generic.py: the request stages) plus kube-apiserver's pieces:
the built-in kinds and their strategies, CRDs, bearer tokens and RBAC, admission webhooks, the control-plane
controllers, kube-aggregator, fault injection and request accounting for benchmarks.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import ssl
import tempfile
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from aiohttp import web

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.apiserver.authentication.authenticator import TokenAuthenticator
from pyop.apiserver.endpoints.routing import DiscoveryPath, Target, parse_path
from pyop.apiserver.registry.clock import utc_now
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.patch import clone_json
from pyop.apiserver.registry.resources import ResourceRegistry
from pyop.apiserver.server.generic import GenericAPIServer
from pyop.apiserver.server.tls import ServingCertificate
from pyop.apiserver.storage.store import Store
from pyop.client.config import ClientConfig
from pyop.testing.admission import kube_admission_plugins, kube_validating_plugins
from pyop.testing.admission.certificate_approval import rbac_approve_check
from pyop.testing.admission.priority import install_priority_classes
from pyop.testing.aggregator import Aggregator
from pyop.testing.authorization import Authorization
from pyop.testing.authorization.tokens import token_request
from pyop.testing.builtins.catalog import builtin_types
from pyop.testing.builtins.kinds import CRD_STORAGE_KEY, UserInfo
from pyop.testing.builtins.pod_streaming import PodStreams
from pyop.testing.builtins.pod_subresources import PodLogs, bind, evict
from pyop.testing.builtins.resource_proxy import NodeProxies, ResourceProxies
from pyop.testing.builtins.strategy import BuiltinStrategy
from pyop.testing.controllers.control_plane import Controllers
from pyop.testing.controllers.kubernetes_service import check_advertise_address
from pyop.testing.faults import FaultInjector
from pyop.testing.kubeconfig import kubeconfig_dict, write_kubeconfig
from pyop.testing.webhooks.dispatch import WebhookDispatcher
from pyop.testing.webhooks.install import install_webhooks

ADMIN_USER = "pyop-test-admin"
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_UNAUTHENTICATED_PATHS = ("/healthz", "/readyz", "/livez")


@dataclass
class RequestRecord:
    """One request as a benchmark counts it."""

    method: str
    path: str
    query: str
    verb: str
    resource: str = ""
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    status: int = 0


# The RequestRecord of the request being served (each request is served in its own task, with its own context).
_RECORD: ContextVar[RequestRecord] = ContextVar("pyop_testing_request_record")


class _RBACAuthorizer:
    """The authorization stage over the server's `Authorization` (system:masters, then RBAC)."""

    def __init__(self, authorization: Authorization) -> None:
        self.authorization = authorization

    async def authorize(
        self, user: UserInfo, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str
    ) -> None:
        self.authorization.authorize_request(user, request, target, verb)  # or 403


async def _ok(request: web.BaseRequest) -> web.StreamResponse:
    return web.Response(text="ok")


def _version_document(kubernetes_version: str) -> dict[str, str]:
    major, minor = kubernetes_version.split(".")
    return {
        "major": major,
        "minor": minor,
        "gitVersion": f"v{major}.{minor}.0-pyop-test",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


class TestAPIServer(GenericAPIServer):
    __test__ = False  # not a pytest test class despite the name

    def __init__(
        self,
        *,
        history_limit: int = 10_000,
        bookmark_interval: float = 1.0,
        clock: Callable[[], datetime] = utc_now,  # the system clock, which the registry reads fastest
        token: str | None = None,
        kubernetes_version: str = PINNED_KUBERNETES_VERSION,
        tls: bool = True,
        port: int = 0,
        root_ca_config_maps: bool = True,
        advertise_address: str | None = None,
    ) -> None:
        """``kubernetes_version``: whose built-in kinds (definitions, defaults, generation rules) the server plays,
        by default the one the CRD generator embeds; any version the kubernetes-validate package bundles.
        ``tls``: serve HTTPS with a self-signed certificate the kubeconfig trusts (kubectl sends no token over
        http); ``False`` serves plain http. ``port``: where to listen on 127.0.0.1 (0: any free port).
        ``root_ca_config_maps``: every namespace holds ConfigMap `kube-root-ca.crt`, as on a cluster (an operator
        that lists or prunes ConfigMaps meets it); ``False`` leaves it out, for tests of list semantics that
        count ConfigMaps. ``advertise_address``: kube-apiserver's ``--advertise-address``, the address the
        `default/kubernetes` Endpoints and EndpointSlice hold (by default this host's address on its default
        route, as kube-apiserver picks one; loopback is refused, as kube-apiserver refuses it)."""
        if advertise_address is not None:
            check_advertise_address(advertise_address)  # ValueError before anything is made
        self.tls = tls
        self.root_ca_config_maps = root_ca_config_maps
        self.port = port
        self.certificate: ServingCertificate | None = None
        self.ca_file: Path | None = None
        self.builtin = BuiltinStrategy(kubernetes_version)
        self.kubernetes_version = self.builtin.kubernetes_version
        self.token = token or secrets.token_urlsafe(24)
        self.users: dict[str, UserInfo] = {self.token: UserInfo(ADMIN_USER, ["system:masters", "system:authenticated"])}
        store = Store(history_limit)
        operations = Operations(
            store,
            ResourceRegistry(builtin_types(self.kubernetes_version)),
            clock=clock,
            users=self.users,
            bookmark_interval=bookmark_interval,
            builtin=self.builtin,
        )
        self.webhooks = WebhookDispatcher(store, operations)
        # What kubelets would stream as containers' logs (`pods/<name>/log`): tests set them here.
        self.pod_logs = PodLogs()
        # What containers do when a client execs, attaches or forwards a port (`pods/<name>/exec`, ...).
        self.pod_streams = PodStreams(self.kubernetes_version, self._authorize_verb)
        # What answers on nodes' ports (`nodes/<name>/proxy`: the kubelet's API); pods' ports are pod_streams'.
        self.node_proxies = NodeProxies()
        self.authorization = Authorization(store, self.users)  # RBAC, with the default ClusterRoles
        super().__init__(
            operations,
            authenticator=TokenAuthenticator(self.users),
            authorizer=_RBACAuthorizer(self.authorization),
            admission=self.webhooks,
            version=_version_document(self.kubernetes_version),
            subresource_creates={"token": token_request, "pods/eviction": evict, "pods/binding": bind},
            subresource_gets={"pods/log": self._pod_log},
            subresource_connects={
                "pods/exec": self.pod_streams.exec,
                "pods/attach": self.pod_streams.attach,
                "pods/portforward": self.pod_streams.portforward,
            },
        )
        for path in _UNAUTHENTICATED_PATHS:
            self.add_path(path, _ok, public=True)
        self.controllers = Controllers(self.operations, advertise_address=advertise_address)
        self.controllers.on_webhooks_changed = self.webhooks.reload
        self.faults = FaultInjector(lambda: list(self.operations.watchers), self.store.compact)
        self.requests: list[RequestRecord] = []
        self._tempdir: Path | None = None
        self.kubeconfig_path = Path()
        self.operations.admission_plugins = kube_admission_plugins()
        self.operations.validating_plugins = kube_validating_plugins(rbac_approve_check(self.authorization))
        namespace_type = self.resources.lookup("", "v1", "namespaces")
        for name in INITIAL_NAMESPACES:
            self.operations.create(
                namespace_type, "", {"metadata": {"name": name}}, WriteOptions(field_manager="kube-apiserver")
            )
        self.authorization.install_defaults(self.operations)
        install_priority_classes(self.operations)
        self.aggregator = Aggregator(self.operations)  # kube-aggregator: APIServices proxied to their servers
        self.proxies = ResourceProxies(self.store, self.pod_streams, self.node_proxies)  # pods/services/nodes proxy

    # --- lifecycle ----------------------------------------------------------------------------------

    async def __aenter__(self) -> TestAPIServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        self._tempdir = Path(tempfile.mkdtemp(prefix="pyop-test-api-"))
        context: ssl.SSLContext | None = None
        if self.tls:
            self.certificate = ServingCertificate.generate()
            context = self.certificate.server_context(self._tempdir)
            self.ca_file = self._tempdir / "ca.crt"
            if self.root_ca_config_maps:
                self.controllers.root_ca.publish(self.certificate.certificate_pem.decode("ascii"))
        await self.listen("127.0.0.1", self.port, context)
        self.controllers.kubernetes_service.serve(self.listening_port)
        self.kubeconfig_path = write_kubeconfig(self._tempdir / "kubeconfig", self.kubeconfig_dict())
        self.controllers.start()
        self.aggregator.start(self._tempdir)

    async def stop(self) -> None:
        self.end_watches()
        await self.aggregator.stop()
        await self.controllers.stop()
        await super().stop()  # the listener, then the webhook client's connections
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    async def stop_listening(self) -> None:
        """Fault injection: go away as a restarting API server does. Open watches end, kept-alive connections
        are closed and new ones refused until `start_listening`; the stored state stays (it lives in etcd)."""
        if self.listening:
            await super().stop_listening()

    async def start_listening(self) -> None:
        """Listen again, on the same address, after `stop_listening` (the kubeconfig stays valid)."""
        await self.listen_again()

    def kubeconfig_dict(self) -> dict[str, Any]:
        return kubeconfig_dict(self.url, self.token, ca_data=self.certificate.ca_data if self.certificate else None)

    def client_config(self, **overrides: Any) -> ClientConfig:
        """pyop's client settings for this server (its URL, the admin token, the CA); ``overrides`` replace any
        field (``token=None`` for an anonymous client)."""
        ca_file = str(self.ca_file) if self.ca_file else None
        settings: dict[str, Any] = {"server": self.url, "token": self.token, "ca_file": ca_file}
        return ClientConfig(**{**settings, **overrides})

    def ssl_context(self) -> ssl.SSLContext | None:
        """For raw HTTP clients (aiohttp's ``ssl=``): trusts this server's certificate; None over plain http."""
        return self.certificate.client_context() if self.certificate else None

    # --- convenience API for tests ------------------------------------------------------------------

    def add_crd(self, crd: dict[str, Any]) -> None:
        """Create (or replace the spec of) a CRD; its kinds are served immediately."""
        crd_type = self.resources.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        name = (crd.get("metadata") or {}).get("name", "")
        options = WriteOptions(field_manager="pyop-testing")
        if self.store.get(CRD_STORAGE_KEY, "", name) is None:
            self.operations.create(crd_type, "", clone_json(crd), options)
        else:
            # A replacement takes every field over, as `kubectl apply --server-side --force-conflicts` would.
            self.operations.apply(crd_type, "", name, clone_json(crd), replace(options, force=True))

    def load_crds(self, path: str | Path) -> list[str]:
        """Add every CustomResourceDefinition found in a YAML file or in the YAML files under a folder."""
        root = Path(path)
        files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml")) if root.is_dir() else [root]
        names = []
        for file in files:
            for document in yaml.safe_load_all(file.read_text()):
                if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                    self.add_crd(document)
                    names.append(document["metadata"]["name"])
        return names

    def install_webhooks(
        self,
        source: str | Path | dict[str, Any] | list[dict[str, Any]],
        *,
        url: str,
        ca_bundle: bytes | str | Path | None = None,
    ) -> list[str]:
        """Create (or replace) the webhook configurations of a manifest, pointed at a local webhook server.

        ``source``: a YAML file (Kubebuilder's ``config/webhook/manifests.yaml``), a folder of them, or the
        documents themselves. Every webhook's ``clientConfig`` becomes ``url`` + its service path, as envtest
        rewrites service references to its local webhook server; ``ca_bundle`` (PEM bytes or text, or a file
        such as the manager's ``tls.crt``) is the CA the server verifies that server's certificate with.
        Returns the names of the configurations installed.
        """
        return install_webhooks(self.operations, source, url=url, ca_bundle=ca_bundle)

    async def register_api_service(
        self,
        group: str,
        version: str,
        url: str,
        *,
        ca_bundle: bytes | str | Path | None = None,
        insecure_skip_tls_verify: bool = False,
        group_priority_minimum: int = 1000,
        version_priority: int = 15,
        service_namespace: str = "default",
        service_name: str | None = None,
    ) -> dict[str, Any]:
        """Serve ``group/version`` from an aggregated API server listening at ``url`` (``https://127.0.0.1:<port>``):
        creates an ExternalName Service and the APIService ``<version>.<group>`` naming it, as kube-aggregator
        routes them, and returns the APIService after its first availability check. The server's certificate must
        be valid for ``<service_name>.<service_namespace>.svc`` (default name: `pyop.testing.aggregator.
        service_name_for`) and signed by ``ca_bundle``, unless ``insecure_skip_tls_verify``; it must trust
        ``self.aggregator.request_header_ca`` (the ConfigMap kube-system/extension-apiserver-authentication).
        See docs/runtime/testing.md, "Aggregated API servers"."""
        return await self.aggregator.register(
            group,
            version,
            url,
            ca_bundle=ca_bundle,
            insecure_skip_tls_verify=insecure_skip_tls_verify,
            group_priority_minimum=group_priority_minimum,
            version_priority=version_priority,
            service_namespace=service_namespace,
            service_name=service_name,
        )

    def add_user(self, token: str, username: str, groups: list[str] | None = None) -> None:
        """Another bearer token the server accepts (and TokenReview reports)."""
        self.users[token] = UserInfo(username, [*(groups or []), "system:authenticated"])

    def _pod_log(self, operations: Operations, namespace: str, name: str, query: Any) -> web.StreamResponse:
        return self.pod_logs.get_log(operations, namespace, name, query)

    def _authorize_verb(self, user: UserInfo, request: web.BaseRequest, verb: str) -> None:
        """RBAC's check of this request as another verb (pod streams' compound `create` check), or its 403."""
        self.authorization.authorize_request(user, request, parse_path(request.path), verb)

    def token_for_service_account(self, namespace: str, name: str) -> str:
        """A bearer token that authenticates as the ServiceAccount (`system:serviceaccount:<ns>:<name>`, groups
        `system:serviceaccounts`, `system:serviceaccounts:<ns>`, `system:authenticated`), authorized by RBAC as a
        manager running as that ServiceAccount in a cluster is. The ServiceAccount must exist."""
        return self.authorization.token_for_service_account(namespace, name)

    @property
    def request_count(self) -> int:
        return len(self.requests)

    def reset_requests(self) -> None:
        self.requests.clear()

    def count_requests(self, *, verb: str | None = None, resource: str | None = None) -> int:
        return sum(
            1
            for record in self.requests
            if (verb is None or record.verb == verb) and (resource is None or record.resource == resource)
        )

    # --- HTTP: GenericAPIServer's hooks ----------------------------------------------------------------

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        """Every request is counted (`requests`, for benchmarks), with its status."""
        record = RequestRecord(request.method, request.path, request.query_string, request.method.lower())
        self.requests.append(record)
        _RECORD.set(record)
        response = await super().handle(request)
        record.status = response.status
        return response

    def routed(self, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str) -> None:
        record = _RECORD.get()
        if isinstance(target, Target):
            record.verb, record.resource, record.namespace = verb, target.plural, target.namespace or ""
            record.name, record.subresource = target.name, target.subresource
        elif isinstance(target, DiscoveryPath):
            record.verb = "get"

    async def intercept(
        self, request: web.BaseRequest, user: UserInfo, target: Target | DiscoveryPath | None, verb: str
    ) -> web.StreamResponse | None:
        """Injected faults first, then kube-aggregator: an aggregated group/version goes to its server."""
        if self.faults.active:
            delay = self.faults.delay_for(request.method, request.path_qs)
            if delay:
                await asyncio.sleep(delay)
            injected = self.faults.error_for(request.method, request.path_qs)
            if injected is not None:
                raise injected
        if isinstance(target, Target) and target.subresource == "proxy" and self.proxies.serves(target):
            return await self.proxies.serve(request, target)
        if isinstance(target, (Target, DiscoveryPath)):
            proxied = self.aggregator.proxied(target.group, target.version)
            if proxied is not None:  # an aggregated group/version: forwarded to its server, not the registry's
                return await self.aggregator.serve(request, proxied, user)
        return None

    def discovery(self, request: web.BaseRequest, target: DiscoveryPath) -> web.Response:
        with_aggregated = self.aggregator.discovery_response(request, target, self.resources)
        if with_aggregated is not None:
            return with_aggregated
        return super().discovery(request, target)

    async def openapi(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.method == "GET":
            aggregated_openapi = await self.aggregator.openapi_response(request, self.openapi_documents)
            if aggregated_openapi is not None:
                return aggregated_openapi
        return await super().openapi(request)
