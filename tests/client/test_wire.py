"""The HTTP/1.1 wire under the transport, against servers whose every byte the test chooses: keep-alive and
connection reuse, stale connections, response framing, timeouts, flow control, TLS and proxies."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from pyop.client import ApiConnectionError, ClientConfig, Transport
from pyop.client import connection as wire
from pyop.manager.certificates import write_self_signed_certificate
from pyop.manager.metrics_server import server_ssl_context

Handler = Callable[["RawServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class RawServer:
    """A TCP server answering with bytes the test writes; it counts connections and records request heads."""

    handler: Handler
    ssl_context: ssl.SSLContext | None = None
    connections: int = 0
    heads: list[list[str]] = field(default_factory=list)
    url: str = ""
    _server: asyncio.Server | None = None

    async def start(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_context)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"{'https' if self.ssl_context else 'http'}://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(self, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def read_request(self, reader: asyncio.StreamReader) -> tuple[list[str], bytes]:
        """One request: its head lines (recorded) and its body."""
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")[:-2]
        self.heads.append(head)
        length = next((int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:")), 0)
        return head, await reader.readexactly(length) if length else b""


def answer(body: object, *, status: str = "200 OK", extra: str = "") -> bytes:
    data = json.dumps(body).encode()
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n{extra}\r\n".encode()
        + data
    )


@pytest_asyncio.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[RawServer]]]:
    servers: list[RawServer] = []

    async def start(handler: Handler, ssl_context: ssl.SSLContext | None = None) -> RawServer:
        server = await RawServer(handler, ssl_context).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


async def keep_alive_echo(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers every request on the connection with its request line and body."""
    while True:
        head, body = await server.read_request(reader)
        writer.write(answer({"line": head[0], "body": body.decode()}))
        await writer.drain()


async def test_requests_reuse_one_kept_alive_connection(serve: Callable[..., Awaitable[RawServer]]) -> None:
    server = await serve(keep_alive_echo)
    async with Transport(ClientConfig(server=server.url, token="t", extra_headers={"X-Trace": "1"})) as transport:
        first = await transport.request("GET", "/api/v1/namespaces", params={"limit": 2, "watch": None})
        second = await transport.request(
            "PATCH", "/api/v1/namespaces/a", body={"x": 1}, content_type="application/merge-patch+json"
        )
        await transport.request("DELETE", "/api/v1/namespaces/a")
    assert server.connections == 1
    assert first == {"line": "GET /api/v1/namespaces?limit=2 HTTP/1.1", "body": ""}
    assert second == {"line": "PATCH /api/v1/namespaces/a HTTP/1.1", "body": '{"x":1}'}
    patch_head = server.heads[1]
    port = server.url.rsplit(":", 1)[1]
    for header in (
        f"Host: 127.0.0.1:{port}",
        "Authorization: Bearer t",
        "Accept: application/json",
        "X-Trace: 1",
        "Content-Type: application/merge-patch+json",
        "Content-Length: 7",
    ):
        assert header in patch_head


