"""NamespaceLifecycle for an aggregated API server: no object is created in a namespace the cluster does not have.

kube's plugin reads the namespaces through an informer on the core API, with a live lookup on a miss; here a
namespace seen to exist is remembered for ``ttl`` seconds and anything else is looked up in the cluster (pyop's
client, GET /api/v1/namespaces/<name>). A namespace that is gone answers kube's 404 (``namespaces "x" not found``).
The server's identity needs ``get`` on namespaces (the RBAC of a scaffolded aggregated server grants it).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from pyop.api.status import not_found


class NamespaceReader(Protocol):
    def namespace_exists(self, name: str) -> Awaitable[bool]: ...


class NamespaceLifecycle:
    def __init__(self, reader: NamespaceReader, *, ttl: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self.reader = reader
        self.ttl = ttl
        self.clock = clock
        self._seen: dict[str, float] = {}  # namespace -> until when it is taken to exist
        self.lookups = 0

    async def admit_create(self, namespace: str) -> None:
        """Nothing when ``namespace`` exists; kube's 404 NotFound for the namespace when it does not."""
        now = self.clock()
        if self._seen.get(namespace, 0.0) > now:
            return
        self.lookups += 1
        if not await self.reader.namespace_exists(namespace):
            self._seen.pop(namespace, None)
            raise not_found("namespaces", "", namespace)
        if len(self._seen) > 4096:
            self._seen = {name: until for name, until in self._seen.items() if until > now}
        self._seen[namespace] = now + self.ttl


__all__ = ["NamespaceLifecycle", "NamespaceReader"]
