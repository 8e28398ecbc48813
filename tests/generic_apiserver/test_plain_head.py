"""The transport's one-write answer (`_plain_head` + the body) is byte for byte what aiohttp's own
``prepare``/``write_eof`` send for the same response and request (Hypothesis: statuses, methods, HTTP versions,
``Connection`` headers, response headers in any case, with CR/LF, set by the handler where aiohttp sets its own;
the Date aside), and leaves ``keep_alive`` as aiohttp does; where aiohttp refuses to write the answer, or must write
it itself, `_plain_head` declines."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from aiohttp import web
from aiohttp.http import HttpRequestParser
from aiohttp.http_writer import StreamWriter
from hypothesis import example, given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict

from pyop.apiserver.endpoints.handlers import json_response
from pyop.apiserver.endpoints.transport import LeanServer, _plain_head

_DATE = re.compile(rb"\r\nDate: [^\r]*\r\n")
HEADER_NAMES = ["Content-Type", "content-type", "CONTENT-TYPE", "X-Trace", "Content-Length", "Date", "Server"]
HEADER_NAMES += ["Connection", "Warning", "Set-Cookie"]
HEADER_VALUES = ["application/json", "text/plain; charset=utf-8", "a\r\nInjected: yes", "x\n", "3", "close"]


class _Capture(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def writelines(self, data: Any) -> None:
        self.written.extend(bytes(piece) for piece in data)

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def get_write_buffer_size(self) -> int:
        return 0


def _request(loop: asyncio.AbstractEventLoop, raw: bytes) -> tuple[web.BaseRequest, _Capture]:
    """A parsed request whose writer captures what aiohttp writes."""
    connection = LeanServer(lambda request: None, loop=loop)()  # type: ignore[arg-type, return-value]
    capture = _Capture()
    connection.transport = capture  # no connection_made: nothing but writes is asked of it
    parser = HttpRequestParser(connection, loop, 2**16, max_line_size=8190, max_field_size=8190)
    messages, _, _ = parser.feed_data(raw)
    message, payload = messages[0]
    request = web.BaseRequest(message, payload, connection, StreamWriter(connection, loop), None, loop)  # type: ignore[arg-type]
    return request, capture


async def _aiohttp_bytes(request: web.BaseRequest, capture: _Capture, response: web.Response) -> bytes | None:
    try:
        await response.prepare(request)
        await response.write_eof()
    except ValueError:  # aiohttp refuses to write it (a CR or LF in a header)
        return None
    return b"".join(capture.written)


def _raw(method: str, version: str, connection: str | None, body_length: int) -> bytes:
    head = f"{method} /x HTTP/{version}\r\nHost: h\r\n"
    if connection is not None:
        head += f"Connection: {connection}\r\n"
    return (head + f"Content-Length: {body_length}\r\n\r\n").encode() + b"y" * body_length


def _response(status: int, headers: list[tuple[str, str]], body: bytes, close: bool) -> web.Response:
    response = web.Response(status=status, body=body, headers=CIMultiDict(headers))
    if close:
        response.force_close()
    return response


JSON = [("Content-Type", "application/json")]


@settings(max_examples=400, deadline=None)
@example(204, "GET", "1.1", None, JSON, b"", False)  # bodiless statuses: no Content-Length
@example(304, "GET", "1.1", None, JSON, b"", False)
@example(101, "GET", "1.1", None, JSON, b"", False)
@example(200, "HEAD", "1.1", None, JSON, b"{}", False)  # HEAD: no body
@example(200, "GET", "1.0", None, JSON, b"{}", False)  # HTTP/1.0: aiohttp's own status line
@example(200, "GET", "1.1", "close", [("content-type", "application/json")], b"{}", False)
@example(200, "GET", "1.1", None, JSON, b"{}", True)
@example(200, "POST", "1.1", None, [*JSON, ("Content-Length", "3")], b"{}", False)
@example(200, "POST", "1.1", None, [("Content-Length", "3")], b"{}", False)
@example(200, "POST", "1.1", None, [*JSON, ("X-Trace", "a\r\nInjected: yes")], b"{}", False)
@example(200, "POST", "1.1", None, [("X-Trace", "x")], b"{}", False)  # aiohttp's octet-stream default
@given(
    status=st.sampled_from([100, 101, 200, 201, 204, 206, 304, 400, 404, 409, 422, 500, 503]) | st.integers(200, 599),
    method=st.sampled_from(["GET", "HEAD", "POST", "PATCH"]),
    version=st.sampled_from(["1.0", "1.1"]),
    connection=st.sampled_from([None, "close", "keep-alive"]),
    headers=st.just(JSON)
    | st.lists(st.tuples(st.sampled_from(HEADER_NAMES), st.sampled_from(HEADER_VALUES)), max_size=3),
    body=st.binary(max_size=40),
    close=st.booleans(),
)
def test_the_one_write_answer_is_aiohttps(
    status: int,
    method: str,
    version: str,
    connection: str | None,
    headers: list[tuple[str, str]],
    body: bytes,
    close: bool,
) -> None:
    loop = asyncio.new_event_loop()
    try:
        raw = _raw(method, version, connection, 0)
        ours_request, _ = _request(loop, raw)
        ours = _response(status, headers, body, close)
        head = _plain_head(ours_request, ours)
        theirs_request, capture = _request(loop, raw)
        theirs = _response(status, headers, body, close)
        expected = loop.run_until_complete(_aiohttp_bytes(theirs_request, capture, theirs))
    finally:
        loop.close()
    if head is None:
        return  # aiohttp's own path answers it
    assert expected is not None, "aiohttp refuses this answer; the one-write path must decline it"
    assert _DATE.sub(b"\r\nDate: -\r\n", head + body) == _DATE.sub(b"\r\nDate: -\r\n", expected)
    assert ours.keep_alive == theirs.keep_alive


def test_an_api_answer_takes_the_one_write_path() -> None:
    """The common answers: a JSON body with its Content-Type alone, kept alive or not."""
    loop = asyncio.new_event_loop()
    try:
        for connection in (None, "close"):
            request, _ = _request(loop, _raw("POST", "1.1", connection, 2))
            response = json_response({"kind": "Status"}, 201)
            assert _plain_head(request, response) is not None
            assert response.keep_alive is (connection is None)
        request, _ = _request(loop, _raw("GET", "1.1", None, 0))
        assert _plain_head(request, web.Response(body=b"{}", headers={"content-type": "application/json"}))
    finally:
        loop.close()
