"""`request_object.direct_request` makes the `web.BaseRequest` aiohttp's constructor makes: for random requests
parsed by aiohttp's own parser (methods, origin-form paths with percent-encoding and queries, absolute URLs,
headers, HTTP/1.0 and 1.1, plain and TLS connections), the attributes (in order) and what the handlers read of
them (path, query, host, URL, scheme, remote, headers, content type, keep-alive) are the same."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from aiohttp.http import HttpRequestParser
from aiohttp.http_writer import StreamWriter
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pyop.apiserver.endpoints import request_object
from pyop.apiserver.endpoints.transport import LeanServer

SEGMENT = st.text(alphabet="abcXYZ09-._~%20:@!$&'()*+,;=", min_size=0, max_size=8)
QUERY = st.text(alphabet="abc=&%2F09+-_.", max_size=16)
TLS = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)


def _connection(loop: asyncio.AbstractEventLoop, tls: bool) -> Any:
    connection = LeanServer(lambda request: None, loop=loop)()  # type: ignore[arg-type, return-value]
    connection._ssl_context = TLS if tls else None  # noqa: SLF001 - what connection_made reads off the transport
    connection._peername = ("10.0.0.7", 41234)  # noqa: SLF001
    connection._sockname = ("10.0.0.1", 6443)  # noqa: SLF001
    return connection


def _observed(request: Any) -> dict[str, Any]:
    """What handlers read of a request (each a fresh object: these properties remember their answers)."""
    return {
        "method": request.method,
        "path": request.path,
        "path_qs": request.path_qs,
        "raw_path": request.raw_path,
        "query": list(request.query.items()),
        "query_string": request.query_string,
        "headers": list(request.headers.items()),
        "host": request.host,
        "url": str(request.url),
        "scheme": request.scheme,
        "secure": request.secure,
        "remote": request.remote,
        "content_type": request.content_type,
        "keep_alive": request.keep_alive,
        "version": request.version,
        "client_max_size": request.client_max_size,
    }


@settings(max_examples=300, deadline=None)
@example("GET", "/api/v1/namespaces/default/pods", "", None, "1.1", False, "")
@example("GET", "http://example.com:8080/api/v1/pods", "watch=1", None, "1.1", True, "")
@example(
    "PATCH", "/apis/example.com/v1/widgets/a%2Fb", "fieldManager=x", "application/merge-patch+json", "1.0", False, ""
)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    path=st.lists(SEGMENT, min_size=1, max_size=5).map(lambda segments: "/" + "/".join(segments))
    | st.sampled_from(["http://example.com/api", "https://h:1/x/y", "*"]),
    query=QUERY,
    content_type=st.sampled_from([None, "application/json", "application/apply-patch+yaml; charset=utf-8"]),
    version=st.sampled_from(["1.0", "1.1"]),
    tls=st.booleans(),
    extra=st.sampled_from(["", "Connection: close\r\n", "X-Forwarded-Host: other\r\n", "Host: second\r\n"]),
)
def test_the_direct_request_is_aiohttps(
    method: str, path: str, query: str, content_type: str | None, version: str, tls: bool, extra: str
) -> None:
    target = path + (f"?{query}" if query and path != "*" else "")
    head = f"{method} {target} HTTP/{version}\r\nHost: localhost:6443\r\n{extra}"
    if content_type is not None:
        head += f"Content-Type: {content_type}\r\n"
    raw = (head + "Content-Length: 2\r\n\r\n").encode() + b"{}"
    loop = asyncio.new_event_loop()
    try:
        connection = _connection(loop, tls)
        parser = HttpRequestParser(connection, loop, 2**16, max_line_size=8190, max_field_size=8190)
        try:
            messages, _, _ = parser.feed_data(raw)
        except Exception:  # noqa: BLE001 - a request aiohttp refuses never reaches the factory
            return
        message, payload = messages[0]
        writer = StreamWriter(connection, loop)

        def both() -> list[Any]:
            return [
                build(message, payload, connection, writer, None, loop, 64 * 1024 * 1024)
                for build in (request_object.direct_request, request_object.general_request)
            ]

        direct, general = both()
        assert type(direct) is type(general)
        assert request_object.attributes(direct) == request_object.attributes(general)
        direct, general = both()
        assert _observed(direct) == _observed(general)
    finally:
        loop.close()


def test_this_aiohttp_takes_the_direct_build() -> None:
    assert request_object.DIRECT
    assert request_object.make_request is request_object.direct_request
