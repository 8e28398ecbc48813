"""HTTP/1.1 transport of the API servers: a lean connection over aiohttp's request parser and request objects.

Design note. aiohttp's server connection (`web_protocol.RequestHandler`) costs about 80 µs of CPU per small request
on asyncio's loop, against about 45 µs for a bare protocol that parses and answers (bench/bench_test_server.py's
writes are dominated by it once the registry is quick): a connection task that waits for messages, a payload writer
and a task per request, `prepare` and `write_eof` of every response, keep-alive timers. `LeanConnection` keeps what
is not ours to write and drops the rest:
- requests are parsed by aiohttp's own C parser (`aiohttp.http.HttpRequestParser`) and handed to the server's
  request factory as the same `web.BaseRequest`s (headers, URL decoding, body limits, TLS details unchanged);
- a plain `web.Response` (body known, not compressed, no cookies) is written in one `transport.write` of the bytes
  aiohttp would send (its status line, the handler's headers in their order, then ``Content-Length``, ``Date``,
  ``Server`` and ``Connection`` as aiohttp adds them; a CR or LF in a header goes to aiohttp, which refuses it);
- every other response (watches and other streams the handler prepared itself, HEAD, bodiless statuses, HTTP/1.0)
  goes through aiohttp's `prepare`/`write_eof` on an aiohttp `StreamWriter` over this connection;
- an upgrade request (websockets: exec, attach, port-forward) hands the connection to aiohttp's `RequestHandler`,
  fed the request's bytes again, once the requests before it on the connection are answered;
- requests on one connection are answered in order (pipelining), each in a `contextvars.Context` of its own (as
  aiohttp's task per request); a request that never waits (an in-memory write) is answered within the read that
  brought it, without a task (`eager.start`: Python 3.12's eager tasks, for 3.11 too), and one that waits goes on in
  a task from its first wait; a handler's exception other than an `HTTPException` is a 500 and closes the
  connection, as in aiohttp; a request cancelled (the server's shutdown) closes it;
- the server's shutdown closes idle connections and waits for busy ones (`web.Server.shutdown` calls `shutdown`);
- work is batched per turn of the event loop (`LeanServer.answer_soon`, `send_soon`): a read only parses and queues
  its requests; the connections read in one turn are then answered one after another, and their plain answers are
  written after all of them. Why: a write's system calls (a ``recv``, a ``send`` that wakes the client, the kernel's
  TCP work) evict the CPU's caches, and the Python that runs right after them runs slower: a registry create
  followed by a loopback round trip cost x1.46 the user CPU of the two apart, in runs of 16 x1.16
  (bench/bench_interleaved_io.py). Over HTTP (bench/bench_test_server.py --baseline <the commit before>) this is
  1.15-1.67x writes per server CPU second, with p99 latency lower under 16 requests in flight, though each request
  is answered one loop turn after its read. Whatever writes to the transport itself (a streamed or prepared
  answer, a large one, a 400 for a malformed request, an upgrade's hand-off, a close) first writes what the
  connection has unsent, so answers leave in order.
Idle connections are kept until the client or the server closes them (kube-apiserver keeps them too).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
from typing import Any

from aiohttp import web
from aiohttp.base_protocol import BaseProtocol
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpRequestParser, HttpVersion11, RawRequestMessage
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.http_writer import StreamWriter
from aiohttp.streams import StreamReader
from aiohttp.tcp_helpers import tcp_keepalive
from aiohttp.web_exceptions import HTTPException
from aiohttp.web_protocol import RequestHandler, RequestPayloadError

from pyop.apiserver.endpoints import eager

_SERVER_KEEP_ALIVE = f"Server: {SERVER_SOFTWARE}\r\n\r\n"
_SERVER_CLOSE = f"Server: {SERVER_SOFTWARE}\r\nConnection: close\r\n\r\n"
_LARGE = 16384  # bodies at least this long are written after the head, not copied into it
_logger = logging.getLogger("aiohttp.server")


class LeanConnection(BaseProtocol):
    """One client connection (see the module docstring)."""

    def __init__(self, server: LeanServer, loop: asyncio.AbstractEventLoop) -> None:
        parser = HttpRequestParser(
            self, loop, 2**16, max_line_size=8190, max_field_size=8190, payload_exception=RequestPayloadError
        )
        super().__init__(loop)
        self._parser = parser  # BaseProtocol's flow control pauses it (an argument of its own since aiohttp 3.10)
        self._server = server
        self._queue: collections.deque[tuple[RawRequestMessage, StreamReader]] = collections.deque()
        self._busy = False  # a request is being answered
        self._task: asyncio.Task[bool] | None = None  # the task answering it, if it waited for something
        self._task_handler = None  # what web.Server.connection_lost looks for
        self._context = contextvars.copy_context()  # each request runs in a copy of it (as aiohttp's tasks)
        self._closing = False  # no further requests: the one being answered finishes, then the connection closes
        self._refused: HttpProcessingError | None = None  # a request the parser refused: answered after those before
        self._upgrade: tuple[RawRequestMessage, bytes] | None = None
        self._upgrade_buffer = b""
        self._ssl_context: Any = None
        self._peername: Any = None
        self._sockname: Any = None
        self.max_line_size = 8190
        self.max_field_size = 8190
        self.max_headers = 128
        self._unsent: list[bytes] = []  # plain answers written at the end of the loop turn (`flush`)
        self._answer_scheduled = False  # queued requests wait for `answer` (LeanServer.answer_soon)

    # what web.BaseRequest reads of its protocol
    @property
    def ssl_context(self) -> Any:
        return self._ssl_context

    @property
    def peername(self) -> Any:
        return self._peername

    @property
    def sockname(self) -> Any:
        return self._sockname

    # --- asyncio.Protocol ---------------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # TCP_NODELAY, as aiohttp
        tcp_keepalive(transport)  # type: ignore[arg-type]
        self._ssl_context = transport.get_extra_info("sslcontext")
        self._peername = transport.get_extra_info("peername")
        self._sockname = transport.get_extra_info("sockname")
        self._server.connection_made(self, transport)  # type: ignore[arg-type]

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        self._server.connection_lost(self, exc)  # type: ignore[arg-type]
        self._closing = True
        parser = self._parser
        if parser is not None:
            parser.feed_eof()  # a body still arriving ends with an error for whoever reads it
            self._parser = None
        for _, payload in self._queue:
            payload.set_exception(ConnectionResetError("Connection lost"))
        self._queue.clear()
        self._unsent.clear()

    def eof_received(self) -> None:
        pass

    def resume_reading(self, resume_parser: bool = True) -> None:
        """A request body's reader calls this after every read: only a paused connection has anything to do."""
        if self._reading_paused or getattr(self, "_buffer_paused", False):
            super().resume_reading(resume_parser)

    def data_received(self, data: bytes) -> None:
        if self._closing or self._refused is not None:
            return
        if self._upgrade is not None:  # waiting for earlier answers before the hand-off
            self._upgrade_buffer += data
            return
        assert self._parser is not None
        try:
            messages, upgraded, tail = self._parser.feed_data(data)
        except HttpProcessingError as error:
            self._refused = error  # the requests before it (already queued) are answered first, as in aiohttp
            self._answer_soon()
            return
        last = len(messages) - 1
        for index, (message, payload) in enumerate(messages):
            if message.upgrade or (upgraded and index == last):  # the parser stops after an upgrade request
                self._upgrade = (message, tail)
                break
            self._queue.append((message, payload))
        self._answer_soon()

    def _answer_soon(self) -> None:
        if not self._busy and not self._answer_scheduled:
            self._answer_scheduled = True
            self._server.answer_soon(self)

    def answer(self) -> None:
        """Answer what the reads of the last loop turn queued (`LeanServer.answer_soon`)."""
        self._answer_scheduled = False
        if not self._busy:
            self._next()

    def flush(self) -> None:
        """Write the plain answers not yet written (`LeanServer.send_soon`), in one write; before anything else is
        written to the transport, or it is closed or handed over, so answers leave in order."""
        unsent = self._unsent
        if not unsent:
            return
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(unsent[0] if len(unsent) == 1 else b"".join(unsent))
        unsent.clear()

    # --- answering ----------------------------------------------------------------------------------------------

    def _next(self) -> None:
        """Answer the queued requests in order, one at a time; then a refused request, an upgrade's hand-off, or
        the close. Called outside any task (a read, or a request task's end), so a request that never waits is
        answered at once without a task (`eager.start`); one that waits goes on in a task, whose end calls this."""
        loop = self._loop
        self._busy = True
        while self._queue and not self._closing:
            message, payload = self._queue.popleft()
            try:
                task, keep = eager.start(loop, self._respond(message, payload), self._context.copy())
            except asyncio.CancelledError:
                task, keep = None, False
            if task is not None:
                self._task = task
                task.add_done_callback(self._answered)
                return
            if not keep:
                self._closing = True
        self._busy = False
        if self._refused is not None and not self._closing:
            self._bad_request(self._refused)
        elif self._upgrade is not None and not self._closing:
            self._hand_over()
        elif self._closing and self.transport is not None:
            self.flush()
            self.transport.close()

    def _answered(self, task: asyncio.Task[bool]) -> None:
        """A request that waited is answered (or was cancelled: the connection closes): the next one."""
        self._task = None
        if task.cancelled() or task.exception() is not None or not task.result():
            self._closing = True
        self._next()

    async def _respond(self, message: RawRequestMessage, payload: StreamReader) -> bool:
        """One request answered; whether the connection stays open."""
        server = self._server
        writer = StreamWriter(self, self._loop)
        request = server.request_factory(message, payload, self, writer, eager.current_task(self._loop))  # type: ignore[arg-type]
        server.requests_count += 1
        try:
            try:
                response = await server.request_handler(request)
            except HTTPException as error:
                response = error
            except asyncio.CancelledError:
                raise
            except Exception as error:  # aiohttp's answer to a handler's bug: 500, logged, connection closed
                _logger.exception("Error handling request", exc_info=error)
                if writer.output_size > 0:
                    return False
                response = web.Response(status=500, text="500 Internal Server Error\n\nServer got itself in trouble")
                response.force_close()
            request._finish()  # noqa: SLF001 - as aiohttp's finish_response
            head = _plain_head(request, response) if type(response) is web.Response else None
            transport = self.transport
            if transport is None or transport.is_closing():
                return False
            if head is not None:
                body: Any = response._body  # noqa: SLF001 - bytes, checked by _plain_head
                if len(body) < _LARGE:
                    if not self._unsent:
                        self._server.send_soon(self)
                    self._unsent.append(head + body)
                else:
                    self.flush()
                    transport.write(head)
                    transport.write(body)
                response._eof_sent = True  # noqa: SLF001 - as write_eof leaves it
                if self._paused:
                    await self._drain_helper()
            else:
                self.flush()
                await response.prepare(request)
                await response.write_eof()
        except ConnectionError:
            return False
        except Exception as error:  # an answer that cannot be written (a CR in a header): logged, connection closed
            _logger.exception("Unhandled exception", exc_info=error)
            return False
        finally:
            request._task = None  # type: ignore[assignment]  # noqa: SLF001 - no cycle through the task
        if not payload.is_eof():  # a body the handler did not read: the connection cannot be reused
            return False
        return bool(response.keep_alive)

    def _bad_request(self, error: HttpProcessingError) -> None:
        """A request aiohttp's parser refuses: the 400 aiohttp answers (its message), and the connection closed."""
        self._closing = True
        self.flush()
        transport = self.transport
        if transport is not None and not transport.is_closing():
            body = str(error.message).encode()
            transport.write(
                b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
                b"Date: %s\r\nServer: %s\r\n\r\n%s"
                % (len(body), rfc822_formatted_time().encode(), SERVER_SOFTWARE.encode(), body)
            )
        if transport is not None:
            transport.close()

    def _hand_over(self) -> None:
        """The rest of the connection to aiohttp (an upgrade request), fed the request's bytes again."""
        assert self._upgrade is not None
        message, tail = self._upgrade
        transport = self.transport
        if transport is None:
            return
        self._closing = True
        self.flush()
        self._server.connection_lost(self, None)  # type: ignore[arg-type]
        handler = self._server.aiohttp_handler()
        version = f"HTTP/{message.version.major}.{message.version.minor}"
        head = f"{message.method} {message.path} {version}\r\n".encode() + b"".join(
            name + b": " + value + b"\r\n" for name, value in message.raw_headers
        )
        transport.set_protocol(handler)
        handler.connection_made(transport)
        handler.data_received(head + b"\r\n" + tail + self._upgrade_buffer)
        self.transport = None  # the transport is the handler's now

    # --- shutdown (web.Server.pre_shutdown and shutdown) -------------------------------------------------------

    def close(self) -> None:
        """No further requests: the one being answered finishes, then the connection closes."""
        self._closing = True
        if not self._busy and self.transport is not None:
            self.flush()
            self.transport.close()

    async def shutdown(self, timeout: float | None = 15.0) -> None:
        self.close()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        if self.transport is not None:
            self.flush()
            self.transport.close()


