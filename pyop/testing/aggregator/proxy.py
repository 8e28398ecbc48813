"""The aggregator's proxy: one request under ``/apis/<group>/<version>`` forwarded to the aggregated server.

As kube-aggregator's proxy handler does: the connection presents the front-proxy client certificate; the caller's
identity, authenticated (and authorized) here, travels as ``X-Remote-User``, one ``X-Remote-Group`` per group,
``X-Remote-Uid`` and ``X-Remote-Extra-<key>`` (key percent-encoded), after every such header the caller sent is
removed, with the credentials (``Authorization``, ``Impersonate-*``) that kube-apiserver's filters consume. Hop-by-hop
headers are dropped both ways. Bodies stream both ways, unbuffered and undecoded (gzip passes through as it came),
so a watch is relayed event by event for as long as either side keeps it open. An APIService that is not Available
is a plain-text 503 ``service unavailable``; a backend that cannot be reached is a plain-text 503
``error trying to reach service: <Go's error>`` (apimachinery's proxy transport error, written by kube-aggregator's
responder with ``http.Error``). A request that is not long-running and gets no answer within kube-apiserver's
request deadline (`deadline`) is a 504 ``Timeout`` Status; watches are never cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from pyop.api.status import ApiError
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.endpoints.hop_by_hop import HOP_BY_HOP
from pyop.apiserver.endpoints.upgrade import is_upgrade, proxy_upgrade
from pyop.apiserver.endpoints.wire import dumps
from pyop.testing.aggregator.authentication_info import (
    EXTRA_HEADER_PREFIXES,
    GROUP_HEADERS,
    UID_HEADERS,
    USERNAME_HEADERS,
)
from pyop.testing.aggregator.deadline import REQUEST_TIMEOUT, long_running, request_deadline, timeout_status

_IDENTITY = frozenset(h.lower() for h in (*USERNAME_HEADERS, *UID_HEADERS, *GROUP_HEADERS))
_EXTRA_PREFIXES = tuple(prefix.lower() for prefix in EXTRA_HEADER_PREFIXES)
_CONSUMED = frozenset({"host", "authorization", "content-length"})
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})
_DISCONNECT_POLL = 0.5  # seconds between checks that the client of a long-running response is still there


@dataclass(frozen=True, slots=True)
class Route:
    """Where one APIService's requests go: the backend's base URL, the name its certificate must carry, the TLS
    context (client certificate, the APIService's caBundle)."""

    url: str
    server_name: str
    ssl_context: ssl.SSLContext


def unavailable(text: str = "service unavailable") -> web.Response:
    """Go's ``http.Error`` as kube-aggregator answers: plain text, a newline, nosniff."""
    response = web.Response(status=503, text=text + "\n", content_type="text/plain", charset="utf-8")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def status_response(status: dict[str, Any]) -> web.Response:
    """A Status answered as kube-apiserver's filters write one (JSON, its code as the HTTP status)."""
    return web.Response(status=int(status["code"]), body=dumps(status), content_type="application/json")


def _connection_named(headers: Mapping[str, str]) -> set[str]:
    """The headers a Connection header names (hop-by-hop too)."""
    named: set[str] = set()
    for value in getattr(headers, "getall", lambda _name, default: default)("Connection", []):
        named.update(token.strip().lower() for token in value.split(",") if token.strip())
    return named


def identity_headers(user: UserInfo, extra: dict[str, list[str]] | None = None) -> list[tuple[str, str]]:
    """client-go's SetAuthProxyHeaders: the user, the uid when there is one, each group, each extra value."""
    headers = [(USERNAME_HEADERS[0], user.username)]
    if user.uid:
        headers.append((UID_HEADERS[0], user.uid))
    headers.extend((GROUP_HEADERS[0], group) for group in user.groups)
    for key, values in (extra or {}).items():
        headers.extend((EXTRA_HEADER_PREFIXES[0] + quote(key, safe=""), value) for value in values)
    return headers


def upstream_headers(request: web.BaseRequest, user: UserInfo) -> CIMultiDict[str]:
    """The request's headers as forwarded: credentials, identity claims and hop-by-hop headers removed, the
    authenticated identity and X-Forwarded-For added."""
    dropped = HOP_BY_HOP | _connection_named(request.headers)
    headers: CIMultiDict[str] = CIMultiDict()
    for name, value in request.headers.items():
        lowered = name.lower()
        if (
            lowered in dropped
            or lowered in _CONSUMED
            or lowered in _IDENTITY
            or lowered.startswith(_EXTRA_PREFIXES)
            or lowered.startswith("impersonate-")
        ):
            continue
        headers.add(name, value)
    if request.headers.get("Content-Length"):
        headers["Content-Length"] = request.headers["Content-Length"]
    for name, value in identity_headers(user):
        headers.add(name, value)
    peer = request.remote or ""
    forwarded = request.headers.get("X-Forwarded-For")
    if peer:
        headers["X-Forwarded-For"] = f"{forwarded}, {peer}" if forwarded else peer
    return headers


def describe(error: BaseException, url: URL | str) -> str:
    """A connection failure as Go's net/http words it (``dial tcp 127.0.0.1:8443: connect: connection refused``),
    which is what kube-aggregator reports; other failures by their own text."""
    target = URL(str(url))
    os_error = getattr(error, "os_error", None)
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        return f"tls: failed to verify certificate: {error.certificate_error}"
    if isinstance(error, aiohttp.ClientSSLError):
        return f"tls: {os_error}"
    if isinstance(error, aiohttp.ClientConnectorError) and isinstance(os_error, OSError) and os_error.errno:
        return f"dial tcp {target.host}:{target.port}: connect: {os.strerror(os_error.errno).lower()}"
    return str(error) or type(error).__name__


def _closing(request: web.BaseRequest) -> bool:
    return request.transport is None or request.transport.is_closing()


class Proxy:
    """Forwards requests over one client session (connections are pooled per backend and TLS context)."""

    def __init__(self, request_timeout: float = REQUEST_TIMEOUT) -> None:
        self._session: aiohttp.ClientSession | None = None
        # kube-apiserver's --request-timeout for requests that are not long-running (`deadline`); tests shorten it.
        self.request_timeout = request_timeout

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                auto_decompress=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=5.0),
                skip_auto_headers=("User-Agent", "Accept-Encoding"),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def forward(self, request: web.BaseRequest, route: Route, user: UserInfo) -> web.StreamResponse:
        url = URL(route.url.rstrip("/") + request.raw_path, encoded=True)
        if is_upgrade(request):  # exec, attach, port-forward, websockets: spliced both ways (UpgradeAwareHandler)
            try:
                return await proxy_upgrade(
                    request, url, upstream_headers(request, user).items(), route.ssl_context, route.server_name
                )
            except (OSError, ssl.SSLError) as error:
                return unavailable(f"error trying to reach service: {describe(error, url)}")
        body = request.content if request.body_exists else None
        deadline: float | None = None  # the loop's clock; None: long-running, never cut
        if not long_running(request.path, request.query):
            try:
                seconds = request_deadline(request.query, self.request_timeout)
            except ApiError as error:
                return status_response(error.to_status())
            deadline = asyncio.get_running_loop().time() + seconds
        # Go's transport sends a bodiless idempotent request again when a pooled connection turns out closed.
        attempts = 2 if body is None and request.method in _IDEMPOTENT else 1
        for attempt in range(attempts):
            limit = asyncio.timeout_at(deadline)
            try:
                async with limit:
                    upstream = await self.session().request(
                        request.method,
                        url,
                        headers=upstream_headers(request, user),
                        data=body,
                        ssl=route.ssl_context,
                        server_hostname=route.server_name,
                        allow_redirects=False,
                    )
                break
            except aiohttp.ServerDisconnectedError as error:
                if attempt + 1 == attempts:
                    return unavailable(f"error trying to reach service: {describe(error, url)}")
            except (TimeoutError, aiohttp.ClientError, OSError) as error:
                if limit.expired():  # no answer within the request's deadline: kube-apiserver's timeout filter
                    return status_response(timeout_status())
                return unavailable(f"error trying to reach service: {describe(error, url)}")
        complete = False
        try:
            response, complete = await self._relay(request, upstream, deadline)
            return response
        finally:
            if complete:
                upstream.release()  # read to its end: the connection goes back to the pool
            else:
                upstream.close()  # abandoned mid-body: the connection cannot be reused

    async def _relay(
        self, request: web.BaseRequest, upstream: aiohttp.ClientResponse, deadline: float | None = None
    ) -> tuple[web.StreamResponse, bool]:
        """The response relayed, and whether the upstream body was read to its end. Past ``deadline`` (the loop's
        clock) the client's connection is closed: the status line is sent, so the timeout filter can only kill the
        connection, as kube-apiserver's does."""
        loop = asyncio.get_running_loop()
        dropped = HOP_BY_HOP | _connection_named(upstream.headers)
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        for name, value in upstream.headers.items():
            if name.lower() not in dropped and name.lower() != "content-length":
                response.headers.add(name, value)
        if upstream.headers.get("Content-Length"):  # the bytes are relayed as they came (never decompressed)
            response.content_length = int(upstream.headers["Content-Length"])
        body = upstream.content
        try:
            await response.prepare(request)
            while True:
                chunk = body.read_nowait()  # what has arrived; waiting (below) only when nothing has
                if not chunk:
                    if body.at_eof():
                        break
                    wait = _DISCONNECT_POLL if deadline is None else min(_DISCONNECT_POLL, deadline - loop.time())
                    try:
                        chunk = await asyncio.wait_for(body.readany(), max(wait, 0.0))
                    except TimeoutError:
                        if _closing(request):
                            return response, False  # the client went away: end the upstream request (a watch)
                        if deadline is not None and loop.time() >= deadline:
                            if request.transport is not None:
                                request.transport.close()
                            return response, False
                        continue
                    if not chunk:
                        break
                await response.write(chunk)
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
        except (ConnectionError, aiohttp.ClientPayloadError):
            return response, False  # either side hung up mid-stream: the other side sees its connection end
        return response, True
