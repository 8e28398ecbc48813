"""Pods' streaming subresources, `exec`, `attach` and `portforward`, over kube's websocket channel protocols.

On a cluster kube-apiserver checks the request (pkg/registry/core/pod/strategy.go, streamLocation) and proxies the
upgrade to the pod's kubelet, which runs the command in the container (or attaches to it, or dials the port in
the pod's network namespace). The test server has no kubelets and no containers, so the test says what the
container does: `PodStreams` (``TestAPIServer.pod_streams``) holds, per pod,

- an exec handler (optionally per container): it receives an `ExecSession` (the command, stdin, tty and terminal
  size) and writes stdout/stderr, and returns the exit code;
- an attach handler per container: the same session without a command (the container's main process);
- a port handler per port: an asyncio stream handler ``(reader, writer)`` as `asyncio.start_server` calls one (an
  echo server), or `PodStreams.forward_port` to a real local TCP port.

What is checked first is kube-apiserver's: the pod exists (404), a container is named or the pod has one (400 "a
container name must be specified for pod X, choose one of: [a b]"), it is the pod's (400 "container Y is not valid
for pod X"), the pod is bound (400 "pod X does not have a host assigned"). Without a handler the answer is the
kubelet's for a container that does not run: 500 `container not found ("app")` (kubectl: "unable to upgrade
connection: container not found"); a forwarded port without a handler gets the kubelet's error on the port's
error channel, as a port nothing listens on. From Kubernetes 1.35 a websocket upgrade (a GET, authorized as `get`)
must also be allowed to `create` the subresource (AuthorizePodWebsocketUpgradeCreatePermission, on by default).

The protocols: websocket channels (pyop.apiserver.endpoints.channels, here) ``v5``/``v4.channel.k8s.io`` for
commands (kubectl's default since 1.30, the kubernetes Python client's `stream`), ``v4.channel.k8s.io`` with two
channels per port for port-forward (the Python client's `portforward`); SPDY/3.1 (pod_streaming_spdy) for
`kubectl port-forward` (tunnelled in a websocket, or upgraded in place) and kubectl's exec/attach fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import WSMsgType, web

from pyop.api.status import bad_request, not_found
from pyop.apiserver.endpoints import channels
from pyop.apiserver.endpoints.channels import ChannelProtocol
from pyop.apiserver.endpoints.handlers import query_bool
from pyop.apiserver.registry.operations import Operations
from pyop.testing.builtins import pod_streaming_spdy as spdy
from pyop.testing.builtins.pod_stream_sessions import (
    AttachHandler,
    ExecHandler,
    ExecSession,
    Output,
    PortHandler,
    PortWriter,
    TerminalSize,
    attach_status,
    call_handler,
    exec_status,
    run_port_handler,
    tcp_forwarder,
)
from pyop.testing.builtins.pod_subresources import validate_container

# (user, request, verb): raises the 403 when the user may not (the test server's RBAC).
Authorize = Callable[[Any, web.BaseRequest, str], None]
_COMPOUND_AUTHORIZATION_SINCE: Final = 35  # minor version from which websocket upgrades need `create`
_MISSING_UPGRADE: Final = "unable to upgrade: missing upgrade headers in request"


class _Connection:
    """One upgraded websocket: messages out in order through one sender task, messages in through a reader."""

    def __init__(self, ws: web.WebSocketResponse, protocol: ChannelProtocol) -> None:
        self.ws, self.protocol = ws, protocol
        self._out: asyncio.Queue[bytes | str] = asyncio.Queue()
        self.lost = False
        self._sender = asyncio.ensure_future(self._send_loop())

    def send(self, channel: int, data: bytes) -> None:
        if not self.lost:
            self._out.put_nowait(self.protocol.encode(channel, data))

    async def flush(self) -> None:
        if not self.lost:
            await self._out.join()

    async def _send_loop(self) -> None:
        while True:
            message = await self._out.get()
            try:
                if not self.lost:
                    if isinstance(message, str):
                        await self.ws.send_str(message)
                    else:
                        await self.ws.send_bytes(message)
            except (ConnectionError, RuntimeError):
                self.lost = True
            finally:
                self._out.task_done()

    async def messages(self) -> Any:
        """(channel, data) of each client message until the client closes (pings are answered by aiohttp)."""
        async for message in self.ws:
            if message.type in (WSMsgType.BINARY, WSMsgType.TEXT):
                try:
                    channel, data = self.protocol.decode(message.data)
                except ValueError:
                    break
                if channel >= 0:
                    yield channel, data
            elif message.type == WSMsgType.ERROR:
                break
        self.lost = True

    async def close(self) -> None:
        await self.flush()
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender
        if not self.ws.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.ws.close()


@dataclass
class PodStreams:
    """What each pod's containers do when a client execs into them, attaches to them or forwards their ports (set
    by tests; see the module docstring). Keys are (namespace, pod[, container or port])."""

    kubernetes_version: str = ""
    authorize: Authorize | None = None
    exec_handlers: dict[tuple[str, str, str], ExecHandler] = field(default_factory=dict)
    attach_handlers: dict[tuple[str, str, str], AttachHandler] = field(default_factory=dict)
    port_handlers: dict[tuple[str, str, int], PortHandler] = field(default_factory=dict)

    # --- the test-facing API ------------------------------------------------------------------------------------

    def on_exec(self, namespace: str, pod: str, handler: ExecHandler, *, container: str = "") -> None:
        """Run ``handler`` for every command exec'd in pod ``namespace/pod`` (in ``container`` only, when named; a
        container's own handler wins over the pod's). It returns the exit code (None: 0)."""
        self.exec_handlers[(namespace, pod, container)] = handler

    def on_attach(self, namespace: str, pod: str, container: str, handler: AttachHandler) -> None:
        """Run ``handler`` when a client attaches to ``container`` (its main process's stdin/stdout/stderr)."""
        self.attach_handlers[(namespace, pod, container)] = handler

    def on_port(self, namespace: str, pod: str, port: int, handler: PortHandler) -> None:
        """Serve each connection forwarded to the pod's ``port`` with ``handler(reader, writer)``."""
        self.port_handlers[(namespace, pod, port)] = handler

    def forward_port(self, namespace: str, pod: str, port: int, target_port: int, host: str = "127.0.0.1") -> None:
        """Forward each connection to the pod's ``port`` to a real TCP server at ``host:target_port``."""
        self.on_port(namespace, pod, port, tcp_forwarder(host, target_port))

    def clear(self, namespace: str, pod: str) -> None:
        """Forget every handler of the pod."""
        every: tuple[dict[Any, Any], ...] = (self.exec_handlers, self.attach_handlers, self.port_handlers)
        for handlers in every:
            for key in [key for key in handlers if key[:2] == (namespace, pod)]:
                del handlers[key]

    # --- the subresource handlers (GenericAPIServer's subresource_connects) -------------------------------------

    async def exec(
        self, operations: Operations, namespace: str, name: str, request: web.BaseRequest, user: Any
    ) -> web.StreamResponse:
        self._compound_authorization(user, request)
        query = request.query
        pod = _pod(operations, namespace, name)
        container = validate_container(pod, query.get("container", ""))
        _bound(pod)
        command = query.getall("command", [])
        options = _stream_options(query)
        handler = self.exec_handlers.get((namespace, name, container)) or self.exec_handlers.get((namespace, name, ""))
        if handler is None:
            return _container_not_found(container)
        if spdy.wants_spdy(request):
            return await spdy.remote_command(
                request, namespace, name, container, command, handler, options, attach=False
            )
        _check_websocket(request, channels.REMOTE_COMMAND_PROTOCOLS)
        return await _remote_command(request, namespace, name, container, command, handler, attach=False)

    async def attach(
        self, operations: Operations, namespace: str, name: str, request: web.BaseRequest, user: Any
    ) -> web.StreamResponse:
        self._compound_authorization(user, request)
        pod = _pod(operations, namespace, name)
        container = validate_container(pod, request.query.get("container", ""))
        _bound(pod)
        options = _stream_options(request.query)
        handler = self.attach_handlers.get((namespace, name, container))
        if handler is None:
            return _container_not_found(container)
        if spdy.wants_spdy(request):
            return await spdy.remote_command(request, namespace, name, container, [], handler, options, attach=True)
        _check_websocket(request, channels.REMOTE_COMMAND_PROTOCOLS)
        return await _remote_command(request, namespace, name, container, [], handler, attach=True)

    async def portforward(
        self, operations: Operations, namespace: str, name: str, request: web.BaseRequest, user: Any
    ) -> web.StreamResponse:
        self._compound_authorization(user, request)
        pod = _pod(operations, namespace, name)
        _bound(pod)
        uid = pod["metadata"].get("uid", "")
        if spdy.wants_spdy(request) or spdy.wants_tunnel(request):  # kubectl port-forward
            return await spdy.port_forward(request, uid, functools.partial(self._port_handler, namespace, name))
        _check_websocket(request, channels.PORT_FORWARD_PROTOCOLS)
        ports = _ports(request.query)
        handlers = [self._port_handler(namespace, name, port) for port in ports]
        return await _port_forward(request, uid, ports, handlers)

    def _port_handler(self, namespace: str, pod: str, port: int) -> PortHandler | None:
        return self.port_handlers.get((namespace, pod, port))

    def _compound_authorization(self, user: Any, request: web.BaseRequest) -> None:
        """A websocket upgrade is a GET (authorized as `get`); from 1.35 it must also be allowed to `create`."""
        if self.authorize is None or request.method != "GET" or user is None:
            return
        minor = self.kubernetes_version.split(".")[1] if "." in self.kubernetes_version else ""
        if minor.isdigit() and int(minor) >= _COMPOUND_AUTHORIZATION_SINCE:
            self.authorize(user, request, "create")


# --- checks ---------------------------------------------------------------------------------------------------


def _pod(operations: Operations, namespace: str, name: str) -> dict[str, Any]:
    pod = operations.store.get("pods", namespace, name)
    if pod is None:
        raise not_found("pods", "", name)
    return pod


def _bound(pod: dict[str, Any]) -> None:
    if not (pod.get("spec") or {}).get("nodeName"):
        raise bad_request(f"pod {pod['metadata']['name']} does not have a host assigned")


def _container_not_found(container: str) -> web.Response:
    """The kubelet's answer for a container it does not run, which kube-apiserver passes on."""
    return web.Response(status=500, text=f'container not found ("{container}")')


def _is_websocket(request: web.BaseRequest) -> bool:
    connection = request.headers.get("Connection", "").lower()
    return request.headers.get("Upgrade", "").lower() == "websocket" and "upgrade" in connection


def _check_websocket(request: web.BaseRequest, supported: tuple[ChannelProtocol, ...]) -> None:
    """The 400 for a request that is no upgrade kube serves, or a websocket with no subprotocol in common."""
    if not _is_websocket(request):
        raise bad_request(_MISSING_UPGRADE)
    requested = channels.requested_protocols(request.headers.get("Sec-WebSocket-Protocol", ""))
    if channels.choose(requested, supported) is None:
        allowed = " ".join(protocol.name for protocol in supported)
        raise bad_request(f"requested protocol(s) are not supported: [{' '.join(requested)}]; supports [{allowed}]")


def _ports(query: Any) -> list[int]:
    """The `ports` of a PodPortForwardOptions (repeated or comma-separated), as the kubelet parses them."""
    values = query.getall("ports", [])
    if not values:
        raise bad_request('query parameter "port" is required')
    ports = []
    for value in values:
        if not value:
            raise bad_request('query parameter "port" cannot be empty')
        for part in value.split(","):
            if not part.isdigit() or int(part) > 65535:
                raise bad_request(f'unable to parse "{part}" as a port')
            if int(part) < 1:
                raise bad_request(f'port "{part}" must be > 0')
            ports.append(int(part))
    return ports


def _stream_options(query: Any) -> tuple[bool, bool, bool, bool]:
    """(tty, stdin, stdout, stderr) as the kubelet reads them (remotecommand.NewOptions): a terminal has no
    separate stderr, and at least one stream is needed."""
    tty = query_bool(query, "tty")
    stdin, stdout = query_bool(query, "stdin"), query_bool(query, "stdout")
    stderr = query_bool(query, "stderr") and not tty
    if not (stdin or stdout or stderr):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    return tty, stdin, stdout, stderr


# --- exec and attach ------------------------------------------------------------------------------------------


async def _open(request: web.BaseRequest, supported: tuple[ChannelProtocol, ...]) -> _Connection:
    requested = channels.requested_protocols(request.headers.get("Sec-WebSocket-Protocol", ""))
    protocol = channels.choose(requested, supported)
    assert protocol is not None  # _refusal checked it
    ws = web.WebSocketResponse(protocols=(protocol.name,) if requested else (), max_msg_size=0)
    await ws.prepare(request)  # type: ignore[arg-type]  # a BaseRequest is all WebSocketResponse uses
    return _Connection(ws, protocol)


async def _remote_command(
    request: web.BaseRequest,
    namespace: str,
    pod: str,
    container: str,
    command: list[str],
    handler: Callable[[ExecSession], Any],
    *,
    attach: bool,
) -> web.StreamResponse:
    tty, stdin_requested, stdout_requested, stderr_requested = _stream_options(request.query)
    connection = await _open(request, channels.REMOTE_COMMAND_PROTOCOLS)
    stdin = asyncio.StreamReader() if stdin_requested else None
    session = ExecSession(
        namespace,
        pod,
        container,
        list(command),
        tty,
        stdin,
        Output(functools.partial(connection.send, channels.STDOUT), connection.flush, stdout_requested),
        Output(functools.partial(connection.send, channels.STDERR), connection.flush, stderr_requested),
    )
    # The lowest writable channel gets an empty message: the client's sign that the streams are open (kubelet).
    first = channels.STDOUT if stdout_requested else channels.STDERR if stderr_requested else channels.ERROR
    connection.send(first, b"")
    reader = asyncio.ensure_future(_read_remote_command(connection, session))
    running = asyncio.ensure_future(call_handler(handler, session))
    await asyncio.wait({reader, running}, return_when=asyncio.FIRST_COMPLETED)
    if not running.done():  # the client went away: nothing can reach it any more
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await running
    else:
        status = attach_status(running) if attach else exec_status(running, command)
        await connection.flush()
        message = connection.protocol.error_message(status)
        if message:  # pre-v4 protocols say nothing of a success
            connection.send(channels.ERROR, message)
    await connection.close()
    reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
    return connection.ws


async def _read_remote_command(connection: _Connection, session: ExecSession) -> None:
    pending = b""
    try:
        async for channel, data in connection.messages():
            closed = connection.protocol.closed_channel(channel, data)
            if closed is not None:
                if closed == channels.STDIN and session.stdin is not None:
                    session.stdin.feed_eof()
            elif channel == channels.STDIN and session.stdin is not None and data:
                session.stdin.feed_data(data)
            elif channel == channels.RESIZE:
                sizes, pending = channels.resize_events(pending + data)
                for width, height in sizes:
                    session.terminal_size = TerminalSize(width, height)
                    session.resizes.put_nowait(session.terminal_size)
    except ValueError:
        pass
    finally:
        if session.stdin is not None and not session.stdin.at_eof():
            session.stdin.feed_eof()


# --- port-forward ---------------------------------------------------------------------------------------------


async def _port_forward(
    request: web.BaseRequest, pod_uid: str, ports: list[int], handlers: list[PortHandler | None]
) -> web.StreamResponse:
    connection = await _open(request, channels.PORT_FORWARD_PROTOCOLS)
    readers = [asyncio.StreamReader() for _ in ports]
    for index, port in enumerate(ports):  # each channel's first message: its port (kubelet's websocket streams)
        connection.send(2 * index, channels.port_prefix(port))
        connection.send(2 * index + 1, channels.port_prefix(port))
    forwards = [
        asyncio.ensure_future(
            run_port_handler(
                handler,
                port,
                pod_uid,
                readers[index],
                PortWriter(functools.partial(connection.send, 2 * index), connection.flush),
                functools.partial(connection.send, 2 * index + 1),
            )
        )
        for index, (port, handler) in enumerate(zip(ports, handlers, strict=True))
    ]
    reader = asyncio.ensure_future(_read_port_forward(connection, readers))
    all_done: asyncio.Future[Any] = asyncio.ensure_future(asyncio.gather(*forwards, return_exceptions=True))
    await asyncio.wait({reader, all_done}, return_when=asyncio.FIRST_COMPLETED)
    if not all_done.done():  # the client closed: the forwarded connections see their end, then are stopped
        for stream in readers:
            if not stream.at_eof():
                stream.feed_eof()
        _, pending = await asyncio.wait(forwards, timeout=1.0)
        for task in pending:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await all_done
    await connection.close()
    reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
    return connection.ws


async def _read_port_forward(connection: _Connection, readers: list[asyncio.StreamReader]) -> None:
    try:
        async for channel, data in connection.messages():
            index, is_error = divmod(channel, 2)
            if not is_error and index < len(readers) and data and not readers[index].at_eof():
                readers[index].feed_data(data)
    finally:
        for stream in readers:
            if not stream.at_eof():
                stream.feed_eof()


__all__ = ["ExecSession", "Output", "PodStreams", "PortWriter", "TerminalSize"]  # the sessions' types, re-exported
