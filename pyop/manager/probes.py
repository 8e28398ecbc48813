"""Liveness and readiness endpoints with named checks, answering as Kubernetes components do.

`/healthz` and `/readyz` run every check of their kind: all pass -> 200 `ok`; any fails -> 500 with one line
per check (`[+]ping ok`, `[-]cache-sync failed: reason withheld`) and `readyz check failed`. `?verbose` lists the
checks on success too; `?exclude=<name>` skips one. `/healthz/<name>` runs a single check. Failure reasons stay
out of the response (probes are unauthenticated) and go to the log instead, as in controller-runtime.

A check is a function, plain or async, that raises or returns False when unhealthy.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["Check", "HealthProbes", "ping"]

log = logging.getLogger("pyop.manager.probes")

Check = Callable[[], Any | Awaitable[Any]]


def ping() -> None:
    """Always healthy: the process answers HTTP (controller-runtime's `healthz.Ping`)."""


async def _run_check(check: Check) -> str | None:
    """None when the check passes, else why it failed."""
    try:
        outcome = check()
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except Exception as error:  # A failing check is an answer, not a server error.
        return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if outcome is False:
        return "check returned false"
    return None


class HealthProbes:
    """The checks of one manager and the aiohttp application serving them."""

    def __init__(self) -> None:
        self._checks: dict[str, dict[str, Check]] = {"healthz": {}, "readyz": {}}

    def add_healthz_check(self, name: str, check: Check) -> None:
        self._add("healthz", name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        self._add("readyz", name, check)

    def _add(self, endpoint: str, name: str, check: Check) -> None:
        if not name or "/" in name:
            raise ValueError(f"invalid check name {name!r}")
        checks = self._checks[endpoint]
        if name in checks:
            raise ValueError(f"{endpoint} check {name!r} already exists")
        checks[name] = check

    async def run(self, endpoint: str, exclude: frozenset[str] = frozenset()) -> tuple[bool, list[str]]:
        """Run an endpoint's checks; returns (all passed, one report line per check)."""
        healthy = True
        lines = []
        for name, check in self._checks[endpoint].items():
            if name in exclude:
                lines.append(f"[+]{name} excluded: ok")
                continue
            failure = await _run_check(check)
            if failure is None:
                lines.append(f"[+]{name} ok")
            else:
                healthy = False
                lines.append(f"[-]{name} failed: reason withheld")
                log.info("%s check failed", endpoint, extra={"checker": name, "error": failure})
        return healthy, lines

    def app(self) -> web.Application:
        from aiohttp import web  # the server side of aiohttp, imported only by managers that serve probes

        app = web.Application()
        for endpoint in self._checks:
            app.router.add_get(f"/{endpoint}", self._aggregated(endpoint))
            app.router.add_get(f"/{endpoint}/", self._aggregated(endpoint))
            app.router.add_get(f"/{endpoint}/{{name}}", self._single(endpoint))
        return app

    def _aggregated(self, endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        from aiohttp import web

        async def handle(request: web.Request) -> web.Response:
            exclude = frozenset(request.query.getall("exclude", []))
            healthy, lines = await self.run(endpoint, exclude)
            verbose = "verbose" in request.query
            if healthy and not verbose:
                return web.Response(text="ok")
            body = "\n".join([*lines, f"{endpoint} check {'passed' if healthy else 'failed'}"]) + "\n"
            return web.Response(text=body, status=200 if healthy else 500)

        return handle

    def _single(self, endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        from aiohttp import web

        async def handle(request: web.Request) -> web.Response:
            name = request.match_info["name"]
            check = self._checks[endpoint].get(name)
            if check is None:
                return web.Response(text=f"no {endpoint} check named {name}\n", status=404)
            failure = await _run_check(check)
            if failure is None:
                return web.Response(text="ok")
            log.info("%s check failed", endpoint, extra={"checker": name, "error": failure})
            return web.Response(text=f"internal server error: {failure}\n", status=500)

        return handle
