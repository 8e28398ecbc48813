"""A load generator's HTTP/1.1 client: kept-alive connections, one request in flight on each, doing less per
request than aiohttp's client (no header objects, cookies, redirects or decompression).

Why: bench_test_server.py measures the server's writes per CPU second, and on a small machine the client shares
the CPU with it. Once the server got quicker than aiohttp's client could send, it waited for requests 20-30% of
the time (server CPU 0.37-0.54 s over 0.53-0.66 s of wall time for 4,000 creates, 2026-12-03) and answered them
one per event-loop turn, so its CPU per write grew with its own idle wake-ups, and the figure measured the client
as much as the server. This client writes each request with one ``transport.write`` and reads the answer's status
line and ``Content-Length`` body, nothing else; with it both servers of an A/B run are 97-100% busy (the
benchmark prints how busy), so each is measured at the load it can take.

It speaks only what the test server answers to writes: a status line, headers with ``Content-Length``, a body. An
answer without ``Content-Length`` (chunked) fails the request loudly rather than guessing.
"""

from __future__ import annotations

import asyncio
import re
from urllib.parse import urlsplit

_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
_CLOSE = re.compile(rb"\r\nconnection:[ \t]*close", re.IGNORECASE)


class LeanHTTPClient:
    """Requests to one ``http://host:port`` server, each on an idle kept-alive connection (or a new one)."""

    def __init__(self, url: str, user_agent: str = "bench-lean-client") -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise ValueError(f"{url!r}: expected http://host:port")
        self._host, self._port = parts.hostname, parts.port
        self._prefix = f"Host: {parts.hostname}:{parts.port}\r\nUser-Agent: {user_agent}\r\n"
        self._idle: list[_Connection] = []
        self._all: list[_Connection] = []

    async def request(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """(status, body) of one request; its headers are ``headers`` plus Host, User-Agent and Content-Length."""
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        message = f"{method} {path} HTTP/1.1\r\n{self._prefix}{lines}Content-Length: {len(body)}\r\n\r\n".encode()
        connection = self._idle.pop() if self._idle else await self._connect()
        status, answer, keep = await connection.exchange(message + body)
        if keep:
            self._idle.append(connection)
        else:
            connection.close()
        return status, answer

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(_Connection, self._host, self._port)
        self._all.append(connection)
        return connection

    def close(self) -> None:
        for connection in self._all:
            connection.close()
        self._idle.clear()
        self._all.clear()


class _Connection(asyncio.Protocol):
    """One connection: a request written, its answer read up to the end of its ``Content-Length`` body."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._answer: asyncio.Future[tuple[int, bytes, bool]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    async def exchange(self, message: bytes) -> tuple[int, bytes, bool]:
        """(status, body, whether the connection stays open) of ``message``'s answer."""
        assert self._transport is not None and self._answer is None, "one request at a time"
        self._answer = asyncio.get_running_loop().create_future()
        self._transport.write(message)
        try:
            return await self._answer
        finally:
            self._answer = None

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        end = buffer.find(b"\r\n\r\n")
        if end < 0 or self._answer is None or self._answer.done():
            return
        head = bytes(buffer[:end])
        length = _CONTENT_LENGTH.search(head)
        if length is None:
            self._answer.set_exception(RuntimeError(f"an answer without Content-Length: {head[:200]!r}"))
            return
        start, size = end + 4, int(length.group(1))
        if len(buffer) < start + size:
            return
        body = bytes(buffer[start : start + size])
        del buffer[: start + size]
        self._answer.set_result((int(head[9:12]), body, _CLOSE.search(head) is None))

    def connection_lost(self, exc: Exception | None) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(exc or ConnectionResetError("the server closed the connection"))

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