def _plain_head(request: web.BaseRequest, resp: web.Response) -> bytes | None:
    """The status line and headers aiohttp would send for ``resp``, or None when aiohttp must send it itself."""
    if (
        resp._payload_writer is not None  # noqa: SLF001 - prepared by the handler
        or resp._eof_sent  # noqa: SLF001
        or resp._compression  # noqa: SLF001
        or resp._chunked  # noqa: SLF001
        or resp._cookies  # noqa: SLF001
        or resp._compressed_body is not None  # noqa: SLF001
        or type(resp._body) is not bytes  # noqa: SLF001
        or request._version != HttpVersion11  # noqa: SLF001
        or request._method == "HEAD"  # noqa: SLF001
    ):
        return None
    status = resp._status  # noqa: SLF001
    if status < 200 or status == 204 or status == 304:
        return None
    headers = resp._headers  # noqa: SLF001
    if len(headers) == 1:  # Content-Type alone: most answers
        for header in headers.items():
            block = _HEADER_LINES.get(header) or _header_line(header)
        if not block:
            return None
    elif (
        "Content-Type" not in headers  # else aiohttp's octet-stream default
        or "Content-Length" in headers  # set by the handler: aiohttp's own rules apply
        or "Date" in headers
        or "Server" in headers
        or "Connection" in headers
    ):
        return None
    else:
        lines = [f"{name}: {value}\r\n" for name, value in headers.items()]
        block = "".join(lines)
        if block.count("\r") != len(lines) or block.count("\n") != len(lines):
            return None  # a CR or LF in a header: aiohttp refuses it (ValueError), let it
    keep_alive = resp._keep_alive  # noqa: SLF001
    if keep_alive is None:
        keep_alive = not request._message.should_close  # noqa: SLF001 - BaseRequest.keep_alive
    resp._keep_alive = keep_alive  # noqa: SLF001 - what `keep_alive` reads next
    return (
        f"HTTP/1.1 {status} {resp._reason}\r\n{block}"  # noqa: SLF001
        f"Content-Length: {len(resp._body)}\r\nDate: {rfc822_formatted_time()}\r\n"  # noqa: SLF001
        f"{_SERVER_KEEP_ALIVE if keep_alive else _SERVER_CLOSE}"
    ).encode()


