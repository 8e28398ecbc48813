"""One proxied HTTP exchange with a test's port handler, as kube-apiserver's proxy handler makes it with a pod.

On a cluster, kube-apiserver's `proxy` subresources hand the request to k8s.io/apimachinery's UpgradeAwareHandler
(util/proxy/upgradeaware.go), which sends it on through Go's httputil.ReverseProxy and a rewriting Transport
(util/proxy/transport.go). Here the upstream is the asyncio stream handler a test registered for the port
(`PodStreams.on_port`, `NodeProxies.on_port`), which reads the request as an HTTP/1.1 client would send it and writes
its answer: one connection per request. What reaches the handler and what comes back is what those Go pieces do:

- to the handler: the method, the cleaned path (path.Join, the trailing slash kept), the client's raw query, its
  headers but the hop-by-hop ones (and the Authorization and Impersonate-* headers, which kube-apiserver's
  authentication and impersonation filters remove), ``X-Forwarded-For`` with the client's address appended,
  ``X-Forwarded-Uri`` (the path as the client addressed it), ``Accept-Encoding: gzip`` when the client named none
  (Go's transport then decodes a gzip answer itself), the client's ``Host`` and its body (with a Content-Length);
- to the client: the status, the headers but the hop-by-hop and ``Access-Control-Allow-*`` ones, a ``Location`` on
  the backend's host rewritten under the proxy path, a Content-Type sniffed from the body when none came (Go's
  server does it: proxy_sniff), and the body streamed as it arrives (an HTML page is read whole and its links
  rewritten the same way: proxy_html);
- a request for the proxy root without its slash (GET or HEAD) is a ``301`` to the path with a slash;
- an upgrade (websocket, SPDY) goes through as is: a ``101`` splices the connections byte for byte, any 4xx/5xx
  answer is relayed, anything else is kube's 500 ``invalid upgrade response: status code N``;
- nothing listening (no handler, or a forwarded TCP port that refuses) is the 503 ``error trying to reach
  service: dial tcp 10.1.2.3:8080: connect: connection refused``; a handler that ends without a complete answer
  is ``error trying to reach service: EOF`` (or, mid-body, a cut connection, as Go's proxy aborts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import zlib
from collections.abc import AsyncIterator
from typing import Any, Final
from urllib.parse import quote, urlsplit, urlunsplit

from aiohttp import web

from pyop.apiserver.endpoints.handlers import json_response
from pyop.apiserver.endpoints.hop_by_hop import HOP_BY_HOP
from pyop.apiserver.endpoints.upgrade import is_upgrade, take_over, write_and_drain
from pyop.testing.builtins.pod_stream_sessions import PortHandler, PortWriter
from pyop.testing.builtins.proxy_html import rewrite_html
from pyop.testing.builtins.proxy_location import Location
from pyop.testing.builtins.proxy_sniff import detect_content_type

_CHUNK: Final = 64 * 1024
_HEAD_LIMIT: Final = 1 << 20  # Go's default MaxResponseHeaderBytes-ish bound on a backend's head
# Removed by kube-apiserver's filters before any handler runs (authentication, impersonation).
_CONSUMED: Final = frozenset({"authorization", "impersonate-user", "impersonate-group", "impersonate-uid"})
_CORS: Final = frozenset(
    {
        "access-control-allow-credentials",
        "access-control-allow-headers",
        "access-control-allow-methods",
        "access-control-allow-origin",
    }
)
_BODYLESS_REQUESTS: Final = ("GET", "HEAD")
_PANIC: Final = "This request caused apiserver to panic. Look in the logs for details."
_CLOSING: set[asyncio.Future[None]] = set()  # backend connections being closed after their exchange


def status_response(code: int, message: str, reason: str | None) -> web.Response:
    """A Status as kube-apiserver writes an error: ``reason`` None for a plain Go error (no reason field)."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    status["message"] = message
    if reason:
        status["reason"] = reason
    status["code"] = code
    return json_response(status, code)


