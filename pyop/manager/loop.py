"""Running the manager's event loop: uvloop when it is installed, asyncio's own loop otherwise.

An operator spends most of its time in the event loop: socket reads of watch streams, HTTP round trips of
status writes, timers of the work queue. uvloop (libuv under asyncio's API) does that work in C and cuts a
controller's CPU per reconcile by about a third in `bench/bench_controller.py`; kopf's command line picks it
up the same way. Nothing in pyop depends on it: without uvloop (Windows, or uninstalled) this is `asyncio.run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "run"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor if uvloop can be imported, else None (asyncio's default loop)."""
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], *, use_uvloop: bool = True) -> T:
    """`asyncio.run(main)` on the fastest available loop: what a generated `main.py` calls."""
    factory = loop_factory() if use_uvloop else None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
