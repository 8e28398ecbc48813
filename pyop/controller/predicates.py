"""Predicates: which watch events are worth a reconcile (controller-runtime's `pkg/predicate`).

A predicate answers, per event kind, whether the event passes. They see the objects as the cache holds them
(plain dicts as the API server sent them; read them, never mutate them) so that filtering costs no parsing.
Combine them with `&`, `|` and `~`, or `all_of` / `any_of`.

Delete events of objects that vanished while the watch was down carry the last state the cache saw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "AnnotationsChanged",
    "GenerationChanged",
    "LabelsChanged",
    "Predicate",
    "PredicateFuncs",
    "ResourceVersionChanged",
    "all_of",
    "any_of",
    "object_predicate",
]

RawObject = Mapping[str, Any]


class Predicate:
    """Passes every event; subclasses override the event kinds they filter."""

    def create(self, obj: RawObject) -> bool:
        return True

    def update(self, old: RawObject, new: RawObject) -> bool:
        return True

    def delete(self, obj: RawObject) -> bool:
        return True

    def generic(self, obj: RawObject) -> bool:
        return True

    def __and__(self, other: Predicate) -> Predicate:
        return _All((self, other))

    def __or__(self, other: Predicate) -> Predicate:
        return _Any((self, other))

    def __invert__(self) -> Predicate:
        return _Not(self)


class PredicateFuncs(Predicate):
    """A predicate from up to four functions; a missing one lets its events pass."""

    def __init__(
        self,
        *,
        create: Callable[[RawObject], bool] | None = None,
        update: Callable[[RawObject, RawObject], bool] | None = None,
        delete: Callable[[RawObject], bool] | None = None,
        generic: Callable[[RawObject], bool] | None = None,
    ) -> None:
        self._create = create
        self._update = update
        self._delete = delete
        self._generic = generic

    def create(self, obj: RawObject) -> bool:
        return self._create is None or self._create(obj)

    def update(self, old: RawObject, new: RawObject) -> bool:
        return self._update is None or self._update(old, new)

    def delete(self, obj: RawObject) -> bool:
        return self._delete is None or self._delete(obj)

    def generic(self, obj: RawObject) -> bool:
        return self._generic is None or self._generic(obj)


def object_predicate(accept: Callable[[RawObject], bool]) -> Predicate:
    """A predicate applying `accept` to the event's object (the new one for updates): `NewPredicateFuncs`."""
    return PredicateFuncs(create=accept, update=lambda old, new: accept(new), delete=accept, generic=accept)


def _metadata(obj: RawObject) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


class GenerationChanged(Predicate):
    """Updates pass only when `metadata.generation` changed: spec edits, not status writes or label edits.

    The usual filter for a primary kind with a status subresource, where the controller's own status
    writes would otherwise wake it again. Other event kinds pass.
    """

    def update(self, old: RawObject, new: RawObject) -> bool:
        return _metadata(old).get("generation") != _metadata(new).get("generation")


class LabelsChanged(Predicate):
    """Updates pass only when `metadata.labels` changed."""

    def update(self, old: RawObject, new: RawObject) -> bool:
        return (_metadata(old).get("labels") or {}) != (_metadata(new).get("labels") or {})


class AnnotationsChanged(Predicate):
    """Updates pass only when `metadata.annotations` changed."""

    def update(self, old: RawObject, new: RawObject) -> bool:
        return (_metadata(old).get("annotations") or {}) != (_metadata(new).get("annotations") or {})


class ResourceVersionChanged(Predicate):
    """Updates pass only when `metadata.resourceVersion` changed (drops the informer's periodic resyncs)."""

    def update(self, old: RawObject, new: RawObject) -> bool:
        return _metadata(old).get("resourceVersion") != _metadata(new).get("resourceVersion")


class _All(Predicate):
    def __init__(self, predicates: tuple[Predicate, ...]) -> None:
        self.predicates = predicates

    def create(self, obj: RawObject) -> bool:
        return all(p.create(obj) for p in self.predicates)

    def update(self, old: RawObject, new: RawObject) -> bool:
        return all(p.update(old, new) for p in self.predicates)

    def delete(self, obj: RawObject) -> bool:
        return all(p.delete(obj) for p in self.predicates)

    def generic(self, obj: RawObject) -> bool:
        return all(p.generic(obj) for p in self.predicates)


class _Any(Predicate):
    def __init__(self, predicates: tuple[Predicate, ...]) -> None:
        self.predicates = predicates

    def create(self, obj: RawObject) -> bool:
        return any(p.create(obj) for p in self.predicates)

    def update(self, old: RawObject, new: RawObject) -> bool:
        return any(p.update(old, new) for p in self.predicates)

    def delete(self, obj: RawObject) -> bool:
        return any(p.delete(obj) for p in self.predicates)

    def generic(self, obj: RawObject) -> bool:
        return any(p.generic(obj) for p in self.predicates)


class _Not(Predicate):
    def __init__(self, predicate: Predicate) -> None:
        self.predicate = predicate

    def create(self, obj: RawObject) -> bool:
        return not self.predicate.create(obj)

    def update(self, old: RawObject, new: RawObject) -> bool:
        return not self.predicate.update(old, new)

    def delete(self, obj: RawObject) -> bool:
        return not self.predicate.delete(obj)

    def generic(self, obj: RawObject) -> bool:
        return not self.predicate.generic(obj)


def all_of(*predicates: Predicate) -> Predicate:
    """Passes an event when every predicate does (`and`); no predicates pass everything."""
    return _All(tuple(predicates))


def any_of(*predicates: Predicate) -> Predicate:
    """Passes an event when at least one predicate does (`or`); no predicates pass nothing."""
    return _Any(tuple(predicates))