def unreachable(message: str) -> web.Response:
    """proxy.Transport's answer for a failed round trip: errors.NewServiceUnavailable."""
    return status_response(503, f"error trying to reach service: {message}", "ServiceUnavailable")


def _refused(location: Location) -> str:
    return f"dial tcp {location.address}: connect: connection refused"


def _canonical(name: str) -> str:
    """textproto.CanonicalMIMEHeaderKey: how Go writes a header name."""
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def _go_path_join(*elements: str) -> str:
    """Go's path.Join: the non-empty elements joined and cleaned (a lone or doubled leading slash is one)."""
    joined = "/".join(element for element in elements if element)
    if not joined:
        return ""
    cleaned = posixpath.normpath(joined)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("/") else cleaned


def join_preserving_trailing_slash(*elements: str) -> str:
    """utilnet.JoinPreservingTrailingSlash."""
    result = _go_path_join(*elements)
    for element in reversed(elements):
        if element:
            if element.endswith("/") and not result.endswith("/"):
                result += "/"
            break
    return result


class _Backend:
    """One connection to a port handler: what is sent reaches its reader, what it writes arrives on ``replies``."""

    def __init__(self, handler: PortHandler) -> None:
        self.requests = asyncio.StreamReader(limit=2**22)
        self.replies = asyncio.StreamReader(limit=2**22)
        self.refused = False
        self.received = 0
        self._task = asyncio.ensure_future(self._run(handler))

    def _reply(self, data: bytes) -> None:
        if not self.replies.at_eof():
            self.received += len(data)
            self.replies.feed_data(data)

    async def _noop(self) -> None:
        return None

    async def _run(self, handler: PortHandler) -> None:
        try:
            await handler(self.requests, PortWriter(self._reply, self._noop))
        except ConnectionRefusedError:  # tcp_forwarder: nothing listens at the target
            self.refused = self.received == 0
        except Exception:  # noqa: BLE001,S110 - a crashing process: its connection just ends
            pass
        finally:
            self.replies.feed_eof()

    def send(self, data: bytes) -> None:
        if not self.requests.at_eof():
            self.requests.feed_data(data)

    def end_request(self) -> None:
        if not self.requests.at_eof():
            self.requests.feed_eof()

    async def close(self) -> None:
        """The connection is closed: the handler sees the request stream end, and is stopped if it lingers."""
        self.end_request()
        if not self._task.done():
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._task), 1.0)
        if not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def exchange_finished(self) -> None:
        """Give the handler its end of the exchange in the background (the client does not wait for it)."""
        closing = asyncio.ensure_future(self.close())
        _CLOSING.add(closing)  # the loop holds tasks weakly
        closing.add_done_callback(_CLOSING.discard)


