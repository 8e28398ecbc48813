"""Short garbage-collection pauses while a long-running service runs: long-lived objects are frozen out of the
collector's scans.

Why: an API server holds a large, long-lived heap (every stored object, the watch cache's history, the imported
modules) and allocates quickly (each request decodes, copies and encodes objects). CPython's full collections
scan the whole heap, and under an 8,000-object converge they paused the server for 86-156 ms (up to 430 ms on a
loaded machine) several times, stalling every request and watch meanwhile. Nearly everything the heap holds is
acyclic data freed by reference counting, so scanning it finds nothing.

While at least one server listens, the process's objects are moved to the collector's permanent generation
(`gc.freeze()`): when listening starts, and again after every collection of the middle generation, so objects
that survived two collections (long-lived: stored objects, history, connections) are not scanned again, and a full
collection only looks at what was promoted since. Young objects are collected as ever, and reference counting
frees frozen objects as ever; only a reference cycle that becomes garbage after being frozen waits: when the last
server stops listening, `gc.unfreeze()` hands every frozen object back to the collector, so nothing is kept past
the servers' lifetime. The policy is process-wide (the collector is), hence counted across servers.

Its users are the API servers (`pyop.apiserver.server.generic`) and the operator's manager (`pyop.manager`), whose
informer caches are the same kind of heap; it lives at the top of `pyop` because both layers use it and neither
owns it. A test process running a manager against a test server counts both.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

__all__ = ["serving_ends", "serving_starts"]

_lock = threading.Lock()
_servers = 0


def _freeze_after_middle_collections(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info.get("generation") == 1:
        gc.freeze()


def serving_starts() -> None:
    """A server starts listening (pair with `serving_ends`)."""
    global _servers
    with _lock:
        _servers += 1
        if _servers == 1:
            gc.freeze()
            gc.callbacks.append(_freeze_after_middle_collections)


def serving_ends() -> None:
    """A server stopped listening: the last one hands the frozen objects back to the collector."""
    global _servers
    with _lock:
        if _servers == 0:
            return
        _servers -= 1
        if _servers == 0:
            if _freeze_after_middle_collections in gc.callbacks:
                gc.callbacks.remove(_freeze_after_middle_collections)
            gc.unfreeze()
