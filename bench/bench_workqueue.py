"""Throughput and memory of pyop.workqueue.WorkQueue, with asyncio.Queue in the same run as the floor.

Run: python bench/bench_workqueue.py [--items N] [--repeat R] [--memory-items M]

For add -> get -> done cycles over distinct (namespace, name) items it prints items per second and
microseconds per item with 1 and with 8 worker tasks, next to asyncio.Queue doing put_nowait -> get (no
task_done: the least an asyncio hand-off costs), and the ratio of time per item. Two shapes of load:

* prefilled  - every item is added, then the workers drain the queue: the cost of the queue operations;
* concurrent - a producer adds batches of 100 items and yields to the loop between batches, and every
               worker yields once between get and done (where a reconcile would await I/O), so the workers
               interleave, wait for items, and several items are in processing at once.

Then the memory taken by 1,000,000 distinct queued items, measured with tracemalloc.
WorkQueue and asyncio.Queue runs alternate and the best of --repeat runs is kept for each, to damp noise from
other processes on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the pyop package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyop.workqueue import ShutDown, WorkQueue  # noqa: E402

Item = tuple[str, str]
BATCH = 100


def make_items(count: int) -> list[Item]:
    return [("default", f"object-{index}") for index in range(count)]


async def workqueue_run(items: list[Item], workers: int, concurrent: bool) -> float:
    queue: WorkQueue[Item] = WorkQueue()
    processed = 0

    async def worker() -> None:
        nonlocal processed
        while True:
            try:
                item = await queue.get()
            except ShutDown:
                return
            if concurrent:
                await asyncio.sleep(0)
            processed += 1
            queue.done(item)

    started = time.perf_counter()
    if concurrent:
        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
        for start in range(0, len(items), BATCH):
            for item in items[start : start + BATCH]:
                queue.add(item)
            await asyncio.sleep(0)
    else:
        for item in items:
            queue.add(item)
        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    queue.shut_down()  # Workers still drain what is queued, then get ShutDown.
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    assert processed == len(items), (processed, len(items))
    return elapsed


async def asyncio_queue_run(items: list[Item], workers: int, concurrent: bool) -> float:
    queue: asyncio.Queue[Item | None] = asyncio.Queue()
    processed = 0

    async def worker() -> None:
        nonlocal processed
        while True:
            item = await queue.get()
            if item is None:
                return
            if concurrent:
                await asyncio.sleep(0)
            processed += 1

    started = time.perf_counter()
    if concurrent:
        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
        for start in range(0, len(items), BATCH):
            for item in items[start : start + BATCH]:
                queue.put_nowait(item)
            await asyncio.sleep(0)
    else:
        for item in items:
            queue.put_nowait(item)
        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    for _ in range(workers):
        queue.put_nowait(None)  # One stop marker per worker, after the items.
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    assert processed == len(items), (processed, len(items))
    return elapsed


Run = Callable[[list[Item], int, bool], Coroutine[Any, Any, float]]


def best_times(repeat: int, runs: list[Run], items: list[Item], workers: int, concurrent: bool) -> list[float]:
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for index, run in enumerate(runs):
            gc.collect()
            best[index] = min(best[index], asyncio.run(run(items, workers, concurrent)))
    return best


def throughput(items: list[Item], repeat: int) -> None:
    count = len(items)
    python = sys.version.split()[0]
    print(f"add/get/done throughput over {count:,} distinct items (best of {repeat}, Python {python})")
    header = f"{'load':<10} {'workers':>7}  {'queue':<13} {'items/s':>11} {'us/item':>8} {'time/floor':>11}"
    print(header)
    print("-" * len(header))
    for concurrent in (False, True):
        load = "concurrent" if concurrent else "prefilled"
        for workers in (1, 8):
            ours, floor = best_times(repeat, [workqueue_run, asyncio_queue_run], items, workers, concurrent)
            for name, elapsed in (("WorkQueue", ours), ("asyncio.Queue", floor)):
                ratio = elapsed / floor
                print(
                    f"{load:<10} {workers:>7}  {name:<13} {count / elapsed:>11,.0f} "
                    f"{elapsed / count * 1e6:>8.2f} {ratio:>10.2f}x"
                )


def memory(count: int) -> None:
    items = make_items(count)
    gc.collect()
    tracemalloc.start()
    queue: WorkQueue[Item] = WorkQueue()
    for item in items:
        queue.add(item)
    queue_bytes, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(queue) == count
    tracemalloc.start()
    items_again = make_items(count)
    item_bytes, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del items_again
    print(f"memory for {count:,} queued distinct items (tracemalloc)")
    rows = (("WorkQueue structures (deque + set)", queue_bytes), ("the items (str tuples)", item_bytes))
    for label, size in rows:
        print(f"  {label:<36} {size / 2**20:7.1f} MiB ({size / count:6.1f} B/item)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory-items", type=int, default=1_000_000)
    args = parser.parse_args()
    throughput(make_items(args.items), args.repeat)
    print()
    memory(args.memory_items)


if __name__ == "__main__":
    main()