class ProxyRequest:
    """What kube-apiserver made of the client's request: the backend path and the proxy path's prefix."""

    def __init__(self, request: web.BaseRequest, subpath: str, location: Location) -> None:
        self.request = request
        self.location = location
        # ProxyREST.Connect: location.Path = JoinPreservingTrailingSlash(location.Path, proxyOpts.Path)
        path = join_preserving_trailing_slash("", subpath)
        # UpgradeAwareHandler: the original request's trailing slash is kept
        if not path.endswith("/") and request.path.endswith("/"):
            path += "/"
        self.path = path
        suffix = path + ("/" if request.path.endswith("/") and not path.endswith("/") else "")
        self.prepend = request.path[: -len(suffix)] if suffix and request.path.endswith(suffix) else request.path
        self.raw_query = request.raw_path.partition("?")[2]

    @property
    def target(self) -> str:
        """The request line's target: the path escaped as Go's URL.EscapedPath, then the raw query."""
        escaped = quote(self.path or "/", safe="/$&+,:;=@~")  # shouldEscape(encodePath)
        return f"{escaped}?{self.raw_query}" if self.raw_query else escaped

    def forwarded_uri(self) -> str:
        uri = _go_path_join(self.prepend, self.path or "/")
        return uri + "/" if self.path.endswith("/") and not uri.endswith("/") else uri

    def head(self, *, upgrade: bool, gzip: bool, body_length: int) -> bytes:
        request = self.request
        headers = request.headers
        listed = {token.strip().lower() for value in headers.getall("Connection", []) for token in value.split(",")}
        dropped = _CONSUMED if upgrade else _CONSUMED | HOP_BY_HOP | listed
        lines = [f"{request.method} {self.target} HTTP/1.1", f"Host: {headers.get('Host', '')}"]
        for name, value in headers.items():
            lowered = name.lower()
            if lowered in dropped or lowered in ("host", "content-length", "x-forwarded-for", "x-forwarded-uri"):
                continue
            lines.append(f"{_canonical(name)}: {value}")
        if not upgrade and "trailers" in {token.strip() for token in headers.get("Te", "").split(",")}:
            lines.append("Te: trailers")
        forwarded_for = headers.getall("X-Forwarded-For", [])
        client = _client_address(request)
        if client:
            lines.append(f"X-Forwarded-For: {', '.join([*forwarded_for, client])}")
        if not upgrade:
            lines.append(f"X-Forwarded-Uri: {self.forwarded_uri()}")
            if gzip:
                lines.append("Accept-Encoding: gzip")
        if body_length or request.method not in _BODYLESS_REQUESTS:
            lines.append(f"Content-Length: {body_length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _client_address(request: web.BaseRequest) -> str:
    peer = request.transport.get_extra_info("peername") if request.transport is not None else None
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return request.remote or ""


class _Reply:
    """A backend's answer head: status, reason and headers in order."""

    def __init__(self, status: int, reason: str, headers: list[tuple[str, str]]) -> None:
        self.status, self.reason, self.headers = status, reason, headers

    def get(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


class MalformedReply(Exception):
    pass


async def _read_head(replies: asyncio.StreamReader) -> _Reply:
    """The next answer head, skipping informational ones (100 Continue, 103) but a 101."""
    while True:
        try:
            raw = await replies.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if error.partial.strip():
                raise MalformedReply(f'malformed HTTP response "{error.partial[:64].decode("latin-1")}"') from None
            raise EOFError from None
        except asyncio.LimitOverrunError:
            raise MalformedReply("server response headers exceeded the limit") from None
        status_line, *lines = raw[:-4].decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not (parts[1].isdigit() and len(parts[1]) == 3):
            raise MalformedReply(f'malformed HTTP response "{status_line}"')
        headers = []
        for line in lines:
            name, colon, value = line.partition(":")
            if not colon:
                raise MalformedReply(f'malformed MIME header line: "{line}"')
            headers.append((name.strip(), value.strip()))
        status = int(parts[1])
        if 100 <= status < 200 and status != 101:
            continue
        return _Reply(status, parts[2] if len(parts) > 2 else "", headers)


async def _exactly(replies: asyncio.StreamReader, size: int) -> AsyncIterator[bytes]:
    """``size`` bytes of the answer in pieces of at most _CHUNK, as they arrive (EOFError if it ends first): a chunk
    of a chunked body, or a body of known Content-Length."""
    remaining = size
    while remaining:
        data = await replies.read(min(remaining, _CHUNK))
        if not data:
            raise EOFError
        remaining -= len(data)
        yield data


async def _body(replies: asyncio.StreamReader, reply: _Reply, method: str) -> AsyncIterator[bytes]:
    """The answer's body as it arrives: none for HEAD, 1xx, 204 and 304; chunked; by Content-Length; or to the
    connection's end."""
    if method == "HEAD" or reply.status in (204, 304) or reply.status < 200:
        return
    if "chunked" in (reply.get("transfer-encoding") or "").lower():
        while True:
            size_line = await replies.readline()
            if not size_line:
                raise EOFError
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await replies.readline()).strip():  # trailers
                    pass
                return
            async for data in _exactly(replies, size):
                yield data
            await replies.readline()
    length = reply.get("content-length")
    if length is not None and length.isdigit():
        async for data in _exactly(replies, int(length)):
            yield data
        return
    while data := await replies.read(_CHUNK):
        yield data


def rewrite_url(value: str, proxy: ProxyRequest) -> str:
    """proxy.Transport.rewriteURL, for a redirect's Location and a page's links: an absolute path on the backend's
    host (or on the host the client asked) is put under the proxy path; relative ones and other hosts' stay."""
    try:
        url = urlsplit(value)
    except ValueError:
        return value
    source_host = proxy.location.address if proxy.location.port else proxy.location.host
    request_host = proxy.request.headers.get("Host", "")
    if (url.netloc and url.netloc not in (source_host, request_host)) or not url.path.startswith("/"):
        return value
    scheme, netloc = (url.scheme, url.netloc) if url.netloc == request_host else ("", "")
    path = url.path
    if not path.startswith(proxy.prepend):
        path = _go_path_join(proxy.prepend, path) + ("/" if url.path.endswith("/") else "")
    return urlunsplit((scheme, netloc, path, url.query, url.fragment))


async def forward(proxy: ProxyRequest, handler: PortHandler | None) -> web.StreamResponse:
    """The whole exchange: the upgrade path, the root redirect, the round trip, the relayed answer."""
    request, location = proxy.request, proxy.location
    upgrade = is_upgrade(request)
    if location.port_number is None:  # url.Parse refuses the location: kube-apiserver's proxy handler panics
        return web.Response(status=500, text=_PANIC, headers={"X-Content-Type-Options": "nosniff"})
    if not upgrade and not proxy.path and request.method in _BODYLESS_REQUESTS:
        query = f"?{proxy.raw_query}" if proxy.raw_query else ""
        return web.Response(status=301, headers={"Location": request.path + "/" + query})
    if location.port_number > 65535 or handler is None:
        invalid = f"dial tcp: address {location.port_number}: invalid port"
        failure = invalid if location.port_number > 65535 else _refused(location)
        # The upgrade path dials itself and answers the plain dial error; a round trip's is the Transport's 503.
        return status_response(500, failure, None) if upgrade else unreachable(failure)
    body = await request.read() if request.body_exists else b""
    gzip = (
        not upgrade
        and "Accept-Encoding" not in request.headers
        and "Range" not in request.headers
        and request.method != "HEAD"
    )
    backend = _Backend(handler)
    backend.send(proxy.head(upgrade=upgrade, gzip=gzip, body_length=len(body)) + body)
    try:
        try:
            reply = await _read_head(backend.replies)
        except EOFError:
            await backend.close()
            message = _refused(location) if backend.refused else "EOF"
            return status_response(500, message, None) if upgrade else unreachable(message)
        except MalformedReply as error:
            await backend.close()
            if upgrade:
                return status_response(500, str(error), None)
            return unreachable(f"net/http: HTTP/1.x transport connection broken: {error}")
        if upgrade:
            return await _upgraded(proxy, backend, reply)
        return await _relay(proxy, backend, reply, gzip)
    finally:
        await backend.exchange_finished()


async def _relay(proxy: ProxyRequest, backend: _Backend, reply: _Reply, gzip: bool) -> web.StreamResponse:
    request = proxy.request
    listed = {
        token.strip().lower()
        for name, value in reply.headers
        if name.lower() == "connection"
        for token in value.split(",")
    }
    decoder = None
    if gzip and (reply.get("content-encoding") or "").lower() == "gzip":
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)  # Go's transport asked for gzip, so it decodes it
    # transport.go: a redirect gets its Location rewritten, any other text/html answer its links.
    content_type = (reply.get("content-type") or "").split(";", 1)[0].strip()
    html = reply.get("location") is None and content_type == "text/html" and request.method != "HEAD"
    response = web.StreamResponse(status=reply.status, reason=reply.reason or None)
    length: str | None = None
    for name, value in reply.headers:
        lowered = name.lower()
        if lowered in HOP_BY_HOP or lowered in listed or lowered in _CORS:
            continue
        if lowered == "content-length":
            length = value
            continue
        if decoder is not None and lowered == "content-encoding":
            continue
        if lowered == "location":
            value = rewrite_url(value, proxy)
        response.headers.add(name, value)
    try:
        if html:
            return await _relay_html(proxy, backend, reply, decoder, response)
        if length is not None and length.isdigit() and decoder is None:
            response.content_length = int(length)
        elif request.method == "HEAD" and length is not None:
            response.headers["Content-Length"] = length
        chunks = _body(backend.replies, reply, request.method)
        first = b""
        async for data in chunks:  # the first bytes, for Go's server to sniff a Content-Type from when none came
            first = decoder.decompress(data) if decoder is not None else data
            if first:
                break
        if first and "Content-Type" not in response.headers:
            response.headers["Content-Type"] = detect_content_type(first)
        await response.prepare(request)  # type: ignore[arg-type]  # a BaseRequest is all StreamResponse uses
        if first:
            await response.write(first)
        async for data in chunks:
            chunk = decoder.decompress(data) if decoder is not None else data
            if chunk:
                await response.write(chunk)
        if decoder is not None:
            tail = decoder.flush()
            if tail:
                await response.write(tail)
    except (EOFError, zlib.error, ValueError, ConnectionError):
        # The upstream broke off mid-answer: Go's proxy aborts the client's response the same way.
        if request.transport is not None:
            request.transport.close()
        return response
    await response.write_eof()
    return response


