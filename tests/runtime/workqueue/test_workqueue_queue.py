"""WorkQueue semantics, one behaviour per test (client-go util/workqueue/queue.go)."""

from __future__ import annotations

import asyncio

import pytest
from workqueue_helpers import settle

from pyop.workqueue import ShutDown, WorkQueue

Request = tuple[str, str]


async def test_get_returns_added_item_and_len_counts_queued_items() -> None:
    queue: WorkQueue[Request] = WorkQueue()
    queue.add(("ns", "a"))
    queue.add(("ns", "b"))
    assert len(queue) == 2
    assert queue.len() == 2
    assert await queue.get() == ("ns", "a")
    assert len(queue) == 1


async def test_item_is_queued_at_most_once() -> None:
    queue: WorkQueue[str] = WorkQueue()
    for _ in range(3):
        queue.add("a")
    queue.add("b")
    queue.add("a")
    assert len(queue) == 2
    assert await queue.get() == "a"
    assert await queue.get() == "b"
    assert len(queue) == 0


async def test_items_come_out_first_in_first_out() -> None:
    queue: WorkQueue[int] = WorkQueue()
    for number in [5, 3, 9, 1, 7]:
        queue.add(number)
    assert [await queue.get() for _ in range(5)] == [5, 3, 9, 1, 7]


async def test_item_being_processed_is_not_handed_to_a_second_worker() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")  # Added again while the first worker still processes it.
    assert len(queue) == 0
    second_worker = asyncio.create_task(queue.get())
    await settle()
    assert not second_worker.done()
    queue.done("a")
    assert await asyncio.wait_for(second_worker, timeout=5) == "a"


async def test_item_added_while_processed_is_queued_again_once_on_done() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    queue.add("a")
    queue.add("a")
    queue.done("a")
    assert len(queue) == 1
    assert await queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


async def test_item_not_added_again_is_not_requeued_on_done() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    queue.done("a")
    assert len(queue) == 0


async def test_requeued_item_goes_behind_items_added_before_done() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    queue.add("a")
    queue.add("b")
    queue.done("a")
    assert [await queue.get(), await queue.get()] == ["b", "a"]


async def test_done_for_an_item_not_being_processed_does_nothing() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.done("a")  # Misuse: "a" was never handed out. Must not queue it twice.
    queue.done("never-added")
    assert len(queue) == 1
    assert await queue.get() == "a"
    assert len(queue) == 0


async def test_waiting_getter_receives_item_added_later() -> None:
    queue: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await settle()
    assert not getter.done()
    queue.add("a")
    assert await asyncio.wait_for(getter, timeout=5) == "a"


async def test_waiting_getters_are_served_in_arrival_order() -> None:
    queue: WorkQueue[int] = WorkQueue()
    getters = []
    for _ in range(3):
        getters.append(asyncio.create_task(queue.get()))
        await settle()
    for number in range(3):
        queue.add(number)
    assert await asyncio.wait_for(asyncio.gather(*getters), timeout=5) == [0, 1, 2]


async def test_add_after_shutdown_is_ignored() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.shut_down()
    queue.add("a")
    assert len(queue) == 0
    assert queue.shutting_down()
    with pytest.raises(ShutDown):
        await queue.get()


async def test_queued_items_are_still_handed_out_after_shutdown_then_shutdown_is_signalled() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    queue.shut_down()
    assert await queue.get() == "a"
    assert await queue.get() == "b"
    with pytest.raises(ShutDown):
        await queue.get()


async def test_waiting_getters_wake_on_shutdown() -> None:
    queue: WorkQueue[str] = WorkQueue()
    getters = [asyncio.create_task(queue.get()) for _ in range(5)]
    await settle()
    assert not any(getter.done() for getter in getters)
    queue.shut_down()
    results = await asyncio.wait_for(asyncio.gather(*getters, return_exceptions=True), timeout=5)
    assert all(isinstance(result, ShutDown) for result in results)


async def test_shutting_down_reports_state() -> None:
    queue: WorkQueue[str] = WorkQueue()
    assert not queue.shutting_down()
    queue.shut_down()
    assert queue.shutting_down()


async def test_item_readded_during_processing_is_processed_after_shutdown_when_done() -> None:
    # client-go: an item that was dirty before the shutdown still comes back once its processing ends.
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    queue.add("a")
    queue.shut_down()
    queue.done("a")
    assert await queue.get() == "a"


async def test_shut_down_with_drain_waits_until_items_handed_out_are_done() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    await queue.get()
    await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await settle()
    assert queue.shutting_down()
    assert not drain.done()
    queue.done("a")
    await settle()
    assert not drain.done()
    queue.done("b")
    await asyncio.wait_for(drain, timeout=5)


async def test_shut_down_with_drain_ends_when_processing_empties_even_if_the_item_is_requeued() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    queue.add("a")  # Re-added while processing: done() queues it again.
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await settle()
    queue.done("a")
    await asyncio.wait_for(drain, timeout=5)
    assert len(queue) == 1  # As in client-go, the drain waits for items handed out, not for queued ones.


async def test_shut_down_with_drain_returns_at_once_when_nothing_is_processed() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")  # Queued but never handed out: not waited for, as in client-go.
    await asyncio.wait_for(queue.shut_down_with_drain(), timeout=5)
    assert queue.shutting_down()


async def test_shut_down_ends_a_pending_drain() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await settle()
    assert not drain.done()
    queue.shut_down()
    await asyncio.wait_for(drain, timeout=5)


async def test_shut_down_with_drain_wakes_waiting_getters() -> None:
    queue: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await settle()
    await asyncio.wait_for(queue.shut_down_with_drain(), timeout=5)
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, timeout=5)


async def test_cancelled_getter_passes_its_wake_up_to_the_next_getter() -> None:
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await settle()
    queue.add("a")  # Wakes `first`...
    first.cancel()  # ...which is cancelled before it can take the item.
    assert await asyncio.wait_for(second, timeout=5) == "a"
    assert first.cancelled()


async def test_cancelled_waiting_getter_does_not_swallow_later_items() -> None:
    queue: WorkQueue[str] = WorkQueue()
    cancelled = asyncio.create_task(queue.get())
    await settle()
    cancelled.cancel()
    await settle()
    queue.add("a")
    assert await asyncio.wait_for(queue.get(), timeout=5) == "a"


async def test_items_need_only_be_hashable() -> None:
    class Key:
        """Hashable by identity, not orderable."""

    first, second = Key(), Key()
    queue: WorkQueue[Key] = WorkQueue()
    queue.add(first)
    queue.add(second)
    queue.add(first)
    assert [await queue.get(), await queue.get()] == [first, second]
