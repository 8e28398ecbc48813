"""`pyop.apiserver.endpoints.eager.start` runs a coroutine as a task would: the same scripted coroutine (Hypothesis:
waits or none, exceptions, context variables, ``asyncio.timeout`` firing and not, task groups, cancellation from
inside before and after the first wait, cancellation from outside while it waits) is run once as an ordinary task
and once through `start`, on both event loops, and what it saw and how it ended must be the same. Plus: a coroutine
that never waits makes no task."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pyop.apiserver.endpoints import eager

OPS = [
    "sleep0",  # a bare yield
    "future",  # a future set by a later callback
    "set_var",
    "read_var",
    "raise",
    "timeout_fires",  # asyncio.timeout around a wait longer than it
    "timeout_quiet",  # asyncio.timeout around no wait
    "cancel_self",
    "uncancel",
    "cancelling",
    "catch_cancel",  # a wait whose CancelledError is caught
    "taskgroup",
    "wait_outside",  # a wait the test cancels from outside
    "has_task",
]
VAR: contextvars.ContextVar[int] = contextvars.ContextVar("eager_test_var", default=-1)


async def _scripted(ops: list[str], trace: list[Any]) -> str:
    loop = asyncio.get_running_loop()
    for index, op in enumerate(ops):
        if op == "sleep0":
            await asyncio.sleep(0)
        elif op == "future":
            future: asyncio.Future[int] = loop.create_future()
            loop.call_soon(_settle, future, index)
            try:
                trace.append(await future)
            except asyncio.CancelledError:
                trace.append(("future cancelled", future.cancelled()))  # a task cancels what it waits for
                raise
        elif op == "set_var":
            VAR.set(index)
        elif op == "read_var":
            trace.append(("var", VAR.get()))
        elif op == "raise":
            raise ValueError(index)
        elif op == "timeout_fires":
            try:
                async with asyncio.timeout(0):
                    await asyncio.sleep(10)
            except TimeoutError:
                trace.append("timed out")
        elif op == "timeout_quiet":
            async with asyncio.timeout(10):
                trace.append("in time")
        elif op == "cancel_self":
            trace.append(("cancel", _current().cancel()))
        elif op == "uncancel":
            trace.append(("uncancel", _current().uncancel()))
        elif op == "cancelling":
            trace.append(("cancelling", _current().cancelling()))
        elif op == "catch_cancel":
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                trace.append("caught")
        elif op == "taskgroup":

            async def child() -> None:
                await asyncio.sleep(0)
                trace.append("child")

            async with asyncio.TaskGroup() as group:
                group.create_task(child())
            trace.append("group done")
        elif op == "wait_outside":
            trace.append("waiting")
            await loop.create_future()  # cancelled by the test
        elif op == "has_task":
            trace.append(("task", asyncio.current_task() is not None))
    return "finished"


def _settle(future: asyncio.Future[int], value: int) -> None:
    if not future.done():  # a cancelled wait's future stays cancelled
        future.set_result(value)


def _current() -> Any:
    task = asyncio.current_task()
    assert task is not None
    return task


Runner = Callable[[asyncio.AbstractEventLoop, Coroutine[Any, Any, str], contextvars.Context], asyncio.Future[Any]]


def _as_task(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, str], context: contextvars.Context) -> Any:
    return loop.create_task(coro, context=context)


def _eagerly(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, str], context: contextvars.Context) -> Any:
    """`eager.start` called as the transport calls it (a loop callback, outside any task); a future of the end."""
    outcome: asyncio.Future[Any] = loop.create_future()

    def begin() -> None:
        try:
            task, result = eager.start(loop, coro, context)
        except BaseException as error:  # noqa: BLE001 - the coroutine's own end, compared below
            if isinstance(error, asyncio.CancelledError):
                outcome.cancel()
            else:
                outcome.set_exception(error)
            return
        if task is None:
            outcome.set_result(("no task", result))
        else:
            outcome.set_result(("task", task))

    loop.call_soon(begin)
    return outcome


async def _run(ops: list[str], runner: Runner) -> tuple[list[Any], tuple[Any, ...], int]:
    """What the scripted coroutine saw, how it ended, and its Context's variable afterwards."""
    loop = asyncio.get_running_loop()
    trace: list[Any] = []
    context = contextvars.copy_context()
    handle = runner(loop, _scripted(ops, trace), context)
    task: asyncio.Future[Any] | None = None
    if runner is _eagerly:
        try:
            started = await handle
        except BaseException as error:  # noqa: BLE001
            return trace, _ended(error), context.run(VAR.get)
        if started[0] == "no task":
            return trace, ("result", started[1]), context.run(VAR.get)
        task = started[1]
    else:
        task = handle
    assert task is not None
    cancelled_at: set[int] = set()
    for _ in range(10_000):
        if task.done():
            break
        if trace and trace[-1] == "waiting" and len(trace) not in cancelled_at:
            cancelled_at.add(len(trace))
            task.cancel()
        await asyncio.sleep(0)
    try:
        return trace, ("result", await task), context.run(VAR.get)
    except BaseException as error:  # noqa: BLE001
        return trace, _ended(error), context.run(VAR.get)


