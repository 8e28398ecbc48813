"""The test API server's kube-aggregator: APIServices routed, proxied, checked and listed in discovery.

One object per TestAPIServer, started with it: at start it makes the front-proxy identity, publishes
``kube-system/extension-apiserver-authentication`` and starts the availability controller. The server asks it,
for every authenticated and authorized request, whether the request's group/version belongs to an APIService with
a service (`proxied`); such requests bypass the local registry and are forwarded (`serve`). Discovery documents of
``/apis``, ``/apis/<group>`` and aggregated ``/apis`` are passed through it to gain the aggregated groups.
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.endpoints import openapi_v2_proto
from pyop.apiserver.endpoints.discovery_aggregated import AGGREGATED_TYPE, aggregated_discovery, wants_aggregated
from pyop.apiserver.endpoints.handlers import json_response
from pyop.apiserver.endpoints.openapi import OpenAPIDocuments, v2_as_protobuf
from pyop.apiserver.endpoints.routing import DiscoveryPath
from pyop.apiserver.endpoints.wire import dumps
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.patch import clone_json
from pyop.apiserver.registry.resources import ResourceRegistry
from pyop.testing.aggregator import discovery, openapi_v2
from pyop.testing.aggregator.apiservice import GROUP, STORAGE_KEY, APIServiceSpec, sorted_by_group_and_version
from pyop.testing.aggregator.authentication_info import publish
from pyop.testing.aggregator.availability import AGGREGATOR_USER, AvailabilityController
from pyop.testing.aggregator.certificates import FRONT_PROXY_CLIENT, FrontProxyIdentity
from pyop.testing.aggregator.proxy import Proxy, Route, identity_headers, unavailable
from pyop.testing.aggregator.resolver import resolve

DISCOVERY_REFRESH = 60.0  # seconds: kube-aggregator refetches every aggregated server's discovery each minute
_DISCOVERY_USER = UserInfo(AGGREGATOR_USER, [])
_OPENAPI_USER = UserInfo("system:aggregator", [])  # kube-aggregator's OpenAPI downloader's identity
_OPENAPI_V2 = "/openapi/v2"
_OPENAPI_V3 = "/openapi/v3"
_MANAGER = "pyop-testing"
_NAME_CHARACTERS = re.compile(r"[^a-z0-9-]+")


def service_name_for(group: str, version: str) -> str:
    """The Service name `register_api_service` uses by default: ``<version>-<group with dashes>``, at most 63."""
    return _NAME_CHARACTERS.sub("-", f"{version}-{group}".lower()).strip("-")[:63].rstrip("-")


class Aggregator:
    def __init__(self, operations: Operations, *, resync_interval: float = 1.0) -> None:
        self.operations = operations
        self.store = operations.store
        self.resync_interval = resync_interval
        self.proxy = Proxy()
        self.identity: FrontProxyIdentity | None = None
        self.availability: AvailabilityController | None = None
        self._contexts: dict[tuple[bytes, bool], ssl.SSLContext] = {}
        # APIService name -> (generation and uid it was fetched for, when, APIVersionDiscovery or None: stale)
        self._versions: dict[str, tuple[tuple[str, int], float, dict[str, Any] | None]] = {}
        # APIService name -> its server's /openapi/v3 index entry for the group/version (None: it has none)
        self._openapi: dict[str, dict[str, Any] | None] = {}
        # APIService name -> its server's /openapi/v2 document (None: it has none), and the merged document's cache
        self._openapi_v2: dict[str, dict[str, Any] | None] = {}
        self._merged_v2: tuple[tuple[Any, ...], bytes] | None = None
        self._merged_v2_protobuf: tuple[bytes, bytes] | None = None  # (the merged JSON it encodes, protobuf)

    # --- lifecycle -------------------------------------------------------------------------------------

    def start(self, folder: Path) -> None:
        self.identity = FrontProxyIdentity.generate(folder / "front-proxy")
        publish(self.operations, self.operations.resources, self.identity.ca.certificate, (FRONT_PROXY_CLIENT,))
        self.availability = AvailabilityController(
            self.operations,
            self.identity,
            self.proxy.session,
            resync_interval=self.resync_interval,
            on_checked=self._refresh_discovery,
        )
        self.availability.start()

    async def stop(self) -> None:
        if self.availability is not None:
            await self.availability.stop()
            self.availability = None
        await self.proxy.close()

    @property
    def request_header_ca(self) -> bytes:
        """The request-header CA (PEM): an aggregated server's ``--requestheader-client-ca-file``."""
        assert self.identity is not None, "the server is not started"
        return self.identity.ca.certificate

    def service_host(self, group: str, version: str, namespace: str = "default") -> str:
        """The name `register` makes the server's certificate carry by default: ``<service>.<namespace>.svc``."""
        return f"{service_name_for(group, version)}.{namespace}.svc"

    # --- routing -----------------------------------------------------------------------------------------

    def specs(self) -> list[APIServiceSpec]:
        return [APIServiceSpec.of(obj) for obj in self.store.objects(STORAGE_KEY)]

    def proxied(self, group: str | None, version: str | None) -> APIServiceSpec | None:
        """The APIService with a service that serves ``group/version``, if any (a Local one is the registry's)."""
        if not group or not version:
            return None
        obj = self.store.get(STORAGE_KEY, "", f"{version}.{group}")
        if obj is None:
            return None
        spec = APIServiceSpec.of(obj)
        if spec.service is None or spec.group != group or spec.version != version:
            return None
        return spec

    def _context(self, spec: APIServiceSpec) -> ssl.SSLContext:
        key = (spec.ca_bundle, spec.insecure_skip_tls_verify)
        context = self._contexts.get(key)
        if context is None:
            assert self.identity is not None, "the server is not started"
            context = self._contexts[key] = self.identity.client_context(
                spec.ca_bundle, insecure=spec.insecure_skip_tls_verify
            )
        return context

    def _route(self, spec: APIServiceSpec, url: str) -> Route:
        assert spec.service is not None
        return Route(url, spec.service.server_name, self._context(spec))

    async def serve(self, request: web.BaseRequest, spec: APIServiceSpec, user: UserInfo) -> web.StreamResponse:
        """One request for an aggregated group/version: 503 unless Available, else forwarded as ``user``."""
        if not spec.available or spec.service is None:
            return unavailable()
        resolution = resolve(self.store, spec.service)
        if not resolution.url:
            return unavailable()
        return await self.proxy.forward(request, self._route(spec, resolution.url), user)

    # --- discovery ---------------------------------------------------------------------------------------

    def discovery_response(
        self, request: web.BaseRequest, path: DiscoveryPath, resources: ResourceRegistry
    ) -> web.Response | None:
        """``/apis`` (both forms) and ``/apis/<group>`` of an aggregated group, with the aggregated groups; None
        where the server's own answer stands (``/api``, a group no APIService names, any ``/apis/<g>/<v>``)."""
        if path.legacy or path.version is not None:
            return None
        if path.group is None:
            if wants_aggregated(request.headers.get("Accept", "")):
                response = web.Response(body=dumps(self.aggregated(aggregated_discovery(resources, legacy=False))))
                response.headers["Content-Type"] = AGGREGATED_TYPE
                return response
            return json_response(self.group_list(resources.api_group_list()))
        document = self.group(path.group)
        return json_response(document) if document is not None else None

    def group_list(self, local: dict[str, Any]) -> dict[str, Any]:
        return discovery.merged_group_list(local, [s for s in self.specs() if s.service is not None])

    def group(self, group: str) -> dict[str, Any] | None:
        return discovery.group_document(group, [s for s in self.specs() if s.service is not None])

    def aggregated(self, local: dict[str, Any]) -> dict[str, Any]:
        specs = [s for s in self.specs() if s.service is not None]
        versions = {}
        for spec in specs:
            cached = self._versions.get(spec.name)
            if cached is not None and cached[2] is not None and spec.available:
                versions[spec.name] = cached[2]
        return discovery.merge_aggregated(local, specs, versions)

    async def _refresh_discovery(self, spec: APIServiceSpec, url: str, reachable: bool) -> None:
        obj = self.store.get(STORAGE_KEY, "", spec.name)
        if obj is None:
            return
        key = (obj["metadata"].get("uid", ""), int(obj["metadata"].get("generation") or 0))
        cached = self._versions.get(spec.name)
        fresh = cached is not None and cached[0] == key and cached[2] is not None
        if reachable and fresh and cached is not None and time.monotonic() - cached[1] < DISCOVERY_REFRESH:
            return
        entry = await self._fetch_version(spec, url) if reachable else None
        self._versions[spec.name] = (key, time.monotonic(), entry)
        self._openapi[spec.name] = await self._fetch_openapi_entry(spec, url) if reachable else None
        self._openapi_v2[spec.name] = await self._fetch_openapi_v2(spec, url) if reachable else None

    async def _fetch_openapi_v2(self, spec: APIServiceSpec, url: str) -> dict[str, Any] | None:
        """The server's ``/openapi/v2`` (Swagger 2.0, JSON); None when it has none or answers something else."""
        document = await self._fetch_openapi(spec, url, _OPENAPI_V2)
        if document is None or not isinstance(document.get("paths") or {}, dict):
            return None
        return document

    async def _fetch_openapi_entry(self, spec: APIServiceSpec, url: str) -> dict[str, Any] | None:
        """The server's ``/openapi/v3`` index entry of ``apis/<group>/<version>`` (what the index lists for it)."""
        index = await self._fetch_openapi(spec, url, _OPENAPI_V3)
        if index is None or not isinstance(index.get("paths") or {}, dict):
            return None  # not an OpenAPI v3 index
        entry = (index.get("paths") or {}).get(f"apis/{spec.group}/{spec.version}")
        return dict(entry) if isinstance(entry, dict) and entry.get("serverRelativeURL") else None

    async def _fetch_openapi(self, spec: APIServiceSpec, url: str, path: str) -> dict[str, Any] | None:
        """A JSON document of the server's, fetched as ``system:aggregator`` as kube-aggregator's downloader does;
        None unless it answers 200 with a JSON object."""
        route = self._route(spec, url)
        try:
            async with self.proxy.session().get(
                url + path,
                headers={**dict(identity_headers(_OPENAPI_USER)), "Accept": "application/json"},
                ssl=route.ssl_context,
                server_hostname=route.server_name,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=5.0),
            ) as answer:
                if answer.status != 200:
                    return None
                document = await answer.json(content_type=None)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
            return None
        return document if isinstance(document, dict) else None

    # --- OpenAPI v3 ------------------------------------------------------------------------------------

    async def openapi_response(
        self, request: web.BaseRequest, documents: OpenAPIDocuments
    ) -> web.StreamResponse | None:
        """``/openapi/v2`` merged with the available APIServices' (`openapi_v2`); ``/openapi/v3`` with the
        aggregated servers' group/versions, and their ``/openapi/v3/apis/<g>/<v>`` documents from the servers
        (kube-aggregator downloads and re-serves them; here they are fetched on request, as ``system:aggregator``).
        v2 as JSON or protobuf, as the server's own. None for every other path: the server's own answer stands."""
        path = request.path.rstrip("/")
        if path == _OPENAPI_V2:
            merged = self.openapi_v2(documents.v2())
            if not v2_as_protobuf(request.headers.get("Accept", "")):  # a 406 when it allows neither form
                return web.Response(body=merged, content_type="application/json")
            if self._merged_v2_protobuf is None or self._merged_v2_protobuf[0] is not merged:
                self._merged_v2_protobuf = (merged, openapi_v2_proto.document(json.loads(merged)))
            headers = {"Content-Type": openapi_v2_proto.PROTOBUF_TYPE}
            return web.Response(body=self._merged_v2_protobuf[1], headers=headers)
        if path == _OPENAPI_V3:
            index = documents.v3_index()
            paths = dict(index.get("paths") or {})
            for spec in self.specs():
                entry = self._openapi.get(spec.name) if spec.available and spec.service is not None else None
                if entry is not None:
                    paths[f"apis/{spec.group}/{spec.version}"] = entry
            return json_response({**index, "paths": dict(sorted(paths.items()))})
        parts = path.removeprefix(_OPENAPI_V3 + "/").split("/")
        if not path.startswith(_OPENAPI_V3 + "/apis/") or len(parts) != 3:
            return None
        served = self.proxied(parts[1], parts[2])
        if served is None:
            return None
        return await self.serve(request, served, _OPENAPI_USER)

    def openapi_v2(self, local: bytes) -> bytes:
        """The server's own v2 document (``local``, JSON) with every available APIService's merged in, by
        priority; cached until either side changes."""
        specs = [spec for group in sorted_by_group_and_version(self.specs()) for spec in group]
        fetched = [
            (spec.name, document)
            for spec in specs
            if spec.available and spec.service is not None
            for document in [self._openapi_v2.get(spec.name)]
            if document is not None
        ]
        key = (local, *(document for _, document in fetched))  # compared by identity: each is replaced, not changed
        cached = self._merged_v2
        if (
            cached is not None
            and len(cached[0]) == len(key)
            and all(a is b for a, b in zip(cached[0], key, strict=True))
        ):
            return cached[1]
        body = local if not fetched else dumps(openapi_v2.merged(json.loads(local), [d for _, d in fetched]))
        self._merged_v2 = (key, body)
        return body

    async def _fetch_version(self, spec: APIServiceSpec, url: str) -> dict[str, Any] | None:
        """The group/version's APIVersionDiscovery from its server: aggregated ``/apis``, else the unaggregated
        ``/apis/<group>/<version>``; None when neither answers."""
        route = self._route(spec, url)
        headers = dict(identity_headers(_DISCOVERY_USER))
        session = self.proxy.session()
        options: dict[str, Any] = {
            "ssl": route.ssl_context,
            "server_hostname": route.server_name,
            "allow_redirects": False,
            "timeout": aiohttp.ClientTimeout(total=5.0),
        }
        try:
            async with session.get(url + "/apis", headers={**headers, "Accept": AGGREGATED_TYPE}, **options) as answer:
                body = await answer.read()
                if answer.status == 200:
                    document = discovery.parse_discovery_response(answer.headers.get("Content-Type", ""), body)
                    if document is not None:
                        return discovery.version_from_aggregated(document, spec.group, spec.version)
                elif answer.status not in (404, 406):
                    return None
            path = f"{url}/apis/{spec.group}/{spec.version}"
            async with session.get(path, headers={**headers, "Accept": "application/json"}, **options) as answer:
                if answer.status != 200:
                    return None
                return discovery.version_from_resource_list(await answer.json(), spec.group, spec.version)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError, KeyError, TypeError, AttributeError):
            return None  # unreachable, or not a discovery document: listed as Stale

    # --- the test-facing helper -----------------------------------------------------------------------

    async def register(
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
        """Route ``group/version`` to a server listening at ``url`` (``https://127.0.0.1:<port>``), with Kubernetes
        objects only: an ExternalName Service ``service_name`` in ``service_namespace`` whose externalName is the
        URL's host, and the APIService ``<version>.<group>`` naming it (port: the URL's). The server's certificate
        is verified against ``ca_bundle`` (PEM bytes or text, or a file) for the name kube-aggregator expects,
        ``<service_name>.<service_namespace>.svc``, unless ``insecure_skip_tls_verify``. The first availability check
        runs before this returns; the APIService is returned as stored (its Available condition set)."""
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname or parts.port is None:
            raise ValueError(f"url {url!r}: must be https://<host>:<port> (aggregated servers are reached over TLS)")
        name = service_name or service_name_for(group, version)
        self._put(
            ("", "v1", "services"),
            service_namespace,
            {
                "metadata": {"name": name, "namespace": service_namespace},
                "spec": {"type": "ExternalName", "externalName": parts.hostname, "ports": [{"port": parts.port}]},
            },
        )
        spec: dict[str, Any] = {
            "group": group,
            "version": version,
            "service": {"namespace": service_namespace, "name": name, "port": parts.port},
            "groupPriorityMinimum": group_priority_minimum,
            "versionPriority": version_priority,
        }
        if insecure_skip_tls_verify:
            spec["insecureSkipTLSVerify"] = True
        bundle = _pem(ca_bundle)
        if bundle:
            spec["caBundle"] = base64.b64encode(bundle).decode("ascii")
        api_service_name = f"{version}.{group}"
        self._put((GROUP, "v1", "apiservices"), "", {"metadata": {"name": api_service_name}, "spec": spec})
        if self.availability is not None:
            await self.availability.sync(api_service_name)
        return clone_json(self.store.get(STORAGE_KEY, "", api_service_name) or {})

    def _put(self, endpoint: tuple[str, str, str], namespace: str, body: dict[str, Any]) -> None:
        resource_type = self.operations.resources.lookup(*endpoint)
        options = WriteOptions(field_manager=_MANAGER, force=True)
        name = body["metadata"]["name"]
        if self.store.get(resource_type.storage_key, namespace, name) is None:
            self.operations.create(resource_type, namespace, body, options)
        else:
            self.operations.apply(
                resource_type,
                namespace,
                name,
                {"apiVersion": resource_type.api_version, "kind": resource_type.kind, **body},
                options,
            )


def _pem(value: bytes | str | Path | None) -> bytes:
    if value is None:
        return b""
    if isinstance(value, Path):
        return value.read_bytes()
    return value.encode("ascii") if isinstance(value, str) else value
