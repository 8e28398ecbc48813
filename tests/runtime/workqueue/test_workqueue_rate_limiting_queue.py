"""RateLimitingQueue: add_rate_limited, forget, num_requeues (client-go rate_limiting_queue.go)."""

from __future__ import annotations

from pyop.workqueue import FakeClock, ItemExponentialFailureRateLimiter, RateLimitingQueue


async def test_add_rate_limited_waits_the_limiters_delay(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(1, 100), clock=clock)
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 1
    clock.step(0.5)
    assert len(queue) == 0
    clock.step(0.5)
    assert len(queue) == 1
    queue.done(await queue.get())

    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 2
    clock.step(1.5)
    assert len(queue) == 0
    clock.step(0.5)
    assert len(queue) == 1


async def test_forget_resets_the_backoff_but_keeps_the_item_queued(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(1, 100), clock=clock)
    for _ in range(3):
        queue.add_rate_limited("a")  # Waiting once: the earliest ready time (1 s) wins.
    assert queue.num_requeues("a") == 3
    clock.step(1)
    assert len(queue) == 1
    queue.forget("a")
    assert queue.num_requeues("a") == 0
    assert len(queue) == 1
    queue.done(await queue.get())
    queue.add_rate_limited("a")
    clock.step(1)
    assert len(queue) == 1


async def test_default_limiter_is_client_gos_controller_default_on_the_queue_clock(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    queue.add_rate_limited("a")
    clock.step(0.004)
    assert len(queue) == 0
    clock.step(0.001)
    assert len(queue) == 1
    queue.done(await queue.get())
    queue.add_rate_limited("a")
    clock.step(0.009)
    assert len(queue) == 0
    clock.step(0.001)
    assert len(queue) == 1


async def test_add_rate_limited_is_ignored_while_shutting_down(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    queue.shut_down()
    queue.add_rate_limited("a")
    clock.step(10)
    assert len(queue) == 0
    assert not clock.has_waiters()
