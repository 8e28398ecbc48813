"""Property-based tests: random operation sequences against a plain model of the queue's contract.

The model is the contract written as simply as possible (lists and sets, no futures). After every operation the
loop is allowed to settle, and the queue must agree with the model on its length, on what every getter
received, and on when getters are told to shut down.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from workqueue_helpers import settle

from pyop.workqueue import DelayingQueue, FakeClock, ShutDown, WorkQueue

SHUTDOWN = "<shutdown>"
ITEMS = st.integers(min_value=0, max_value=5)


@dataclass
class QueueModel:
    """The contract: a FIFO of distinct items, a processing set, re-adds remembered until done."""

    queue: list[int] = field(default_factory=list)
    processing: set[int] = field(default_factory=set)
    readded: set[int] = field(default_factory=set)
    shut: bool = False
    waiting: deque[int] = field(default_factory=deque)  # Getter ids, oldest first.
    results: dict[int, object] = field(default_factory=dict)

    def add(self, item: int) -> None:
        if self.shut:
            return
        if item in self.processing:
            self.readded.add(item)
        elif item not in self.queue:
            self.queue.append(item)
        self.serve()

    def get(self, getter: int) -> None:
        self.waiting.append(getter)
        self.serve()

    def done(self, item: int) -> None:
        self.processing.discard(item)
        if item in self.readded:
            self.readded.discard(item)
            self.queue.append(item)
        self.serve()

    def shut_down(self) -> None:
        self.shut = True
        self.serve()

    def serve(self) -> None:
        while self.waiting and self.queue:
            item = self.queue.pop(0)
            self.processing.add(item)
            self.results[self.waiting.popleft()] = item
        while self.shut and self.waiting and not self.queue:
            self.results[self.waiting.popleft()] = SHUTDOWN


operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), ITEMS),
        st.tuples(st.just("get"), st.just(0)),
        st.tuples(st.just("done"), st.integers(min_value=0, max_value=10)),
        st.tuples(st.just("shut_down"), st.just(0)),
    ),
    max_size=60,
)


async def run_against_model(steps: list[tuple[str, int]]) -> None:
    queue: WorkQueue[int] = WorkQueue()
    model = QueueModel()
    tasks: dict[int, asyncio.Task[int]] = {}

    async def getter() -> int:
        return await queue.get()

    for operation, argument in steps:
        if operation == "add":
            queue.add(argument)
            model.add(argument)
        elif operation == "get":
            getter_id = len(tasks)
            tasks[getter_id] = asyncio.create_task(getter())
            await settle()
            model.get(getter_id)
        elif operation == "done":
            # Pick one of the items being processed (by position), or an item that is not: done must ignore it.
            processing = sorted(model.processing)
            item = processing[argument % len(processing)] if processing and argument < 8 else 100 + argument
            queue.done(item)
            model.done(item)
        else:
            queue.shut_down()
            model.shut_down()
        await settle()

        assert len(queue) == len(model.queue)
        assert queue.shutting_down() == model.shut
        for getter_id, task in tasks.items():
            expected = model.results.get(getter_id)
            if expected is None:
                assert not task.done(), f"getter {getter_id} got {task.result()!r}, model says it waits"
            elif expected == SHUTDOWN:
                assert task.done() and isinstance(task.exception(), ShutDown)
            else:
                assert task.done() and task.result() == expected

    for task in tasks.values():
        task.cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_work_queue_matches_model(steps: list[tuple[str, int]]) -> None:
    asyncio.run(run_against_model(steps))


@dataclass
class DelayingModel:
    """Waiting items with ready times; an item waits once, at its earliest time; due items are added in order."""

    now: float = 0.0
    ready_at: dict[int, tuple[float, int]] = field(default_factory=dict)  # item -> (time, order)
    order: int = 0
    queue: list[int] = field(default_factory=list)
    processing: set[int] = field(default_factory=set)
    readded: set[int] = field(default_factory=set)

    def add(self, item: int) -> None:
        if item in self.processing:
            self.readded.add(item)
        elif item not in self.queue:
            self.queue.append(item)

    def add_after(self, item: int, delay: int) -> None:
        if delay <= 0:
            self.add(item)
            return
        when = self.now + delay
        if item not in self.ready_at or when < self.ready_at[item][0]:
            self.order += 1
            self.ready_at[item] = (when, self.order)

    def step(self, seconds: int) -> None:
        self.now += seconds
        due = sorted((entry, item) for item, entry in self.ready_at.items() if entry[0] <= self.now)
        for _, item in due:
            del self.ready_at[item]
            self.add(item)

    def get(self) -> int:
        item = self.queue.pop(0)
        self.processing.add(item)
        return item

    def done(self, item: int) -> None:
        self.processing.discard(item)
        if item in self.readded:
            self.readded.discard(item)
            self.queue.append(item)


delaying_operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), ITEMS, st.just(0)),
        st.tuples(st.just("add_after"), ITEMS, st.integers(min_value=-2, max_value=10)),
        st.tuples(st.just("step"), st.just(0), st.integers(min_value=0, max_value=6)),
        st.tuples(st.just("get"), st.just(0), st.just(0)),
        st.tuples(st.just("done"), st.integers(min_value=0, max_value=7), st.just(0)),
    ),
    max_size=60,
)


async def run_delaying_against_model(steps: list[tuple[str, int, int]]) -> None:
    clock = FakeClock(start=0.0)
    queue: DelayingQueue[int] = DelayingQueue(clock=clock)
    model = DelayingModel()
    for operation, item, number in steps:
        if operation == "add":
            queue.add(item)
            model.add(item)
        elif operation == "add_after":
            queue.add_after(item, number)
            model.add_after(item, number)
        elif operation == "step":
            clock.step(number)
            model.step(number)
        elif operation == "get":
            if not model.queue:
                continue  # An empty queue would block: the blocking behaviour has its own tests.
            assert await asyncio.wait_for(queue.get(), timeout=5) == model.get()
        elif model.processing:
            chosen = sorted(model.processing)[item % len(model.processing)]
            queue.done(chosen)
            model.done(chosen)
        assert len(queue) == len(model.queue)
        assert clock.has_waiters() == bool(model.ready_at)
        if model.ready_at:
            assert clock.next_timer_at() == min(entry[0] for entry in model.ready_at.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(delaying_operations)
def test_delaying_queue_matches_model(steps: list[tuple[str, int, int]]) -> None:
    asyncio.run(run_delaying_against_model(steps))
