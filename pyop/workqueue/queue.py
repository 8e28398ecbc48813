"""The work queue: client-go's ``workqueue.Typed`` for asyncio.

Guarantees (the reasons controllers use it instead of a plain FIFO):

* An item is queued at most once: adding an item that waits in the queue does nothing (the *dirty* set).
* An item is handed to one worker at a time: while it is processed (between ``get`` and ``done``) it is not
  handed out again; if it is added meanwhile, it is queued again when ``done`` is called.
* Order is first in, first out.
* After ``shut_down`` adds are ignored; workers still receive what was queued, then the shutdown signal.

All methods must be called from the thread running the event loop; nothing here locks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from pyop.workqueue.clock import Clock, RealClock, Timer
from pyop.workqueue.metrics import MetricsProvider, get_provider, new_queue_metrics

__all__ = ["ShutDown", "UNFINISHED_WORK_UPDATE_PERIOD", "WorkQueue"]

T = TypeVar("T", bound=Hashable)

UNFINISHED_WORK_UPDATE_PERIOD = 0.5
"""Seconds between refreshes of the unfinished-work gauges (client-go: 500 ms)."""


class ShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down and empty: the worker should return.

    An exception rather than client-go's ``(item, shutdown)`` pair because a pair would force every worker to
    handle an item of type ``T | None``; like ``asyncio.QueueShutDown`` (Python 3.13) it ends a worker loop
    cleanly and cannot be ignored by mistake.
    """


class WorkQueue(Generic[T]):
    """A FIFO of hashable items with client-go's dedup, one-worker-per-item and shutdown semantics.

    ``name`` labels the queue's metrics; an unnamed queue, or one with no metrics provider (neither passed nor
    set with :func:`pyop.workqueue.set_provider`), records none. ``clock`` drives metric timings (and delays
    in subclasses).
    """

    __slots__ = (
        "name",
        "_clock",
        "_queue",
        "_queued",
        "_processing",
        "_readded",
        "_getters",
        "_shutting_down",
        "_drain",
        "_drain_waiters",
        "_metrics",
        "_unfinished_work_timer",
    )

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        self.name = name
        self._clock: Clock = clock if clock is not None else RealClock()
        # client-go keeps one "dirty" set (queued, or added again while processing). We split it in two: the
        # items in _queue (_queued, the same items, for membership) and the processing items added again
        # (_readded, usually tiny). The semantics are the same, but each operation hashes the item fewer times
        # and done() touches only the small sets.
        self._queue: deque[T] = deque()
        self._queued: set[T] = set()
        self._processing: set[T] = set()
        self._readded: set[T] = set()
        # Futures of getters that found the queue empty, oldest first.
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._drain = False
        self._drain_waiters: list[asyncio.Future[None]] = []
        provider = metrics_provider if metrics_provider is not None else get_provider()
        self._metrics = new_queue_metrics(provider, name, self._clock)
        self._unfinished_work_timer: Timer | None = None

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing; no-op if it already waits or the queue is shutting down."""
        if self._shutting_down:
            return
        processing = self._processing
        if processing and item in processing:
            readded = self._readded
            if item not in readded:
                readded.add(item)  # done() will queue it.
                if self._metrics is not None:
                    self._metrics.add(item)
            return
        queued = self._queued
        if item in queued:
            return
        queued.add(item)
        self._queue.append(item)
        if self._metrics is not None:
            self._metrics.add(item)
        if self._getters:
            self._wake_one_getter()

    async def get(self) -> T:
        """Wait for the next item and mark it as being processed; call :meth:`done` with it when finished.

        Raises :class:`ShutDown` once the queue is shut down and no item is left to hand out: the worker's cue
        to return. Items queued before the shutdown are still handed out first.
        """
        queue = self._queue
        while not queue:
            if self._shutting_down:
                raise ShutDown
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except BaseException:
                # Cancelled: if we were woken for an item, pass the wake-up on so the item is not stranded.
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._getters.remove(waiter)
                if queue and not waiter.cancelled():
                    self._wake_one_getter()
                raise
        item = queue.popleft()
        self._queued.remove(item)
        self._processing.add(item)
        if self._metrics is not None:
            self._metrics.get(item)
            if self._unfinished_work_timer is None and not self._shutting_down:
                self._schedule_unfinished_work_update()
        return item

    def done(self, item: T) -> None:
        """Mark ``item`` as processed; if it was added again meanwhile, queue it again.

        Calling it for an item that is not being processed does nothing (client-go would queue a dirty item a
        second time; we keep the at-most-once guarantee instead).
        """
        processing = self._processing
        try:
            processing.remove(item)
        except KeyError:
            return
        if self._metrics is not None:
            self._metrics.done(item)
        readded = self._readded
        if readded and item in readded:
            readded.remove(item)
            self._queued.add(item)
            self._queue.append(item)
            if self._getters:
                self._wake_one_getter()
        if not processing and self._drain_waiters:
            self._release_drain_waiters()

    def __len__(self) -> int:
        return len(self._queue)

    def len(self) -> int:
        """Items waiting to be handed out (client-go ``Len``); informational, gate nothing on it."""
        return len(self._queue)

    def shutting_down(self) -> bool:
        """Whether :meth:`shut_down` or :meth:`shut_down_with_drain` has been called."""
        return self._shutting_down

    def shut_down(self) -> None:
        """Ignore further adds; wake waiting workers, who drain the queue and then get :class:`ShutDown`.

        Also releases a pending :meth:`shut_down_with_drain` at once, as in client-go.
        """
        self._drain = False
        self._begin_shutdown()
        self._release_drain_waiters()

    async def shut_down_with_drain(self) -> None:
        """Shut down like :meth:`shut_down`, then wait until every item handed out so far is done.

        Workers must keep calling :meth:`done`, or this waits forever; calling :meth:`shut_down` meanwhile
        ends the wait.
        """
        self._drain = True
        self._begin_shutdown()
        loop = asyncio.get_running_loop()
        while self._processing and self._drain:
            waiter: asyncio.Future[None] = loop.create_future()
            self._drain_waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._drain_waiters:
                    self._drain_waiters.remove(waiter)

    def _begin_shutdown(self) -> None:
        self._shutting_down = True
        getters = self._getters
        while getters:
            waiter = getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if self._unfinished_work_timer is not None:
            self._unfinished_work_timer.cancel()
            self._unfinished_work_timer = None

    def _wake_one_getter(self) -> None:
        getters = self._getters
        while getters:
            waiter = getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _release_drain_waiters(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _schedule_unfinished_work_update(self) -> None:
        # Armed at the first get rather than in __init__: a queue may be built before the loop runs, and
        # nothing is unfinished before something has been handed out.
        self._unfinished_work_timer = self._clock.call_at(
            self._clock.now() + UNFINISHED_WORK_UPDATE_PERIOD, self._update_unfinished_work
        )

    def _update_unfinished_work(self) -> None:
        self._unfinished_work_timer = None
        if self._shutting_down or self._metrics is None:
            return
        self._metrics.update_unfinished_work()
        self._schedule_unfinished_work_update()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, queued={len(self._queue)}, "
            f"processing={len(self._processing)}, shutting_down={self._shutting_down})"
        )
