"""Many producers and many workers over thousands of items: the guarantees hold under interleaving.

Interleavings come from a seeded random number of yields to the loop, so every run takes the same path.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from pyop.workqueue import ShutDown, WorkQueue

TIMEOUT = 60  # Failure guard only; the tests take well under a second.


async def yield_randomly(rng: random.Random, most: int = 3) -> None:
    for _ in range(rng.randint(0, most)):
        await asyncio.sleep(0)


async def test_many_producers_and_workers_process_every_item_one_worker_at_a_time() -> None:
    rng = random.Random(1234)
    item_count, producer_count, worker_count = 3000, 8, 16
    queue: WorkQueue[tuple[str, str]] = WorkQueue()
    items = [("default", f"object-{index}") for index in range(item_count)]
    readd_during_processing = set(items[::5])

    adds: Counter[tuple[str, str]] = Counter()
    processed: Counter[tuple[str, str]] = Counter()
    in_flight: set[tuple[str, str]] = set()
    overlaps: list[tuple[str, str]] = []
    readded_while_processing: set[tuple[str, str]] = set()
    all_seen = asyncio.Event()

    async def producer(share: list[tuple[str, str]]) -> None:
        for item in share:
            for _ in range(2):  # Duplicate adds must collapse.
                queue.add(item)
                adds[item] += 1
                await yield_randomly(rng)

    async def worker() -> None:
        while True:
            try:
                item = await queue.get()
            except ShutDown:
                return
            if item in in_flight:
                overlaps.append(item)
            in_flight.add(item)
            processed[item] += 1
            await yield_randomly(rng)
            if item in readd_during_processing and processed[item] == 1:
                queue.add(item)
                adds[item] += 1
                readded_while_processing.add(item)
            await yield_randomly(rng)
            in_flight.discard(item)
            queue.done(item)
            if len(processed) == item_count and all(processed[i] >= 2 for i in readd_during_processing):
                all_seen.set()

    workers = [asyncio.create_task(worker()) for _ in range(worker_count)]
    producers = [asyncio.create_task(producer(items[p::producer_count])) for p in range(producer_count)]
    await asyncio.wait_for(asyncio.gather(*producers), timeout=TIMEOUT)
    await asyncio.wait_for(all_seen.wait(), timeout=TIMEOUT)
    await asyncio.wait_for(queue.shut_down_with_drain(), timeout=TIMEOUT)
    await asyncio.wait_for(asyncio.gather(*workers), timeout=TIMEOUT)

    assert overlaps == []
    assert set(processed) == set(items)
    assert readded_while_processing == readd_during_processing
    assert all(processed[item] >= 2 for item in readd_during_processing)
    # Each processing consumed at least one add made before it: duplicates collapsed instead of multiplying.
    assert all(processed[item] <= adds[item] for item in items)
    assert sum(processed.values()) < sum(adds.values())


async def test_every_add_is_followed_by_a_processing_that_starts_after_it() -> None:
    """The level-triggered guarantee controllers rely on: the last change to an object is always seen.

    Few items and many adds maximise re-adds while an item is in processing.
    """
    rng = random.Random(99)
    keys = [f"key-{index}" for index in range(12)]
    queue: WorkQueue[str] = WorkQueue()
    clock = 0
    last_add: dict[str, int] = {}
    last_start: dict[str, int] = {}
    in_flight: set[str] = set()
    overlaps: list[str] = []

    def tick() -> int:
        nonlocal clock
        clock += 1
        return clock

    async def producer() -> None:
        for _ in range(600):
            key = rng.choice(keys)
            last_add[key] = tick()
            queue.add(key)
            await yield_randomly(rng)

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            if key in in_flight:
                overlaps.append(key)
            in_flight.add(key)
            last_start[key] = tick()
            await yield_randomly(rng, most=6)
            in_flight.discard(key)
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(8)]
    await asyncio.wait_for(asyncio.gather(*(producer() for _ in range(6))), timeout=TIMEOUT)

    async def idle() -> None:
        while len(queue) or in_flight:
            await asyncio.sleep(0)

    # Let the workers catch up: every key ends up neither queued nor being processed.
    await asyncio.wait_for(idle(), timeout=TIMEOUT)
    queue.shut_down()
    await asyncio.wait_for(asyncio.gather(*workers), timeout=TIMEOUT)

    assert overlaps == []
    assert set(last_add) == set(keys)
    assert all(last_start[key] > last_add[key] for key in keys)
