"""Request URLs: the transport's shortcut for plain paths must address exactly what `URL(server + path)` does."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from yarl import URL

from pyop.client import ClientConfig, Transport

SERVERS = [
    "http://127.0.0.1:8080",
    "https://[fd00::1]:6443",
    "https://rancher.example/k8s/clusters/c-abc",
    "https://proxy.example/with%20space/",
    "https://h.example/a?x=1",
    "https://user:pw@h.example:1/x/",
]
PATH_CHARACTERS = "abcXYZ019-._~!$&'()*+,;=:@/%? #é\\"


@given(
    server=st.sampled_from(SERVERS),
    segments=st.lists(st.text(PATH_CHARACTERS, min_size=0, max_size=6), min_size=1, max_size=5),
)
def test_request_urls_are_what_joining_the_strings_gives(server: str, segments: list[str]) -> None:
    transport = Transport(ClientConfig(server=server))
    path = "/" + "/".join(segments)
    made, expected = transport._url(path), URL(transport.config.server + path)
    assert (str(made), made) == (str(expected), expected)


@pytest_asyncio.fixture
async def recorded_paths() -> AsyncIterator[tuple[str, list[str]]]:
    """A server behind a path prefix (as a proxy puts one) that answers every request with what it was asked."""
    seen: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.json_response({"kind": "Status"})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}/k8s/clusters/c-1", seen
    finally:
        await runner.cleanup()


async def test_the_server_prefix_and_query_reach_the_server(recorded_paths: tuple[str, list[str]]) -> None:
    server, seen = recorded_paths
    async with Transport(ClientConfig(server=server, token="t")) as transport:
        await transport.request("GET", "/api/v1/namespaces/ns/configmaps/a.b-c", params={"limit": 5, "watch": None})
        await transport.request("PATCH", "/api/v1/namespaces/ns/configmaps/odd name", body={"data": {"k": "v"}})
    assert seen == [
        "/k8s/clusters/c-1/api/v1/namespaces/ns/configmaps/a.b-c?limit=5",
        "/k8s/clusters/c-1/api/v1/namespaces/ns/configmaps/odd%20name",
    ]
