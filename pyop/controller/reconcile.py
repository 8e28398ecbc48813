"""What a reconciler receives and returns: a request naming one object, and a result saying when to look again.

A reconciler is level-triggered: the request carries only namespace and name, never the event that caused it,
so the reconciler reads the current state (from the cache) and moves the world towards it. Many events for one
object collapse into one request in the work queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["Reconciler", "ReconcileFunc", "Request", "Result", "TerminalError"]


class Request(NamedTuple):
    """The object to reconcile: `namespace` (None for cluster-scoped kinds) and `name`.

    A tuple, so it hashes fast and is a work-queue item as is; `str(request)` is `namespace/name`.
    """

    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Request:
        """The request for an object as the API server sends it (a dict with `metadata`)."""
        metadata = obj.get("metadata") or {}
        return cls(metadata.get("namespace") or None, str(metadata.get("name") or ""))


@dataclass(frozen=True, slots=True)
class Result:
    """What to do after a successful reconcile.

    `requeue_after` (seconds or a timedelta) looks again after that delay, whatever happens meanwhile; it
    wins over `requeue`. `requeue=True` looks again after the rate limiter's backoff for the object. The default
    `Result()` waits for the next change. To retry because something failed, raise instead.
    """

    requeue: bool = False
    requeue_after: float | timedelta | None = None

    @property
    def requeue_after_seconds(self) -> float:
        after = self.requeue_after
        if after is None:
            return 0.0
        return after.total_seconds() if isinstance(after, timedelta) else float(after)

    @property
    def is_zero(self) -> bool:
        return not self.requeue and self.requeue_after_seconds <= 0


class TerminalError(Exception):
    """Raise (or raise from) this when retrying cannot help: the error is logged and counted, not requeued.

    controller-runtime's `reconcile.TerminalError`. The object is reconciled again at its next change.
    """


@runtime_checkable
class Reconciler(Protocol):
    """Anything with `async def reconcile(request) -> Result | None` (None means `Result()`)."""

    async def reconcile(self, request: Request) -> Result | None: ...


ReconcileFunc = Callable[[Request], Awaitable[Result | None]]
