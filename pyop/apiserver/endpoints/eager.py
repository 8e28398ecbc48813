"""Answering a request without a task when it never waits: Python 3.12's eager tasks, for Python 3.11 too.

Why. Most requests to the API servers never wait for anything: an in-memory write is parsed, stored and answered
within one call. Scheduling a task for each one (a task object, a ``call_soon``, a loop iteration, entering and
leaving the task) is about a tenth of such a request's CPU on asyncio's loop. `start` runs the coroutine's first
step at once instead, in the request's `contextvars.Context`:
- when that step finishes the coroutine, its result (or exception) is the answer and no task was made;
- when the coroutine waits for a future, a task continues the same coroutine from that point (`_Resumed`, which
  hands the task the future the coroutine is waiting for, then passes every send and throw through): cancelling
  the task cancels that wait, as for any task; the rest of the request runs in that task, in the same Context.
On Python 3.12 and later this is ``asyncio.Task(..., eager_start=True)``, which does exactly that. On 3.11 the first
step runs under `_EagerStep`, which ``asyncio.current_task()`` answers meanwhile (so ``asyncio.timeout``, task groups
and aiohttp's client timeouts work in it): it counts cancellations asked for during that step and, once the task
exists, forwards everything to it; a cancellation asked for during the first step reaches the coroutine as a task's
would (at its first wait; or the outcome is a `CancelledError` when it finished without waiting).
`start` must be called outside any task (a protocol callback, a done callback): inside one it makes an ordinary
task, as before.
"""

from __future__ import annotations

import asyncio
import collections.abc
import contextvars
import sys
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


if sys.version_info >= (3, 12):
    current_task = asyncio.current_task  # in C

    def start(
        loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], context: contextvars.Context
    ) -> tuple[asyncio.Task[T] | None, T | None]:
        """``(None, result)`` when the coroutine finished in its first step (its exception raised here), else
        ``(task, None)``: the task that continues it."""
        if current_task(loop) is not None:
            return loop.create_task(coro, context=context), None
        task = asyncio.Task(coro, loop=loop, context=context, eager_start=True)
        if task.done():
            return None, task.result()
        return task, None

else:
    from asyncio import tasks
    from asyncio.tasks import _enter_task, _leave_task

    # asyncio.current_task(loop) without its Python frame (3.11's is Python, 3.12's is C): the dict it reads
    current_task: Callable[[asyncio.AbstractEventLoop], asyncio.Task[Any] | None] = tasks._current_tasks.get  # type: ignore[attr-defined]  # noqa: E501, SLF001

    def start(
        loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], context: contextvars.Context
    ) -> tuple[asyncio.Task[T] | None, T | None]:
        """``(None, result)`` when the coroutine finished in its first step (its exception raised here), else
        ``(task, None)``: the task that continues it."""
        if current_task(loop) is not None:  # inside a task
            return loop.create_task(coro, context=context), None
        step = _EagerStep(loop)
        _enter_task(loop, step)  # type: ignore[arg-type]  # what current_task() answers meanwhile
        try:
            waiting_for = context.run(coro.send, None)
        except StopIteration as finished:
            step.finished = True
            if step.must_cancel:  # a task asked to cancel itself, then finished without waiting: it is cancelled
                raise asyncio.CancelledError(step.message) from None
            return None, finished.value
        except BaseException as error:
            step.finished = True
            step.must_cancel = isinstance(error, asyncio.CancelledError)  # what cancelled() answers from now on
            raise
        finally:
            _leave_task(loop, step)  # type: ignore[arg-type]
        task: asyncio.Task[T] = loop.create_task(_Resumed(coro, waiting_for), context=context)
        step.adopt(task, waiting_for)
        return task, None


_TAKEN = object()


class _Resumed(collections.abc.Coroutine):  # type: ignore[type-arg]
    """A started coroutine as a task's coroutine: the task's first step gets the future the coroutine is waiting
    for (so the task waits for it, and cancelling the task cancels it); every later send and throw goes to the
    coroutine itself."""

    __slots__ = ("_coro", "_waiting_for")

    def __init__(self, coro: Coroutine[Any, Any, Any], waiting_for: Any) -> None:
        self._coro = coro
        self._waiting_for = waiting_for

    def send(self, value: Any) -> Any:
        waiting_for = self._waiting_for
        if waiting_for is not _TAKEN:
            self._waiting_for = _TAKEN
            return waiting_for
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        waiting_for = self._waiting_for
        if waiting_for is not _TAKEN:  # cancelled before its first step: what the coroutine waits for is cancelled
            self._waiting_for = _TAKEN  # as a task cancels the future it waits for, then the coroutine hears of it
            cancel = getattr(waiting_for, "cancel", None)
            if cancel is not None:
                cancel()
        if val is None and tb is None:
            return self._coro.throw(typ)
        return self._coro.throw(typ, val, tb)  # pragma: no cover - tasks throw the exception alone

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self  # type: ignore[return-value]

    def __next__(self) -> Any:
        return self.send(None)

    def __iter__(self) -> _Resumed:
        return self


class _EagerStep:
    """``asyncio.current_task()`` during a coroutine's first step outside a task (Python 3.11): counts
    cancellations until the task that continues the coroutine exists, then forwards to it."""

    __slots__ = ("_loop", "task", "cancels", "must_cancel", "message", "finished")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.task: asyncio.Task[Any] | None = None
        self.cancels = 0  # what cancelling() answers
        self.must_cancel = False  # as Task._must_cancel: uncancel() leaves it (Python 3.11)
        self.message: Any = None
        self.finished = False

    def adopt(self, task: asyncio.Task[Any], waiting_for: Any) -> None:
        """The task continues the coroutine: the cancellation asked for so far is the task's (its count too), and
        cancels what the coroutine waits for at once, as a task's step does when it ends asked to cancel."""
        self.task = task
        if self.must_cancel:
            cancel = getattr(waiting_for, "cancel", None)
            if cancel is not None:
                cancel(msg=self.message)
            task.cancel(self.message)
            while task.cancelling() < self.cancels:
                task.cancel(self.message)
            while task.cancelling() > self.cancels:
                task.uncancel()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def cancel(self, msg: Any = None) -> bool:
        if self.task is not None:
            return self.task.cancel(msg)
        if self.finished:
            return False
        self.cancels += 1
        self.must_cancel = True
        self.message = msg
        return True

    def cancelling(self) -> int:
        return self.task.cancelling() if self.task is not None else self.cancels

    def uncancel(self) -> int:
        if self.task is not None:
            return self.task.uncancel()
        if self.cancels > 0:
            self.cancels -= 1
        return self.cancels

    def done(self) -> bool:
        return self.task.done() if self.task is not None else self.finished

    def cancelled(self) -> bool:
        return self.task.cancelled() if self.task is not None else self.finished and self.must_cancel

    def __getattr__(self, name: str) -> Any:
        task = self.task
        if task is None:
            raise AttributeError(f"{name!r}: the request has not waited for anything yet, so it has no task")
        return getattr(task, name)


__all__ = ["current_task", "start"]
