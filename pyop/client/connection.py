"""One HTTP/1.1 connection to the API server: requests written as bytes, responses parsed by httptools (llhttp).

Why pyop speaks HTTP/1.1 itself rather than through aiohttp's client: an operator's hot path is thousands of
small JSON requests to one server over a few kept-alive connections. aiohttp's general-purpose client spends
~150 us of CPU on each (request and response objects, cookie jar, tracing hooks, URL handling) and ~150 ms
importing (it builds its SSL contexts at import); this connection spends ~35 us, and the operator imports no
HTTP client at all. The protocol work that is easy to get wrong (response framing, chunked bodies, keep-alive
rules) is llhttp's, Node.js's parser, through httptools; what is left here is bookkeeping: one exchange at a
time per connection, full bodies for requests, flow-controlled chunks for watch streams.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, cast

import httptools

__all__ = [
    "ConnectionClosed",
    "HTTPConnection",
    "Limits",
    "Response",
    "ResponseHead",
    "ResponseLimitExceeded",
    "StreamedBody",
]

# A watch stream stops reading from the socket while this much of its body waits for the consumer (TCP then
# pushes back on the server) and starts again once the consumer has taken it.
_STREAM_HIGH_WATER = 1 << 20


class ConnectionClosed(ConnectionError):
    """The connection ended before the response did; `response_started` says whether any of it arrived."""

    def __init__(self, message: str, *, response_started: bool) -> None:
        super().__init__(message)
        self.response_started = response_started


class ResponseLimitExceeded(ConnectionClosed):
    """The response broke one of the connection's `Limits`; the connection is closed, the exchange fails."""

    def __init__(self, message: str) -> None:
        super().__init__(message, response_started=True)


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a response a connection accepts before giving up on it (a server that never stops sending
    headers or body would otherwise fill the operator's memory). Generous, as Go's transport is: 10 MiB of
    headers (Go's `MaxResponseHeaderBytes` default) in at most 1,000 header lines (an API server sends about ten,
    plus its Warning headers), and 1 GiB per full (non-streamed) body. Watch lines are limited by the transport.
    """

    max_header_bytes: int = 10 << 20
    max_header_count: int = 1000
    max_body_bytes: int = 1 << 30


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """Status and headers (names lower-cased; repeated headers joined with ", ", as HTTP allows)."""

    status: int
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class Response:
    head: ResponseHead
    body: bytes


@dataclass(slots=True)
class _Exchange:
    """The response being received for the request last written on a connection."""

    streaming: bool
    head: asyncio.Future[ResponseHead]
    complete: asyncio.Future[bytes]
    headers: dict[str, str] = field(default_factory=dict)
    repeated: dict[str, list[str]] | None = None  # headers seen more than once, joined when the head is complete
    header_count: int = 0
    header_bytes: int = 0
    chunks: deque[bytes] = field(default_factory=deque)
    buffered: int = 0
    received: int = 0
    readable: asyncio.Event | None = None
    started: bool = False
    finished: bool = False
    framed: bool = False  # the body's end is known from Content-Length or chunked encoding, not from EOF


class HTTPConnection(asyncio.Protocol):
    """An asyncio protocol carrying one request/response exchange at a time.

    `reusable` is true between exchanges when the server kept the connection alive and the last body was
    read to its end; the pool hands only such connections out again. Bytes that arrive when no response is
    expected (after a complete response, or between exchanges) close the connection: they would otherwise be
    read as the answer to the next request.
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._exchange: _Exchange | None = None
        self._paused = False
        self.closed = False
        self.keep_alive = True
        self.idle_since = 0.0

    # --- asyncio.Protocol ---------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio.Transport

    def data_received(self, data: bytes) -> None:
        if self._exchange is None:
            self._unexpected()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionClosed(f"malformed HTTP response: {error}", response_started=True))
            self.close()

    def eof_received(self) -> bool:
        return False  # close the transport; `connection_lost` settles the exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        exchange = self._exchange
        if exchange is None or exchange.finished:
            return
        if exchange.head.done() and not exchange.framed and exc is None:
            self.on_message_complete()  # a body that ends when the connection does (no length, not chunked)
            return
        reason = f"connection closed: {exc!r}" if exc else "connection closed by the server"
        self._fail(ConnectionClosed(reason, response_started=exchange.started))

    # --- httptools callbacks --------------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        exchange = self._exchange
        if exchange is None or exchange.started:
            self._unexpected()  # a second response to one request: bytes nobody asked for
            return
        exchange.started = True

    def on_header(self, name: bytes, value: bytes) -> None:
        exchange = self._exchange
        if exchange is None or exchange.finished:
            return
        exchange.header_count += 1
        exchange.header_bytes += len(name) + len(value) + 4
        limits = self.limits
        if exchange.header_count > limits.max_header_count:
            self._over_limit(f"more than {limits.max_header_count} response headers (max_header_count)")
            return
        if exchange.header_bytes > limits.max_header_bytes:
            self._over_limit(f"response headers over {limits.max_header_bytes} bytes (max_header_bytes)")
            return
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers = exchange.headers
        if key not in headers:
            headers[key] = text
            return
        # Repeated headers are collected and joined once: joining as they come is quadratic in their number.
        if exchange.repeated is None:
            exchange.repeated = {}
        exchange.repeated.setdefault(key, [headers[key]]).append(text)

    def on_headers_complete(self) -> None:
        exchange = self._exchange
        if exchange is None or exchange.finished:
            return
        headers = exchange.headers
        if exchange.repeated:
            for key, values in exchange.repeated.items():
                headers[key] = ", ".join(values)
        exchange.framed = "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
        length = headers.get("content-length", "")
        if not exchange.streaming and length.isdigit() and int(length) > self.limits.max_body_bytes:
            self._over_limit(f"response body of {length} bytes over {self.limits.max_body_bytes} (max_body_bytes)")
            return
        if not exchange.head.done():
            exchange.head.set_result(ResponseHead(self._parser.get_status_code(), headers))

    def on_body(self, body: bytes) -> None:
        exchange = self._exchange
        if exchange is None or exchange.finished:
            return
        if not exchange.streaming:
            exchange.received += len(body)
            if exchange.received > self.limits.max_body_bytes:
                self._over_limit(f"response body over {self.limits.max_body_bytes} bytes (max_body_bytes)")
                return
        exchange.chunks.append(body)
        if exchange.streaming:
            exchange.buffered += len(body)
            if exchange.readable is not None:
                exchange.readable.set()
            if exchange.buffered > _STREAM_HIGH_WATER and not self._paused and self._transport is not None:
                self._paused = True
                self._transport.pause_reading()

    def on_message_complete(self) -> None:
        exchange = self._exchange
        if exchange is None or exchange.finished:
            return
        exchange.finished = True
        self.keep_alive = self.keep_alive and self._parser.should_keep_alive()
        if exchange.readable is not None:
            exchange.readable.set()
        if not exchange.complete.done():
            exchange.complete.set_result(b"".join(exchange.chunks) if not exchange.streaming else b"")

    # --- the client side ----------------------------------------------------------------------------------

    async def exchange(self, request: bytes, deadline: float | None = None) -> Response:
        """Write one request and return its whole response.

        At `deadline` (event-loop time) an exchange not yet complete fails with `TimeoutError` and the
        connection is dropped (its state is unknown), as a cancelled exchange's is."""
        exchange = self._start(request, streaming=False)
        timer = None if deadline is None else asyncio.get_running_loop().call_at(deadline, self._time_out, exchange)
        try:
            body = await exchange.complete
            return Response(exchange.head.result(), body)
        finally:
            if timer is not None:
                timer.cancel()
            self._exchange = None

    async def open_stream(self, request: bytes) -> tuple[ResponseHead, StreamedBody]:
        """Write one request and return its head once it arrives; the body follows through `StreamedBody`."""
        exchange = self._start(request, streaming=True)
        exchange.readable = asyncio.Event()
        head = await exchange.head
        return head, StreamedBody(self, exchange)

    def close(self) -> None:
        self.keep_alive = False
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()

    def abort(self) -> None:
        """Drop the connection at once (an abandoned exchange leaves it in an unknown state)."""
        self.keep_alive = False
        self.closed = True
        if self._transport is not None:
            self._transport.abort()

    @property
    def reusable(self) -> bool:
        transport = self._transport
        return (
            self.keep_alive
            and not self.closed
            and self._exchange is None
            and transport is not None
            and not transport.is_closing()
        )

    def _start(self, request: bytes, *, streaming: bool) -> _Exchange:
        if self._transport is None or self.closed or self._transport.is_closing():
            raise ConnectionClosed("connection closed before the request was sent", response_started=False)
        if self._exchange is not None:
            raise RuntimeError("an HTTP/1.1 connection carries one exchange at a time")
        loop = asyncio.get_running_loop()
        exchange = _Exchange(streaming, loop.create_future(), loop.create_future())
        # Nobody may await `complete` for a stream or `head` for a request that fails: retrieve their
        # exceptions so asyncio does not log them as never retrieved.
        exchange.head.add_done_callback(_consume_exception)
        exchange.complete.add_done_callback(_consume_exception)
        self._exchange = exchange
        self._transport.write(request)
        return exchange

    def _time_out(self, exchange: _Exchange) -> None:
        if self._exchange is exchange and not exchange.finished:
            self._fail(TimeoutError())
            self.abort()

    def _unexpected(self) -> None:
        """Bytes that answer no request: the stream's framing can no longer be trusted, so close."""
        self.keep_alive = False
        self.close()

    def _over_limit(self, reason: str) -> None:
        self._fail(ResponseLimitExceeded(f"response refused: {reason}"))
        self.close()

    def _fail(self, error: Exception) -> None:
        exchange = self._exchange
        if exchange is None or exchange.finished:
            return
        exchange.finished = True
        self.keep_alive = False
        for future in (exchange.head, exchange.complete):
            if not future.done():
                future.set_exception(error)
        if exchange.readable is not None:
            exchange.readable.set()

    def _resume(self) -> None:
        if self._paused and self._transport is not None and not self.closed:
            self._paused = False
            self._transport.resume_reading()

    def _detach(self, exchange: _Exchange) -> None:
        if self._exchange is exchange:
            self._exchange = None


