"""/healthz, /livez and /readyz as k8s.io/apiserver serves them: named checks, ``?verbose``, ``?exclude=``, and one
check by name (``/readyz/shutdown``).

Answers are plain text: ``ok`` (200) when every check passes; with ``?verbose`` one ``[+]name ok`` line per check and
``<endpoint> check passed``; on a failure 500 with ``[-]name failed: reason withheld`` lines (the reason is in the
server's log, as kube's handler keeps it out of the response) and ``<endpoint> check failed``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from aiohttp import web

log = logging.getLogger("pyop.apiserver.health")

Check = Callable[[], Awaitable[None]]  # raises when unhealthy


@dataclass(frozen=True)
class HealthCheck:
    name: str
    check: Check


async def _ok() -> None:
    return None


class HealthChecks:
    """The three endpoints' checks. ``ping`` is in all of them; `add` puts a check in the endpoints named."""

    ENDPOINTS = ("healthz", "livez", "readyz")

    def __init__(self) -> None:
        self._checks: dict[str, list[HealthCheck]] = {endpoint: [] for endpoint in self.ENDPOINTS}
        self.add("ping", _ok)
        self.add("log", _ok)

    def add(self, name: str, check: Check, endpoints: Sequence[str] = ENDPOINTS) -> None:
        for endpoint in endpoints:
            if endpoint not in self._checks:
                raise ValueError(f"health endpoint {endpoint!r}: not one of {', '.join(self.ENDPOINTS)}")
            if any(existing.name == name for existing in self._checks[endpoint]):
                raise ValueError(f"health check {name!r} is already registered for /{endpoint}")
            self._checks[endpoint].append(HealthCheck(name, check))

    def names(self, endpoint: str) -> list[str]:
        return [check.name for check in self._checks[endpoint]]

    @staticmethod
    def is_health_path(path: str) -> bool:
        parts = path.strip("/").split("/")
        return parts[0] in HealthChecks.ENDPOINTS and len(parts) <= 2

    async def respond(self, request: web.BaseRequest) -> web.Response:
        endpoint, _, single = request.path.strip("/").partition("/")
        checks = self._checks[endpoint]
        if single:
            chosen = [check for check in checks if check.name == single]
            if not chosen:
                return web.Response(status=404, text="404 page not found\n")
            failure = await _run(chosen[0])
            if failure:
                return web.Response(status=500, text=f"internal server error: {single} check failed\n")
            return web.Response(text="ok")
        excluded = set(request.query.getall("exclude", []))
        unknown = sorted(excluded - {check.name for check in checks})
        lines, failed = [], False
        for check in checks:
            if check.name in excluded:
                lines.append(f"[+]{check.name} excluded: ok")
                continue
            failure = await _run(check)
            if failure:
                failed = True
                log.warning("%s check %s failed: %s", endpoint, check.name, failure)
                lines.append(f"[-]{check.name} failed: reason withheld")
            else:
                lines.append(f"[+]{check.name} ok")
        for name in unknown:
            lines.append(f'warn: some health checks cannot be excluded: no matches for "{name}"')
        verbose = "verbose" in request.query
        if failed:
            return web.Response(status=500, text="\n".join(lines) + f"\n{endpoint} check failed\n")
        if verbose:
            return web.Response(text="\n".join(lines) + f"\n{endpoint} check passed\n")
        return web.Response(text="ok")


async def _run(check: HealthCheck) -> str:
    """ "" when the check passes; else what it raised."""
    try:
        await check.check()
    except Exception as error:  # noqa: BLE001 - any failure of a check is an unhealthy answer
        return f"{type(error).__name__}: {error}"
    return ""


__all__ = ["HealthCheck", "HealthChecks"]
