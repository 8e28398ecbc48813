"""Rate limiters: how long an item waits before it is retried (client-go ``default_rate_limiters.go``).

Each limiter answers three questions about an item: ``when`` (how long to wait before the next try; asking
counts as a failure), ``forget`` (the item succeeded: start its history afresh) and ``num_requeues`` (how many
failures are on record). Delays are float seconds.

The limiters are not thread-safe; like the queues they belong to one asyncio loop.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from pyop.workqueue.clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
]

T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)
T = TypeVar("T", bound=Hashable)


class RateLimiter(Protocol[T_contra]):
    """The contract every limiter (and any user-written one) fulfils.

    Contravariant in the item type: a limiter that accepts any hashable item serves a queue of requests.
    """

    def when(self, item: T_contra) -> float:
        """Record a failure of ``item`` and return the seconds to wait before retrying it."""
        ...

    def forget(self, item: T_contra) -> None:
        """Drop what is known about ``item`` (it succeeded, or was given up on)."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of ``item`` are on record."""
        ...


class BucketRateLimiter:
    """A token bucket shared by all items, as golang.org/x/time/rate's ``Limiter.Reserve().Delay()``.

    The bucket holds at most ``burst`` tokens and refills at ``qps`` tokens per second. Every ``when`` takes a
    token even if none is there: the bucket goes into debt and the caller waits until its token would have
    arrived, so calls in a burst get delays 0, 0, ..., 1/qps, 2/qps, ... It keeps no per-item state:
    ``forget`` does nothing and ``num_requeues`` is always 0.
    """

    __slots__ = ("_qps", "_burst", "_clock", "_tokens", "_last")

    def __init__(self, qps: float, burst: int, *, clock: Clock | None = None) -> None:
        # Go's Limiter accepts burst 0 or qps 0 and then answers "wait forever"; in a controller that is a
        # misconfiguration, so we refuse it up front.
        if not qps > 0:
            raise ValueError(f"qps must be positive, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self._qps = float(qps)
        self._burst = burst
        self._clock: Clock = clock if clock is not None else RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()

    @property
    def qps(self) -> float:
        return self._qps

    @property
    def burst(self) -> int:
        return self._burst

    def when(self, item: Hashable) -> float:
        if self._qps == math.inf:
            return 0.0
        now = self._clock.now()
        elapsed = max(0.0, now - self._last)
        tokens = min(float(self._burst), self._tokens + elapsed * self._qps) - 1.0
        self._last = now
        self._tokens = tokens
        return -tokens / self._qps if tokens < 0 else 0.0

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: ``base_delay * 2**failures``, capped at ``max_delay``.

    The n-th consecutive ``when`` for an item (counting from 0) returns ``base_delay * 2**n``; with
    client-go's controller defaults that is 5 ms, 10 ms, 20 ms, ... until 1000 s. Overflow-safe: a failure
    count too large for a float exponent yields ``max_delay`` instead of raising.
    """

    __slots__ = ("_base_delay", "_max_delay", "_failures")

    def __init__(self, base_delay: float, max_delay: float) -> None:
        if base_delay < 0 or max_delay < 0:
            raise ValueError("delays must not be negative")
        self._base_delay = float(base_delay)
        self._max_delay = float(max_delay)
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        failures = self._failures
        exponent = failures.get(item, 0)
        failures[item] = exponent + 1
        try:
            backoff = math.ldexp(self._base_delay, exponent)
        except OverflowError:
            return self._max_delay
        return min(backoff, self._max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """Per-item: ``fast_delay`` for the first ``max_fast_attempts`` failures, ``slow_delay`` after that.

    Suits polling something that usually settles quickly but may take long.
    """

    __slots__ = ("_fast_delay", "_slow_delay", "_max_fast_attempts", "_failures")

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self._fast_delay = float(fast_delay)
        self._slow_delay = float(slow_delay)
        self._max_fast_attempts = max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        attempts = self._failures.get(item, 0) + 1
        self._failures[item] = attempts
        return self._fast_delay if attempts <= self._max_fast_attempts else self._slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class MaxOfRateLimiter(Generic[T]):
    """The longest delay of several limiters; every limiter is asked (so each records the failure).

    client-go's default combines per-item backoff with an overall bucket: one failing item backs off on its
    own, while a storm of distinct items is still held to the bucket's rate.
    """

    __slots__ = ("_limiters",)

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: T) -> float:
        return max([limiter.when(item) for limiter in self._limiters])

    def forget(self, item: T) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


class WithMaxWaitRateLimiter(Generic[T]):
    """Another limiter's delay, but never more than ``max_delay``."""

    __slots__ = ("_limiter", "_max_delay")

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        self._limiter = limiter
        self._max_delay = float(max_delay)

    def when(self, item: T) -> float:
        return min(self._limiter.when(item), self._max_delay)

    def forget(self, item: T) -> None:
        self._limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self._limiter.num_requeues(item)


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[Hashable]:
    """client-go's ``DefaultControllerRateLimiter``: max of 5 ms..1000 s item backoff, 10 qps/100 burst."""
    return MaxOfRateLimiter[Hashable](
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=10, burst=100, clock=clock),
    )
