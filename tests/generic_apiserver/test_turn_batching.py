"""The lean transport batches its work per turn of the event loop (pyop.apiserver.endpoints.transport): the
requests read in one turn are answered together in the next, and their plain answers are written after all of
them are made, one write per connection; whatever else a connection writes, or closing it, comes after what it
has unsent. Driven through in-memory transports, so each write is seen as it happens."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from aiohttp import web
from generic_apiserver.transport_server import AUTH, transport_test_server

from pyop.apiserver.endpoints.transport import LeanConnection, LeanServer

T = TypeVar("T")


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


async def _slow(request: web.BaseRequest) -> web.StreamResponse:
    await asyncio.sleep(0.01)  # longer than the loop turns a test waits for the answers before it
    return web.Response(text="waited")


def _request(path: str, method: str = "GET", headers: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: localhost\r\n{AUTH}{headers}\r\n".encode()


def _connections(count: int) -> tuple[list[LeanConnection], list[_Memory]]:
    api = transport_test_server()
    api.add_path("/slow", _slow, public=True)
    lean = LeanServer(api.handle, request_factory=api._make_request, access_log=None)  # noqa: SLF001
    connections, memories = [], []
    for _ in range(count):
        connection, memory = lean(), _Memory()
        connection.connection_made(memory)
        connections.append(connection)
        memories.append(memory)
    return connections, memories


async def _in_a_read_callback(work: Callable[[], T]) -> T:
    """``work()`` run as a socket's read runs: in a loop callback, outside any task; its result once that turn
    is over."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def run() -> None:
        try:
            done.set_result(work())
        except Exception as error:  # the test fails with it (not the loop's exception handler)
            done.set_exception(error)

    loop.call_soon(run)
    return await done


async def _read(connection: LeanConnection, data: bytes) -> None:
    """``data`` arrives in one read."""
    await _in_a_read_callback(lambda: connection.data_received(data))


async def _turns(count: int = 3) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


def _statuses(memory: _Memory) -> list[bytes]:
    return [part.split(b"\r\n", 1)[0] for part in b"".join(memory.writes).split(b"HTTP/1.1 ")[1:]]


async def test_requests_read_in_one_turn_are_answered_after_it_and_written_together() -> None:
    (first, second), (one, two) = _connections(2)

    def both_read() -> tuple[list[bytes], list[bytes]]:
        first.data_received(_request("/version"))
        second.data_received(_request("/version") + _request("/nowhere"))  # two pipelined requests
        return list(one.writes), list(two.writes)  # nothing is answered within the reads

    assert await _in_a_read_callback(both_read) == ([], [])
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
    await _read(connection, _request("/version") + _request("/slow") + _request("/version"))
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

    def two_reads() -> None:  # one turn, two reads (a malformed request in one read alone refuses all of it)
        connection.data_received(_request("/version"))
        connection.data_received(b"GET /version HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n")

    await _in_a_read_callback(two_reads)
    await _turns()
    raw = b"".join(memory.writes)
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and raw.index(b"HTTP/1.0 400 Bad Request\r\n") > 0
    assert memory.events == ["write", "write", "close"]


async def test_a_connection_lost_before_its_turn_writes_nothing() -> None:
    (lost, kept), (gone, memory) = _connections(2)

    def read_then_lose() -> None:
        lost.data_received(_request("/version"))
        kept.data_received(_request("/version"))
        lost.connection_lost(ConnectionResetError("reset"))

    await _in_a_read_callback(read_then_lose)
    await _turns()
    assert gone.writes == []
    assert _statuses(memory) == [b"200 OK"]


async def test_the_server_closing_a_connection_writes_what_it_has_unsent_first() -> None:
    (connection,), (memory,) = _connections(1)

    def answer_then_close() -> list[bytes]:
        connection.data_received(_request("/version"))
        connection.answer()  # as the next turn does: the answer is made, not yet written
        unsent = list(memory.writes)
        connection.close()
        return unsent

    assert await _in_a_read_callback(answer_then_close) == []
    assert memory.events == ["write", "close"] and _statuses(memory) == [b"200 OK"]
