"""What a test's container handlers see of an `exec`, `attach` or forwarded port, whatever the wire protocol
(websocket channels: pod_streaming; SPDY streams: pod_streaming_spdy), and the kubelet's answers at their end.

An exec handler gets an `ExecSession` and returns the exit code; the error stream then carries the kubelet's
Status (remotecommand.ServeExec): ``Success``, ``NonZeroExitCode`` with the ``ExitCode`` cause and the CRI
runtime's message, or an ``InternalError`` for a handler that raised. A port handler is an asyncio stream handler
``(reader, writer)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

ExecHandler = Callable[["ExecSession"], Awaitable[int | None] | int | None]
AttachHandler = Callable[["ExecSession"], Awaitable[None] | None]
PortHandler = Callable[[asyncio.StreamReader, "PortWriter"], Awaitable[None]]


@dataclass(frozen=True)
class TerminalSize:
    width: int
    height: int


# Where a stream's bytes go: queue them (in order), and wait until what is queued has been sent.
Send = Callable[[bytes], None]
Flush = Callable[[], Awaitable[None]]


class Output:
    """A container's stdout or stderr as the handler writes it (bytes, or text sent as UTF-8)."""

    def __init__(self, send: Send, flush: Flush, requested: bool) -> None:
        self._send, self._flush, self.requested = send, flush, requested

    def write(self, data: bytes | str) -> None:
        """Queue ``data`` for the client (dropped when the client did not ask for this stream, as kube does)."""
        if self.requested and data:
            self._send(data.encode() if isinstance(data, str) else data)

    async def drain(self) -> None:
        """Wait until what was written has been sent."""
        await self._flush()


@dataclass
class ExecSession:
    """One `exec` or `attach`, as a container would see it. ``stdin`` is None when the client sent none; it
    reaches its end when the client closes it (the v5 close signal) or goes away. ``terminal_size`` is the
    latest resize (tty sessions), ``resizes`` every resize in order."""

    namespace: str
    pod: str
    container: str
    command: list[str]
    tty: bool
    stdin: asyncio.StreamReader | None
    stdout: Output
    stderr: Output
    terminal_size: TerminalSize | None = None
    resizes: asyncio.Queue[TerminalSize] = field(default_factory=asyncio.Queue)


class PortWriter:
    """The writing half of one forwarded connection, shaped as asyncio's StreamWriter (write, drain, close)."""

    def __init__(self, send: Send, flush: Flush) -> None:
        self._send, self._flush = send, flush
        self._closed = False

    def write(self, data: bytes) -> None:
        if not self._closed and data:
            self._send(bytes(data))

    async def drain(self) -> None:
        await self._flush()

    def close(self) -> None:
        self._closed = True

    def is_closing(self) -> bool:
        return self._closed

    async def wait_closed(self) -> None:
        await self._flush()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


async def call_handler(handler: Callable[[ExecSession], Any], session: ExecSession) -> Any:
    result = handler(session)
    return await result if inspect.isawaitable(result) else result


def internal_status(message: str) -> dict[str, Any]:
    text = f"Internal error occurred: {message}"
    return {
        "metadata": {},
        "status": "Failure",
        "message": text,
        "reason": "InternalError",
        "details": {"causes": [{"message": message}]},
        "code": 500,
    }


def exec_status(done: asyncio.Future[Any], command: list[str]) -> dict[str, Any]:
    """The kubelet's error-channel Status for a command's end (remotecommand.ServeExec; the exit error's text is
    the CRI runtime's)."""
    error = done.exception()
    if error is not None:
        return internal_status(f"error executing command in container: {error}")
    code = done.result()
    code = 0 if code is None else code
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        return internal_status(f"error executing command in container: exit code {code!r} is not in 0-255")
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": (
            f"command terminated with non-zero exit code: error executing command [{' '.join(command)}], "
            f"exit code {code}"
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


def attach_status(done: asyncio.Future[Any]) -> dict[str, Any]:
    error = done.exception()
    if error is not None:
        return internal_status(f"error attaching to container: {error}")
    return {"metadata": {}, "status": "Success"}


async def run_port_handler(
    handler: PortHandler | None,
    port: int,
    pod_uid: str,
    reader: asyncio.StreamReader,
    writer: PortWriter,
    send_error: Send,
) -> None:
    """One forwarded connection: the handler's, or the kubelet's error for a port nothing listens on; a handler's
    exception is reported on the error stream in the kubelet's words."""
    prefix = f"error forwarding port {port} to pod {pod_uid}, uid : "
    if handler is None:
        send_error(f"{prefix}failed to connect to localhost:{port}: connection refused".encode())
        return
    try:
        await handler(reader, writer)
    except Exception as error:  # noqa: BLE001 - what the kubelet reports on the port's error channel
        send_error(f"{prefix}{error}".encode())


def tcp_forwarder(host: str, target_port: int) -> PortHandler:
    async def forward(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(host, target_port)
        except OSError as error:
            raise ConnectionRefusedError(f"failed to connect to {host}:{target_port}: {error.strerror}") from None

        async def to_target() -> None:
            while data := await reader.read(65536):
                upstream_writer.write(data)
                await upstream_writer.drain()
            if upstream_writer.can_write_eof():
                upstream_writer.write_eof()

        sending = asyncio.ensure_future(to_target())
        try:
            while data := await upstream_reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            sending.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await sending
            upstream_writer.close()
            with contextlib.suppress(OSError):
                await upstream_writer.wait_closed()

    return forward


__all__ = [
    "AttachHandler",
    "ExecHandler",
    "ExecSession",
    "Flush",
    "Output",
    "PortHandler",
    "PortWriter",
    "Send",
    "TerminalSize",
    "attach_status",
    "call_handler",
    "exec_status",
    "internal_status",
    "run_port_handler",
    "tcp_forwarder",
]
