"""The rate-limiting queue: a delaying queue that asks a rate limiter how long a failed item waits.

A controller calls :meth:`RateLimitingQueue.add_rate_limited` when a reconcile fails (the item comes back
after a growing delay) and :meth:`RateLimitingQueue.forget` when it succeeds (its backoff starts over next
time).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from pyop.workqueue.clock import Clock
from pyop.workqueue.delaying import DelayingQueue
from pyop.workqueue.metrics import MetricsProvider
from pyop.workqueue.rate_limiters import RateLimiter, default_controller_rate_limiter

__all__ = ["RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`~pyop.workqueue.DelayingQueue` with per-item retry delays from ``rate_limiter``.

    Without a limiter it uses :func:`~pyop.workqueue.default_controller_rate_limiter` on the queue's clock, as
    controller-runtime does.
    """

    __slots__ = ("rate_limiter",)

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str = "",
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics_provider=metrics_provider)
        self.rate_limiter: RateLimiter[T] = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter(clock=self._clock)
        )

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter gives it (which records one more failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Clear the item's failure history in the limiter; it does not remove the item from the queue."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many times the item has been rate-limited since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)
