"""The lean transport batches its work per turn of the event loop (pyop.apiserver.endpoints.transport): the
requests read in one turn are answered together in the next, and their plain answers are written after all of
them are made, one write per connection; whatever else a connection writes, or closing it, comes after what it
has unsent. Driven through in-memory transports, so each write is seen as it happens."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from pyop.apiserver.authentication.authenticator import TokenAuthenticator
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.endpoints.transport import LeanConnection, LeanServer
from pyop.apiserver.registry.operations import Operations
from pyop.apiserver.registry.resources import ResourceRegistry, types_from_crd
from pyop.apiserver.server.generic import GenericAPIServer
from pyop.apiserver.storage.store import Store
from pyop.testing.crds import schemaless_crd

TOKEN = "t0ken"


class _Memory(asyncio.Transport):
    """Each write kept as it came, and a log of writes and the close in order."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.events: list[str] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))
        self.events.append("write")

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed:  # asyncio's transports ignore a second close
            self.events.append("close")
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 6443)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0


def _api() -> GenericAPIServer:
    crd = schemaless_crd("example.com", "Gadget", "gadgets", scope="Cluster")
    operations = Operations(
        Store(100),
        ResourceRegistry(types_from_crd(crd)),
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
        users={},
        bookmark_interval=1.0,
    )
    api = GenericAPIServer(
        operations,
        authenticator=TokenAuthenticator({TOKEN: UserInfo("admin")}),
        version={"major": "1", "minor": "0", "gitVersion": "v1.0.0"},
    )

    async def big(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(body=b"x" * 100_000, content_type="text/plain")

    async def wait(request: web.BaseRequest) -> web.StreamResponse:
        await asyncio.sleep(0.01)
        return web.Response(text="waited")

    api.add_path("/big", big, public=True)
    api.add_path("/wait", wait, public=True)
    return api


def _request(path: str, method: str = "GET", headers: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n{headers}\r\n".encode()


def _connections(count: int) -> tuple[list[LeanConnection], list[_Memory]]:
    api = _api()
    lean = LeanServer(api.handle, request_factory=api._make_request, access_log=None)  # noqa: SLF001
    connections, memories = [], []
    for _ in range(count):
        connection, memory = lean(), _Memory()
        connection.connection_made(memory)
        connections.append(connection)
        memories.append(memory)
    return connections, memories


async def _read(connection: LeanConnection, data: bytes) -> None:
    """``data`` arrives as a socket's read does: in a loop callback, outside any task; returns after that turn."""
    done = asyncio.get_running_loop().create_future()

    def received() -> None:
        connection.data_received(data)
        done.set_result(None)

    asyncio.get_running_loop().call_soon(received)
    await done


async def _turns(count: int = 3) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


def _statuses(memory: _Memory) -> list[bytes]:
    return [part.split(b"\r\n", 1)[0] for part in b"".join(memory.writes).split(b"HTTP/1.1 ")[1:]]


async def test_requests_read_in_one_turn_are_answered_after_it_and_written_together() -> None:
    (first, second), (one, two) = _connections(2)
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def both_read() -> None:
        first.data_received(_request("/version"))
        second.data_received(_request("/version") + _request("/nowhere"))  # two pipelined requests
        # nothing is answered within the reads
        done.set_result((list(one.writes), list(two.writes)))

    loop.call_soon(both_read)
    assert await done == ([], [])
    await _turns()
    assert _statuses(one) == [b"200 OK"]
    assert len(two.writes) == 1  # both answers of the pipelined pair in one write, in order
    assert _statuses(two) == [b"200 OK", b"404 Not Found"]


async def test_a_plain_answer_before_a_large_one_leaves_first() -> None:
    (connection,), (memory,) = _connections(1)
    await _read(connection, _request("/version") + _request("/big"))
    await _turns()
    assert _statuses(memory) == [b"200 OK", b"200 OK"]
    assert b'"gitVersion":"v1.0.0"' in memory.writes[0] and memory.writes[-1] == b"x" * 100_000


async def test_a_plain_answer_before_a_streamed_head_and_a_close() -> None:
    """HEAD goes through aiohttp's own writer; ``Connection: close`` closes after the answers are written."""
    (connection,), (memory,) = _connections(1)
    head, close = _request("/version", method="HEAD"), _request("/nowhere", headers="Connection: close\r\n")
    await _read(connection, _request("/version") + head + close)
    await _turns()
    assert _statuses(memory) == [b"200 OK", b"200 OK", b"404 Not Found"]
    assert memory.events[-1] == "close"


async def test_an_answer_made_after_a_wait_is_written_in_the_next_turn() -> None:
    (connection,), (memory,) = _connections(1)
    await _read(connection, _request("/version") + _request("/wait") + _request("/version"))
    await _turns()
    assert _statuses(memory) == [b"200 OK"]  # the second waits
    for _ in range(100):
        if len(_statuses(memory)) == 3:
            break
        await asyncio.sleep(0.01)
    assert _statuses(memory) == [b"200 OK", b"200 OK", b"200 OK"]
    assert b"waited" in b"".join(memory.writes)


async def test_a_malformed_request_read_after_a_good_one_gets_its_400_after_the_good_answer() -> None:
    (connection,), (memory,) = _connections(1)
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def two_reads() -> None:  # one turn, two reads (a malformed request in one read alone refuses all of it)
        connection.data_received(_request("/version"))
        connection.data_received(b"GET /version HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n")
        done.set_result(None)

    loop.call_soon(two_reads)
    await done
    await _turns()
    raw = b"".join(memory.writes)
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and raw.index(b"HTTP/1.0 400 Bad Request\r\n") > 0
    assert memory.events == ["write", "write", "close"]


async def test_a_connection_lost_before_its_turn_writes_nothing() -> None:
    (lost, kept), (gone, memory) = _connections(2)
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def read_then_lose() -> None:
        lost.data_received(_request("/version"))
        kept.data_received(_request("/version"))
        lost.connection_lost(ConnectionResetError("reset"))
        done.set_result(None)

    loop.call_soon(read_then_lose)
    await done
    await _turns()
    assert gone.writes == []
    assert _statuses(memory) == [b"200 OK"]


async def test_the_server_closing_a_connection_writes_what_it_has_unsent_first() -> None:
    (connection,), (memory,) = _connections(1)
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def answer_then_close() -> None:
        connection.data_received(_request("/version"))
        connection.answer()  # as the next turn does: the answer is made, not yet written
        unsent = list(memory.writes)
        connection.close()
        done.set_result(unsent)

    loop.call_soon(answer_then_close)
    assert await done == []
    assert memory.events == ["write", "close"] and _statuses(memory) == [b"200 OK"]
