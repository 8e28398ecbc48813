"""Reconcile semantics: results, errors and backoff, forget, one reconcile per object at a time, metrics.

These drive a `Controller` directly (no informers): requests go on its queue by hand, and the queue and the
default rate limiter run on a `FakeClock`, so delays are asserted exactly and no test sleeps. The queues have
no work-queue metrics here (those arm a refresh timer on the clock); the manager tests cover them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio
from ctrl_helpers import eventually

from pyop.controller import Controller, Request, Result, TerminalError
from pyop.metrics import MetricsRegistry
from pyop.workqueue import FakeClock

A = Request("default", "a")
B = Request("default", "b")


class Recorder:
    """A reconciler whose behaviour per call is scripted; it records every call."""

    def __init__(self, script: Callable[[Request, int], Awaitable[Result | None]] | None = None) -> None:
        self.calls: list[Request] = []
        self.script = script

    def count(self, request: Request) -> int:
        return self.calls.count(request)

    async def reconcile(self, request: Request) -> Result | None:
        self.calls.append(request)
        if self.script is None:
            return None
        return await self.script(request, self.count(request))


@pytest_asyncio.fixture
async def make_controller() -> AsyncIterator[Callable[..., Awaitable[tuple[Controller, FakeClock, MetricsRegistry]]]]:
    controllers: list[Controller] = []

    async def make(
        reconciler: Recorder, workers: int = 1, reconciliation_timeout: float | None = None
    ) -> tuple[Controller, FakeClock, MetricsRegistry]:
        clock = FakeClock()
        registry = MetricsRegistry(process_metrics=False)
        controller = Controller(
            "widgets",
            reconciler,
            max_concurrent_reconciles=workers,
            clock=clock,
            metrics=registry.controller_metrics("widgets", workers),
            reconciliation_timeout=reconciliation_timeout,
        )
        await controller.start()
        controllers.append(controller)
        return controller, clock, registry

    yield make
    for controller in controllers:
        await controller.stop(timeout=5)


def reconcile_total(registry: MetricsRegistry, result: str) -> float | None:
    return registry.value("controller_runtime_reconcile_total", {"controller": "widgets", "result": result})


async def test_success_forgets_and_waits_for_the_next_change(make_controller) -> None:  # type: ignore[no-untyped-def]
    reconciler = Recorder()
    controller, clock, registry = await make_controller(reconciler)
    controller.queue.add(A)
    await eventually(lambda: reconciler.count(A) == 1 and controller.queue.len() == 0)
    assert controller.queue.num_requeues(A) == 0
    assert clock.pending_timers() == 0  # nothing scheduled: the next reconcile needs a new event
    assert reconcile_total(registry, "success") == 1


async def test_requeue_after_looks_again_after_exactly_that_delay(make_controller) -> None:  # type: ignore[no-untyped-def]
    async def script(request: Request, call: int) -> Result:
        return Result(requeue_after=30) if call == 1 else Result()

    reconciler = Recorder(script)
    controller, clock, registry = await make_controller(reconciler)
    controller.queue.add(A)
    await eventually(lambda: clock.next_timer_at() is not None)
    assert clock.next_timer_at() == pytest.approx(30.0)
    assert controller.queue.num_requeues(A) == 0  # a fixed delay, not a failure
    clock.step(29.999)
    assert controller.queue.len() == 0 and reconciler.count(A) == 1
    clock.step(0.001)
    await eventually(lambda: reconciler.count(A) == 2)
    assert reconcile_total(registry, "requeue_after") == 1 and reconcile_total(registry, "success") == 1


async def test_requeue_true_uses_the_rate_limiter_backoff(make_controller) -> None:  # type: ignore[no-untyped-def]
    async def script(request: Request, call: int) -> Result:
        return Result(requeue=call < 3)

    reconciler = Recorder(script)
    controller, clock, registry = await make_controller(reconciler)
    controller.queue.add(A)

    def after_call(call: int) -> Callable[[], bool]:
        return lambda: reconciler.count(A) == call and clock.next_timer_at() is not None

    for expected_delay, call in ((0.005, 1), (0.010, 2)):
        await eventually(after_call(call))
        assert clock.next_timer_at() - clock.now() == pytest.approx(expected_delay)
        clock.step(expected_delay)
    await eventually(lambda: reconciler.count(A) == 3)
    await eventually(lambda: controller.queue.num_requeues(A) == 0)  # success forgets the history
    assert reconcile_total(registry, "requeue") == 2


async def test_errors_back_off_exponentially_then_success_forgets(make_controller) -> None:  # type: ignore[no-untyped-def]
    failures = 6

    async def script(request: Request, call: int) -> Result:
        if call <= failures:
            raise RuntimeError(f"attempt {call} failed")
        return Result()

    reconciler = Recorder(script)
    controller, clock, registry = await make_controller(reconciler)
    controller.queue.add(A)
    delays = []

    def failed(call: int) -> Callable[[], bool]:
        return lambda: reconciler.count(A) == call and clock.next_timer_at() is not None

    for call in range(1, failures + 1):
        await eventually(failed(call))
        assert controller.queue.num_requeues(A) == call
        delay = clock.next_timer_at() - clock.now()
        delays.append(round(delay, 6))
        clock.step(delay)
    await eventually(lambda: reconciler.count(A) == failures + 1)
    await eventually(lambda: controller.queue.num_requeues(A) == 0)
    assert delays == [0.005 * 2**n for n in range(failures)]  # 5 ms, 10 ms, 20 ms, ... (default limiter)
    assert controller.active_workers == 1  # the exceptions never ended the worker
    assert reconcile_total(registry, "error") == failures
    assert registry.value("controller_runtime_reconcile_errors_total", {"controller": "widgets"}) == failures

    # The next failure of the same object starts from the base delay again.
    async def fail_once_more(request: Request, call: int) -> Result:
        if call == failures + 2:
            raise RuntimeError("again")
        return Result()

    reconciler.script = fail_once_more
    controller.queue.add(A)
    await eventually(failed(failures + 2))
    assert controller.queue.num_requeues(A) == 1
    assert clock.next_timer_at() - clock.now() == pytest.approx(0.005)


async def test_an_exception_never_stops_the_worker(make_controller) -> None:  # type: ignore[no-untyped-def]
    async def script(request: Request, call: int) -> Result:
        if request.name.startswith("bad"):
            raise ValueError("broken object")
        return Result()

    reconciler = Recorder(script)
    controller, _, _ = await make_controller(reconciler, workers=1)
    for index in range(20):
        controller.queue.add(Request("default", f"bad-{index}"))
        controller.queue.add(Request("default", f"good-{index}"))
    await eventually(lambda: all(reconciler.count(Request("default", f"good-{i}")) == 1 for i in range(20)))
    assert controller.active_workers == 1


async def test_terminal_errors_are_counted_but_not_retried(make_controller) -> None:  # type: ignore[no-untyped-def]
    async def script(request: Request, call: int) -> Result:
        try:
            raise KeyError("spec.image")
        except KeyError as error:
            raise TerminalError("the spec can never work") from error

    reconciler = Recorder(script)
    controller, clock, registry = await make_controller(reconciler)
    controller.queue.add(A)
    await eventually(lambda: reconciler.count(A) == 1)
    await eventually(lambda: reconcile_total(registry, "error") == 1)
    assert clock.pending_timers() == 0 and controller.queue.len() == 0
    assert registry.value("controller_runtime_terminal_reconcile_errors_total", {"controller": "widgets"}) == 1


async def test_one_object_is_never_reconciled_twice_at_once(make_controller) -> None:  # type: ignore[no-untyped-def]
    running: Counter[Request] = Counter()
    most_at_once: Counter[Request] = Counter()
    overall_peak = 0
    release = asyncio.Event()

    async def script(request: Request, call: int) -> Result:
        nonlocal overall_peak
        running[request] += 1
        most_at_once[request] = max(most_at_once[request], running[request])
        overall_peak = max(overall_peak, sum(running.values()))
        await release.wait()
        running[request] -= 1
        return Result()

    reconciler = Recorder(script)
    controller, _, registry = await make_controller(reconciler, workers=4)
    controller.queue.add(A)
    controller.queue.add(B)
    await eventually(lambda: running[A] == 1 and running[B] == 1)
    assert registry.value("controller_runtime_active_workers", {"controller": "widgets"}) == 2
    for _ in range(10):  # Events for A while A is being reconciled: merged into one more reconcile, later.
        controller.queue.add(A)
    await asyncio.sleep(0)
    assert running[A] == 1
    release.set()
    await eventually(lambda: reconciler.count(A) == 2 and controller.queue.len() == 0)
    await eventually(lambda: sum(running.values()) == 0)
    assert most_at_once[A] == 1 and most_at_once[B] == 1
    assert overall_peak == 2  # different objects did run at the same time
    assert reconciler.count(B) == 1
    assert registry.value("controller_runtime_max_concurrent_reconciles", {"controller": "widgets"}) == 4


async def test_stop_drains_queued_requests_before_returning(make_controller) -> None:  # type: ignore[no-untyped-def]
    gate = asyncio.Event()

    async def script(request: Request, call: int) -> Result:
        await gate.wait()
        return Result()

    reconciler = Recorder(script)
    controller, _, _ = await make_controller(reconciler, workers=2)
    requests = [Request("default", f"w{i}") for i in range(10)]
    for request in requests:
        controller.queue.add(request)
    await eventually(lambda: len(reconciler.calls) == 2)
    stopping = asyncio.create_task(controller.stop(timeout=10))
    await asyncio.sleep(0)
    controller.queue.add(Request("default", "late"))  # after shutdown began: ignored
    gate.set()
    assert await stopping is True
    assert sorted(reconciler.calls) == sorted(requests)


async def test_stop_cancels_reconciles_that_outlive_the_deadline(make_controller) -> None:  # type: ignore[no-untyped-def]
    cancelled = asyncio.Event()

    async def script(request: Request, call: int) -> Result:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return Result()

    reconciler = Recorder(script)
    controller, _, _ = await make_controller(reconciler)
    controller.queue.add(A)
    await eventually(lambda: reconciler.count(A) == 1)
    assert await controller.stop(timeout=0.05) is False
    assert cancelled.is_set() and controller.active_workers == 0


async def test_plain_async_functions_are_reconcilers() -> None:
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    controller = Controller("functions", reconcile, clock=FakeClock())
    await controller.start()
    controller.queue.add(A)
    await eventually(lambda: seen == [A])
    await controller.stop(timeout=1)


def test_invalid_worker_count_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Controller("zero", Recorder(), max_concurrent_reconciles=0)


async def test_a_reconcile_running_past_the_timeout_is_cancelled_and_retried_with_backoff(make_controller) -> None:  # type: ignore[no-untyped-def]
    never = asyncio.Event()
    cancelled: list[Request] = []

    async def script(request: Request, call: int) -> Result | None:
        if request == A and call == 1:
            try:
                await never.wait()  # hangs, as a call without its own timeout can
            except asyncio.CancelledError:
                cancelled.append(request)
                raise
        return None

    reconciler = Recorder(script)
    controller, clock, registry = await make_controller(reconciler, reconciliation_timeout=0.05)
    controller.queue.add(A)
    controller.queue.add(B)
    await eventually(lambda: reconciler.count(B) == 1)  # the one worker was freed for B
    assert cancelled == [A]
    assert registry.value("controller_runtime_reconcile_timeouts_total", {"controller": "widgets"}) == 1
    assert registry.value("controller_runtime_reconcile_errors_total", {"controller": "widgets"}) == 1
    assert controller.queue.num_requeues(A) == 1  # a failure: back after the rate limiter's first delay
    clock.step(0.005)
    await eventually(lambda: reconciler.count(A) == 2)
    await eventually(lambda: reconcile_total(registry, "success") == 2)
    assert registry.value("controller_runtime_reconcile_timeouts_total", {"controller": "widgets"}) == 1


async def test_a_timeout_the_reconciler_raises_itself_is_an_error_but_not_a_reconcile_timeout(make_controller) -> None:  # type: ignore[no-untyped-def]
    async def script(request: Request, call: int) -> Result:
        raise TimeoutError("the cloud API did not answer")

    reconciler = Recorder(script)
    controller, clock, registry = await make_controller(reconciler, reconciliation_timeout=30)
    controller.queue.add(A)
    await eventually(lambda: reconcile_total(registry, "error") == 1)
    assert registry.value("controller_runtime_reconcile_timeouts_total", {"controller": "widgets"}) == 0
    assert controller.queue.num_requeues(A) == 1


def test_a_reconciliation_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="reconciliation_timeout must be positive seconds or None, got 0"):
        Controller("widgets", Recorder(), reconciliation_timeout=0)