def _ended(error: BaseException) -> tuple[Any, ...]:
    if isinstance(error, asyncio.CancelledError):
        return ("cancelled",)
    return ("error", type(error).__name__, error.args)


def _loops() -> list[Callable[[], asyncio.AbstractEventLoop]]:
    loops: list[Callable[[], asyncio.AbstractEventLoop]] = [asyncio.new_event_loop]
    try:
        import uvloop
    except ImportError:
        return loops
    return [*loops, uvloop.new_event_loop]


def _normalized(trace: list[Any]) -> list[Any]:
    """``has_task`` aside (the point of `start`: no task until the first wait), the traces must be equal."""
    return [entry for entry in trace if not (isinstance(entry, tuple) and entry[0] == "task")]


@settings(max_examples=300, deadline=None)
@example(["cancel_self", "future"], 0)
@example(["cancel_self", "uncancel", "catch_cancel", "cancelling"], 0)
@example(["cancel_self", "cancel_self", "catch_cancel", "cancelling", "uncancel", "sleep0"], 0)
@example(["timeout_fires", "set_var", "taskgroup", "read_var", "wait_outside"], 0)
@given(st.lists(st.sampled_from(OPS), max_size=8), st.sampled_from(range(len(_loops()))))
def test_start_runs_a_coroutine_as_a_task_does(ops: list[str], which_loop: int) -> None:
    loop = _loops()[which_loop]()
    try:
        as_task = loop.run_until_complete(_run(ops, _as_task))
        eagerly = loop.run_until_complete(_run(ops, _eagerly))
    finally:
        loop.close()
    assert _normalized(eagerly[0]) == _normalized(as_task[0]), ops
    assert eagerly[1:] == as_task[1:], ops


@pytest.mark.parametrize("make_loop", _loops())
def test_no_task_until_the_first_wait(make_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    """A coroutine that never waits finishes inside `start`, with no task; one that waits has a task from then on."""
    loop = make_loop()
    try:
        trace: list[Any] = []
        ops = ["has_task", "read_var"]
        assert loop.run_until_complete(_run(["set_var", *ops], _eagerly))[1] == ("result", "finished")
        trace = loop.run_until_complete(_run(["has_task", "sleep0", "has_task"], _eagerly))[0]
        assert trace == [("task", True), ("task", True)]  # the placeholder answers current_task() before the wait
        started = loop.run_until_complete(_run(["set_var"], _eagerly))
        assert started == ([], ("result", "finished"), 0)
    finally:
        loop.close()


@pytest.mark.parametrize("make_loop", _loops())
def test_a_finished_coroutine_makes_no_task(make_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    loop = make_loop()

    async def quick() -> int:
        return 7

    async def main() -> tuple[Any, Any, int]:
        before = len(asyncio.all_tasks())
        box: list[Any] = []
        loop.call_soon(lambda: box.append(eager.start(loop, quick(), contextvars.copy_context())))
        await asyncio.sleep(0)
        return box[0][0], box[0][1], len(asyncio.all_tasks()) - before

    try:
        assert loop.run_until_complete(main()) == (None, 7, 0)
    finally:
        loop.close()


def test_inside_a_task_start_makes_an_ordinary_task() -> None:
    async def quick() -> int:
        return 7

    async def main() -> Any:
        task, result = eager.start(asyncio.get_running_loop(), quick(), contextvars.copy_context())
        assert task is not None and result is None
        return await task

    assert asyncio.run(main()) == 7
