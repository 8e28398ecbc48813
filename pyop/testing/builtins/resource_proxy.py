"""The `proxy` subresources of pods, services and nodes (`/api/v1/namespaces/ns/pods/web:8080/proxy/healthz`).

kube-apiserver forwards such a request over HTTP to the pod's IP and port, to a ready endpoint of the service, or to
the node's kubelet. The test server has no pod network and no kubelets, so the process listening there is a test's
handler, the same asyncio stream handlers that answer port-forwards:

- a pod's port: ``server.pod_streams.on_port(namespace, pod, port, handler)`` or
  ``server.pod_streams.forward_port(namespace, pod, port, target_port=...)`` (a real local HTTP server);
- a service: resolved to one of its Endpoints' pod addresses and that pod's port, then as above;
- a node: ``server.node_proxies.on_kubelet(node, handler)`` / ``forward_kubelet(node, target_port=...)`` for the
  kubelet's port, ``on_port``/``forward_port`` for any other (`nodes/<name>:<port>/proxy`).

Resolution and its errors are kube's (`proxy_location`); the exchange is kube's proxy handler's (`proxy_http`).
Authorization happens before, on the path: `get pods/proxy` for a GET or HEAD, `create` for a POST, `update`,
`patch`, `delete`, and no verb (only a ``*`` rule allows it) for an OPTIONS; the name authorized is the path's
(``web:8080``), as kube's RequestInfo reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from aiohttp import web

from pyop.api.status import ApiError
from pyop.apiserver.endpoints.routing import Target
from pyop.apiserver.storage.store import Store
from pyop.testing.builtins.pod_stream_sessions import PortHandler, tcp_forwarder
from pyop.testing.builtins.pod_streaming import PodStreams
from pyop.testing.builtins.proxy_http import ProxyRequest, forward, status_response
from pyop.testing.builtins.proxy_location import (
    Location,
    UnknownError,
    node_location,
    pod_location,
    service_location,
)

PROXY_METHODS: Final = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")  # ProxyREST.ConnectMethods
_NAMESPACED: Final = ("pods", "services")


@dataclass
class NodeProxies:
    """What answers on each node's ports, for `nodes/<name>[:port]/proxy` (set by tests). The kubelet's handler
    answers whatever port the node's status names for it (``status.daemonEndpoints.kubeletEndpoint.Port``, by
    default 10250)."""

    kubelet_handlers: dict[str, PortHandler] = field(default_factory=dict)
    port_handlers: dict[tuple[str, int], PortHandler] = field(default_factory=dict)

    def on_kubelet(self, node: str, handler: PortHandler) -> None:
        """Serve the node's kubelet (its `/healthz`, `/metrics`, `/stats/summary`, ...) with ``handler``."""
        self.kubelet_handlers[node] = handler

    def forward_kubelet(self, node: str, target_port: int, host: str = "127.0.0.1") -> None:
        """Forward the node's kubelet connections to a real HTTP server at ``host:target_port``."""
        self.on_kubelet(node, tcp_forwarder(host, target_port))

    def on_port(self, node: str, port: int, handler: PortHandler) -> None:
        """Serve another port of the node (a host-network process) with ``handler``."""
        self.port_handlers[(node, port)] = handler

    def forward_port(self, node: str, port: int, target_port: int, host: str = "127.0.0.1") -> None:
        self.on_port(node, port, tcp_forwarder(host, target_port))

    def clear(self, node: str) -> None:
        """Forget every handler of the node."""
        self.kubelet_handlers.pop(node, None)
        for key in [key for key in self.port_handlers if key[0] == node]:
            del self.port_handlers[key]

    def handler(self, location: Location) -> PortHandler | None:
        if location.kubelet and location.owner in self.kubelet_handlers:
            return self.kubelet_handlers[location.owner]
        number = location.port_number
        return self.port_handlers.get((location.owner, number)) if number is not None else None


class ResourceProxies:
    """The three `proxy` subresources over the store and the tests' handlers."""

    def __init__(self, store: Store, pod_streams: PodStreams, node_proxies: NodeProxies) -> None:
        self.store, self.pod_streams, self.node_proxies = store, pod_streams, node_proxies

    @staticmethod
    def serves(target: Target) -> bool:
        """Whether a parsed path is one of them (core v1, with the resource's scope); any other `proxy` path is
        left to the registry, which answers it with a 404."""
        if target.subresource != "proxy" or target.group or target.version != "v1" or not target.name:
            return False
        if target.plural in _NAMESPACED:
            return target.namespace is not None
        return target.plural == "nodes" and target.namespace is None

    async def serve(self, request: web.BaseRequest, target: Target) -> web.StreamResponse:
        if request.method not in PROXY_METHODS:
            raise ApiError(405, "the server does not allow this method on the requested resource")
        try:
            location, handler = self._resolve(target)
        except UnknownError as error:  # a plain Go error in kube: a 500 Status without a reason
            return status_response(500, str(error), None)
        return await forward(ProxyRequest(request, subpath(request.path, target), location), handler)

    def _resolve(self, target: Target) -> tuple[Location, PortHandler | None]:
        namespace = target.namespace or ""
        if target.plural == "nodes":
            location = node_location(self.store, target.name)
            return location, self.node_proxies.handler(location)
        if target.plural == "pods":
            location = pod_location(self.store, namespace, target.name)
        else:
            location = service_location(self.store, namespace, target.name)
        number = location.port_number
        handler = self.pod_streams.port_handlers.get((namespace, location.owner, number)) if number else None
        return location, handler


def subpath(path: str, target: Target) -> str:
    """The proxied path as kube's getRequestOptions takes it: the segments after `proxy` (empty ones kept), with
    a leading slash, and a trailing one when the request had one."""
    parts = path.strip("/").split("/")
    skip = 6 if target.namespace is not None else 4  # api, v1, [namespaces, ns,] plural, name, proxy
    rest = "/".join(parts[skip + 1 :])
    if rest and not rest.startswith("/"):
        rest = "/" + rest
    if path.endswith("/") and not rest.endswith("/"):
        rest += "/"
    return rest


__all__ = ["PROXY_METHODS", "NodeProxies", "ResourceProxies", "subpath"]
