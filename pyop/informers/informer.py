"""The shared informer: one cache of one resource kept current by reflectors, fanned out to event handlers.

The informer is the reflector's sink. Each change is applied to the cache first, then handed to every handler,
so a handler (or the reconciler it wakes) always finds the cache at least as new as the event. A relist is
turned into the events a watch would have produced: adds, updates (only for objects whose resourceVersion
changed), and deletes with a `DeletedFinalStateUnknown` tombstone for objects that vanished while the watch
was down.

Namespace-restricted informers (operators with Role instead of ClusterRole permissions) run one reflector per
namespace into the same cache; each reflector's relist replaces only its own namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyop.client.dynamic import DynamicClient, EventType, WatchEvent
from pyop.client.resources import APIResource
from pyop.client.selectors import LabelSelectorInput
from pyop.informers.backoff import Backoff
from pyop.informers.handlers import DeletedObject, FuncHandler, ResourceEventHandler
from pyop.informers.reflector import Reflector
from pyop.informers.store import (
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    RawObject,
    StringInterner,
    object_key,
    resource_version,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HandlerRegistration:
    """Returned by `add_event_handler`; pass it to `remove_event_handler`."""

    handler: ResourceEventHandler


class Informer:
    """List-watch cache of one resource with event handlers, optional resync and indices.

    `namespaces=None` watches all namespaces (or a cluster-scoped resource); a list restricts the informer to
    those namespaces. `stall_timeout`, `min_watch_timeout`, `backoff` and `sleep` tune or fake the reflectors.
    `transform` rewrites each object before it is cached (client-go's `SetTransform`), e.g.
    `strip_managed_fields` to save the memory of `metadata.managedFields`, which controllers rarely read.
    `intern_strings` shares equal keys and short values between cached objects (`StringInterner`).
    """

    def __init__(
        self,
        client: DynamicClient,
        resource: APIResource,
        *,
        namespaces: Sequence[str] | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        resync_period: float | None = None,
        indexers: dict[str, IndexFunc] | None = None,
        page_size: int = 500,
        min_watch_timeout: float = 300.0,
        stall_timeout: float = 90.0,
        backoff: Callable[[], Backoff] = Backoff,
        sleep: Callable[[float], Any] = asyncio.sleep,
        transform: Callable[[RawObject], RawObject] | None = None,
        intern_strings: bool = True,
    ) -> None:
        self.client = client
        self.transform = transform
        self._intern = StringInterner() if intern_strings else None
        self.resource = resource
        self.namespaces: tuple[str, ...] | None = (
            tuple(dict.fromkeys(namespaces)) if namespaces and resource.namespaced else None
        )
        self.resync_period = resync_period
        self.store = Indexer(indexers)
        self._handlers: list[ResourceEventHandler] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._sleep = sleep
        self.handler_errors = 0
        self.reflectors = [
            Reflector(
                client,
                resource,
                self,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                page_size=page_size,
                min_watch_timeout=min_watch_timeout,
                stall_timeout=stall_timeout,
                backoff=backoff(),
                sleep=sleep,
            )
            for namespace in (self.namespaces or (None,))
        ]

    # handlers

    def add_event_handler(
        self,
        handler: ResourceEventHandler | None = None,
        *,
        on_add: Callable[[RawObject], Any] | None = None,
        on_update: Callable[[RawObject, RawObject], Any] | None = None,
        on_delete: Callable[[DeletedObject], Any] | None = None,
    ) -> HandlerRegistration:
        """Register a handler (an object with on_add/on_update/on_delete, or the functions themselves).

        A handler added after the cache has content first receives an add for every cached object, so late
        controllers see the same world as early ones (client-go does the same).
        """
        if handler is None:
            handler = FuncHandler(on_add, on_update, on_delete)
        elif on_add or on_update or on_delete:
            raise TypeError("pass a handler object or functions, not both")
        self._handlers.append(handler)
        for obj in self.store:
            self._call(handler.on_add, obj)
        return HandlerRegistration(handler)

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        self._handlers.remove(registration.handler)

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        self.store.add_indexers(indexers)

    # lifecycle

    @property
    def has_synced(self) -> bool:
        """True once every reflector has put a complete list into the cache."""
        return all(reflector.synced.is_set() for reflector in self.reflectors)

    @property
    def started(self) -> bool:
        return bool(self._tasks)

    @property
    def last_sync_resource_version(self) -> str:
        return self.reflectors[0].resource_version if len(self.reflectors) == 1 else ""

    def start(self) -> None:
        """Start the reflectors (and resync) as tasks of the running loop; idempotent."""
        if self._tasks:
            return
        for reflector in self.reflectors:
            self._tasks.append(asyncio.create_task(reflector.run(), name=f"reflector {reflector.name}"))
        if self.resync_period:
            self._tasks.append(asyncio.create_task(self._resync_loop(), name=f"resync {self.resource.plural}"))

    async def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait until `has_synced`; False if `timeout` passed first."""
        try:
            async with asyncio.timeout(timeout):
                for reflector in self.reflectors:
                    await reflector.synced.wait()
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def __aenter__(self) -> Informer:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # reflector sink

    def replace(self, items: list[RawObject], resource_version_: str, namespace: str | None) -> None:
        """Swap in a complete list (already `prepare`d) and emit the difference to the previous content."""
        store = self.store
        fresh: dict[str, RawObject] = {object_key(obj): obj for obj in items}
        for key in store.keys_in_namespace(namespace) - fresh.keys():
            old = store.pop(key)
            if old is not None:
                self._dispatch_delete(DeletedFinalStateUnknown(key, old))
        for key, obj in fresh.items():
            old = store.put(obj, key)
            if old is None:
                self._dispatch_add(obj)
            elif resource_version(old) != resource_version(obj):
                self._dispatch_update(old, obj)

    def apply_event(self, event: WatchEvent[RawObject]) -> None:
        key = object_key(event.object)
        obj = self.prepare(event.object, self.store.get_by_key(key) if event.type is EventType.MODIFIED else None)
        if event.type is EventType.DELETED:
            if self.store.pop(key) is not None:
                self._dispatch_delete(obj)
            return
        old = self.store.put(obj, key)
        if old is None:
            self._dispatch_add(obj)
        elif resource_version(old) != event.resource_version or not event.resource_version:
            self._dispatch_update(old, obj)

    def prepare(self, obj: RawObject, previous: RawObject | None = None) -> RawObject:
        """The cached form of an object: after `transform`, with shared strings (and the unchanged parts of
        `previous`, the cached version it replaces)."""
        if self.transform is not None:
            obj = self.transform(obj)
        return obj if self._intern is None else self._intern(obj, previous)

    # dispatch

    def _dispatch_add(self, obj: RawObject) -> None:
        for handler in self._handlers:
            self._call(handler.on_add, obj)

    def _dispatch_update(self, old: RawObject, new: RawObject) -> None:
        for handler in self._handlers:
            self._call(handler.on_update, old, new)

    def _dispatch_delete(self, obj: DeletedObject) -> None:
        for handler in self._handlers:
            self._call(handler.on_delete, obj)

    def _call(self, func: Callable[..., Any], *args: Any) -> None:
        """Run a handler; its failure is logged and counted, never allowed to stop the informer."""
        try:
            func(*args)
        except Exception:
            self.handler_errors += 1
            log.exception("%s: event handler %r failed", self.resource.plural, func)

    async def _resync_loop(self) -> None:
        """Every `resync_period`, an update(obj, obj) for each cached object (client-go's resync)."""
        assert self.resync_period
        while True:
            await self._sleep(self.resync_period)
            if not self.has_synced:
                continue
            for obj in self.store:
                self._dispatch_update(obj, obj)
