"""The connection pool's limit: exchanges beyond it wait for a connection and get the one released first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web

from pyop.client import ClientConfig, Transport


@pytest_asyncio.fixture
async def slow_server() -> AsyncIterator[tuple[str, dict[str, int]]]:
    """Answers after a short pause, counting the connections it was asked on."""
    seen: dict[str, int] = {"connections": 0, "requests": 0}
    peers: set[object] = set()

    async def answer(request: web.Request) -> web.Response:
        transport = request.transport
        if transport not in peers:
            peers.add(transport)
            seen["connections"] += 1
        seen["requests"] += 1
        number = seen["requests"]
        await asyncio.sleep(0.01)
        return web.json_response({"n": number})

    app = web.Application()
    app.router.add_get("/version", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("limit", [1, 3])
async def test_requests_beyond_the_limit_wait_for_a_released_connection(
    slow_server: tuple[str, dict[str, int]], limit: int
) -> None:
    url, seen = slow_server
    async with Transport(ClientConfig(server=url), connection_limit=limit, request_timeout=5) as transport:
        answers = await asyncio.gather(*(transport.request("GET", "/version") for _ in range(12)))
        assert sorted(answer["n"] for answer in answers) == list(range(1, 13))
        assert seen["connections"] == limit
        assert len(transport.pool._open) == limit


async def test_a_closed_connection_frees_its_slot_for_a_waiting_request(
    slow_server: tuple[str, dict[str, int]],
) -> None:
    url, seen = slow_server
    async with Transport(ClientConfig(server=url), connection_limit=1, request_timeout=5) as transport:
        pool = transport.pool
        held, reused = await pool.acquire()
        assert not reused
        waiting = asyncio.create_task(transport.request("GET", "/version"))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # no slot: it waits rather than opening a second connection
        pool.discard(held)  # the slot comes free: the waiting request opens a connection of its own
        assert (await asyncio.wait_for(waiting, 5))["n"] == 1


async def test_a_cancelled_waiter_gives_up_its_turn(slow_server: tuple[str, dict[str, int]]) -> None:
    url, _ = slow_server
    async with Transport(ClientConfig(server=url), connection_limit=1, request_timeout=5) as transport:
        pool = transport.pool
        held, _ = await pool.acquire()
        cancelled = asyncio.create_task(pool.acquire())
        served = asyncio.create_task(transport.request("GET", "/version"))
        await asyncio.sleep(0.01)
        cancelled.cancel()
        await asyncio.sleep(0)
        pool.discard(held)
        assert (await asyncio.wait_for(served, 5))["n"] == 1
        assert cancelled.cancelled()


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="connection limit must be at least 1, got 0"):
        _ = Transport(ClientConfig(server="http://127.0.0.1:1"), connection_limit=0).pool
