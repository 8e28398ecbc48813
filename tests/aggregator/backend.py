"""A stand-in aggregated API server for the aggregator's tests: the part of one the aggregator meets.

It serves ``wardle.example.com/v1alpha1`` flunders (namespaced; list, get, create, watch) over TLS with a
certificate for the Service name kube-aggregator verifies, and trusts a request only as an aggregated server
built on k8s.io/apiserver does: the connection's client certificate must be signed by the request-header CA and
carry an allowed common name; the identity is read from the headers the ConfigMap names. Every answer echoes the
identity it saw, so tests can assert what the aggregator sent.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp import web

from pyop.webhook.certificates.authority import KeyPair, new_ca, new_serving_certificate

GROUP = "wardle.example.com"
VERSION = "v1alpha1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
RESOURCE_LIST = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": GROUP_VERSION,
    "resources": [
        {
            "name": "flunders",
            "singularName": "flunder",
            "namespaced": True,
            "kind": "Flunder",
            "verbs": ["create", "get", "list", "watch"],
            "shortNames": ["fl"],
        }
    ],
}
OPENAPI_URL = f"/openapi/v3/apis/{GROUP_VERSION}?hash=0123456789ABCDEF"
OPENAPI = {
    "openapi": "3.0.0",
    "info": {"title": "wardle", "version": VERSION},
    "paths": {  # what kubectl's --validate=strict looks for: the kind's PATCH taking fieldValidation
        f"/apis/{GROUP_VERSION}/namespaces/{{namespace}}/flunders/{{name}}": {
            "patch": {
                "x-kubernetes-group-version-kind": {"group": GROUP, "version": VERSION, "kind": "Flunder"},
                "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "OK"}},
            }
        }
    },
    "components": {
        "schemas": {
            "com.example.wardle.v1alpha1.Flunder": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                },
                "x-kubernetes-group-version-kind": [{"group": GROUP, "kind": "Flunder", "version": VERSION}],
            }
        }
    },
}


@dataclass
class Seen:
    """What one request carried, as the backend authenticated it."""

    method: str
    path: str
    query: str
    client_cn: str | None
    user: str | None
    groups: list[str]
    extra: dict[str, list[str]]
    headers: dict[str, str]
    peer_port: int = 0


@dataclass
class Backend:
    """The server; ``request_header_ca`` (PEM) is the CA it trusts for front-proxy certificates, read from the
    extension-apiserver-authentication ConfigMap as an aggregated server does."""

    request_header_ca: bytes
    allowed_names: list[str]
    hosts: list[str]
    aggregated_discovery: bool = True
    host: str = "127.0.0.1"  # where it listens (a pod's address on a cluster; an Endpoints may not hold loopback)
    seen: list[Seen] = field(default_factory=list)
    flunders: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    serving_ca: KeyPair | None = None
    url: str = ""
    _runner: web.AppRunner | None = None
    _watchers: list[asyncio.Queue[dict[str, Any] | None]] = field(default_factory=list)
    _revision: int = 0
    _port: int = 0
    _folder: Path = Path()

    async def start(self) -> None:
        if self.serving_ca is None:  # a restart keeps its certificate (the APIService's caBundle names its CA)
            now = datetime.now(UTC)
            self.serving_ca = new_ca("wardle", now, timedelta(days=1))
            serving = new_serving_certificate(self.serving_ca, self.hosts, now, timedelta(days=1))
            self._folder = Path(tempfile.mkdtemp(prefix="pyop-wardle-"))
            (self._folder / "tls.crt").write_bytes(serving.certificate)
            (self._folder / "tls.key").write_bytes(serving.key)
        folder = self._folder
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
        context.load_verify_locations(cadata=self.request_header_ca.decode("ascii"))
        context.verify_mode = ssl.CERT_OPTIONAL  # a client without a certificate is refused per request (401)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self._port, ssl_context=context).start()
        self._port = self._runner.addresses[0][1]
        self.url = f"https://{self.host}:{self._port}"

    def remove_files(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)

    async def stop(self) -> None:
        for queue in self._watchers:
            queue.put_nowait(None)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- authentication as k8s.io/apiserver's request-header authenticator ----------------------------

    def _authenticate(self, request: web.Request) -> Seen:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        common_name = None
        for rdn in (peer or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    common_name = value
        trusted = common_name is not None and (not self.allowed_names or common_name in self.allowed_names)
        extra: dict[str, list[str]] = {}
        for name, value in request.headers.items():
            if name.lower().startswith("x-remote-extra-"):
                extra.setdefault(name[len("x-remote-extra-") :].lower(), []).append(value)
        seen = Seen(
            request.method,
            request.path,
            request.query_string,
            common_name,
            request.headers.get("X-Remote-User") if trusted else None,
            request.headers.getall("X-Remote-Group", []) if trusted else [],
            extra if trusted else {},
            dict(request.headers),
            (request.transport.get_extra_info("peername") or ("", 0))[1] if request.transport else 0,
        )
        self.seen.append(seen)
        return seen

    # --- the API ------------------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        seen = self._authenticate(request)
        if seen.user is None:
            return _status(401, "Unauthorized", "Unauthorized")
        path = request.path.rstrip("/")
        if path == "/apis":
            if self.aggregated_discovery and "as=APIGroupDiscoveryList" in request.headers.get("Accept", ""):
                return _aggregated()
            return web.json_response(
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [
                        {
                            "name": GROUP,
                            "versions": [{"groupVersion": GROUP_VERSION, "version": VERSION}],
                            "preferredVersion": {"groupVersion": GROUP_VERSION, "version": VERSION},
                        }
                    ],
                }
            )
        if path == f"/apis/{GROUP_VERSION}":
            return web.json_response(RESOURCE_LIST)
        if path == "/openapi/v3":
            return web.json_response({"paths": {f"apis/{GROUP_VERSION}": {"serverRelativeURL": OPENAPI_URL}}})
        if path == f"/openapi/v3/apis/{GROUP_VERSION}":
            return web.json_response(OPENAPI)
        parts = path.split("/")[4:]  # after /apis/<group>/<version>
        if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] == "flunders":
            namespace, name = parts[1], parts[3] if len(parts) > 3 else ""
            return await self._flunders(request, seen, namespace, name)
        return _status(404, "NotFound", "the server could not find the requested resource")

    async def _flunders(self, request: web.Request, seen: Seen, namespace: str, name: str) -> web.StreamResponse:
        if request.method == "POST":
            body = await request.json()
            self._revision += 1
            body.setdefault("metadata", {}).update(
                {"namespace": namespace, "resourceVersion": str(self._revision), "annotations": _echo(seen)}
            )
            self.flunders[(namespace, body["metadata"]["name"])] = body
            for queue in self._watchers:
                queue.put_nowait({"type": "ADDED", "object": body})
            return web.json_response(body, status=201)
        if request.method != "GET":
            return _status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if name:
            found = self.flunders.get((namespace, name))
            if found is None:
                return _status(404, "NotFound", f'flunders.{GROUP} "{name}" not found')
            return web.json_response({**found, "metadata": {**found["metadata"], "annotations": _echo(seen)}})
        if request.query.get("watch") in ("true", "1"):
            return await self._watch(request, namespace)
        items = [obj for (ns, _), obj in sorted(self.flunders.items()) if ns == namespace]
        return web.json_response(
            {
                "kind": "FlunderList",
                "apiVersion": GROUP_VERSION,
                "metadata": {"resourceVersion": str(self._revision), "annotations": _echo(seen)},
                "items": items,
            }
        )

    async def _watch(self, request: web.Request, namespace: str) -> web.StreamResponse:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        since = int(request.query.get("resourceVersion") or 0)
        for obj in self.flunders.values():
            if obj["metadata"]["namespace"] == namespace and int(obj["metadata"]["resourceVersion"]) > since:
                queue.put_nowait({"type": "ADDED", "object": obj})
        self._watchers.append(queue)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        try:
            while request.transport is not None and not request.transport.is_closing():
                try:
                    event = await asyncio.wait_for(queue.get(), 0.1)
                except TimeoutError:
                    continue  # a server notices its client's departure: look again
                if event is None:
                    break
                if event["object"]["metadata"]["namespace"] == namespace:
                    await response.write(json.dumps(event).encode() + b"\n")
        except ConnectionError:
            pass
        finally:
            self._watchers.remove(queue)
        return response

    @property
    def open_watches(self) -> int:
        return len(self._watchers)


def _echo(seen: Seen) -> dict[str, str]:
    return {
        "wardle.example.com/user": seen.user or "",
        "wardle.example.com/groups": ",".join(seen.groups),
        "wardle.example.com/client-cn": seen.client_cn or "",
    }


def _aggregated() -> web.Response:
    document = {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [
            {
                "metadata": {"name": GROUP},
                "versions": [
                    {
                        "version": VERSION,
                        "resources": [
                            {
                                "resource": "flunders",
                                "responseKind": {"group": GROUP, "version": VERSION, "kind": "Flunder"},
                                "scope": "Namespaced",
                                "singularResource": "flunder",
                                "verbs": ["create", "get", "list", "watch"],
                                "shortNames": ["fl"],
                            }
                        ],
                        "freshness": "Current",
                    }
                ],
            }
        ],
    }
    return web.Response(body=json.dumps(document), headers={"Content-Type": AGGREGATED})


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        },
        status=code,
    )
