"""Upgraded connections on aiohttp's server: take a connection over after a ``101 Switching Protocols``, and proxy an
upgrade request to a backend, both ways, as k8s.io/apimachinery's UpgradeAwareHandler does.

aiohttp hands a handler the bytes that follow a request only for the upgrades it knows (websocket); SPDY (kubectl's
``Upgrade: SPDY/3.1``) and any other protocol would be parsed as the next HTTP request. `take_over` installs a
raw reader on the connection before the ``101`` goes out, so every byte the client sends after it arrives on an
`asyncio.StreamReader`, and the connection is never reused for HTTP.

`proxy_upgrade` is kube-aggregator's behaviour for an upgrade request: the request goes to the backend as it came
(with the headers the caller gives, the upgrade headers put back); a backend that answers ``101`` gets the client's
connection spliced to its own, byte for byte, until either side closes; any other answer is relayed as a normal
response.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterable
from typing import Final

from aiohttp import web
from yarl import URL

_CHUNK: Final = 64 * 1024
_HOP_BY_HOP_REPLY: Final = frozenset({"transfer-encoding", "keep-alive", "proxy-connection", "te", "trailer"})


def is_upgrade(request: web.BaseRequest) -> bool:
    """Connection names ``upgrade`` and an Upgrade header says to what (httpstream.IsUpgradeRequest)."""
    connection = ",".join(request.headers.getall("Connection", []))
    tokens = {token.strip().lower() for token in connection.split(",")}
    return "upgrade" in tokens and bool(request.headers.get("Upgrade", "").strip())


class _RawParser:
    """What aiohttp's connection feeds once installed (`RequestHandler.set_parser`): every byte, to a reader."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        self.reader.feed_data(data)
        return False, b""

    def feed_eof(self) -> None:
        self.reader.feed_eof()


async def take_over(
    request: web.BaseRequest, headers: Iterable[tuple[str, str]]
) -> tuple[web.StreamResponse, asyncio.StreamReader, asyncio.Transport]:
    """Answer ``101`` with ``headers`` and own the connection: the client's bytes from now on arrive on the reader,
    the transport writes to it. The handler returns the response once the stream is over (the connection then
    closes)."""
    response = web.StreamResponse(status=101)
    for name, value in headers:
        response.headers.add(name, value)
    reader = asyncio.StreamReader(limit=2**22)
    protocol = request.protocol
    protocol.set_parser(_RawParser(reader))  # type: ignore[arg-type]  # before the 101: no byte can be missed
    protocol.keep_alive(False)
    await response.prepare(request)
    transport = request.transport
    assert isinstance(transport, asyncio.Transport)
    return response, reader, transport


async def write_and_drain(transport: asyncio.Transport, data: bytes) -> None:
    """Write to a taken-over connection, waiting while the peer is slow to read (a crude high-water mark)."""
    transport.write(data)
    while not transport.is_closing() and transport.get_write_buffer_size() > 4 * _CHUNK:
        await asyncio.sleep(0.005)


class RawConnection:
    """A taken-over connection as a byte stream (`take_over`'s reader and transport): what a protocol session
    (pyop.apiserver.endpoints.spdy) reads and writes."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.Transport) -> None:
        self.reader, self.transport = reader, transport

    async def read(self) -> bytes:
        return await self.reader.read(_CHUNK)

    async def write(self, data: bytes) -> None:
        if self.transport.is_closing():
            raise ConnectionResetError("the client closed the connection")
        await write_and_drain(self.transport, data)

    async def close(self) -> None:
        self.transport.close()


def _request_head(request: web.BaseRequest, url: URL, headers: Iterable[tuple[str, str]]) -> bytes:
    lines = [f"{request.method} {request.raw_path} HTTP/1.1", f"Host: {url.raw_host}:{url.port}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    lines.append("Connection: Upgrade")
    lines.append(f"Upgrade: {request.headers['Upgrade']}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _parse_head(head: bytes) -> tuple[int, str, list[tuple[str, str]]]:
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ConnectionError(f"malformed HTTP response {status_line!r}")
    headers = []
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers.append((name.strip(), value.strip()))
    return int(parts[1]), parts[2] if len(parts) > 2 else "", headers


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]]) -> bytes:
    """A non-101 answer's body: by Content-Length, chunked, or to the connection's end."""
    lowered = {name.lower(): value for name, value in headers}
    if "chunked" in lowered.get("transfer-encoding", "").lower():
        body = b""
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return body
            body += await reader.readexactly(size)
            await reader.readline()
    if "content-length" in lowered:
        return await reader.readexactly(int(lowered["content-length"]))
    return await reader.read()


async def _pipe_to_backend(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await source.read(_CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()


async def _pipe_to_client(source: asyncio.StreamReader, transport: asyncio.Transport) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await source.read(_CHUNK):
            if transport.is_closing():
                return
            await write_and_drain(transport, data)


async def proxy_upgrade(
    request: web.BaseRequest,
    url: URL,
    headers: Iterable[tuple[str, str]],
    ssl_context: ssl.SSLContext | None,
    server_hostname: str | None,
) -> web.StreamResponse:
    """Send the upgrade request to ``url`` (scheme, host and port; the path is the request's) with ``headers`` and
    splice the connections once the backend switches protocols. A connection failure raises ``OSError`` (the
    caller words it)."""
    backend_reader, backend_writer = await asyncio.open_connection(
        url.host,
        url.port,
        ssl=ssl_context if url.scheme == "https" else None,
        server_hostname=server_hostname if url.scheme == "https" else None,
        limit=2**22,
    )
    try:
        backend_writer.write(_request_head(request, url, headers))
        if request.body_exists:
            backend_writer.write(await request.read())
        await backend_writer.drain()
        try:
            head = await backend_reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            raise ConnectionError(f"no HTTP response from the backend: {error}") from None
        status, reason, reply_headers = _parse_head(head[:-4])
        if status != 101:
            body = await _read_body(backend_reader, reply_headers)
            relayed = web.Response(status=status, reason=reason or None, body=body)
            for name, value in reply_headers:
                if name.lower() not in _HOP_BY_HOP_REPLY | {"content-length", "connection", "upgrade"}:
                    relayed.headers.add(name, value)
            return relayed
        response, client_reader, transport = await take_over(request, reply_headers)
        up = asyncio.ensure_future(_pipe_to_backend(client_reader, backend_writer))
        down = asyncio.ensure_future(_pipe_to_client(backend_reader, transport))
        await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        if down.done():  # the backend closed: so does the client's connection
            up.cancel()
        else:  # the client closed: the backend may still flush what it has, briefly
            await asyncio.wait({down}, timeout=1.0)
            down.cancel()
        for task in (up, down):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return response
    finally:
        backend_writer.close()
        with contextlib.suppress(ConnectionError, OSError, ssl.SSLError):
            await backend_writer.wait_closed()


__all__ = ["RawConnection", "is_upgrade", "proxy_upgrade", "take_over", "write_and_drain"]
