"""Serving the manager's small HTTP endpoints (probes, metrics) on Kubebuilder-style bind addresses.

Bind addresses are written as Go's `net.Listen` takes them and as Kubebuilder's flags pass them: `:8081` (all
interfaces), `127.0.0.1:8080`, `[::1]:8443`, `:0` (any free port: tests), and `0` or empty to switch the server
off, as controller-runtime treats `--metrics-bind-address=0`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["BindAddress", "HTTPServer", "parse_bind_address"]


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
    """One aiohttp application on one address; `start` returns the address actually bound."""

    def __init__(self, app: web.Application, address: BindAddress, *, ssl_context: ssl.SSLContext | None = None):
        self.app = app
        self.address = address
        self.ssl_context = ssl_context
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

        runner = web.AppRunner(self.app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
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
