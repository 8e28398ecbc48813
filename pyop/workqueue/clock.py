"""Time sources for the work queues and rate limiters.

The queues never call ``time.monotonic`` or ``loop.call_later`` directly: they ask a :class:`Clock`.
Production code uses :class:`RealClock`; tests use :class:`FakeClock` and move time with
:meth:`FakeClock.step`, which fires every timer that became due, so a delayed item lands in the queue at once
and no test has to sleep (as client-go tests do with ``k8s.io/utils/clock/testing``).

Times are plain float seconds on a monotonic scale; only differences between them mean anything.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "FakeClock", "RealClock", "Timer"]


class Timer(Protocol):
    """A scheduled callback that can be called off (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the queues need from time: reading it, and being called back when a moment comes.

    A callback, not a sleeping task, because the delaying queue only has to react when the earliest waiting
    item becomes ready: one armed timer replaces client-go's waiting goroutine and its 10 s heartbeat.
    """

    def now(self) -> float:
        """Current time in seconds on a monotonic scale."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` once ``now()`` has reached ``when`` (at once if it already has)."""
        ...


class RealClock:
    """Monotonic wall time, with timers on the running asyncio loop.

    ``call_at`` needs a running event loop (it schedules on it); ``now`` does not.
    """

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        # A relative delay measured on our own time source keeps us right even if the loop uses another clock.
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, when - time.monotonic()), callback)


class _FakeTimer:
    __slots__ = ("when", "callback", "cancelled")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that only moves when told to; timers fire synchronously inside :meth:`step` / :meth:`set_time`.

    Firing inside ``step`` (rather than on the event loop) means that after ``clock.step(5)`` returns, every
    item whose delay ran out is already queued: tests assert on ``len(queue)`` without yielding to the loop.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._sequence = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        timer = _FakeTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._sequence), timer))
        return timer

    def step(self, seconds: float) -> None:
        """Advance time by ``seconds`` and fire the timers that became due, earliest first."""
        self.set_time(self._now + seconds)

    def set_time(self, moment: float) -> None:
        """Jump to ``moment`` (never backwards: time is monotonic) and fire the timers that became due."""
        if moment < self._now:
            raise ValueError(f"FakeClock is monotonic: cannot go back from {self._now} to {moment}")
        self._now = moment
        timers = self._timers
        # A callback may arm a new timer; one due at or before `moment` fires in this same call.
        while timers and timers[0][0] <= moment:
            _, _, timer = heapq.heappop(timers)
            if not timer.cancelled:
                timer.cancelled = True
                timer.callback()

    def has_waiters(self) -> bool:
        """Whether any timer is armed (k8s FakeClock's ``HasWaiters``): tells whether a loop stopped."""
        return self.pending_timers() > 0

    def pending_timers(self) -> int:
        """How many armed timers wait for a future moment."""
        self._timers = [entry for entry in self._timers if not entry[2].cancelled]
        heapq.heapify(self._timers)
        return len(self._timers)

    def next_timer_at(self) -> float | None:
        """When the earliest armed timer fires, or ``None`` if none is armed."""
        return self._timers[0][0] if self.pending_timers() else None
