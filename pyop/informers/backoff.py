"""Jittered exponential backoff for reconnects: bounded, so an informer is in step soon after the server is back.

A reflector that fails (API down, 500s, a stalled stream) must neither hammer the server nor give up; the
jitter spreads the reconnects of many informers (and many operator replicas) so they do not arrive in
lockstep. The bound is what makes recovery fast: with client-go's `ExponentialBackoffManager` defaults
(800 ms doubling to 30 s, reset only after 2 min without a failure) an informer whose earlier outage had
grown the delay waited up to a minute after the API server was back (`bench/bench_recovery.py`: a 2 s restart
after a 10 s outage took 17-21 s to recover). Here the delay never exceeds `cap * (1 + jitter)` (1 s by
default), and the reflector resets the backoff after every productive watch, so a server that answers again
is met within a second: at most about two requests per second per reflector while it is away. A server that
wants fewer says so with 429 or Retry-After, which the transport honours before the reflector sees a failure.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable


class Backoff:
    """Delays `initial * factor**n`, capped at `cap`, each stretched by up to `jitter` (1.0 = up to double).

    `reset()` starts again from `initial` (the reflector calls it after a productive watch); so does the next
    failure after `reset_after` seconds without one. Defaults: 200 ms doubling to 500 ms, jitter 1.0: delays of
    0.2-0.4, 0.4-0.8, then 0.5-1.0 s.
    """

    def __init__(
        self,
        initial: float = 0.2,
        cap: float = 0.5,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        *,
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self.reset_after = reset_after
        self._rng = rng
        self._clock = clock
        self._current = 0.0
        self._last_failure: float | None = None

    def next(self) -> float:
        """The delay before the next attempt, after one more failure."""
        now = self._clock()
        if self._last_failure is not None and now - self._last_failure > self.reset_after:
            self._current = 0.0
        self._last_failure = now
        self._current = self.initial if self._current == 0.0 else min(self._current * self.factor, self.cap)
        return self._current * (1.0 + self.jitter * self._rng())

    def reset(self) -> None:
        self._current = 0.0
        self._last_failure = None
