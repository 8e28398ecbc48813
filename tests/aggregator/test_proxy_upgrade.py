"""Upgrade requests through the aggregator (issue 15): kube-aggregator proxies them with UpgradeAwareHandler, so
`kubectl exec` into an aggregated kind's subresource, or any websocket under an aggregated group, reaches the
aggregated server with the caller's identity and the front-proxy certificate, and the two connections are spliced
both ways once the server switches protocols; a server that refuses the upgrade has its answer relayed.

The backend is the wardle stand-in with one more route: a websocket (v4.channel.k8s.io) under a flunder that
greets the identity it authenticated and echoes each message reversed, and a raw `Upgrade: x-echo` one (a protocol
aiohttp does not know, as SPDY is) that echoes bytes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest_asyncio
from aiohttp import web
from testing_server.helpers import Api, connector

from aggregator.backend import GROUP, GROUP_VERSION, VERSION, Backend
from pyop.apiserver.endpoints.upgrade import take_over
from pyop.testing import TestAPIServer
from pyop.testing.aggregator import service_name_for

FLUNDER = f"/apis/{GROUP_VERSION}/namespaces/default/flunders/f1"


@dataclass
class StreamingBackend(Backend):
    """The wardle server, plus streaming subresources under a flunder."""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == f"{FLUNDER}/echo":
            seen = self._authenticate(request)
            if seen.user is None:
                return web.Response(status=401)
            ws = web.WebSocketResponse(protocols=("v4.channel.k8s.io",))
            await ws.prepare(request)
            await ws.send_str(f"hello {seen.user} via {seen.client_cn}")
            async for message in ws:
                if message.type == aiohttp.WSMsgType.BINARY:
                    await ws.send_bytes(message.data[::-1])
            return ws
        if request.path == f"{FLUNDER}/raw":
            self._authenticate(request)
            upgrade_headers = [("Connection", "Upgrade"), ("Upgrade", "x-echo")]
            response, reader, transport = await take_over(request, upgrade_headers)
            while data := await reader.read(65536):
                transport.write(data.upper())
            return response
        if request.path == f"{FLUNDER}/refused":
            body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403, "reason": "Forbidden"}
            return web.json_response(body, status=403)
        return await super()._handle(request)


@pytest_asyncio.fixture
async def streaming(server: TestAPIServer) -> AsyncIterator[StreamingBackend]:
    configmap = server.store.get("configmaps", "kube-system", "extension-apiserver-authentication")
    assert configmap is not None
    data = configmap["data"]
    hosts = [f"{service_name_for(GROUP, VERSION)}.default.svc"]
    backend = StreamingBackend(
        data["requestheader-client-ca-file"].encode(), json.loads(data["requestheader-allowed-names"]), hosts
    )
    await backend.start()
    assert backend.serving_ca is not None
    await server.register_api_service(GROUP, VERSION, backend.url, ca_bundle=backend.serving_ca.certificate)
    yield backend
    await backend.stop()
    backend.remove_files()


async def test_a_websocket_reaches_the_aggregated_server_and_streams_both_ways(
    server: TestAPIServer, streaming: StreamingBackend
) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with (
        aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session,
        session.ws_connect(f"{FLUNDER}/echo", protocols=("v4.channel.k8s.io",)) as ws,
    ):
        assert ws.protocol == "v4.channel.k8s.io"  # the backend's handshake reply reached the client as it was
        greeting = await ws.receive_str(timeout=10)
        for payload in (b"\x00abc", b"\x01" + bytes(range(256)) * 64):
            await ws.send_bytes(payload)
            assert await ws.receive_bytes(timeout=10) == payload[::-1]
    assert greeting == "hello pyop-test-admin via front-proxy-client"
    seen = [s for s in streaming.seen if s.path == f"{FLUNDER}/echo"]
    assert len(seen) == 1
    assert "system:masters" in seen[0].groups
    assert "Authorization" not in seen[0].headers  # the caller's credentials stay here


async def test_a_refused_upgrade_is_relayed(server: TestAPIServer, streaming: StreamingBackend, api: Api) -> None:
    headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    headers["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
    async with api.session.get(f"{FLUNDER}/refused", headers=headers) as response:
        assert response.status == 403
        assert (await response.json())["reason"] == "Forbidden"


async def test_an_unreachable_server_is_a_503(server: TestAPIServer, streaming: StreamingBackend, api: Api) -> None:
    await streaming.stop()
    headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    headers["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
    async with api.session.get(f"{FLUNDER}/echo", headers=headers) as response:
        assert response.status == 503
        assert (await response.text()).startswith("error trying to reach service: ")


async def test_an_upgrade_to_a_protocol_aiohttp_does_not_know_is_spliced_byte_for_byte(
    server: TestAPIServer, streaming: StreamingBackend
) -> None:
    host, port = server.url.split("://", 1)[1].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), ssl=server.ssl_context())
    try:
        writer.write(
            f"GET {FLUNDER}/raw HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\n"
            "Connection: Upgrade\r\nUpgrade: x-echo\r\n\r\n".encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 101 ")
        assert b"upgrade: x-echo" in head.lower()
        for chunk in (b"first bytes", b"and then some more"):
            writer.write(chunk)
            assert await asyncio.wait_for(reader.readexactly(len(chunk)), 10) == chunk.upper()
    finally:
        writer.close()
    seen = [s for s in streaming.seen if s.path == f"{FLUNDER}/raw"]
    assert [s.user for s in seen] == ["pyop-test-admin"]