class StreamedBody:
    """The body of a streaming response, chunk by chunk, as the connection receives it."""

    def __init__(self, connection: HTTPConnection, exchange: _Exchange) -> None:
        self._connection = connection
        self._exchange = exchange

    async def chunks(self) -> list[bytes]:
        """The chunks received since the last call, waiting for at least one; [] once the body has ended.

        Raises `ConnectionClosed` when the connection ends before the body does.
        """
        exchange = self._exchange
        assert exchange.readable is not None
        while not exchange.chunks:
            if exchange.finished:
                if exchange.complete.done() and exchange.complete.exception() is not None:
                    raise exchange.complete.exception()  # type: ignore[misc]
                return []
            exchange.readable.clear()
            await exchange.readable.wait()
        taken = list(exchange.chunks)
        exchange.chunks.clear()
        exchange.buffered = 0
        self._connection._resume()
        return taken

    @property
    def complete(self) -> bool:
        """The body was read to its end without error (the connection may then be reused)."""
        exchange = self._exchange
        return (
            exchange.finished
            and not exchange.chunks
            and exchange.complete.done()
            and not (exchange.complete.exception())
        )

    def release(self) -> None:
        """Detach from the connection; the caller decides whether it is reused or closed."""
        self._connection._detach(self._exchange)


def _consume_exception(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
