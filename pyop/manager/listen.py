"""Serving the manager's small HTTP endpoints (probes, metrics) on Kubebuilder-style bind addresses.

Bind addresses are written as Go's `net.Listen` takes them and as Kubebuilder's flags pass them: `:8081` (all
interfaces), `127.0.0.1:8080`, `[::1]:8443`, `:0` (any free port: tests), and `0` or empty to switch the server
off, as controller-runtime treats `--metrics-bind-address=0`.

Slow clients are cut off as controller-runtime's servers cut them off (its `internal/httpserver.New`, used by
the webhook, metrics and probe servers: `ReadHeaderTimeout` 32 s, `IdleTimeout` 90 s): a connection whose
request head is not complete `header_timeout` seconds after the connection opened, or after the first byte of
a later request on it arrived, is closed; so is a kept-alive connection idle for `idle_timeout` seconds.
Without the first, a client that sends half a request head holds a connection (and its memory) for ever.
aiohttp has the idle timeout (`keepalive_timeout`) but no header timeout, so the request handler gets one.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["HEADER_TIMEOUT", "IDLE_TIMEOUT", "BindAddress", "HTTPServer", "parse_bind_address"]

log = logging.getLogger("pyop.manager.http")

HEADER_TIMEOUT = 32.0  # controller-runtime's ReadHeaderTimeout ("just shy of" kube-apiserver's 34 s upper bound)
IDLE_TIMEOUT = 90.0  # controller-runtime's IdleTimeout (Go's http.DefaultTransport keeps idle connections 90 s)


@dataclass(frozen=True)
class BindAddress:
    host: str | None  # None: every interface
    port: int


def parse_bind_address(value: str | None) -> BindAddress | None:
    """`":8081"` -> (None, 8081); `"0"` or `""` -> None (disabled); raises ValueError on anything else."""
    if value is None:
        return None
    text = value.strip()
    if text in ("", "0"):
        return None
    host, separator, port_text = text.rpartition(":")
    if not separator or not port_text.isdigit():
        raise ValueError(f"bind address {value!r} is not host:port, :port or 0")
    port = int(port_text)
    if port > 65535:
        raise ValueError(f"bind address {value!r}: port out of range")
    host = host.strip("[]")
    return BindAddress(host or None, port)


class HTTPServer:
    """One aiohttp application on one address; `start` returns the address actually bound.

    `header_timeout` and `idle_timeout` (seconds) cut off slow and idle clients (see the module docstring).
    """

    def __init__(
        self,
        app: web.Application,
        address: BindAddress,
        *,
        ssl_context: ssl.SSLContext | None = None,
        header_timeout: float = HEADER_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
    ):
        if header_timeout <= 0 or idle_timeout <= 0:
            raise ValueError(f"header_timeout and idle_timeout must be positive, not {header_timeout}, {idle_timeout}")
        self.app = app
        self.address = address
        self.ssl_context = ssl_context
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self._runner: web.AppRunner | None = None
        self.bound: tuple[str, int] | None = None

    @property
    def url(self) -> str:
        if self.bound is None:
            raise RuntimeError("server not started")
        host, port = self.bound
        scheme = "https" if self.ssl_context is not None else "http"
        shown = f"[{host}]" if ":" in host else host
        return f"{scheme}://{shown}:{port}"

    async def start(self) -> tuple[str, int]:
        # aiohttp's server side (~30 ms to import) is loaded by the managers that serve something, not by all.
        from aiohttp import web

        runner = _timed_runner(
            self.app,
            self.header_timeout,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=1.0,
            keepalive_timeout=self.idle_timeout,
        )
        await runner.setup()
        site = web.TCPSite(runner, self.address.host, self.address.port, ssl_context=self.ssl_context)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self.bound = (str(host), int(port))
        return self.bound

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def _timed_runner(app: web.Application, header_timeout: float, **kwargs: Any) -> web.AppRunner:
    """An AppRunner whose connections are handled by `_TimedRequestHandler`s (aiohttp has no option for it:
    the server it builds is given the handler class here)."""
    from aiohttp import web
    from aiohttp.web_protocol import RequestHandler

    class TimedRequestHandler(RequestHandler):  # type: ignore[misc]
        """aiohttp's handler plus a deadline for each request head (see the module docstring)."""

        def __init__(self, *args: Any, **options: Any) -> None:
            super().__init__(*args, **options)
            self._head_deadline: asyncio.TimerHandle | None = None
            self._heads_seen = 0

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            self._start_head_deadline()  # the first request's head is due from the moment the connection opens

        def data_received(self, data: bytes) -> None:
            if self._head_deadline is None and self._waiter is not None:
                self._start_head_deadline()  # idle until now: these bytes start the next request's head
            super().data_received(data)
            if self._head_deadline is not None and self._request_count > self._heads_seen:
                self._head_deadline.cancel()
                self._head_deadline = None

        def connection_lost(self, exc: BaseException | None) -> None:
            if self._head_deadline is not None:
                self._head_deadline.cancel()
                self._head_deadline = None
            super().connection_lost(exc)

        def _start_head_deadline(self) -> None:
            self._heads_seen = self._request_count
            self._head_deadline = self._loop.call_later(header_timeout, self._head_overdue)

        def _head_overdue(self) -> None:
            self._head_deadline = None
            if self._request_count > self._heads_seen:
                return
            log.debug("closing a connection whose request head took over %ss", header_timeout)
            self.force_close()
            if self.transport is not None:
                self.transport.close()

    class TimedServer(web.Server):  # type: ignore[misc]
        def __call__(self) -> RequestHandler:
            return TimedRequestHandler(self, loop=self._loop, **self._kwargs)

    class TimedRunner(web.AppRunner):  # type: ignore[misc]
        async def _make_server(self) -> web.Server:
            server = await super()._make_server()
            server.__class__ = TimedServer  # same state, our handler class
            return server

    return TimedRunner(app, **kwargs)
