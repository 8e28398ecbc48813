"""A request's deadline (`request_timeout`) covers waiting for a connection, connecting and the exchange itself:
the connection's timer while the exchange is on the wire, a timeout context only while a connection is waited for.
Either way the caller gets `ApiConnectionError` (TimeoutError) on time, and only the timed-out connection is
dropped."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from pyop.client import ApiConnectionError, ClientConfig, Transport
from pyop.client.connection import HTTPConnection


@pytest_asyncio.fixture
async def server() -> AsyncIterator[tuple[str, list[int]]]:
    """Answers `/fast` at once and never answers `/silent`; records how many connections it was asked on."""
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"GET /silent"):
                    await reader.read()  # never answers; waits for the client to go away
                    return
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n")
                writer.write(b'{"ok":true}')
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    listener = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", connections
    finally:
        listener.close()


async def test_an_exchange_on_the_wire_times_out_at_its_deadline(server: tuple[str, list[int]]) -> None:
    url, connections = server
    async with Transport(ClientConfig(server=url), request_timeout=0.3) as transport:
        assert await transport.request("GET", "/fast") == {"ok": True}
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(ApiConnectionError, match=r"GET /silent: TimeoutError\(\)"):
            # on the reused (idle) connection: the timer path (wait_for: a missing deadline fails, never hangs)
            await asyncio.wait_for(transport.request("GET", "/silent"), 5)
        assert 0.3 <= loop.time() - started < 2.0
        assert transport.pool._idle == [] and len(transport.pool._open) == 0  # the timed-out one was dropped
        assert await transport.request("GET", "/fast") == {"ok": True}
        assert len(connections) == 2


async def test_waiting_for_a_connection_counts_against_the_deadline(server: tuple[str, list[int]]) -> None:
    url, _ = server
    async with Transport(ClientConfig(server=url), connection_limit=1, request_timeout=0.3) as transport:
        held, _ = await transport.pool.acquire()  # the only slot is taken: the request must wait
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(ApiConnectionError, match=r"GET /fast: TimeoutError\(\)"):
            await asyncio.wait_for(transport.request("GET", "/fast"), 5)
        assert 0.3 <= loop.time() - started < 2.0
        assert not transport.pool._waiters  # it gave up its turn
        transport.pool.release(held)
        assert await transport.request("GET", "/fast") == {"ok": True}  # on the held connection, released


async def test_a_response_before_the_deadline_leaves_no_timer_behind(server: tuple[str, list[int]]) -> None:
    url, connections = server
    async with Transport(ClientConfig(server=url), request_timeout=0.2) as transport:
        for _ in range(3):
            assert await transport.request("GET", "/fast") == {"ok": True}
        (connection,) = transport.pool._idle
        await asyncio.sleep(0.4)  # past every request's deadline: the answered exchanges' deadlines change nothing
        assert isinstance(connection, HTTPConnection) and connection.reusable
        assert await transport.request("GET", "/fast") == {"ok": True}
        assert len(connections) == 1
