"""Pods' `exec`, `attach` and `portforward` over SPDY/3.1, as the kubelet serves them (pkg/kubelet/cri/streaming:
remotecommand/httpstream.go, portforward/httpstream.go) behind kube-apiserver.

kubectl uses SPDY in two places: `kubectl port-forward` (1.31+ first tunnels SPDY through a websocket whose
subprotocol is ``SPDY/3.1+portforward.k8s.io``, else a POST with ``Upgrade: SPDY/3.1``), and `exec`/`attach` when
the websocket upgrade is refused (an older server, or a 403 on the websocket GET: a user allowed to `create` but
not to `get` pods/exec). Both start with the ``X-Stream-Protocol-Version`` handshake (httpstream.Handshake: the
client lists versions, the server answers the first it supports, or 403 naming both lists).

A remote command's client opens one stream per part (header ``streamtype``: error, stdin, stdout, stderr, resize);
once all are open the command runs, and its end is the error stream's Status (v4) or message (earlier versions),
then every stream is closed. A port-forward's client opens an error and a data stream per connection (headers
``port`` and ``requestid`` pair them); each pair is one connection to the pod's port, through the test's port
handler (pod_stream_sessions).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

from aiohttp import WSMsgType, web

from pyop.apiserver.endpoints import channels
from pyop.apiserver.endpoints.spdy import Session, Stream
from pyop.apiserver.endpoints.upgrade import RawConnection, is_upgrade, take_over
from pyop.testing.builtins.pod_stream_sessions import (
    ExecSession,
    Output,
    PortHandler,
    PortWriter,
    TerminalSize,
    attach_status,
    call_handler,
    exec_status,
    run_port_handler,
)

UPGRADE: Final = "SPDY/3.1"
TUNNEL_PROTOCOL: Final = "SPDY/3.1+portforward.k8s.io"
PROTOCOL_HEADER: Final = "X-Stream-Protocol-Version"
PORT_FORWARD_VERSIONS: Final = ("portforward.k8s.io",)
REMOTE_COMMAND_VERSIONS: Final = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
STREAM_CREATION_TIMEOUT: Final = 30.0  # the kubelet's default: the client opens every stream within it


def wants_spdy(request: web.BaseRequest) -> bool:
    """An ``Upgrade: SPDY/3.1`` request (spdy.NewResponseUpgrader's check)."""
    return is_upgrade(request) and request.headers.get("Upgrade", "").strip().lower() == UPGRADE.lower()


def wants_tunnel(request: web.BaseRequest) -> bool:
    """A websocket asking to carry SPDY port-forwarding (kubectl port-forward's default since 1.31)."""
    requested = channels.requested_protocols(request.headers.get("Sec-WebSocket-Protocol", ""))
    return request.headers.get("Upgrade", "").lower() == "websocket" and TUNNEL_PROTOCOL in requested


def negotiate(request: web.BaseRequest, supported: tuple[str, ...]) -> str | web.Response:
    """The version both sides speak (the client's first one the server has), or the refusal httpstream writes."""
    clients = [
        version.strip()
        for header in request.headers.getall(PROTOCOL_HEADER, [])
        for version in header.split(",")
        if version.strip()
    ]
    if not clients:
        return web.Response(status=400, text=f"unable to upgrade: {PROTOCOL_HEADER} is required\n")
    for version in clients:
        if version in supported:
            return version
    response = web.Response(
        status=403,
        text=(
            "unable to upgrade: unable to negotiate protocol: "
            f"client supports [{' '.join(clients)}], server accepts [{' '.join(supported)}]\n"
        ),
    )
    for version in supported:
        response.headers.add("X-Accepted-Stream-Protocol-Versions", version)
    return response


async def _accept(request: web.BaseRequest, version: str) -> tuple[Session, web.StreamResponse]:
    headers = [("Connection", "Upgrade"), ("Upgrade", UPGRADE), (PROTOCOL_HEADER, version)]
    response, reader, transport = await take_over(request, headers)
    return Session(RawConnection(reader, transport)), response


class _WebSocketBytes:
    """SPDY inside websocket binary messages (client-go's TunnelingConnection): each write one message."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    async def read(self) -> bytes:
        while True:
            message = await self.ws.receive()
            if message.type == WSMsgType.BINARY:
                if message.data:
                    return bytes(message.data)
            elif message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                return b""

    async def write(self, data: bytes) -> None:
        await self.ws.send_bytes(data)

    async def close(self) -> None:
        await self.ws.close()


# --- exec and attach ---------------------------------------------------------------------------------------------


async def remote_command(
    request: web.BaseRequest,
    namespace: str,
    pod: str,
    container: str,
    command: list[str],
    handler: Callable[[ExecSession], Any],
    options: tuple[bool, bool, bool, bool],
    *,
    attach: bool,
) -> web.StreamResponse:
    """Serve one exec or attach over SPDY (the request is checked; ``options``: tty, stdin, stdout, stderr)."""
    version = negotiate(request, REMOTE_COMMAND_VERSIONS)
    if isinstance(version, web.Response):
        return version
    tty, stdin, stdout, stderr = options
    expected = {"error"} | {
        name for name, wanted in (("stdin", stdin), ("stdout", stdout), ("stderr", stderr)) if wanted
    }
    if tty and version in ("v4.channel.k8s.io", "v3.channel.k8s.io"):
        expected.add("resize")
    spdy, response = await _accept(request, version)
    streams: dict[str, Stream] = {}
    ready = asyncio.Event()

    def opened(stream: Stream) -> None:
        streams[stream.headers.get("streamtype", "")] = stream
        if expected <= streams.keys():
            ready.set()

    serving = asyncio.ensure_future(spdy.serve(opened))
    waiting = asyncio.ensure_future(ready.wait())
    await asyncio.wait({serving, waiting}, timeout=STREAM_CREATION_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():  # the client went away, or never opened its streams
        waiting.cancel()
        return await _finish(spdy, serving, response)
    session = ExecSession(
        namespace,
        pod,
        container,
        list(command),
        tty,
        streams["stdin"].reader if stdin else None,
        _output(streams.get("stdout"), spdy, stdout),
        _output(streams.get("stderr"), spdy, stderr),
    )
    resizing = asyncio.ensure_future(_resizes(streams["resize"], session)) if "resize" in streams else None
    running = asyncio.ensure_future(call_handler(handler, session))
    await asyncio.wait({serving, running}, return_when=asyncio.FIRST_COMPLETED)
    if running.done():
        status = attach_status(running) if attach else exec_status(running, command)
        codec = channels.V4 if version == "v4.channel.k8s.io" else channels.V1
        streams["error"].write(codec.error_message(status))
        for stream in streams.values():
            stream.close()
    else:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await running
    if resizing is not None:
        resizing.cancel()
    return await _finish(spdy, serving, response)


def _output(stream: Stream | None, spdy: Session, requested: bool) -> Output:
    if stream is None:
        return Output(lambda data: None, spdy.flush, False)
    return Output(stream.write, spdy.flush, requested)


async def _resizes(stream: Stream, session: ExecSession) -> None:
    pending = b""
    while data := await stream.reader.read(4096):
        sizes, pending = channels.resize_events(pending + data)
        for width, height in sizes:
            session.terminal_size = TerminalSize(width, height)
            session.resizes.put_nowait(session.terminal_size)


async def _finish(spdy: Session, serving: asyncio.Future[Any], response: web.StreamResponse) -> web.StreamResponse:
    await spdy.close()
    serving.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await serving
    return response


# --- port-forward ------------------------------------------------------------------------------------------------


async def port_forward(
    request: web.BaseRequest, pod_uid: str, handler_for: Callable[[int], PortHandler | None]
) -> web.StreamResponse:
    """Serve a port-forward over SPDY: upgraded in place, or tunnelled in a websocket."""
    response: web.StreamResponse
    if wants_tunnel(request):
        ws = web.WebSocketResponse(protocols=(TUNNEL_PROTOCOL,), max_msg_size=0)
        await ws.prepare(request)  # type: ignore[arg-type]  # a BaseRequest is all WebSocketResponse uses
        spdy, response = Session(_WebSocketBytes(ws)), ws
    else:
        version = negotiate(request, PORT_FORWARD_VERSIONS)
        if isinstance(version, web.Response):
            return version
        spdy, response = await _accept(request, version)
    pairs: dict[str, dict[str, Stream]] = {}
    forwards: set[asyncio.Future[None]] = set()

    def opened(stream: Stream) -> None:
        request_id = stream.headers.get("requestid") or stream.headers.get("port", "")
        pair = pairs.setdefault(request_id, {})
        pair[stream.headers.get("streamtype", "")] = stream
        if "data" in pair and "error" in pair:
            del pairs[request_id]
            forwards.add(asyncio.ensure_future(_forward(pair["data"], pair["error"], pod_uid, handler_for)))

    serving = asyncio.ensure_future(spdy.serve(opened))
    await asyncio.wait({serving})
    for task in forwards:
        task.cancel()
    for task in forwards:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return await _finish(spdy, serving, response)


async def _forward(data: Stream, error: Stream, pod_uid: str, handler_for: Callable[[int], PortHandler | None]) -> None:
    raw = data.headers.get("port", "")
    if not raw.isdigit() or not 0 < int(raw) <= 65535:
        error.write(f'unable to parse "{raw}" as a port'.encode())
    else:
        port = int(raw)
        await run_port_handler(
            handler_for(port), port, pod_uid, data.reader, PortWriter(data.write, data.flush), error.write
        )
    data.close()
    error.close()


__all__ = [
    "PROTOCOL_HEADER",
    "TUNNEL_PROTOCOL",
    "UPGRADE",
    "port_forward",
    "remote_command",
    "wants_spdy",
    "wants_tunnel",
]
