"""HTTP to the API server over pooled, kept-alive HTTP/1.1 connections: JSON requests, error mapping,
retries, watch streams.

We own this layer (rather than a generated client) so that watch behaviour is ours: streams are read chunk by
chunk (lines up to `ClientConfig.max_watch_line_bytes`), and a silent stream is the reflector's to detect, never
hidden behind a socket timeout here. What goes out cannot be steered by the values in it: paths are built from
checked segments (`APIResource.path`), query values are percent-encoded, header values with line breaks are
refused, and a proxy never sees the server URL's credentials in the request line. What comes in is bounded
(body, headers, watch lines) and an answer that is not JSON is an `ApiError` carrying its HTTP code.

Throttling (429) and 5xx answers that carry Retry-After are retried a bounded number of times, as client-go's
`checkWait` does; a 401 lets the auth provider refresh its credentials once (expired exec tokens).
The wire itself is `pyop.client.connection` (why not aiohttp's client: see there).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote

from yarl import URL

from pyop.client.config import ClientConfig, check_header_value
from pyop.client.connection import (
    ConnectionClosed,
    HTTPConnection,
    Limits,
    Response,
    ResponseLimitExceeded,
    StreamedBody,
)
from pyop.client.errors import (
    ApiConnectionError,
    ApiError,
    ResponseLimitError,
    error_from_status,
    error_from_unexpected_body,
)
from pyop.client.jsoncodec import decode_json, encode_json
from pyop.client.pool import ConnectionPool

log = logging.getLogger(__name__)

JSON = "application/json"
Params = Mapping[str, str | int | bool | None]
Sleep = Callable[[float], Awaitable[None]]

# Paths made only of these characters (RFC 3986 unreserved, sub-delims, ':', '@', '/') need no percent-encoding,
# and without dot segments no normalizing: their URL is built without yarl re-parsing and re-quoting the string
# (most of the ~10 us `URL(str)` costs per request).
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")

# Methods a request may be sent again for when a reused connection turns out closed before any answer (Go's
# net/http replays only these, since the server cannot have acted on them).
_REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS"})

_CONNECTION_ERRORS = (TimeoutError, OSError, ssl.SSLError)


class Transport:
    """One connection pool and identity; cheap to share between clients and informers.

    The pool is created on first use, inside the running event loop. `max_retries` bounds the retries of
    throttled requests, `max_retry_wait` caps one Retry-After wait; `sleep` is injectable for tests.
    `request_timeout` bounds a request from sending to the end of its answer, and a watch until its answer's
    headers arrive (never its body: a watch may be quiet for long).
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        max_retries: int = 5,
        max_retry_wait: float = 30.0,
        connect_timeout: float = 10.0,
        request_timeout: float = 60.0,
        connection_limit: int = 100,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.config = config
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.connection_limit = connection_limit
        self._sleep = sleep
        self._pool: ConnectionPool | None = None
        self._base_url: tuple[str, URL | None] | None = None
        self._fixed_headers = ""

    @property
    def pool(self) -> ConnectionPool:
        if self._pool is None:
            server = URL(self.config.server)
            self._pool = ConnectionPool(
                server,
                ssl_context=self.config.ssl_context(),
                server_hostname=self.config.tls_server_name,
                proxy=self.config.proxy,
                connect_timeout=self.connect_timeout,
                limit=self.connection_limit,
                limits=Limits(
                    max_header_bytes=self.config.max_header_bytes,
                    max_header_count=self.config.max_header_count,
                    max_body_bytes=self.config.max_response_bytes,
                ),
            )
            self._fixed_headers = _fixed_headers(server, self.config)
        return self._pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
        self._pool = None

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = JSON,
    ) -> Any:
        """Send one request and return the decoded JSON answer; raise the mapped `ApiError` on failure.

        `body` is sent as it is when it is bytes or str, and encoded as JSON otherwise. An answer that is not
        JSON (an HTML error page, a redirect: the client follows none) raises `ApiError` with its HTTP code.
        """
        data = _body_bytes(body)
        target = self._target(path, params)
        attempt = 0
        refreshed = False
        while True:
            request = await self._request_bytes(method, target, content_type if data is not None else None, data)
            try:
                response = await self._exchange(method, request, self.request_timeout)
            except ResponseLimitExceeded as error:
                raise ResponseLimitError(f"{method} {path}: {error}") from error
            except _CONNECTION_ERRORS as error:
                raise ApiConnectionError(f"{method} {path}: {error!r}") from error
            status = response.head.status
            if 200 <= status < 300:
                return _decode(status, response)
            api_error = _error(status, response.head.headers, response.body)
            if status == 401 and not refreshed and await self._refresh_auth():
                refreshed = True
                continue
            wait = self._retry_wait(api_error, response.head.headers.get("retry-after"), attempt)
            if wait is None:
                raise api_error
            attempt += 1
            log.debug("%s %s: %s, retry %d in %.2fs", method, path, api_error.reason, attempt, wait)
            await self._sleep(wait)

    @asynccontextmanager
    async def stream(self, path: str, *, params: Params | None = None) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open a streaming GET (a watch) and yield an iterator over its lines (without the newline).

        No read timeout: a watch may legitimately be quiet; the caller decides when silence means a stall.
        Errors before the stream starts are raised as `ApiError`/`ApiConnectionError` like `request`.
        """
        target = self._target(path, params)
        attempt = 0
        refreshed = False
        while True:
            request = await self._request_bytes("GET", target, None, None)
            try:
                async with asyncio.timeout(self.request_timeout):
                    connection, body, status, headers = await self._open_stream(request)
                if 200 <= status < 300 and _is_json(headers.get("content-type")):
                    break
                try:
                    async with asyncio.timeout(self.request_timeout):
                        raw = await _bounded_body(body, self.config.max_response_bytes)
                finally:
                    self._finish_stream(connection, body)
            except ResponseLimitExceeded as error:
                raise ResponseLimitError(f"GET {path} (watch): {error}") from error
            except _CONNECTION_ERRORS as error:
                raise ApiConnectionError(f"GET {path} (watch): {error!r}") from error
            api_error = _error(status, headers, raw)
            if status == 401 and not refreshed and await self._refresh_auth():
                refreshed = True
                continue
            wait = self._retry_wait(api_error, headers.get("retry-after"), attempt)
            if wait is None:
                raise api_error
            attempt += 1
            await self._sleep(wait)
        try:
            yield _lines(body, self.config.max_watch_line_bytes)
        finally:
            self._finish_stream(connection, body)

    async def _exchange(self, method: str, request: bytes, timeout: float) -> Response:
        """One request on a pooled connection; sent again once on a fresh one when a reused connection was
        closed by the server before answering a request that may be replayed. `TimeoutError` when it has not
        ended `timeout` seconds from now (waiting for a connection and connecting included).

        The deadline is the connection's timer while an exchange is on the wire, and an `asyncio.timeout` only
        while a connection must be waited for or made: a timeout context per request cost ~5 us of the ~40 us
        an operator's request costs it, for a deadline that almost never expires."""
        pool = self.pool
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            connection = pool.take_idle()
            if connection is not None:
                reused = True
            else:
                async with asyncio.timeout_at(deadline):
                    connection, reused = await pool.acquire()
            try:
                response = await connection.exchange(request, deadline)
            except ConnectionClosed as closed:
                pool.discard(connection)
                if reused and not closed.response_started and method in _REPLAYABLE:
                    continue
                raise
            except BaseException:
                pool.discard(connection)  # cancelled or timed out mid-exchange: the connection's state is unknown
                raise
            pool.release(connection)
            return response

    async def _open_stream(self, request: bytes) -> tuple[HTTPConnection, StreamedBody, int, dict[str, str]]:
        pool = self.pool
        while True:
            connection, reused = await pool.acquire()
            try:
                head, body = await connection.open_stream(request)
            except ConnectionClosed as closed:
                pool.discard(connection)
                if reused and not closed.response_started:
                    continue
                raise
            except BaseException:
                pool.discard(connection)
                raise
            return connection, body, head.status, head.headers

    def _finish_stream(self, connection: HTTPConnection, body: StreamedBody) -> None:
        complete = body.complete
        body.release()
        if complete:
            self.pool.release(connection)
        else:
            self.pool.discard(connection)

    async def _request_bytes(self, method: str, target: str, content_type: str | None, data: bytes | None) -> bytes:
        """The request head (and body): fixed headers prepared once, credentials asked for each time."""
        head = f"{method} {target} HTTP/1.1\r\n{self._fixed_headers}"
        if self.config.auth is not None:
            value = await self.config.auth.authorization()
            if value:
                check_header_value(value, f"the Authorization value from {type(self.config.auth).__name__}")
                head += f"Authorization: {value}\r\n"
        if data is None:
            return (head + "\r\n").encode("latin-1")
        head += f"Content-Type: {content_type}\r\nContent-Length: {len(data)}\r\n\r\n"
        return head.encode("latin-1") + data

    def _target(self, path: str, params: Params | None) -> str:
        """The request target for `path` on the server: `URL(server + path)` with the query parameters added
        (each value percent-encoded), as path and query (the whole URL when a proxy relays it to a plain-HTTP
        server, without the server URL's user information: that goes in the Authorization header only)."""
        url = self._url(path)
        query = _clean_params(params)
        if query:
            url = url.extend_query(query)
        return str(url.with_user(None)) if self.pool.absolute_form else url.raw_path_qs

    async def _refresh_auth(self) -> bool:
        return self.config.auth is not None and await self.config.auth.refresh()

    def _retry_wait(self, error: ApiError, retry_header: str | None, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None to give up: 429 always, 5xx only with Retry-After."""
        if attempt >= self.max_retries:
            return None
        seconds = _parse_retry_after(retry_header)
        if seconds is None:
            seconds = error.retry_after_seconds
        if error.code == 429:
            return min(float(seconds if seconds is not None else 1), self.max_retry_wait)
        if error.code >= 500 and seconds is not None:
            return min(float(seconds), self.max_retry_wait)
        return None

    def _url(self, path: str) -> URL:
        """`URL(server + path)`, built from the parsed server URL when `path` needs no encoding or normalizing.

        The server URL may carry a path prefix (an API server behind a proxy); it is kept.
        """
        server = self.config.server
        if self._base_url is None or self._base_url[0] != server:
            base = URL(server)
            plain = not (base.raw_query_string or base.raw_fragment or "%" in base.raw_path)
            self._base_url = (server, base if plain else None)
        base_url = self._base_url[1]
        if base_url is not None and _PLAIN_PATH.fullmatch(path) and "/." not in path:
            return base_url.with_path(base_url.raw_path.rstrip("/") + path, encoded=True)
        return URL(server + path)


async def _chunks(body: StreamedBody) -> AsyncIterator[bytes]:
    while chunks := await body.chunks():
        for chunk in chunks:
            yield chunk


async def _bounded_body(body: StreamedBody, limit: int) -> bytes:
    """A streamed body read to its end, refused once it grows beyond `limit` bytes."""
    pieces: list[bytes] = []
    size = 0
    async for chunk in _chunks(body):
        size += len(chunk)
        if size > limit:
            raise ResponseLimitExceeded(f"response refused: response body over {limit} bytes (max_response_bytes)")
        pieces.append(chunk)
    return b"".join(pieces)


async def _lines(body: StreamedBody, limit: int) -> AsyncIterator[bytes]:
    """Split a streamed body into lines of at most `limit` bytes (one object may be ~1.5 MiB).

    The unfinished line is kept as a list of pieces joined once its newline arrives, so a long line costs time
    linear in its length (appending each chunk to one bytes object would copy it again on every chunk).
    """
    pending: list[bytes] = []
    pending_size = 0
    try:
        async for chunk in _chunks(body):
            if b"\n" not in chunk:
                pending_size += len(chunk)
                if pending_size > limit:
                    raise _line_too_long(limit)
                pending.append(chunk)
                continue
            lines = chunk.split(b"\n")
            if pending:
                pending.append(lines[0])
                lines[0] = b"".join(pending)
                pending = []
            tail = lines.pop()
            for line in lines:
                if len(line) > limit:
                    raise _line_too_long(limit)
                if line.strip():
                    yield line
            pending_size = len(tail)
            if pending_size > limit:
                raise _line_too_long(limit)
            if tail:
                pending.append(tail)
    except ResponseLimitError:
        raise
    except _CONNECTION_ERRORS as error:
        raise ApiConnectionError(f"watch stream broken: {error!r}") from error
    last = b"".join(pending)
    if last.strip():
        yield last


def _line_too_long(limit: int) -> ResponseLimitError:
    return ResponseLimitError(f"watch stream refused: an event line over {limit} bytes (max_watch_line_bytes)")


def _body_bytes(body: Any) -> bytes | None:
    if body is None:
        return None
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return encode_json(body)


def _fixed_headers(server: URL, config: ClientConfig) -> str:
    """The headers every request carries, as one string of header lines."""
    headers = {"Host": server.host_port_subcomponent or "", "User-Agent": config.user_agent, "Accept": JSON}
    if server.raw_user is not None and config.auth is None:  # credentials in the server URL, as Go sends them
        user, password = unquote(server.raw_user), unquote(server.raw_password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    headers.update(config.extra_headers)
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"header {name!r} has a line break in its name or value")
    return "".join(f"{name}: {value}\r\n" for name, value in headers.items())


def _clean_params(params: Params | None) -> dict[str, str] | None:
    if not params:
        return None
    cleaned: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        cleaned[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return cleaned


def _is_json(content_type: str | None) -> bool:
    """Whether a stream's answer may be read as JSON lines: anything but a text page (the HTML or plain text
    a proxy or load balancer answers with); the API server itself sends application/json."""
    return content_type is None or not content_type.lstrip().lower().startswith("text/")


def _decode(status: int, response: Response) -> Any:
    """A successful answer's JSON body (None when empty); a body that is not JSON is an `ApiError`."""
    raw = response.body
    if not raw:
        return None
    try:
        return decode_json(raw)
    except ValueError:
        raise error_from_unexpected_body(status, response.head.headers.get("content-type", ""), raw) from None


def _error(status: int, headers: Mapping[str, str], raw: bytes) -> ApiError:
    """The `ApiError` of an unsuccessful answer: from its Status when it sent one, else Status-like from the code
    and the start of the body (an HTML page from a proxy, a redirect)."""
    if raw:
        try:
            decoded = decode_json(raw)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and decoded.get("kind") == "Status":
            return error_from_status(status, decoded)
    return error_from_unexpected_body(status, headers.get("content-type", ""), raw)


def _parse_retry_after(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return max(0, int(value.strip()))
    except ValueError:
        return None
