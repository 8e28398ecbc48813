"""SPDY/3.1 framing and a server session: what kubectl's SPDY streams (moby/spdystream, the framing of
k8s.io/apimachinery's httpstream/spdy) need from a server.

kubectl speaks SPDY for `port-forward` (plain, after ``Upgrade: SPDY/3.1``, or tunnelled in websocket binary
messages under the subprotocol ``SPDY/3.1+portforward.k8s.io``) and for `exec`/`attach` when the websocket is
refused. The client opens every stream (SYN_STREAM, odd ids, the stream's role in its headers: ``streamtype``,
``port``, ``requestid``); the server answers each with a SYN_REPLY, then both sides send DATA frames, FIN
half-closing a direction.

Frames (SPDY/3 section 2.2): a control frame is ``1 | version(15) | type(16) | flags(8) | length(24) | data``, a
data frame ``0 | stream id(31) | flags(8) | length(24) | data``. Header blocks are ``count(32)`` then
``len(32) name len(32) value`` pairs, compressed with zlib seeded with the SPDY/3 dictionary, one compression
context per direction for the whole session (each block ends with a sync flush). SETTINGS and WINDOW_UPDATE are
read and ignored (spdystream keeps no flow-control windows); PINGs are echoed; GOAWAY ends the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

VERSION: Final = 3
SYN_STREAM: Final = 1
SYN_REPLY: Final = 2
RST_STREAM: Final = 3
SETTINGS: Final = 4
PING: Final = 6
GOAWAY: Final = 7
HEADERS: Final = 8
WINDOW_UPDATE: Final = 9
FLAG_FIN: Final = 0x01
MAX_DATA: Final = 64 * 1024  # bytes per DATA frame the server sends
MAX_FRAME: Final = 16 * 1024 * 1024

# SPDY/3's header compression dictionary (draft 3, section 2.6.10.1): length-prefixed header names and values,
# then common value fragments.
DICTIONARY: Final = (
    b"\x00\x00\x00\x07options\x00\x00\x00\x04head\x00\x00\x00\x04post\x00\x00\x00\x03"
    b"put\x00\x00\x00\x06delete\x00\x00\x00\x05trace\x00\x00\x00\x06accept\x00\x00\x00"
    b"\x0eaccept-charset\x00\x00\x00\x0faccept-encoding\x00\x00\x00\x0faccept-langua"
    b"ge\x00\x00\x00\raccept-ranges\x00\x00\x00\x03age\x00\x00\x00\x05allow\x00\x00\x00"
    b"\rauthorization\x00\x00\x00\rcache-control\x00\x00\x00\nconnection\x00\x00\x00"
    b"\x0ccontent-base\x00\x00\x00\x10content-encoding\x00\x00\x00\x10content-langua"
    b"ge\x00\x00\x00\x0econtent-length\x00\x00\x00\x10content-location\x00\x00\x00\x0b"
    b"content-md5\x00\x00\x00\rcontent-range\x00\x00\x00\x0ccontent-type\x00\x00\x00"
    b"\x04date\x00\x00\x00\x04etag\x00\x00\x00\x06expect\x00\x00\x00\x07expires\x00\x00"
    b"\x00\x04from\x00\x00\x00\x04host\x00\x00\x00\x08if-match\x00\x00\x00\x11if-mod"
    b"ified-since\x00\x00\x00\rif-none-match\x00\x00\x00\x08if-range\x00\x00\x00\x13"
    b"if-unmodified-since\x00\x00\x00\rlast-modified\x00\x00\x00\x08location\x00\x00"
    b"\x00\x0cmax-forwards\x00\x00\x00\x06pragma\x00\x00\x00\x12proxy-authenticate\x00"
    b"\x00\x00\x13proxy-authorization\x00\x00\x00\x05range\x00\x00\x00\x07referer\x00"
    b"\x00\x00\x0bretry-after\x00\x00\x00\x06server\x00\x00\x00\x02te\x00\x00\x00\x07"
    b"trailer\x00\x00\x00\x11transfer-encoding\x00\x00\x00\x07upgrade\x00\x00\x00\nu"
    b"ser-agent\x00\x00\x00\x04vary\x00\x00\x00\x03via\x00\x00\x00\x07warning\x00\x00"
    b"\x00\x10www-authenticate\x00\x00\x00\x06method\x00\x00\x00\x03get\x00\x00\x00\x06"
    b"status\x00\x00\x00\x06200 OK\x00\x00\x00\x07version\x00\x00\x00\x08HTTP/1.1\x00"
    b"\x00\x00\x03url\x00\x00\x00\x06public\x00\x00\x00\nset-cookie\x00\x00\x00\nkee"
    b"p-alive\x00\x00\x00\x06origin1001012012022052063003023033043053063074024054064"
    b"07408409410411412413414415416417502504505203 Non-Authoritative Information204 "
    b"No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden404"
    b" Not Found500 Internal Server Error501 Not Implemented503 Service UnavailableJ"
    b"an Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, F"
    b"ri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/x"
    b"ml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,"
    b"deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


class ProtocolError(Exception):
    """The peer sent something that is not SPDY/3."""


# --- header blocks -----------------------------------------------------------------------------------------------


class HeaderCodec:
    """One direction's header compression context (zlib with the dictionary, kept for the whole session)."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, zdict=DICTIONARY)

    def decode(self, block: bytes) -> dict[str, list[str]]:
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as error:
            raise ProtocolError(f"header block does not decompress: {error}") from None
        return parse_header_block(raw)

    def encode(self, headers: dict[str, list[str]]) -> bytes:
        return self._deflate.compress(header_block(headers)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


def header_block(headers: dict[str, list[str]]) -> bytes:
    """The uncompressed block: names lower-case, a name's values joined by NUL."""
    parts = [struct.pack(">I", len(headers))]
    for name, values in headers.items():
        encoded_name = name.lower().encode()
        encoded_value = b"\x00".join(value.encode() for value in values)
        parts += [struct.pack(">I", len(encoded_name)), encoded_name, struct.pack(">I", len(encoded_value))]
        parts.append(encoded_value)
    return b"".join(parts)


def parse_header_block(raw: bytes) -> dict[str, list[str]]:
    try:
        (count,) = struct.unpack_from(">I", raw, 0)
        position, headers = 4, dict[str, list[str]]()
        for _ in range(count):
            (length,) = struct.unpack_from(">I", raw, position)
            name = raw[position + 4 : position + 4 + length].decode("latin-1").lower()
            position += 4 + length
            (length,) = struct.unpack_from(">I", raw, position)
            value = raw[position + 4 : position + 4 + length].decode("latin-1")
            position += 4 + length
            headers.setdefault(name, []).extend(value.split("\x00"))
    except struct.error:
        raise ProtocolError("truncated header block") from None
    return headers


# --- frames ------------------------------------------------------------------------------------------------------


def control_frame(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


def data_frame(stream_id: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">II", stream_id & 0x7FFFFFFF, (flags << 24) | len(payload)) + payload


@dataclass(frozen=True)
class Frame:
    control: bool
    kind: int  # the control frame's type; 0 for data frames
    stream_id: int  # data frames (control frames carry theirs in the payload)
    flags: int
    payload: bytes


class FrameReader:
    """Frames out of a byte stream that arrives in pieces."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            first, second = struct.unpack_from(">II", self._buffer, 0)
            length = second & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                break
            payload = bytes(self._buffer[8 : 8 + length])
            del self._buffer[: 8 + length]
            flags = second >> 24
            if first & 0x80000000:
                version, kind = (first >> 16) & 0x7FFF, first & 0xFFFF
                if version != VERSION:
                    raise ProtocolError(f"SPDY version {version} is not 3")
                frames.append(Frame(True, kind, 0, flags, payload))
            else:
                frames.append(Frame(False, 0, first & 0x7FFFFFFF, flags, payload))
        return frames


# --- a server session --------------------------------------------------------------------------------------------


class ByteStream(Protocol):
    """The connection under the session: a raw upgraded socket, or a websocket carrying SPDY in binary messages."""

    async def read(self) -> bytes: ...  # b"" once the peer is gone

    async def write(self, data: bytes) -> None: ...

    async def close(self) -> None: ...


@dataclass
class Stream:
    """One client-opened stream: its headers (lower-case names, first values), what the client sends on it."""

    session: Session
    id: int
    headers: dict[str, str]
    reader: asyncio.StreamReader = field(default_factory=lambda: asyncio.StreamReader(limit=2**22))
    closed_here: bool = False

    def write(self, data: bytes) -> None:
        """Queue ``data`` for the client, in frames of at most `MAX_DATA` bytes."""
        if self.closed_here or not data:
            return
        for start in range(0, len(data), MAX_DATA):
            self.session.send(data_frame(self.id, 0, data[start : start + MAX_DATA]))

    def close(self) -> None:
        """Half-close: an empty DATA frame with FIN (spdystream's Stream.Close)."""
        if not self.closed_here:
            self.closed_here = True
            self.session.send(data_frame(self.id, FLAG_FIN, b""))

    async def flush(self) -> None:
        await self.session.flush()


class Session:
    """The server side of one SPDY connection. `serve` reads until the peer goes away, replying to every new
    stream and handing it to ``on_stream``."""

    def __init__(self, connection: ByteStream) -> None:
        self.connection = connection
        self.streams: dict[int, Stream] = {}
        self._headers = HeaderCodec()
        self._out: asyncio.Queue[bytes] = asyncio.Queue()
        self.lost = False
        self._sender = asyncio.ensure_future(self._send_loop())

    def send(self, frame: bytes) -> None:
        if not self.lost:
            self._out.put_nowait(frame)

    async def flush(self) -> None:
        if not self.lost:
            await self._out.join()

    async def _send_loop(self) -> None:
        while True:
            frame = await self._out.get()
            try:
                if not self.lost:
                    await self.connection.write(frame)
            except (ConnectionError, OSError, RuntimeError):
                self.lost = True
            finally:
                self._out.task_done()

    async def serve(self, on_stream: Callable[[Stream], Awaitable[None] | None]) -> None:
        frames = FrameReader()
        try:
            while data := await self.connection.read():
                for frame in frames.feed(data):
                    if self._dispatch(frame, on_stream) is False:
                        return
        except (ConnectionError, OSError):
            pass
        finally:
            self.lost = True
            for stream in self.streams.values():
                if not stream.reader.at_eof():
                    stream.reader.feed_eof()

    def _dispatch(self, frame: Frame, on_stream: Callable[[Stream], Awaitable[None] | None]) -> bool:
        if not frame.control:
            stream = self.streams.get(frame.stream_id)
            if stream is not None and not stream.reader.at_eof():
                if frame.payload:
                    stream.reader.feed_data(frame.payload)
                if frame.flags & FLAG_FIN:
                    stream.reader.feed_eof()
            return True
        if frame.kind == SYN_STREAM:
            stream_id = struct.unpack_from(">I", frame.payload, 0)[0] & 0x7FFFFFFF
            headers = self._headers.decode(frame.payload[10:])
            stream = Stream(self, stream_id, {name: values[0] for name, values in headers.items()})
            self.streams[stream_id] = stream
            reply = struct.pack(">I", stream_id) + self._headers.encode({})
            self.send(control_frame(SYN_REPLY, 0, reply))
            if frame.flags & FLAG_FIN:
                stream.reader.feed_eof()
            started = on_stream(stream)
            if started is not None:
                asyncio.ensure_future(started)
        elif frame.kind == RST_STREAM:
            stream_id = struct.unpack_from(">I", frame.payload, 0)[0] & 0x7FFFFFFF
            reset = self.streams.get(stream_id)
            if reset is not None:
                reset.closed_here = True
                if not reset.reader.at_eof():
                    reset.reader.feed_eof()
        elif frame.kind == PING:
            self.send(control_frame(PING, 0, frame.payload))
        elif frame.kind == GOAWAY:
            return False
        elif frame.kind == HEADERS:
            self._headers.decode(frame.payload[4:])  # keeps the compression context in step
        return True  # SETTINGS, WINDOW_UPDATE: nothing to do

    async def close(self) -> None:
        """Send what is queued, then GOAWAY, and close the connection."""
        if not self.lost:
            last = max(self.streams, default=0)
            self.send(control_frame(GOAWAY, 0, struct.pack(">II", last, 0)))
            await self.flush()
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            await self.connection.close()


__all__ = [
    "DICTIONARY",
    "ByteStream",
    "Frame",
    "FrameReader",
    "HeaderCodec",
    "ProtocolError",
    "Session",
    "Stream",
    "control_frame",
    "data_frame",
    "header_block",
    "parse_header_block",
]