_HEADER_LINES: dict[tuple[str, str], str] = {}


def _header_line(header: tuple[str, str]) -> str:
    """``Name: value\\r\\n`` of a lone Content-Type header (remembered: a server answers with a handful of media
    types); empty when the header is another one (aiohttp adds its own Content-Type, or the handler's Content-Length,
    Date, Server or Connection replaces aiohttp's) or holds a CR or LF."""
    name, value = header
    if name.lower() != "content-type" or "\r" in name or "\n" in name or "\r" in value or "\n" in value:
        return ""
    line = f"{name}: {value}\r\n"
    if len(_HEADER_LINES) < 64:
        _HEADER_LINES[header] = line
    return line


class LeanServer(web.Server):
    """`web.Server` whose connections are `LeanConnection`s (aiohttp's `RequestHandler` after an upgrade), with the
    connections' work batched per loop turn (the module docstring says why)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._to_answer: list[LeanConnection] = []
        self._to_send: list[LeanConnection] = []
        self._answering = False

    def __call__(self) -> Any:
        return LeanConnection(self, self._loop)

    def answer_soon(self, connection: LeanConnection) -> None:
        """``connection.answer()`` in the next loop turn, with every other connection read in this one."""
        if not self._to_answer:
            self._loop.call_soon(self._answer_all)
        self._to_answer.append(connection)

    def send_soon(self, connection: LeanConnection) -> None:
        """``connection.flush()`` once the answers of this turn are made: at the end of `_answer_all`, or (an
        answer made elsewhere: a request that waited) in the next loop turn."""
        if not self._to_send and not self._answering:
            self._loop.call_soon(self._send_all)
        self._to_send.append(connection)

    def _answer_all(self) -> None:
        connections, self._to_answer = self._to_answer, []
        self._answering = True
        try:
            for connection in connections:
                connection.answer()
        finally:
            self._answering = False
            self._send_all()

    def _send_all(self) -> None:
        connections, self._to_send = self._to_send, []
        for connection in connections:
            connection.flush()

    def aiohttp_handler(self) -> RequestHandler:
        return super().__call__()


__all__ = ["LeanConnection", "LeanServer"]
