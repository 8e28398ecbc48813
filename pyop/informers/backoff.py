"""Jittered exponential backoff for reconnects, with client-go reflector's defaults.

A reflector that fails (API down, 500s, a stalled stream) must neither hammer the server nor give up; the
jitter spreads the reconnects of many informers (and many operator replicas) so they do not arrive in
lockstep.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable


class Backoff:
    """Delays `initial * factor**n`, capped at `cap`, each stretched by up to `jitter` (1.0 = up to double).

    After `reset_after` seconds without a failure the next delay starts from `initial` again (client-go's
    `ExponentialBackoffManager`: 800 ms, x2, cap 30 s, reset after 2 min, jitter 1.0).
    """

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
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