async def test_concurrent_requests_each_get_a_connection_and_share_them_afterwards(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await serve(keep_alive_echo)
    async with Transport(ClientConfig(server=server.url)) as transport:
        answers = await asyncio.gather(*(transport.request("GET", f"/x/{index}") for index in range(5)))
        assert server.connections == 5
        await asyncio.gather(*(transport.request("GET", f"/y/{index}") for index in range(5)))
    assert server.connections == 5
    assert [item["line"] for item in answers] == [f"GET /x/{index} HTTP/1.1" for index in range(5)]


async def test_a_connection_the_server_closes_is_not_reused(serve: Callable[..., Awaitable[RawServer]]) -> None:
    async def one_answer_then_close(
        server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        writer.write(answer({"n": server.connections}, extra="Connection: close\r\n"))
        await writer.drain()

    server = await serve(one_answer_then_close)
    async with Transport(ClientConfig(server=server.url)) as transport:
        assert await transport.request("GET", "/a") == {"n": 1}
        assert await transport.request("POST", "/b", body={}) == {"n": 2}
    assert server.connections == 2


async def test_a_stale_connection_is_replaced_for_a_get_but_a_post_is_not_sent_twice(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    """The server reads the second request on each connection and hangs up without answering, as a server
    timing out an idle connection does at the moment the client reuses it."""

    async def drops_the_second_request(
        server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head, _ = await server.read_request(reader)
        writer.write(answer({"line": head[0]}))
        await writer.drain()
        await server.read_request(reader)
        writer.transport.abort()

    server = await serve(drops_the_second_request)
    async with Transport(ClientConfig(server=server.url)) as transport:
        await transport.request("GET", "/first")
        assert await transport.request("GET", "/again") == {"line": "GET /again HTTP/1.1"}  # sent again, new connection
        with pytest.raises(ApiConnectionError, match="POST /create"):
            await transport.request("POST", "/create", body={})
    lines = [head[0] for head in server.heads]
    assert lines == ["GET /first HTTP/1.1", "GET /again HTTP/1.1", "GET /again HTTP/1.1", "POST /create HTTP/1.1"]


@pytest.mark.parametrize(
    ("response", "well_formed"),
    [
        (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n3\r\n[1]\r\n1\r\n}\r\n0\r\n\r\n', True),
        (b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"a":[1]}', True),  # ends with the connection
        (b'HTTP/1.1 200 OK\r\nContent-Length: 9\r\nContent-Length: 9\r\n\r\n{"a":[1]}', False),
        (b"HTTP/1.1 2x0 OK\r\n\r\n", False),
    ],
    ids=["chunked", "until-close", "repeated-length", "bad-status"],
)
async def test_response_framing(serve: Callable[..., Awaitable[RawServer]], response: bytes, well_formed: bool) -> None:
    async def respond(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        for start in range(0, len(response), 4):  # in small pieces
            writer.write(response[start : start + 4])
            await writer.drain()
        if b"HTTP/1.0" in response:
            writer.close()
        else:
            await reader.read()  # keep the connection open until the client closes it

    server = await serve(respond)
    async with Transport(ClientConfig(server=server.url)) as transport:
        if well_formed:
            assert await transport.request("GET", "/x") == {"a": [1]}
        else:
            with pytest.raises(ApiConnectionError, match="malformed HTTP response"):
                await transport.request("GET", "/x")


async def test_error_statuses_keep_their_body_and_headers(serve: Callable[..., Awaitable[RawServer]]) -> None:
    status = {"kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "slow down"}
    calls: list[float] = []

    async def throttles_once(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(answer(status, status="429 Too Many Requests", extra="Retry-After: 3\r\n"))
        await server.read_request(reader)
        writer.write(answer({"ok": True}))
        await writer.drain()
        await reader.read()

    async def sleep(seconds: float) -> None:
        calls.append(seconds)

    server = await serve(throttles_once)
    async with Transport(ClientConfig(server=server.url), sleep=sleep) as transport:
        assert await transport.request("GET", "/x") == {"ok": True}
    assert calls == [3.0] and server.connections == 1


async def test_a_request_that_times_out_drops_its_connection(serve: Callable[..., Awaitable[RawServer]]) -> None:
    async def silent_first(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        if server.connections == 1:
            await reader.read()  # never answers
            return
        writer.write(answer({"n": server.connections}))
        await writer.drain()
        await reader.read()

    server = await serve(silent_first)
    async with Transport(ClientConfig(server=server.url), request_timeout=0.2) as transport:
        with pytest.raises(ApiConnectionError, match="TimeoutError"):
            await transport.request("GET", "/slow")
        assert await transport.request("GET", "/fast") == {"n": 2}  # a new connection, not the abandoned one


async def test_a_large_watch_stream_is_flow_controlled_and_arrives_whole(
    serve: Callable[..., Awaitable[RawServer]], monkeypatch: pytest.MonkeyPatch
) -> None:
    events = [
        {"type": "ADDED", "object": {"metadata": {"name": f"o{index}"}, "data": "x" * 40_000}} for index in range(150)
    ]
    payload = b"".join(json.dumps(event).encode() + b"\n" for event in events)  # ~6 MB, chunked in 64 KiB pieces

    async def watch(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        for start in range(0, len(payload), 65536):
            piece = payload[start : start + 65536]
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()

    pauses: list[int] = []
    original = wire.HTTPConnection.on_body

    def on_body(self: wire.HTTPConnection, body: bytes) -> None:
        paused = self._paused
        original(self, body)
        if self._paused and not paused:
            pauses.append(len(body))

    monkeypatch.setattr(wire.HTTPConnection, "on_body", on_body)
    server = await serve(watch)
    received: list[bytes] = []
    async with (
        Transport(ClientConfig(server=server.url)) as transport,
        transport.stream("/watch", params={"watch": True}) as lines,
    ):
        async for line in lines:
            received.append(line)
            await asyncio.sleep(0)  # a consumer slower than the socket
    assert [json.loads(line) for line in received] == events
    assert pauses, "the connection never stopped reading although the consumer fell 1 MiB behind"


async def test_a_finished_watch_hands_its_connection_back(serve: Callable[..., Awaitable[RawServer]]) -> None:
    async def watch_then_answer(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{"type":"A"}\r\n0\r\n\r\n')
        await server.read_request(reader)
        writer.write(answer({"after": True}))
        await writer.drain()
        await reader.read()

    server = await serve(watch_then_answer)
    async with Transport(ClientConfig(server=server.url)) as transport:
        async with transport.stream("/watch") as lines:
            assert [line async for line in lines] == [b'{"type":"A"}']
        assert await transport.request("GET", "/after") == {"after": True}
    assert server.connections == 1


def test_headers_with_line_breaks_are_refused() -> None:
    with pytest.raises(ValueError, match="X-Bad"):
        ClientConfig(server="http://127.0.0.1:1", extra_headers={"X-Bad": "a\r\nInjected: 1"})


# --- TLS and proxies ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("tls")
    write_self_signed_certificate(directory, ["127.0.0.1", "localhost"])
    return directory / "tls.crt", directory / "tls.key"


async def test_tls_is_verified_against_the_configured_authority(
    serve: Callable[..., Awaitable[RawServer]], certificate: tuple[Path, Path]
) -> None:
    server = await serve(keep_alive_echo, server_ssl_context(*certificate))
    async with Transport(ClientConfig(server=server.url, ca_file=str(certificate[0]))) as transport:
        assert await transport.request("GET", "/secure") == {"line": "GET /secure HTTP/1.1", "body": ""}
    async with Transport(ClientConfig(server=server.url)) as transport:  # the system's trust store: refused
        with pytest.raises(ApiConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            await transport.request("GET", "/secure")
    async with Transport(ClientConfig(server=server.url, verify_ssl=False)) as transport:
        assert (await transport.request("GET", "/insecure"))["line"] == "GET /insecure HTTP/1.1"


async def test_an_https_server_is_reached_through_a_connect_tunnel(
    serve: Callable[..., Awaitable[RawServer]], certificate: tuple[Path, Path]
) -> None:
    target = await serve(keep_alive_echo, server_ssl_context(*certificate))
    target_port = int(target.url.rsplit(":", 1)[1])

    async def tunnel(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")[:-2]
        server.heads.append(head)
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target_port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer), return_exceptions=True)

    proxy = await serve(tunnel)
    proxy_url = proxy.url.replace("http://", "http://user:p%40ss@")
    config = ClientConfig(server=target.url, ca_file=str(certificate[0]), proxy=proxy_url, token="t")
    async with Transport(config) as transport:
        assert await transport.request("GET", "/through") == {"line": "GET /through HTTP/1.1", "body": ""}
        assert await transport.request("GET", "/again") == {"line": "GET /again HTTP/1.1", "body": ""}
    assert proxy.connections == 1 and target.connections == 1
    assert proxy.heads == [
        [
            f"CONNECT 127.0.0.1:{target_port} HTTP/1.1",
            f"Host: 127.0.0.1:{target_port}",
            "Proxy-Authorization: Basic dXNlcjpwQHNz",
        ]  # user:p@ss
    ]
    assert "Authorization: Bearer t" in target.heads[0]


async def test_a_proxy_that_refuses_the_tunnel_is_a_connection_error(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    async def refuse(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    proxy = await serve(refuse)
    async with Transport(ClientConfig(server="https://10.0.0.1:6443", proxy=proxy.url)) as transport:
        with pytest.raises(ApiConnectionError, match="refused CONNECT 10.0.0.1:6443.*407"):
            await transport.request("GET", "/x")


async def test_a_plain_http_server_behind_a_proxy_gets_absolute_urls(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    proxy = await serve(keep_alive_echo)
    async with Transport(ClientConfig(server="http://api.internal:8080/prefix", proxy=proxy.url)) as transport:
        answered = await transport.request("GET", "/api/v1/pods", params={"limit": 1})
    assert answered["line"] == "GET http://api.internal:8080/prefix/api/v1/pods?limit=1 HTTP/1.1"
    assert "Host: api.internal:8080" in proxy.heads[0]


def test_only_http_proxies_are_accepted() -> None:
    transport = Transport(ClientConfig(server="https://10.0.0.1:6443", proxy="socks5://127.0.0.1:1080"))
    with pytest.raises(ValueError, match="socks5://127.0.0.1:1080.*only http://"):
        _ = transport.pool
