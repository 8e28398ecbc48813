"""Kubernetes' websocket channel protocols: the framing of `exec`, `attach` and `portforward` streams.

k8s.io/apimachinery's wsstream multiplexes numbered channels over one websocket: each message is one channel's
data, its first byte the channel number. The subprotocol (``Sec-WebSocket-Protocol``) names the variant:

- ``channel.k8s.io`` (and no subprotocol at all): binary messages; the error channel carries plain text;
- ``base64.channel.k8s.io``: text messages, the channel an ASCII digit, the data base64;
- ``v4.channel.k8s.io`` / ``v4.base64.channel.k8s.io``: as those, the error channel carries a ``Status`` JSON
  (``details.causes`` hold the exit code of a command that failed);
- ``v5.channel.k8s.io``: v4 plus the close signal: a message ``[255, n]`` half-closes channel ``n`` (a client's
  stdin reaching its end), which v4 has no way to say.

Remote commands use channels 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; a port-forward uses two channels per
requested port (``2i`` data, ``2i+1`` error). This module is only the codec; who speaks it is the caller's.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Final

STDIN: Final = 0
STDOUT: Final = 1
STDERR: Final = 2
ERROR: Final = 3
RESIZE: Final = 4
CLOSE_SIGNAL: Final = 255


@dataclass(frozen=True)
class ChannelProtocol:
    """One subprotocol: how its messages are framed and what its error channel carries."""

    name: str
    base64: bool = False
    status_json: bool = False  # v4+: the error channel is a Status object, not text
    stream_close: bool = False  # v5: [255, channel] half-closes a channel

    def encode(self, channel: int, data: bytes) -> bytes | str:
        """The message carrying ``data`` on ``channel`` (text for the base64 variants)."""
        if self.base64:
            return chr(ord("0") + channel) + base64.b64encode(data).decode("ascii")
        return bytes((channel,)) + data

    def decode(self, message: bytes | str) -> tuple[int, bytes]:
        """(channel, data) of a client's message; ``ValueError`` for one that is not of this protocol. An empty
        message is channel -1 (wsstream skips them)."""
        if not message:
            return -1, b""
        if self.base64:
            text = message if isinstance(message, str) else message.decode("ascii", "replace")
            channel = ord(text[0]) - ord("0")
            try:
                return channel, base64.b64decode(text[1:], validate=True)
            except binascii.Error as error:
                raise ValueError(f"invalid base64 data on channel {channel}: {error}") from None
        raw = message.encode("latin-1") if isinstance(message, str) else message
        return raw[0], raw[1:]

    def closed_channel(self, channel: int, data: bytes) -> int | None:
        """The channel a v5 close signal names (None when the message is not one)."""
        if not self.stream_close or channel != CLOSE_SIGNAL:
            return None
        if len(data) != 1:
            raise ValueError(f"single channel byte should follow stream close signal; got {len(data)} bytes")
        return data[0]

    def encode_close(self, channel: int) -> bytes | None:
        """The v5 close signal for ``channel`` (None for protocols without one)."""
        return bytes((CLOSE_SIGNAL, channel)) if self.stream_close else None

    def error_message(self, status: dict[str, Any]) -> bytes:
        """What the error channel carries for a remote command's end: the Status JSON (v4+), or its message alone
        (earlier protocols; nothing on success)."""
        if self.status_json:
            return json.dumps(status, separators=(",", ":")).encode()
        if status.get("status") == "Success":
            return b""
        return str(status.get("message", "")).encode()


V1: Final = ChannelProtocol("channel.k8s.io")
V1_BASE64: Final = ChannelProtocol("base64.channel.k8s.io", base64=True)
V4: Final = ChannelProtocol("v4.channel.k8s.io", status_json=True)
V4_BASE64: Final = ChannelProtocol("v4.base64.channel.k8s.io", base64=True, status_json=True)
V5: Final = ChannelProtocol("v5.channel.k8s.io", status_json=True, stream_close=True)

# What kubelet's remotecommand websocket server accepts (pre-v4 protocols included), and its port-forward one.
REMOTE_COMMAND_PROTOCOLS: Final = (V5, V4, V4_BASE64, V1, V1_BASE64)
PORT_FORWARD_PROTOCOLS: Final = (V4, V4_BASE64)
_BY_NAME: Final = {protocol.name: protocol for protocol in REMOTE_COMMAND_PROTOCOLS}


def protocol_named(name: str) -> ChannelProtocol:
    """The protocol a handshake chose; no subprotocol at all is ``channel.k8s.io``, as wsstream reads it."""
    return _BY_NAME.get(name, V1)


def requested_protocols(header: str) -> list[str]:
    """The subprotocols a ``Sec-WebSocket-Protocol`` header lists, in the client's order of preference."""
    return [part.strip() for part in header.split(",") if part.strip()]


def choose(requested: list[str], supported: tuple[ChannelProtocol, ...]) -> ChannelProtocol | None:
    """The first requested protocol the server supports (wsstream's handshake walks the client's list); no
    subprotocol requested is ``channel.k8s.io``; None when nothing matches."""
    if not requested:
        return V1 if V1 in supported else supported[0]
    names = {protocol.name: protocol for protocol in supported}
    for name in requested:
        if name in names:
            return names[name]
    return None


def port_prefix(port: int) -> bytes:
    """The first message on each of a forwarded port's channels: the port, two bytes little-endian."""
    return port.to_bytes(2, "little")


def resize_events(buffer: bytes) -> tuple[list[tuple[int, int]], bytes]:
    """(width, height) of each complete ``{"Width":..,"Height":..}`` object in ``buffer``, and the unread rest
    (the resize channel is a JSON stream, decoded as Go's json.Decoder reads it)."""
    decoder = json.JSONDecoder()
    text = buffer.decode("utf-8", "replace")
    sizes: list[tuple[int, int]] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return sizes, b""
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            return sizes, text[position:].encode()
        if isinstance(value, dict):
            sizes.append((int(value.get("Width") or 0), int(value.get("Height") or 0)))


__all__ = [
    "CLOSE_SIGNAL",
    "ERROR",
    "PORT_FORWARD_PROTOCOLS",
    "REMOTE_COMMAND_PROTOCOLS",
    "RESIZE",
    "STDERR",
    "STDIN",
    "STDOUT",
    "V1",
    "V1_BASE64",
    "V4",
    "V4_BASE64",
    "V5",
    "ChannelProtocol",
    "choose",
    "port_prefix",
    "protocol_named",
    "requested_protocols",
    "resize_events",
]
