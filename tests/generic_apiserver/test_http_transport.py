"""The API servers' HTTP/1.1 transport (pyop.apiserver.endpoints.transport) answers byte for byte as aiohttp's own
server does: the same GenericAPIServer handler is served by both, raw requests go to each, and the answers are
compared (the Date header aside). Also: pipelined requests answered in order, keep-alive, ``Connection: close``,
HTTP/1.0, a malformed request, a handler's bug, HEAD, large bodies, and an upgrade to a websocket after a request
on the same connection."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from generic_apiserver.transport_server import AUTH, TOKEN, transport_test_server

from pyop.apiserver.server.generic import GenericAPIServer

_DATE = re.compile(rb"\r\nDate: [^\r]*\r\n")


@pytest.fixture
async def servers() -> AsyncIterator[tuple[int, int, GenericAPIServer]]:
    """The lean transport's port, aiohttp's own server's port (the same handler), and the server."""
    server = transport_test_server()
    await server.listen()
    reference = web.Server(server.handle, request_factory=server._make_request, access_log=None)  # noqa: SLF001
    runner = web.ServerRunner(reference)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield int(server.url.rsplit(":", 1)[1]), runner.addresses[0][1], server
    await runner.cleanup()
    await server.stop()


async def _exchange(port: int, *requests: bytes, quiet: float = 0.3) -> tuple[bytes, bool]:
    """Send the requests (one write: pipelined) and read until the server closes or is quiet; the bytes read
    and whether the server closed the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"".join(requests))
    received = b""
    closed = False
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(65536), quiet)
            if not chunk:
                closed = True
                break
            received += chunk
    except TimeoutError:
        pass
    writer.close()
    return received, closed


def _without_date(raw: bytes) -> bytes:
    return _DATE.sub(b"\r\nDate: -\r\n", raw)


def _request(method: str, path: str, headers: str = AUTH, body: bytes = b"", version: str = "1.1") -> bytes:
    length = f"Content-Length: {len(body)}\r\n" if body else ""
    return f"{method} {path} HTTP/{version}\r\nHost: localhost\r\n{headers}{length}\r\n".encode() + body


CASES: dict[str, list[bytes]] = {
    "version, twice pipelined": [_request("GET", "/version"), _request("GET", "/version")],
    "not found (a Status)": [_request("GET", "/nowhere")],
    "unauthorized": [_request("GET", "/apis/example.com/v1/gadgets", headers="")],
    "create then get": [
        _request("POST", "/apis/example.com/v1/gadgets", body=b'{"metadata":{"name":"g1"}}'),
        _request("GET", "/apis/example.com/v1/gadgets/g1"),
    ],
    "connection close": [_request("GET", "/version", headers=AUTH + "Connection: close\r\n")],
    "HTTP/1.0": [_request("GET", "/version", version="1.0")],
    "HEAD": [_request("HEAD", "/version")],
    "204": [_request("GET", "/empty")],
    "large body": [_request("GET", "/big")],
    "a handler's bug": [_request("GET", "/bug"), _request("GET", "/version")],
    "a header name as the handler wrote it": [_request("GET", "/lowercase")],
    "a CR LF in a header (refused, connection closed)": [_request("GET", "/injected"), _request("GET", "/version")],
    "a request, then a malformed one": [
        _request("GET", "/version"),
        b"GET /version HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n",
    ],
    "malformed": [b"GET /version HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n"],
    # answered at once (no task) or in a task once the handler waits: the same bytes, in order
    "one that waits between two that do not, pipelined": [
        _request("GET", "/version"),
        _request("GET", "/wait"),
        _request("GET", "/version"),
    ],
    "asyncio.timeout before the first wait": [_request("GET", "/timeout"), _request("GET", "/timeout")],
    "context variables per request": [
        _request("GET", "/context?a"),
        _request("GET", "/context?wait=1"),
        _request("GET", "/context?b"),
    ],
    "a handler's bug after a wait": [_request("GET", "/bug-after-wait"), _request("GET", "/version")],
    "a write, one that waits, a write, pipelined": [
        _request("POST", "/apis/example.com/v1/gadgets", body=b'{"metadata":{"name":"g1"}}'),
        _request("GET", "/wait"),
        _request(
            "PATCH",
            "/apis/example.com/v1/gadgets/g1",
            headers=AUTH + "Content-Type: application/merge-patch+json\r\n",
            body=b'{"spec":{"a":1}}',
        ),
    ],
}


def _uids_out(raw: bytes) -> bytes:
    """Objects made by two servers differ in uid, timestamps and resourceVersion; the rest must not."""
    return re.sub(rb'"(uid|creationTimestamp|time|resourceVersion)":"[^"]*"', b"-", raw)


@pytest.mark.parametrize("case", list(CASES))
async def test_answers_as_aiohttp_does(servers: tuple[int, int, GenericAPIServer], case: str) -> None:
    lean_port, aiohttp_port, _ = servers
    requests = CASES[case]
    # the two servers share one registry: a name of each
    other = [request.replace(b"g1", b"g2") for request in requests] if b"g1" in b"".join(requests) else requests
    lean, lean_closed = await _exchange(lean_port, *requests)
    theirs, their_closed = await _exchange(aiohttp_port, *other)
    assert lean or "refused" in case, case
    assert _uids_out(_without_date(lean)) == _uids_out(_without_date(theirs)).replace(b"g2", b"g1")
    assert lean_closed == their_closed


async def test_pipelined_answers_come_in_order_and_the_connection_stays_open(
    servers: tuple[int, int, GenericAPIServer],
) -> None:
    lean_port, _, _ = servers
    raw, closed = await _exchange(lean_port, _request("GET", "/nowhere"), _request("GET", "/version"))
    assert not closed
    first, second = raw.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"404 Not Found\r\n") and second.startswith(b"200 OK\r\n")
    assert b"Connection" not in raw and b'"gitVersion":"v1.0.0"' in second


async def test_a_request_and_an_upgrade_in_one_write(servers: tuple[int, int, GenericAPIServer]) -> None:
    """The request before the upgrade is answered by this transport, then aiohttp's handler takes the websocket."""
    lean_port, _, _ = servers
    upgrade = (
        b"GET /echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    raw, _ = await _exchange(lean_port, _request("GET", "/version"), upgrade)
    first, second = raw.split(b"HTTP/1.1 ")[1:3]
    assert first.startswith(b"200 OK\r\n") and b'"gitVersion":"v1.0.0"' in first
    assert second.startswith(b"101 Switching Protocols\r\n") and b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in second


async def test_an_upgrade_after_a_request_on_the_same_connection_is_served_by_aiohttp(
    servers: tuple[int, int, GenericAPIServer],
) -> None:
    _, _, server = servers
    connector = aiohttp.TCPConnector(limit=1)  # one connection: the websocket reuses the kept-alive one
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.get(server.url + "/version", headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert response.status == 200
        async with session.ws_connect(server.url + "/echo") as ws:
            await ws.send_str("hello")
            message: Any = await ws.receive(timeout=5)
            assert message.data == "echo hello"
        async with session.get(server.url + "/version", headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert (await response.json())["gitVersion"] == "v1.0.0"


async def test_large_and_chunked_request_bodies_and_a_large_answer(servers: tuple[int, int, GenericAPIServer]) -> None:
    """Bodies past the reader's buffer limits (the connection pauses and resumes reading), a chunked upload, and
    an answer of several megabytes."""
    _, _, server = servers
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    gadget = {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "big"},
        "spec": {"blob": "x" * 3_000_000},
    }
    chunked = json.dumps({**gadget, "metadata": {"name": "big2"}}).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(chunked), 100_000):
            yield chunked[start : start + 100_000]

    async with aiohttp.ClientSession() as session:
        url = server.url + "/apis/example.com/v1/gadgets"
        async with session.post(url, data=json.dumps(gadget).encode(), headers=headers) as response:
            assert response.status == 201 and len((await response.json())["spec"]["blob"]) == 3_000_000
        async with session.post(url, data=chunks(), headers=headers) as response:
            assert response.status == 201 and (await response.json())["metadata"]["name"] == "big2"
        async with session.get(url, headers=headers) as response:
            listed = await response.json()
            assert [item["metadata"]["name"] for item in listed["items"]] == ["big", "big2"]
            assert int(response.headers["Content-Length"]) > 6_000_000


async def test_requests_arriving_a_few_bytes_at_a_time(servers: tuple[int, int, GenericAPIServer]) -> None:
    """A create written a few bytes at a time (one read each: the parser resumes in the middle of the request line,
    a header, the body) followed by a GET in the same pieces: answered as aiohttp's server answers them."""
    lean_port, aiohttp_port, _ = servers

    async def trickled(port: int, name: bytes) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        raw = _request("POST", "/apis/example.com/v1/gadgets", body=b'{"metadata":{"name":"%s"}}' % name)
        raw += _request("GET", "/version")
        for start in range(0, len(raw), 7):
            writer.write(raw[start : start + 7])
            await writer.drain()
            await asyncio.sleep(0.002)  # a read of its own
        received = b""
        while received.count(b"HTTP/1.1 ") < 2 or not received.endswith(b"}"):
            received += await asyncio.wait_for(reader.read(65536), 5)
        writer.close()
        return received

    lean = await trickled(lean_port, b"t1")
    theirs = await trickled(aiohttp_port, b"t2")
    assert lean.startswith(b"HTTP/1.1 201 Created\r\n")
    assert _uids_out(_without_date(lean)) == _uids_out(_without_date(theirs)).replace(b"t2", b"t1")
