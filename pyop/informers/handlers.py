"""Event handlers: how an informer hands changes to a controller.

A handler is three plain callables (add, update with old and new, delete). They run inline in the informer's
task, after the cache is updated, so they must be quick: the intended use is to put a key on a work queue,
which `enqueue_keys(queue.add)` does in one line (any `Callable[[key], object]` works; nothing here imports a
queue). Delete handlers may receive a `DeletedFinalStateUnknown` tombstone instead of the object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from pyop.informers.store import DeletedFinalStateUnknown, RawObject, object_key, split_key

DeletedObject = RawObject | DeletedFinalStateUnknown


class ResourceEventHandler(Protocol):
    def on_add(self, obj: RawObject) -> None: ...

    def on_update(self, old: RawObject, new: RawObject) -> None: ...

    def on_delete(self, obj: DeletedObject) -> None: ...


@dataclass
class FuncHandler:
    """A handler from up to three functions; missing ones ignore their events."""

    add: Callable[[RawObject], Any] | None = None
    update: Callable[[RawObject, RawObject], Any] | None = None
    delete: Callable[[DeletedObject], Any] | None = None

    def on_add(self, obj: RawObject) -> None:
        if self.add is not None:
            self.add(obj)

    def on_update(self, old: RawObject, new: RawObject) -> None:
        if self.update is not None:
            self.update(old, new)

    def on_delete(self, obj: DeletedObject) -> None:
        if self.delete is not None:
            self.delete(obj)


class ObjectKey(NamedTuple):
    """namespace/name of an object: what a reconcile request carries (hashable, so a work-queue item)."""

    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def parse(cls, key: str) -> ObjectKey:
        namespace, name = split_key(key)
        return cls(namespace, name)

    @classmethod
    def of(cls, obj: DeletedObject) -> ObjectKey:
        return cls.parse(deletion_handling_key(obj))


def deletion_handling_key(obj: DeletedObject) -> str:
    """The cache key of an object or of a tombstone (client-go's `DeletionHandlingMetaNamespaceKeyFunc`)."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return object_key(obj)


def enqueue_keys(add: Callable[[ObjectKey], Any]) -> FuncHandler:
    """A handler that calls `add(ObjectKey)` for every add, update and delete (tombstones included).

    Level-triggered controllers only need to know *which* object to look at; the reconciler reads the current
    state from the cache. Use `add=lambda key: queue.add(str(key))` for string keys.
    """
    return FuncHandler(
        add=lambda obj: add(ObjectKey.of(obj)),
        update=lambda old, new: add(ObjectKey.of(new)),
        delete=lambda obj: add(ObjectKey.of(obj)),
    )


def filtered(predicate: Callable[[RawObject], bool], handler: ResourceEventHandler) -> FuncHandler:
    """Pass on only events of objects `predicate` accepts (client-go's `FilteringResourceEventHandler`).

    An update moving an object into the filter becomes an add, out of it a delete, as in client-go.
    """

    def on_update(old: RawObject, new: RawObject) -> None:
        was, now = predicate(old), predicate(new)
        if was and now:
            handler.on_update(old, new)
        elif now:
            handler.on_add(new)
        elif was:
            handler.on_delete(old)

    def on_delete(obj: DeletedObject) -> None:
        raw = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if predicate(raw):
            handler.on_delete(obj)

    return FuncHandler(
        add=lambda obj: handler.on_add(obj) if predicate(obj) else None,
        update=on_update,
        delete=on_delete,
    )