async def _relay_html(
    proxy: ProxyRequest, backend: _Backend, reply: _Reply, decoder: Any, response: web.StreamResponse
) -> web.StreamResponse:
    """A page read whole and its links rewritten (rewriteResponse); an encoding kube cannot read passes as is."""
    request = proxy.request
    body = b"".join([data async for data in _body(backend.replies, reply, request.method)])
    if decoder is not None:
        body = decoder.decompress(body) + decoder.flush()
    encoding = "" if decoder is not None else reply.get("content-encoding") or ""
    try:
        rewritten = rewrite_html(body, encoding, lambda url: rewrite_url(url, proxy))
    except (OSError, EOFError, zlib.error):
        rewritten = None
    page = body if rewritten is None else rewritten
    response.content_length = len(page)
    if page and "Content-Type" not in response.headers:
        response.headers["Content-Type"] = detect_content_type(page)
    await response.prepare(request)  # type: ignore[arg-type]
    await response.write(page)
    await response.write_eof()
    return response


async def _upgraded(proxy: ProxyRequest, backend: _Backend, reply: _Reply) -> web.StreamResponse:
    request = proxy.request
    if reply.status != 101 and reply.status < 400:
        return status_response(500, f"invalid upgrade response: status code {reply.status}", None)
    if reply.status != 101:  # the backend's refusal, relayed as it came
        relayed = web.StreamResponse(status=reply.status, reason=reply.reason or None)
        for name, value in reply.headers:
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                relayed.headers.add(name, value)
        body = b"".join([data async for data in _body(backend.replies, reply, request.method)])
        relayed.content_length = len(body)
        await relayed.prepare(request)  # type: ignore[arg-type]
        await relayed.write(body)
        await relayed.write_eof()
        return relayed
    response, client, transport = await take_over(request, reply.headers)

    async def up() -> None:
        while data := await client.read(_CHUNK):
            backend.send(data)
        backend.end_request()

    async def down() -> None:
        while data := await backend.replies.read(_CHUNK):
            if transport.is_closing():
                return
            await write_and_drain(transport, data)

    tasks = {asyncio.ensure_future(up()), asyncio.ensure_future(down())}
    _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
            await task
    return response


__all__ = [
    "ProxyRequest",
    "forward",
    "join_preserving_trailing_slash",
    "rewrite_url",
    "status_response",
    "unreachable",
]
