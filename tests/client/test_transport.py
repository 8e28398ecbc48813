"""Transport details that the test API server does not exercise: huge watch lines, odd chunking."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web

from pyop.client import APIResource, ClientConfig, DynamicClient, EventType, Transport
from pyop.client.config import StaticToken

THINGS = APIResource("example.pyop.dev", "v1", "Thing", "things", True)


@pytest_asyncio.fixture
async def fake_server() -> AsyncIterator[tuple[str, dict[str, object]]]:
    """An aiohttp app whose watch endpoint writes events in awkward chunks."""
    state: dict[str, object] = {"auth": []}

    big = {"metadata": {"name": "big", "namespace": "ns", "resourceVersion": "2"}, "data": "x" * 300_000}
    small = {"metadata": {"name": "small", "namespace": "ns", "resourceVersion": "3"}}
    payload = (
        json.dumps({"type": "ADDED", "object": big}) + "\n" + json.dumps({"type": "MODIFIED", "object": small}) + "\n"
    ).encode()

    async def watch(request: web.Request) -> web.StreamResponse:
        state["auth"].append(request.headers.get("Authorization"))  # type: ignore[union-attr]
        state["query"] = dict(request.query)
        response = web.StreamResponse()
        await response.prepare(request)
        for start in range(0, len(payload), 7919):  # chunks that split lines anywhere
            await response.write(payload[start : start + 7919])
        await response.write(b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}')  # no newline
        return response

    app = web.Application()
    app.router.add_get("/apis/example.pyop.dev/v1/namespaces/ns/things", watch)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}", state
    await runner.cleanup()


async def test_watch_reassembles_lines_of_any_size(fake_server: tuple[str, dict[str, object]]) -> None:
    url, state = fake_server
    async with Transport(ClientConfig(server=url, auth=StaticToken("tok"))) as transport:
        events = [
            event
            async for event in DynamicClient(transport).watch(
                THINGS, "ns", resource_version="1", timeout_seconds=60, label_selector={"a": "b"}
            )
        ]
    assert [e.type for e in events] == [EventType.ADDED, EventType.MODIFIED, EventType.BOOKMARK]
    assert len(events[0].object["data"]) == 300_000
    assert events[0].object["kind"] == "Thing"  # type filled from the resource
    assert [e.resource_version for e in events] == ["2", "3", "9"]
    assert state["auth"] == ["Bearer tok"]
    assert state["query"] == {
        "watch": "true",
        "resourceVersion": "1",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "60",
        "labelSelector": "a=b",
    }


def test_resource_paths() -> None:
    assert THINGS.path("ns") == "/apis/example.pyop.dev/v1/namespaces/ns/things"
    assert THINGS.path(None) == "/apis/example.pyop.dev/v1/things"
    assert THINGS.path("ns", "a", "status") == "/apis/example.pyop.dev/v1/namespaces/ns/things/a/status"
    nodes = APIResource("", "v1", "Node", "nodes", False)
    assert nodes.path("ignored", "n1") == "/api/v1/nodes/n1"
    with pytest.raises(ValueError):
        THINGS.path(None, "a")
