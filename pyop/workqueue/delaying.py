"""The delaying queue: a work queue whose items can be added after a delay (client-go ``DelayingInterface``).

Waiting items sit in a min-heap by ready time. Instead of client-go's waiting goroutine (which also wakes
every 10 s as insurance), one clock timer is armed for the earliest ready time and re-armed only when that
changes, so an idle queue costs nothing and nothing polls.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable
from datetime import timedelta
from typing import TypeVar

from pyop.workqueue.clock import Clock, Timer
from pyop.workqueue.metrics import MetricsProvider
from pyop.workqueue.queue import WorkQueue

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(WorkQueue[T]):
    """A :class:`WorkQueue` with :meth:`add_after`.

    With the default real clock, :meth:`add_after` must be called while the event loop runs (it arms a timer).
    """

    __slots__ = ("_ready_at", "_waiting", "_sequence", "_timer", "_timer_at")

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics_provider=metrics_provider)
        # The ready time of each waiting item; heap entries that disagree with it are stale and skipped.
        self._ready_at: dict[T, float] = {}
        # (ready time, insertion number, item): the number keeps equal times in FIFO order and spares
        # comparing items, which need only be hashable.
        self._waiting: list[tuple[float, int, T]] = []
        self._sequence = itertools.count()
        self._timer: Timer | None = None
        self._timer_at = math.inf

    def add_after(self, item: T, delay: float | timedelta) -> None:
        """Add ``item`` once ``delay`` (seconds or a timedelta) has passed; at once if it is not positive.

        If the item already waits, the earlier of the two ready times is kept. Counts as a retry in metrics.
        Ignored while the queue is shutting down.
        """
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retry()
        seconds = delay.total_seconds() if isinstance(delay, timedelta) else delay
        if seconds <= 0:
            self.add(item)
            return
        ready_at = self._clock.now() + seconds
        known = self._ready_at.get(item)
        if known is not None and known <= ready_at:
            return
        self._ready_at[item] = ready_at
        heapq.heappush(self._waiting, (ready_at, next(self._sequence), item))
        if ready_at < self._timer_at:
            self._arm_timer(ready_at)

    def _arm_timer(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._clock.call_at(when, self._add_ready_items)
        self._timer_at = when

    def _add_ready_items(self) -> None:
        self._timer = None
        self._timer_at = math.inf
        if self._shutting_down:
            return
        now = self._clock.now()
        waiting = self._waiting
        ready_at_of = self._ready_at
        while waiting:
            ready_at, _, item = waiting[0]
            if ready_at_of.get(item) != ready_at:
                heapq.heappop(waiting)  # Superseded by an earlier ready time, or already added.
                continue
            if ready_at > now:
                break
            heapq.heappop(waiting)
            del ready_at_of[item]
            self.add(item)
        if waiting:
            self._arm_timer(waiting[0][0])

    def _begin_shutdown(self) -> None:
        super()._begin_shutdown()
        # Stop the waiting "loop": adds are ignored from now on, so waiting items could never land.
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = math.inf
        self._waiting.clear()
        self._ready_at.clear()
