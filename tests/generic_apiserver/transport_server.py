"""The GenericAPIServer the HTTP transport's tests serve (test_http_transport.py, test_turn_batching.py): a
cluster-scoped Gadget CRD and public paths whose handlers answer in every way a transport must write (a bug, 204, a
large body, a websocket, a header as the handler wrote it, a CR LF in a header, answers after a wait, a timeout
before the first wait, context variables per request)."""

from __future__ import annotations

import asyncio
import contextvars
from datetime import UTC, datetime

from aiohttp import web

from pyop.apiserver.authentication.authenticator import TokenAuthenticator
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.registry.operations import Operations
from pyop.apiserver.registry.resources import ResourceRegistry, types_from_crd
from pyop.apiserver.server.generic import GenericAPIServer
from pyop.apiserver.storage.store import Store
from pyop.testing.crds import schemaless_crd

TOKEN = "t0ken"
AUTH = f"Authorization: Bearer {TOKEN}\r\n"
_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


def transport_test_server() -> GenericAPIServer:
    crd = schemaless_crd("example.com", "Gadget", "gadgets", scope="Cluster")
    operations = Operations(
        Store(100),
        ResourceRegistry(types_from_crd(crd)),
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
        users={},
        bookmark_interval=1.0,
    )
    server = GenericAPIServer(
        operations,
        authenticator=TokenAuthenticator({TOKEN: UserInfo("admin")}),
        version={"major": "1", "minor": "0", "gitVersion": "v1.0.0"},
    )

    async def bug(request: web.BaseRequest) -> web.StreamResponse:
        raise RuntimeError("a handler's bug")

    async def empty(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(status=204)

    async def big(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(body=b"x" * 100_000, content_type="text/plain")

    async def lowercase(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(body=b"{}", headers={"content-type": "application/json"})

    async def injected(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(body=b"{}", content_type="application/json", headers={"X-Bad": "a\r\nInjected: yes"})

    async def echo(request: web.BaseRequest) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)  # type: ignore[arg-type]  # a BaseRequest is all WebSocketResponse uses
        async for message in ws:
            await ws.send_str("echo " + message.data)
        return ws

    async def wait(request: web.BaseRequest) -> web.StreamResponse:  # answered after a wait: in a task
        await asyncio.sleep(0)
        return web.Response(body=b'{"waited":true}', content_type="application/json")

    async def timeout(request: web.BaseRequest) -> web.StreamResponse:  # asyncio.timeout before any wait
        async with asyncio.timeout(5):
            seen = asyncio.current_task() is not None
            await asyncio.sleep(0)
        return web.Response(body=b'{"task":%s}' % str(seen).lower().encode(), content_type="application/json")

    async def context(request: web.BaseRequest) -> web.StreamResponse:  # each request in a context of its own
        before = _SEEN.get()
        _SEEN.set(request.path_qs)
        if request.query.get("wait"):
            await asyncio.sleep(0)
        return web.Response(
            body=f'{{"before":"{before}","after":"{_SEEN.get()}"}}'.encode(), content_type="application/json"
        )

    async def bug_after_wait(request: web.BaseRequest) -> web.StreamResponse:
        await asyncio.sleep(0)
        raise RuntimeError("a handler's bug after a wait")

    server.add_path("/wait", wait, public=True)
    server.add_path("/timeout", timeout, public=True)
    server.add_path("/context", context, public=True)
    server.add_path("/bug-after-wait", bug_after_wait, public=True)
    server.add_path("/bug", bug, public=True)
    server.add_path("/empty", empty, public=True)
    server.add_path("/big", big, public=True)
    server.add_path("/echo", echo, public=True)
    server.add_path("/lowercase", lowercase, public=True)
    server.add_path("/injected", injected, public=True)
    return server
