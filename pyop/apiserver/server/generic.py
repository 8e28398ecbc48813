"""`GenericAPIServer`: the request stages composed into one HTTP server, as k8s.io/apiserver's GenericAPIServer.

A request meets, in order:

1. public paths (`add_path(..., public=True)`, e.g. the health endpoints a probe calls without credentials);
2. authentication: ``authenticator.authenticate(request)`` -> `UserInfo`, or an ``ApiError(401)``;
3. routing (`parse_path`, `verb_of`), then the `routed` hook (request accounting, metrics labels);
4. authorization: ``authorizer.authorize(user, request, target, verb)``, or an ``ApiError(403)``;
5. the `intercept` hook: a response it returns ends the request (fault injection, an aggregator's proxy);
6. dispatch: a resource path to the registry (`ApiHandler`, writes driven through ``admission``) and its answer
   through `convert` (Table output); discovery documents (`discovery`); the non-resource paths added with
   `add_path`; ``/version``; ``/openapi/v2`` and ``/openapi/v3`` (`openapi`); anything else is a 404.

Any `ApiError` raised on the way is answered as a ``Status``. The registry (``operations``: its store, resource
types and per-kind behaviour) is built by the caller, which is what makes one server the test API server (built-in
kinds, CRDs, RBAC, webhooks: `pyop.testing.TestAPIServer`) and another an aggregated API server (the user's kinds
and strategies, delegated authentication and authorization).

It uses aiohttp's low-level server: one handler for every path. An Application would add URL routing and a
middleware chain to every request, a fifth of the cost of a small write. Its connections are
`pyop.apiserver.endpoints.transport.LeanConnection`s: aiohttp's parser and request objects, plain answers written in
one step.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler

from pyop import gcpolicy
from pyop.api.status import ApiError
from pyop.apiserver.admission.chain import AdmissionChain
from pyop.apiserver.authentication.authenticator import Authenticator
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.authorizer import AlwaysAllow, Authorizer
from pyop.apiserver.endpoints.discovery_aggregated import aggregated_response, wants_aggregated
from pyop.apiserver.endpoints.handlers import (
    ApiHandler,
    SubresourceConnect,
    SubresourceCreate,
    SubresourceGet,
    error_response,
    is_watch,
    json_response,
)
from pyop.apiserver.endpoints.openapi import OpenAPIDocuments, openapi_response
from pyop.apiserver.endpoints.protobuf.negotiation import as_protobuf
from pyop.apiserver.endpoints.request_object import make_request
from pyop.apiserver.endpoints.routing import DiscoveryPath, Target, parse_path, verb_of
from pyop.apiserver.endpoints.table import as_table
from pyop.apiserver.endpoints.transport import LeanServer
from pyop.apiserver.registry.operations import Operations

MAX_BODY = 64 * 1024 * 1024
NOT_FOUND = "the server could not find the requested resource"
# A non-resource path's handler (`add_path`): the request in, the response out.
PathHandler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


class GenericAPIServer:
    """The HTTP server of a registry; subclasses add their pieces through the hooks (see the module docstring)."""

    def __init__(
        self,
        operations: Operations,
        *,
        authenticator: Authenticator,
        authorizer: Authorizer | None = None,
        admission: AdmissionChain | None = None,
        version: Mapping[str, str] | None = None,
        subresource_creates: Mapping[str, SubresourceCreate] | None = None,
        subresource_gets: Mapping[str, SubresourceGet] | None = None,
        subresource_connects: Mapping[str, SubresourceConnect] | None = None,
    ) -> None:
        """``operations``: the registry, over its store and resource types. ``authenticator``: who a request is
        from. ``authorizer``: whether they may (None: everything is allowed). ``admission``: what drives writes
        through admission plugins and bridged reads through conversion calls (None: writes run straight
        through). ``version``: the ``/version`` document. ``subresource_creates``: POST handlers of subresources
        that are not registry writes (the test server's ServiceAccount ``token``, pods' ``eviction`` and
        ``binding``); ``subresource_gets``: GET handlers of such subresources (pods' ``log``);
        ``subresource_connects``: streaming ones, upgraded connections (pods' ``exec``, ``attach``, ``portforward``)."""
        self.operations = operations
        self.store = operations.store
        self.resources = operations.resources
        self.authenticator = authenticator
        self.authorizer: Authorizer = authorizer or AlwaysAllow()
        self.admission = admission
        self.version = dict(version or {})
        self.handler = ApiHandler(
            operations,
            admission,
            subresource_creates=subresource_creates,
            subresource_gets=subresource_gets,
            subresource_connects=subresource_connects,
        )
        self.openapi_documents = OpenAPIDocuments(self.resources, operations.builtin.kubernetes_version)
        self.paths: dict[str, PathHandler] = {}
        self.public_paths: dict[str, PathHandler] = {}
        self.url = ""
        self.listening_port = 0  # the port bound by `listen` (0 before it)
        self._runner: web.ServerRunner | None = None
        self._ssl_context: ssl.SSLContext | None = None

    def add_path(self, path: str, handler: PathHandler, *, public: bool = False) -> None:
        """Serve a non-resource path (``/healthz``, ``/metrics``); ``public``: before authentication (no
        credentials needed), else after authorization as every other path."""
        (self.public_paths if public else self.paths)[path] = handler

    # --- lifecycle --------------------------------------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._runner is not None

    async def listen(self, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None) -> str:
        """Start listening (``port`` 0: any free port; ``ssl_context``: HTTPS) and return the server's URL."""
        server = LeanServer(self.handle, request_factory=self._make_request, access_log=None)
        runner = web.ServerRunner(server, shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, host, port, ssl_context=ssl_context).start()
        self._runner = runner
        gcpolicy.serving_starts()  # short GC pauses while serving
        self._ssl_context = ssl_context
        bound_host, bound_port = runner.addresses[0][:2]
        shown = "127.0.0.1" if bound_host in ("0.0.0.0", "::") else bound_host  # noqa: S104 - only the URL shown
        shown = f"[{shown}]" if ":" in shown else shown
        self.listening_port = bound_port
        self.url = f"{'https' if ssl_context is not None else 'http'}://{shown}:{bound_port}"
        return self.url

    async def stop_listening(self) -> None:
        """End open watches and close the listener (kept-alive connections too); the stored state stays."""
        self.end_watches()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            gcpolicy.serving_ends()

    async def listen_again(self) -> None:
        """Listen on the same address and with the same TLS as before `stop_listening`."""
        if self._runner is None and self.url:
            host = self.url.split("://", 1)[1].rsplit(":", 1)[0].strip("[]")
            await self.listen(host, self.listening_port, self._ssl_context)

    async def stop(self) -> None:
        """Stop serving: watches end, the listener closes, the admission chain releases its connections."""
        await self.stop_listening()
        if self.admission is not None:
            await self.admission.close()

    def end_watches(self) -> None:
        for watcher in list(self.operations.watchers):
            watcher.close()

    def _make_request(
        self,
        message: RawRequestMessage,
        payload: StreamReader,
        protocol: RequestHandler,
        writer: AbstractStreamWriter,
        task: asyncio.Task[None],
    ) -> web.BaseRequest:
        return make_request(message, payload, protocol, writer, task, protocol._loop, MAX_BODY)  # noqa: SLF001

    # --- the request path -------------------------------------------------------------------------------------

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        """Every request: through the stages; an `ApiError` becomes its ``Status``; protobuf for clients that accept
        nothing else."""
        try:
            response = await self.serve(request)
        except ApiError as error:
            response = error_response(error)
        return as_protobuf(request, response)

    async def serve(self, request: web.BaseRequest) -> web.StreamResponse:
        public = self.public_paths.get(request.path)
        if public is not None:
            return await public(request)
        user = await self.authenticator.authenticate(request)
        target = parse_path(request.path)
        if isinstance(target, Target):
            method = request.method
            verb = verb_of(method, target, method == "GET" and is_watch(request))  # only a GET can be a watch
        else:
            verb = ""
        self.routed(request, target, verb)
        await self.authorizer.authorize(user, request, target, verb)
        intercepted = await self.intercept(request, user, target, verb)
        if intercepted is not None:
            return intercepted
        if isinstance(target, Target):
            return self.convert(request, target, verb, await self.handler.handle(request, target, verb, user))
        if isinstance(target, DiscoveryPath):
            if request.method != "GET":
                raise ApiError(405, "the server does not allow this method on the requested resource")
            return self.discovery(request, target)
        path = self.paths.get(request.path)
        if path is not None:
            return await path(request)
        if request.path in ("/version", "/version/") and self.version:
            return json_response(self.version)
        if request.path.startswith("/openapi/"):
            return await self.openapi(request)
        raise ApiError(404, NOT_FOUND)

    # --- hooks (override in a subclass) ------------------------------------------------------------------------

    def routed(self, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str) -> None:
        """Called once the request is authenticated and its path parsed (``verb`` is empty off resource paths)."""

    async def intercept(
        self, request: web.BaseRequest, user: UserInfo, target: Target | DiscoveryPath | None, verb: str
    ) -> web.StreamResponse | None:
        """After authorization: a response ends the request here; None carries on to dispatch."""
        return None

    def convert(self, request: web.BaseRequest, target: Target, verb: str, response: Any) -> web.StreamResponse:
        """A resource answer as the client asked for it: a ``meta.k8s.io`` Table when the Accept header says so."""
        return as_table(request, verb, target, response, self.operations)

    def discovery(self, request: web.BaseRequest, target: DiscoveryPath) -> web.Response:
        """``/api``, ``/apis`` (aggregated v2 when asked for) and the group and group-version documents."""
        if (
            target.version is None
            and target.group in ("", None)
            and wants_aggregated(request.headers.get("Accept", ""))
        ):
            return aggregated_response(self.resources, legacy=target.legacy)
        return self.handler.discovery(target, self.url.split("://", 1)[1])

    async def openapi(self, request: web.BaseRequest) -> web.StreamResponse:
        """``/openapi/v2`` and ``/openapi/v3[/<group-version path>]`` of the served kinds."""
        return openapi_response(request, self.openapi_documents)


__all__ = ["MAX_BODY", "GenericAPIServer", "PathHandler"]
