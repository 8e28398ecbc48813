"""Sources: an informer's events, filtered by predicates and mapped by an event handler onto a work queue.

controller-runtime's `source.Kind`. The informer is shared (one per kind in a manager); each controller watching
the kind registers its own informer handler when it starts and removes it when it stops, so a controller that is
not running (not the leader, shut down) costs nothing per event and queues nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyop.client.resources import APIResource
from pyop.controller.enqueue import Add, EventHandler
from pyop.controller.predicates import Predicate
from pyop.informers import DeletedFinalStateUnknown, FuncHandler, HandlerRegistration, Informer
from pyop.informers.handlers import DeletedObject
from pyop.informers.store import RawObject

__all__ = ["Source", "informer_handler"]


@dataclass(frozen=True)
class Source:
    """One watch of a controller: which resource, how its events become requests, and which events count."""

    resource: APIResource
    handler: EventHandler
    predicates: Sequence[Predicate] = field(default_factory=tuple)


def informer_handler(handler: EventHandler, predicates: Sequence[Predicate], add: Add) -> FuncHandler:
    """The informer-level handler of a source: predicates first, then the event handler.

    An event passes only if every predicate passes it (controller-runtime ANDs a watch's predicates).
    """
    filters = tuple(predicates)

    def on_add(obj: RawObject) -> None:
        for predicate in filters:
            if not predicate.create(obj):
                return
        handler.create(obj, add)

    def on_update(old: RawObject, new: RawObject) -> None:
        for predicate in filters:
            if not predicate.update(old, new):
                return
        handler.update(old, new, add)

    def on_delete(obj: DeletedObject) -> None:
        # A tombstone's last known state stands in for the object (controller-runtime unwraps it the same way).
        raw = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        for predicate in filters:
            if not predicate.delete(raw):
                return
        handler.delete(raw, add)

    return FuncHandler(add=on_add, update=on_update, delete=on_delete)


@dataclass
class BoundSource:
    """A source attached to its informer; `attach`/`detach` register and remove the informer handler."""

    source: Source
    informer: Informer
    registration: HandlerRegistration | None = None

    def attach(self, add: Add) -> None:
        if self.registration is None:
            self.registration = self.informer.add_event_handler(
                informer_handler(self.source.handler, self.source.predicates, add)
            )

    def detach(self) -> None:
        if self.registration is not None:
            self.informer.remove_event_handler(self.registration)
            self.registration = None
