"""What a response may make the client hold, and answers that are not what was asked for: body, header and
watch-line limits (each a clear `ResponseLimitError`), bytes after a response (the connection is closed, the
next request gets its own answer), and answers that are not JSON (Status-like `ApiError`s with the HTTP code)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest
from test_wire import RawServer, answer, keep_alive_echo, serve

from pyop.client import ApiError, ClientConfig, ResponseLimitError, ServiceUnavailableError, Transport

__all__ = ["serve"]

Serve = Callable[..., Awaitable[RawServer]]


def replying(*responses: bytes) -> Callable[[RawServer, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """A server answering the n-th request on a connection with the n-th response (then the last again)."""

    async def handler(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        index = 0
        while True:
            await server.read_request(reader)
            writer.write(responses[min(index, len(responses) - 1)])
            await writer.drain()
            index += 1

    return handler


async def test_a_body_over_the_limit_is_refused(serve: Serve) -> None:
    server = await serve(replying(answer({"data": "x" * 5000})))
    async with Transport(ClientConfig(server=server.url, max_response_bytes=4096)) as transport:
        with pytest.raises(ResponseLimitError, match="over 4096 .*max_body_bytes"):
            await transport.request("GET", "/big")
    async with Transport(ClientConfig(server=server.url, max_response_bytes=8192)) as transport:
        assert len((await transport.request("GET", "/big"))["data"]) == 5000


async def test_a_chunked_body_over_the_limit_is_refused(serve: Serve) -> None:
    chunk = b"x" * 1000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(10)) + b"0\r\n\r\n"
    server = await serve(replying(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body))
    async with Transport(ClientConfig(server=server.url, max_response_bytes=5000)) as transport:
        with pytest.raises(ResponseLimitError, match="response body over 5000 bytes"):
            await transport.request("GET", "/big")


async def test_too_many_headers_are_refused_and_many_are_joined_in_linear_time(serve: Serve) -> None:
    many = "".join(f"Warning: 299 - \"w{index}\"\r\n" for index in range(20_000))
    server = await serve(replying(answer({}, extra=many)))
    async with Transport(ClientConfig(server=server.url)) as transport:
        with pytest.raises(ResponseLimitError, match="more than 1000 response headers"):
            await transport.request("GET", "/x")
    async with Transport(ClientConfig(server=server.url, max_header_count=30_000)) as transport:
        connection, _ = await transport.pool.acquire()
        response = await connection.exchange(b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
        assert response.head.headers["warning"].count("299 -") == 20_000


async def test_header_bytes_over_the_limit_are_refused(serve: Serve) -> None:
    server = await serve(replying(answer({}, extra=f"X-Big: {'y' * 3000}\r\n")))
    async with Transport(ClientConfig(server=server.url, max_header_bytes=2048)) as transport:
        with pytest.raises(ResponseLimitError, match="headers over 2048 bytes"):
            await transport.request("GET", "/x")


async def test_a_watch_line_over_the_limit_is_refused(serve: Serve) -> None:
    event = json.dumps({"type": "ADDED", "object": {"data": "z" * 3000}}).encode()

    async def watch(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        small = b'{"type":"ADDED"}\n'
        writer.write(b"%x\r\n%s\r\n" % (len(small), small))
        for start in range(0, len(event), 100):  # the long line arrives in many small chunks
            piece = event[start : start + 100]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        writer.write(b"1\r\n\n\r\n0\r\n\r\n")
        await writer.drain()

    server = await serve(watch)
    async with Transport(ClientConfig(server=server.url, max_watch_line_bytes=2048)) as transport:
        lines: list[bytes] = []
        with pytest.raises(ResponseLimitError, match="event line over 2048 bytes .*max_watch_line_bytes"):
            async with transport.stream("/w") as stream:
                async for line in stream:
                    lines.append(line)
        assert lines == [b'{"type":"ADDED"}']
    async with Transport(ClientConfig(server=server.url, max_watch_line_bytes=4096)) as transport:
        async with transport.stream("/w") as stream:
            received = [line async for line in stream]
        assert received[1] == event


async def test_bytes_after_a_response_close_the_connection(serve: Serve) -> None:
    smuggled = answer({"smuggled": True})
    server = await serve(replying(answer({"first": True}) + smuggled, answer({"second": True})))
    async with Transport(ClientConfig(server=server.url)) as transport:
        assert await transport.request("GET", "/a") == {"first": True}
        await asyncio.sleep(0.05)
        assert await transport.request("GET", "/b") == {"first": True}  # a fresh connection's first answer
    assert server.connections == 2


async def test_bytes_arriving_between_exchanges_close_the_connection(serve: Serve) -> None:
    async def late_extra(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(answer({"n": server.connections}))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(answer({"smuggled": True}))
        await writer.drain()
        await server.read_request(reader)
        writer.write(answer({"smuggled": "again"}))
        await writer.drain()

    server = await serve(late_extra)
    async with Transport(ClientConfig(server=server.url)) as transport:
        assert await transport.request("GET", "/a") == {"n": 1}
        await asyncio.sleep(0.2)
        assert await transport.request("GET", "/b") == {"n": 2}
    assert server.connections == 2


@pytest.mark.parametrize(
    ("status", "expected"),
    [("302 Found", "redirect \\(HTTP 302\\)"), ("200 OK", "HTTP 200 with a body that is not JSON \\(text/html\\)")],
)
async def test_html_answers_are_api_errors_with_their_code(serve: Serve, status: str, expected: str) -> None:
    page = b"<html><body>Sign in</body></html>"
    response = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html\r\nLocation: /login\r\nContent-Length: {len(page)}\r\n\r\n"
    ).encode() + page
    server = await serve(replying(response))
    async with Transport(ClientConfig(server=server.url)) as transport:
        with pytest.raises(ApiError, match=expected) as raised:
            await transport.request("GET", "/api/v1/pods")
        with pytest.raises(ApiError, match=expected):
            async with transport.stream("/api/v1/pods?watch=true"):
                pass
    assert raised.value.code == int(status.split()[0])
    assert raised.value.status["kind"] == "Status" and "Sign in" in raised.value.message


async def test_a_5xx_html_page_is_a_server_error_with_its_code(serve: Serve) -> None:
    page = b"<html>503 Service Temporarily Unavailable</html>"
    head = f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\nContent-Length: {len(page)}\r\n\r\n"
    server = await serve(replying(head.encode() + page))
    async with Transport(ClientConfig(server=server.url)) as transport:
        with pytest.raises(ServiceUnavailableError, match="503 ServiceUnavailable: .*not JSON \\(text/html\\)"):
            await transport.request("GET", "/api/v1/pods")


async def test_a_kept_alive_connection_still_serves_after_the_checks(serve: Serve) -> None:
    server = await serve(keep_alive_echo)
    async with Transport(ClientConfig(server=server.url)) as transport:
        for index in range(3):
            assert (await transport.request("GET", f"/n/{index}"))["line"] == f"GET /n/{index} HTTP/1.1"
    assert server.connections == 1
