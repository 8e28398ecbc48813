"""Event handlers: which requests a watch event puts on the controller's queue (controller-runtime's
`pkg/handler`).

Three ways, as in controller-runtime:

* `EnqueueRequestForObject` - the object itself (the controller's primary kind);
* `EnqueueRequestForOwner` - the owner named in the object's `ownerReferences` (kinds the controller creates:
  a change to an owned ConfigMap wakes the Captain that owns it);
* `EnqueueRequestsFromMapFunc` - any requests a function derives from the object (a Secret referenced by
  several Captains).

Handlers run inline in the informer's task for every event, so they only compute keys; they receive the cached
dicts (read-only) and an `add` callable (the work queue's `add`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pyop.controller.reconcile import Request

__all__ = [
    "Add",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventHandler",
    "MapFunc",
]

RawObject = Mapping[str, Any]
Add = Callable[[Request], None]
MapFunc = Callable[[RawObject], Iterable[Request]]


class EventHandler:
    """Turns watch events into requests; the base class enqueues nothing."""

    def create(self, obj: RawObject, add: Add) -> None:
        pass

    def update(self, old: RawObject, new: RawObject, add: Add) -> None:
        pass

    def delete(self, obj: RawObject, add: Add) -> None:
        pass

    def generic(self, obj: RawObject, add: Add) -> None:
        pass


class EnqueueRequestForObject(EventHandler):
    """Enqueue the object that changed (namespace/name)."""

    def create(self, obj: RawObject, add: Add) -> None:
        add(Request.of(obj))

    def update(self, old: RawObject, new: RawObject, add: Add) -> None:
        add(Request.of(new))

    def delete(self, obj: RawObject, add: Add) -> None:
        add(Request.of(obj))

    def generic(self, obj: RawObject, add: Add) -> None:
        add(Request.of(obj))


def _group_of(api_version: str) -> str:
    group, _, _ = api_version.rpartition("/")
    return group


class EnqueueRequestForOwner(EventHandler):
    """Enqueue the owner of the object that changed, found in its `ownerReferences`.

    Owners match by API group and kind, not version (an owner referenced as v1 is the same object as v2).
    With `only_controller` (the default, what `owns()` uses) only the reference marked `controller: true`
    counts. Updates enqueue the owners of both the old and the new state, so an object that changes owner
    wakes both. A namespaced owner lives in the object's namespace (cross-namespace owners are not allowed).
    """

    def __init__(self, owner_group: str, owner_kind: str, *, owner_namespaced: bool, only_controller: bool = True):
        self.owner_group = owner_group
        self.owner_kind = owner_kind
        self.owner_namespaced = owner_namespaced
        self.only_controller = only_controller

    def _owners(self, obj: RawObject) -> Iterable[Request]:
        metadata = obj.get("metadata") or {}
        references = metadata.get("ownerReferences")
        if not references:
            return ()
        namespace = (metadata.get("namespace") or None) if self.owner_namespaced else None
        owners = []
        for reference in references:
            if reference.get("kind") != self.owner_kind:
                continue
            if _group_of(str(reference.get("apiVersion", ""))) != self.owner_group:
                continue
            if self.only_controller and not reference.get("controller"):
                continue
            owners.append(Request(namespace, str(reference.get("name", ""))))
        return owners

    def create(self, obj: RawObject, add: Add) -> None:
        for request in self._owners(obj):
            add(request)

    def update(self, old: RawObject, new: RawObject, add: Add) -> None:
        for request in {*self._owners(old), *self._owners(new)}:
            add(request)

    def delete(self, obj: RawObject, add: Add) -> None:
        for request in self._owners(obj):
            add(request)

    def generic(self, obj: RawObject, add: Add) -> None:
        for request in self._owners(obj):
            add(request)


class EnqueueRequestsFromMapFunc(EventHandler):
    """Enqueue whatever `map_func(obj)` returns; for updates, the requests of both old and new states."""

    def __init__(self, map_func: MapFunc) -> None:
        self.map_func = map_func

    def create(self, obj: RawObject, add: Add) -> None:
        for request in self.map_func(obj):
            add(request)

    def update(self, old: RawObject, new: RawObject, add: Add) -> None:
        for request in {*self.map_func(old), *self.map_func(new)}:
            add(request)

    def delete(self, obj: RawObject, add: Add) -> None:
        for request in self.map_func(obj):
            add(request)

    def generic(self, obj: RawObject, add: Add) -> None:
        for request in self.map_func(obj):
            add(request)
