"""Kept-alive HTTP/1.1 connections to one API server: TLS, proxies, a connection limit, idle expiry.

A connection goes back to the pool only after a complete exchange on a connection the server keeps open;
anything else (an error, a timeout, a stream abandoned half way) closes it, since its state is unknown.
Idle connections are used newest first and closed after `idle_timeout` seconds (Go's net/http default, 90 s),
so a server or load balancer that drops quiet connections is rarely met on a stale one.

Proxies (kubeconfig `proxy-url`, `http://` only): an `https` API server is reached through a CONNECT tunnel
with TLS inside it, an `http` one by sending absolute URLs to the proxy, as Go's transport does.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from collections import deque
from collections.abc import Callable
from urllib.parse import unquote

from yarl import URL

from pyop.client.connection import DEFAULT_LIMITS, HTTPConnection, Limits

__all__ = ["ConnectionPool", "ProxyError"]


class ProxyError(ConnectionError):
    """The proxy refused to open a tunnel to the API server."""


class ConnectionPool:
    """Connections to the origin of `server` (scheme, host, port); at most `limit` open at once."""

    def __init__(
        self,
        server: URL,
        *,
        ssl_context: ssl.SSLContext | None,
        server_hostname: str | None = None,
        proxy: str | None = None,
        connect_timeout: float = 10.0,
        limit: int = 100,
        dial_limit: int = 4,
        idle_timeout: float = 90.0,
        limits: Limits = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if server.host is None:
            raise ValueError(f"server URL {str(server)!r} has no host")
        self.host = server.host
        self.port = server.port or (443 if server.scheme == "https" else 80)
        self.ssl_context = ssl_context if server.scheme == "https" else None
        self.server_hostname = server_hostname or self.host
        self.proxy = URL(proxy) if proxy else None
        if self.proxy is not None and (self.proxy.scheme != "http" or self.proxy.host is None):
            raise ValueError(f"proxy {proxy!r} is not supported: only http:// proxies are")
        # Requests through a proxy to a plain-HTTP server name the whole URL; otherwise only the path.
        self.absolute_form = self.proxy is not None and self.ssl_context is None
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.limits = limits
        self._clock = clock
        if limit < 1:
            raise ValueError(f"connection limit must be at least 1, got {limit}")
        self.limit = limit
        if dial_limit < 1:
            raise ValueError(f"dial limit must be at least 1, got {dial_limit}")
        self.dial_limit = dial_limit
        self._idle: list[HTTPConnection] = []
        self._open: set[HTTPConnection] = set()
        self._slots_taken = 0  # open connections and connections being made
        self._dialing = 0  # connections being made (each also holds a slot)
        # Exchanges waiting for a connection, first come first served: each is handed a connection another
        # exchange released (its result) or leave to make one (None: a slot and a dial reserved for it).
        self._waiters: deque[asyncio.Future[HTTPConnection | None]] = deque()

    async def acquire(self) -> tuple[HTTPConnection, bool]:
        """A connection for one exchange, and whether it was used before (a reused one may turn out stale).

        With no idle connection, a new one is made if a slot is free (fewer than `limit` taken) and fewer than
        `dial_limit` are being made; otherwise the exchange waits for whichever comes first: a connection another
        exchange releases (handed over, not parked idle), or leave to make one (a slot or a dial freed).

        Why a dial limit: a controller's workers all start at once, and with one TLS handshake per worker in
        flight together (64 by default in a benchmark here) every handshake finishes at about the same time, so
        the first answer waits for all of them and the server idles meanwhile. With a few at a time, the first
        connections carry exchanges while later ones are still being made, and an exchange that a released
        connection can serve needs no new one: Go's transport likewise hands a request whichever comes first,
        an idle connection or its own dial."""
        idle = self.take_idle()
        if idle is not None:
            return idle, True
        if self._slots_taken < self.limit and self._dialing < self.dial_limit:
            self._slots_taken += 1
            self._dialing += 1
        else:
            handed = await self._wait()
            if handed is not None:
                return handed, True
        try:
            connection = await self._connect()
        except BaseException:
            self._dialing -= 1
            self._free_slot()
            raise
        self._dialing -= 1
        self._open.add(connection)
        self._grant_dials()
        return connection, False

    def take_idle(self) -> HTTPConnection | None:
        """The newest idle connection that can carry another exchange, if any (stale ones are closed on the way);
        None when a connection must be waited for or made."""
        if not self._idle:
            return None
        now = self._clock()
        while self._idle:
            connection = self._idle.pop()
            if connection.reusable and now - connection.idle_since < self.idle_timeout:
                return connection
            self._discard(connection)
        return None

    async def _wait(self) -> HTTPConnection | None:
        waiter: asyncio.Future[HTTPConnection | None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                handed = waiter.result()  # handed over just as this exchange was cancelled: pass it on
                if handed is None:
                    self._dialing -= 1
                    self._free_slot()
                else:
                    self.release(handed)
            elif waiter in self._waiters:  # (a cancelled waiter may already have been skipped and dropped)
                self._waiters.remove(waiter)
            raise

    def release(self, connection: HTTPConnection) -> None:
        """Return a connection after an exchange: handed to the longest waiting exchange, else kept for reuse
        when it can carry another, closed otherwise."""
        if not connection.reusable:
            self._discard(connection)
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        connection.idle_since = self._clock()
        self._idle.append(connection)

    def discard(self, connection: HTTPConnection) -> None:
        """Drop a connection whose exchange went wrong."""
        connection.abort()
        self._discard(connection)

    async def close(self) -> None:
        for connection in list(self._open):
            connection.close()
            self._discard(connection)
        self._idle.clear()

    def _discard(self, connection: HTTPConnection) -> None:
        connection.close()
        if connection in self._open:
            self._open.discard(connection)
            self._free_slot()

    def _free_slot(self) -> None:
        """A slot is free: handed to the longest waiting exchange (which connects in it) when a dial is free
        too, else counted free (a dial ending hands it on then)."""
        if self._dialing < self.dial_limit and self._hand_dial():
            return
        self._slots_taken -= 1

    def _grant_dials(self) -> None:
        """A dial ended: leave to make a connection for waiting exchanges, as far as slots and dials allow."""
        while self._slots_taken < self.limit and self._dialing < self.dial_limit:
            self._slots_taken += 1
            if not self._hand_dial():
                self._slots_taken -= 1
                return

    def _hand_dial(self) -> bool:
        """Give the longest waiting exchange leave to connect in a slot already counted taken; False if none
        waits."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._dialing += 1
                waiter.set_result(None)
                return True
        return False

    async def _connect(self) -> HTTPConnection:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout):
            if self.proxy is None or self.absolute_form:
                host, port = (self.host, self.port) if self.proxy is None else _address(self.proxy)
                _, connection = await loop.create_connection(
                    lambda: HTTPConnection(self.limits),
                    host,
                    port,
                    ssl=self.ssl_context,
                    server_hostname=self.server_hostname if self.ssl_context is not None else None,
                )
                return connection
            return await self._tunnel(loop)

    async def _tunnel(self, loop: asyncio.AbstractEventLoop) -> HTTPConnection:
        """TLS to the server inside a CONNECT tunnel through the proxy."""
        assert self.proxy is not None and self.ssl_context is not None
        transport, handshake = await loop.create_connection(_TunnelHandshake, *_address(self.proxy))
        try:
            authority = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
            lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
            credentials = proxy_authorization(self.proxy)
            if credentials:
                lines.append(f"Proxy-Authorization: {credentials}")
            transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            status_line = await handshake.status_line
            parts = status_line.split(" ", 2)
            if len(parts) < 2 or not parts[1].isdigit() or not 200 <= int(parts[1]) < 300:
                raise ProxyError(f"proxy {self.proxy.host} refused CONNECT {authority}: {status_line!r}")
            tls = await loop.start_tls(transport, handshake, self.ssl_context, server_hostname=self.server_hostname)
            if tls is None:
                raise ProxyError("TLS through the proxy tunnel could not start")
        except BaseException:
            transport.close()
            raise
        connection = HTTPConnection(self.limits)
        tls.set_protocol(connection)
        connection.connection_made(tls)
        return connection


class _TunnelHandshake(asyncio.Protocol):
    """Reads the proxy's answer to CONNECT (its status line; the tunnel carries no other bytes before TLS)."""

    def __init__(self) -> None:
        self.status_line: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._received = b""

    def data_received(self, data: bytes) -> None:
        self._received += data
        if b"\r\n\r\n" in self._received and not self.status_line.done():
            self.status_line.set_result(self._received.split(b"\r\n", 1)[0].decode("latin-1"))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.status_line.done():
            self.status_line.set_exception(ConnectionError("the proxy closed the connection during CONNECT"))


def proxy_authorization(proxy: URL) -> str | None:
    """`Basic` credentials from a proxy URL's user information, as Go's transport sends them."""
    if proxy.raw_user is None:
        return None
    user = unquote(proxy.raw_user)
    password = unquote(proxy.raw_password or "")
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _address(url: URL) -> tuple[str, int]:
    assert url.host is not None
    return url.host, url.port or 80
