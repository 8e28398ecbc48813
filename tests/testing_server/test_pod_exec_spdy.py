"""SPDY/3.1 for pods' streams (issue 12), below kubectl: the framing and header compression
(pyop.apiserver.endpoints.spdy), the X-Stream-Protocol-Version handshake, and a remote command driven frame by frame
by a minimal client, as kubectl's spdystream client drives it (one stream per part, SYN_REPLY for each, the error
stream's Status last, then FIN). kubectl itself is in kubectl/test_pod_exec_kubectl.py.
"""

from __future__ import annotations

import asyncio
import json
import struct
import zlib

from pyop.apiserver.endpoints import spdy
from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.test_pod_exec import PODS, make_pod, shell


def test_header_blocks_share_one_compression_context_per_direction() -> None:
    sender, receiver = spdy.HeaderCodec(), spdy.HeaderCodec()
    blocks = [{"streamtype": ["error"]}, {"streamtype": ["stdout"]}, {"Port": ["8080"], "requestid": ["0"]}]
    encoded = [sender.encode(block) for block in blocks]
    decoded = [receiver.decode(block) for block in encoded]
    assert decoded == [{"streamtype": ["error"]}, {"streamtype": ["stdout"]}, {"port": ["8080"], "requestid": ["0"]}]
    assert len(encoded[1]) < len(encoded[0])  # the second block refers back to the first


def test_the_dictionary_is_the_one_zlib_streams_name() -> None:
    """A header block names its dictionary by Adler-32 (RFC 1950 DICTID); spdystream's is SPDY/3's."""
    block = spdy.HeaderCodec().encode({"streamtype": ["error"]})
    assert block[0] & 0x0F == 8 and block[1] & 0x20  # deflate, FDICT set
    assert struct.unpack(">I", block[2:6])[0] == zlib.adler32(spdy.DICTIONARY)
    assert len(spdy.DICTIONARY) == 1423  # draft 3's dictionary, byte for byte


def test_frames_are_read_across_any_split() -> None:
    frames = (
        spdy.control_frame(spdy.PING, 0, struct.pack(">I", 7))
        + spdy.data_frame(5, spdy.FLAG_FIN, b"payload")
        + spdy.control_frame(spdy.GOAWAY, 0, struct.pack(">II", 5, 0))
    )
    for split in range(len(frames) + 1):
        reader = spdy.FrameReader()
        got = reader.feed(frames[:split]) + reader.feed(frames[split:])
        assert [(f.control, f.kind, f.stream_id, f.flags, f.payload) for f in got] == [
            (True, spdy.PING, 0, 0, struct.pack(">I", 7)),
            (False, 0, 5, spdy.FLAG_FIN, b"payload"),
            (True, spdy.GOAWAY, 0, 0, struct.pack(">II", 5, 0)),
        ]


class Client:
    """The client half of a SPDY session over a raw upgraded connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.headers = spdy.HeaderCodec()
        self.frames = spdy.FrameReader()
        self.pending: list[spdy.Frame] = []
        self.next_id = 1

    def open(self, **headers: str) -> int:
        stream_id, self.next_id = self.next_id, self.next_id + 2
        block = self.headers.encode({name: [value] for name, value in headers.items()})
        self.writer.write(spdy.control_frame(spdy.SYN_STREAM, 0, struct.pack(">IIH", stream_id, 0, 0) + block))
        return stream_id

    async def frame(self) -> spdy.Frame:
        while not self.pending:
            data = await asyncio.wait_for(self.reader.read(65536), 10)
            assert data, "the server closed the connection"
            self.pending += self.frames.feed(data)
        return self.pending.pop(0)


async def _upgrade(server: TestAPIServer, path: str, versions: str) -> tuple[bytes, Client]:
    host, port = server.url.split("://", 1)[1].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), ssl=server.ssl_context())
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\nContent-Length: 0\r\n"
        f"Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: {versions}\r\n\r\n".encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    return head, Client(reader, writer)


async def test_a_remote_command_frame_by_frame(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    path = f"{PODS}/web-1/exec?command=fail&command=5&stdout=true&stderr=true"
    head, client = await _upgrade(server, path, "v4.channel.k8s.io, v3.channel.k8s.io")
    try:
        assert head.startswith(b"HTTP/1.1 101 ")
        assert b"x-stream-protocol-version: v4.channel.k8s.io" in head.lower()
        ids = {kind: client.open(streamtype=kind) for kind in ("error", "stdout", "stderr")}
        client.writer.write(spdy.control_frame(spdy.PING, 0, struct.pack(">I", 1)))
        server_headers = spdy.HeaderCodec()
        replies: list[int] = []
        data = {i: b"" for i in ids.values()}
        fins: set[int] = set()
        pings: list[bytes] = []
        while len(fins) < 3 or len(pings) < 1:
            frame = await client.frame()
            if frame.control and frame.kind == spdy.SYN_REPLY:
                replies.append(struct.unpack(">I", frame.payload[:4])[0])
                assert server_headers.decode(frame.payload[4:]) == {}
            elif frame.control and frame.kind == spdy.PING:
                pings.append(frame.payload)
            elif not frame.control:
                data[frame.stream_id] += frame.payload
                if frame.flags & spdy.FLAG_FIN:
                    fins.add(frame.stream_id)
        assert replies == list(ids.values())
        assert pings == [struct.pack(">I", 1)]
        assert data[ids["stderr"]] == b"failing with 5\n"
        assert data[ids["stdout"]] == b""
        status = json.loads(data[ids["error"]])
        assert (status["reason"], status["details"]["causes"]) == (
            "NonZeroExitCode",
            [{"reason": "ExitCode", "message": "5"}],
        )
        goaway = await client.frame()
        assert (goaway.control, goaway.kind) == (True, spdy.GOAWAY)
    finally:
        client.writer.close()


async def test_stdin_ends_with_the_clients_fin(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    head, client = await _upgrade(server, f"{PODS}/web-1/exec?command=cat&stdin=true&stdout=true", "v4.channel.k8s.io")
    try:
        assert head.startswith(b"HTTP/1.1 101 ")
        client.open(streamtype="error")
        stdin = client.open(streamtype="stdin")
        stdout = client.open(streamtype="stdout")
        client.writer.write(spdy.data_frame(stdin, 0, b"one "))
        client.writer.write(spdy.data_frame(stdin, spdy.FLAG_FIN, b"two"))
        echoed = b""
        while True:
            frame = await client.frame()
            if not frame.control and frame.stream_id == stdout:
                echoed += frame.payload
                if frame.flags & spdy.FLAG_FIN:
                    break
        assert echoed == b"one two"
    finally:
        client.writer.close()


async def test_the_version_handshake_refuses_what_it_does_not_speak(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    head, client = await _upgrade(server, f"{PODS}/web-1/exec?command=ls&stdout=true", "v9.channel.k8s.io")
    client.writer.close()
    assert head.startswith(b"HTTP/1.1 403 ")
    body = await asyncio.wait_for(client.reader.read(), 10)
    assert body.endswith(
        b"unable to upgrade: unable to negotiate protocol: client supports [v9.channel.k8s.io], server accepts "
        b"[v4.channel.k8s.io v3.channel.k8s.io v2.channel.k8s.io channel.k8s.io]\n"
    )
