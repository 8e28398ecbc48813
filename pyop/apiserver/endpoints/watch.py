"""Watch streams: per-request filtering, bookmarks, timeouts, and the fault hooks (close, stall).

A ``Watcher`` is subscribed to the store synchronously with the snapshot of its starting point
(initial ADDED events or replayed history), so no commit can fall between the two. Bookmarks
carry the store's current resourceVersion whenever the watcher's queue is drained: at that
moment every earlier event of the resource has been written to the stream.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from aiohttp import web

from pyop.api.selectors import FieldRequirement, Requirement, fields_match, labels_match
from pyop.api.status import ApiError
from pyop.apiserver.endpoints.wire import event_line
from pyop.apiserver.registry import bridge
from pyop.apiserver.registry.conversion import served_as as served_as  # its home; the registry imports it here
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import StoredEvent

_CLOSE = object()
_MAX_BATCH = 256
DISCONNECT_CHECK = 1.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Watcher:
    def __init__(
        self,
        resource_type: ResourceType,
        namespace: str | None,
        labels: tuple[Requirement, ...],
        fields: tuple[FieldRequirement, ...],
        *,
        bookmarks: bool,
        bookmark_interval: float,
        timeout: float | None,
        current_rv: Callable[[], int],
    ) -> None:
        self.resource_type = resource_type
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        self.bookmarks = bookmarks
        self.bookmark_interval = bookmark_interval
        self.timeout = timeout
        self.stalled = False
        self._current_rv = current_rv
        # Items for the writer, and the future it sleeps on when there are none (set by the first item after):
        # cheaper per event than an asyncio.Queue (which wakes a getter future per item), and a write fans out to
        # every watcher; a bare future and a timer are also cheaper per wake than wait_for on an asyncio.Event.
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = asyncio.Event()
        self._filtered = namespace is not None or bool(labels) or bool(fields)
        # The server's webhook caller, for kinds whose versions convert through a webhook (set by the handler).
        self.caller: Any = None
        # Table output (`kubectl get -w`): each event's object as a Table (set by the handler; never cached).
        self.table: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        # How an event is written: a JSON line, or a protobuf frame for protobuf-only clients (set by the handler).
        self.encode_event: Callable[[str, dict[str, Any]], bytes] = event_line

    def _put(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # --- producer side (called synchronously from store commits and fault injection) --------------

    def _matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if not self._filtered:
            return True
        if self.namespace is not None and obj["metadata"].get("namespace", "") != self.namespace:
            return False
        return labels_match(self.labels, obj) and fields_match(self.fields, obj)

    def deliver(self, event: StoredEvent) -> None:
        if self.stalled or self._closed.is_set():
            return
        if not self._filtered:  # every object matches: the event goes out as it is (unless an odd one, below)
            obj = event.obj
            if obj is not None and (event.prev is not None or event.type != "MODIFIED"):
                self._put((event.type, obj, event))
                return
        now_matches = self._matches(event.obj)
        if event.type == "MODIFIED":
            before = self._matches(event.prev)
            if now_matches and not before:
                self._put(("ADDED", event.obj, None))
            elif before and not now_matches:
                self._put(("DELETED", event.obj, None))
            elif now_matches:
                self._put((event.type, event.obj, event))
        elif now_matches:
            self._put((event.type, event.obj, event))

    def send_initial(self, event_type: str, obj: dict[str, Any]) -> None:
        self._put((event_type, obj, None))

    def send_error(self, error: ApiError) -> None:
        self._put(("ERROR", error.to_status(), None))
        self.close()

    def send_bookmark(self, annotations: dict[str, str] | None = None) -> None:
        self._put(("BOOKMARK", self._bookmark_object(annotations), None))

    def stall(self) -> None:
        self.stalled = True
        self._put(None)  # wake the writer so it stops at once

    def close(self) -> None:
        self._put(_CLOSE)
        self._closed.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    # --- consumer side ----------------------------------------------------------------------------

    def _bookmark_object(self, annotations: dict[str, str] | None) -> dict[str, Any]:
        metadata: dict[str, Any] = {"resourceVersion": str(self._current_rv())}
        if annotations:
            metadata["annotations"] = annotations
        return {
            "kind": self.resource_type.kind,
            "apiVersion": self.resource_type.api_version,
            "metadata": metadata,
        }

    def _line(self, item: tuple[str, dict[str, Any], StoredEvent | None]) -> bytes:
        event_type, obj, event = item
        if event is not None and self.table is None and self.encode_event is event_line:
            # A committed event as JSON: encoded once for every watcher of its version (looked up first).
            cache_key = (event_type, self.resource_type.api_version)
            encoded = event.encoded
            if encoded is None:
                encoded = event.encoded = {}
            else:
                cached = encoded.get(cache_key)
                if cached is not None:
                    return cached
            line = encoded[cache_key] = event_line(event_type, served_as(obj, self.resource_type))
            return line
        wire = obj if event_type in ("ERROR", "BOOKMARK") else served_as(obj, self.resource_type)
        if self.table is not None and event_type not in ("ERROR", "BOOKMARK"):
            return self.encode_event(event_type, self.table(wire))
        return self.encode_event(event_type, wire)  # initial events, errors, bookmarks, protobuf frames: not cached

    async def _converted_line(self, item: tuple[str, dict[str, Any], StoredEvent | None]) -> bytes:
        """``_line`` in a bridge, for a kind with a conversion webhook (events of other kinds need none)."""
        conversion = self.resource_type.conversion
        if conversion is None or not conversion.calls_out or item[0] in ("ERROR", "BOOKMARK"):
            return self._line(item)
        return await bridge.run(self._line, item, caller=self.caller)

    async def stream(self, response: web.StreamResponse, disconnected: Callable[[], bool] = lambda: False) -> None:
        """Write events until closed, timed out or the client goes away (checked every
        ``DISCONNECT_CHECK`` seconds on idle streams, so abandoned watches are released)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout if self.timeout else None
        next_bookmark = loop.time() + self.bookmark_interval if self.bookmarks else None
        while True:
            if self.stalled:
                await self._closed.wait()
                return
            lines: list[bytes] = []
            finished = False
            items = self._items
            while len(lines) < _MAX_BATCH and items:
                item = items.popleft()
                if item is _CLOSE:
                    finished = True
                    break
                if item is not None and not self.stalled:
                    try:
                        lines.append(await self._converted_line(item) if self.caller else self._line(item))
                    except ApiError as error:  # the conversion webhook failed: the watch ends with its error
                        lines.append(self.encode_event("ERROR", error.to_status()))
                        finished = True
                        break
            if lines:
                await response.write(b"".join(lines))
            if finished:
                return
            if lines:
                continue
            now = loop.time()
            if (deadline is not None and now >= deadline) or disconnected():
                return
            if next_bookmark is not None and now >= next_bookmark:
                await response.write(self.encode_event("BOOKMARK", self._bookmark_object(None)))
                next_bookmark = now + self.bookmark_interval
                continue
            wake_at = min(t for t in (deadline, next_bookmark, now + DISCONNECT_CHECK) if t is not None)
            waiter = self._waiter = loop.create_future()
            timer = loop.call_at(wake_at, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None


def _wake(waiter: asyncio.Future[None]) -> None:
    """A sleeping stream's timer: time to check its deadline, bookmark and client."""
    if not waiter.done():
        waiter.set_result(None)
