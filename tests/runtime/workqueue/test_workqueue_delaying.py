"""DelayingQueue.add_after with a fake clock (client-go util/workqueue/delaying_queue.go)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from pyop.workqueue import DelayingQueue, FakeClock, RealClock, ShutDown


async def test_item_lands_when_its_delay_has_passed(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 10)
    assert len(queue) == 0
    clock.step(9.999)
    assert len(queue) == 0
    clock.step(0.001)
    assert len(queue) == 1
    assert await queue.get() == "a"


async def test_non_positive_delay_adds_at_once_without_a_timer(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("zero", 0)
    queue.add_after("negative", -5)
    assert len(queue) == 2
    assert not clock.has_waiters()


async def test_delay_may_be_a_timedelta(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", timedelta(milliseconds=1500))
    clock.step(1.4)
    assert len(queue) == 0
    clock.step(0.1)
    assert len(queue) == 1


async def test_item_waiting_twice_keeps_the_earlier_ready_time(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("later-then-sooner", 10)
    queue.add_after("later-then-sooner", 5)
    queue.add_after("sooner-then-later", 5)
    queue.add_after("sooner-then-later", 10)
    clock.step(5)
    assert len(queue) == 2
    for _ in range(2):
        queue.done(await queue.get())
    clock.step(5)  # Neither item is added a second time at t+10.
    assert len(queue) == 0
    assert not clock.has_waiters()


async def test_items_land_in_ready_time_order_and_fifo_for_equal_times(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("c", 3)
    queue.add_after("a", 1)
    queue.add_after("b1", 2)
    queue.add_after("b2", 2)
    clock.step(10)
    assert [await queue.get() for _ in range(4)] == ["a", "b1", "b2", "c"]


async def test_only_one_timer_is_armed_for_the_earliest_item(clock: FakeClock) -> None:
    # No polling: however many items wait, the queue sleeps until the first is due.
    queue: DelayingQueue[int] = DelayingQueue(clock=clock)
    for delay in range(100, 0, -1):
        queue.add_after(delay, delay)
    assert clock.pending_timers() == 1
    assert clock.next_timer_at() == clock.now() + 1
    clock.step(1)
    assert len(queue) == 1
    assert clock.pending_timers() == 1
    assert clock.next_timer_at() == clock.now() + 1


async def test_later_item_does_not_rearm_the_timer(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 5)
    queue.add_after("b", 50)
    assert clock.pending_timers() == 1
    assert clock.next_timer_at() == clock.now() + 5


async def test_timer_is_idle_once_nothing_waits(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 1)
    clock.step(1)
    assert len(queue) == 1
    assert not clock.has_waiters()


async def test_shutdown_stops_the_waiting_loop(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 1)
    queue.add_after("b", 2)
    queue.shut_down()
    assert not clock.has_waiters()
    clock.step(10)
    assert len(queue) == 0
    with pytest.raises(ShutDown):
        await queue.get()


async def test_shutdown_with_drain_also_stops_the_waiting_loop(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 1)
    await queue.shut_down_with_drain()
    assert not clock.has_waiters()


async def test_add_after_is_ignored_while_shutting_down(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.shut_down()
    queue.add_after("a", 1)
    queue.add_after("b", 0)
    assert not clock.has_waiters()
    clock.step(2)
    assert len(queue) == 0


async def test_waiting_item_is_added_when_due_even_if_it_was_also_added_directly(clock: FakeClock) -> None:
    # client-go keeps the waiting entry: a direct add does not cancel a scheduled retry.
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 10)
    queue.add("a")
    queue.done(await queue.get())
    clock.step(10)
    assert len(queue) == 1


async def test_due_item_already_queued_is_not_queued_twice(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add("a")
    queue.add_after("a", 1)
    clock.step(1)
    assert len(queue) == 1


async def test_due_item_being_processed_is_queued_again_on_done(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add("a")
    await queue.get()
    queue.add_after("a", 1)
    clock.step(1)
    assert len(queue) == 0
    queue.done("a")
    assert len(queue) == 1


async def test_waiting_getter_wakes_when_a_delayed_item_is_due(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    getter = asyncio.create_task(queue.get())
    queue.add_after("a", 3)
    await asyncio.sleep(0)
    assert not getter.done()
    clock.step(3)
    assert await asyncio.wait_for(getter, timeout=5) == "a"


async def test_items_that_cannot_be_ordered_wait_side_by_side(clock: FakeClock) -> None:
    class Key:
        """Hashable by identity; comparing two would raise TypeError."""

    first, second = Key(), Key()
    queue: DelayingQueue[Key] = DelayingQueue(clock=clock)
    queue.add_after(first, 1)
    queue.add_after(second, 1)
    clock.step(1)
    assert [await queue.get(), await queue.get()] == [first, second]


async def test_real_clock_adds_the_item_after_a_short_delay() -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=RealClock())
    queue.add_after("a", 0.01)
    assert len(queue) == 0
    assert await asyncio.wait_for(queue.get(), timeout=5) == "a"
    queue.shut_down()
