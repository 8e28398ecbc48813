"""HTTP to the API server over one pooled aiohttp session: JSON requests, error mapping, retries, watch
streams.

We own this layer (rather than a generated client) so that watch behaviour is ours: streams are read chunk by
chunk with no line-length limit, and a silent stream is the reflector's to detect, never hidden behind a
socket timeout here. Throttling (429) and 5xx answers that carry Retry-After are retried a bounded number of
times, as client-go's `checkWait` does; a 401 lets the auth provider refresh its credentials once (expired
exec tokens).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from yarl import URL

from pyop.client.config import ClientConfig
from pyop.client.errors import ApiConnectionError, ApiError, error_from_status
from pyop.client.jsoncodec import decode_json, encode_json

log = logging.getLogger(__name__)

JSON = "application/json"
Params = Mapping[str, str | int | bool | None]
Sleep = Callable[[float], Awaitable[None]]

# Paths made only of these characters (RFC 3986 unreserved, sub-delims, ':', '@', '/') need no percent-encoding,
# and without dot segments no normalizing: their URL is built without yarl re-parsing and re-quoting the string
# (most of the ~10 us `URL(str)` costs per request).
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")


class Transport:
    """One connection pool and identity; cheap to share between clients and informers.

    The aiohttp session is created on first use, inside the running event loop. `max_retries` bounds the
    retries of throttled requests, `max_retry_wait` caps one Retry-After wait; `sleep` is injectable for
    tests.
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
        self._session: aiohttp.ClientSession | None = None
        self._timeout = aiohttp.ClientTimeout(total=request_timeout, connect=connect_timeout)
        self._base_url: tuple[str, URL | None] | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self.connection_limit,
                ssl=self.config.ssl_context(),
                enable_cleanup_closed=True,
            )
            self._session = aiohttp.ClientSession(
                base_url=None,
                connector=connector,
                headers={"User-Agent": self.config.user_agent, **self.config.extra_headers},
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

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

        `body` is sent as it is when it is bytes or str, and encoded as JSON otherwise.
        """
        data = None if body is None else (body if isinstance(body, bytes | str) else encode_json(body))
        url = self._url(path)
        query = _clean_params(params)
        attempt = 0
        refreshed = False
        while True:
            headers = await self._headers(content_type if data is not None else None)
            try:
                async with self.session.request(
                    method,
                    url,
                    params=query,
                    data=data,
                    headers=headers,
                    timeout=self._timeout,
                    proxy=self.config.proxy,
                    server_hostname=self.config.tls_server_name,
                ) as response:
                    raw = await response.read()
                    status = response.status
            except (TimeoutError, aiohttp.ClientError, OSError) as error:
                raise ApiConnectionError(f"{method} {path}: {error!r}") from error
            if status < 400:
                return _decode(raw)
            api_error = error_from_status(status, _decode_error(raw))
            if status == 401 and not refreshed and await self._refresh_auth():
                refreshed = True
                continue
            wait = self._retry_wait(api_error, response.headers.get("Retry-After"), attempt)
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
        timeout = aiohttp.ClientTimeout(total=None, connect=self.connect_timeout, sock_connect=self.connect_timeout)
        attempt = 0
        refreshed = False
        while True:
            headers = await self._headers(None)
            try:
                response = await self.session.get(
                    self._url(path),
                    params=_clean_params(params),
                    headers=headers,
                    timeout=timeout,
                    proxy=self.config.proxy,
                    server_hostname=self.config.tls_server_name,
                )
            except (TimeoutError, aiohttp.ClientError, OSError) as error:
                raise ApiConnectionError(f"GET {path} (watch): {error!r}") from error
            if response.status < 400:
                break
            try:
                raw = await response.read()
            except (TimeoutError, aiohttp.ClientError, OSError) as error:
                raise ApiConnectionError(f"GET {path} (watch): {error!r}") from error
            finally:
                response.release()
            api_error = error_from_status(response.status, _decode_error(raw))
            if response.status == 401 and not refreshed and await self._refresh_auth():
                refreshed = True
                continue
            wait = self._retry_wait(api_error, response.headers.get("Retry-After"), attempt)
            if wait is None:
                raise api_error
            attempt += 1
            await self._sleep(wait)
        try:
            yield _lines(response)
        finally:
            response.close()

    async def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": JSON}
        if content_type is not None:
            headers["Content-Type"] = content_type
        if self.config.auth is not None:
            value = await self.config.auth.authorization()
            if value:
                headers["Authorization"] = value
        return headers

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


async def _lines(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """Split a chunked body into lines without aiohttp's readline length limit (objects may be ~1 MiB)."""
    buffer = b""
    try:
        async for chunk in response.content.iter_any():
            buffer += chunk
            if b"\n" not in chunk:
                continue
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    yield line
    except (TimeoutError, aiohttp.ClientError, OSError) as error:
        raise ApiConnectionError(f"watch stream broken: {error!r}") from error
    if buffer.strip():
        yield buffer


def _clean_params(params: Params | None) -> dict[str, str] | None:
    if not params:
        return None
    cleaned: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        cleaned[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return cleaned


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    return decode_json(raw)


def _decode_error(raw: bytes) -> Any:
    try:
        return decode_json(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _parse_retry_after(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return max(0, int(value.strip()))
    except ValueError:
        return None
