"""Listers: typed, read-only views of an informer's cache (what reconcilers read instead of the API server).

The cache holds raw dicts only; a lister validates them into the model on each read. That costs a little CPU
per read but keeps one copy of each object in memory, and every caller gets its own model instance, so a
reconciler mutating what it read cannot corrupt the cache (client-go needs `DeepCopy` discipline for that).
"""

from __future__ import annotations

import builtins
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pyop.client.selectors import LabelSelector, LabelSelectorInput
from pyop.informers.store import NAMESPACE_INDEX, Indexer, RawObject

M = TypeVar("M", bound=BaseModel)


class Lister(Generic[M]):
    """Get and list objects of one kind from the cache as `model` instances."""

    def __init__(self, store: Indexer, model: type[M]) -> None:
        self._store = store
        self.model = model

    def get(self, name: str, namespace: str | None = None) -> M | None:
        """The cached object, or None when the cache does not have it."""
        raw = self._store.get(name, namespace)
        return None if raw is None else self.model.model_validate(raw)

    def list(self, namespace: str | None = None, label_selector: LabelSelectorInput = None) -> builtins.list[M]:
        """Objects in `namespace` (all when None) matching `label_selector`, sorted by namespace/name."""
        validate = self.model.model_validate
        return [validate(raw) for raw in self.list_raw(namespace, label_selector)]

    def list_raw(
        self, namespace: str | None = None, label_selector: LabelSelectorInput = None
    ) -> builtins.list[RawObject]:
        """The cached dicts themselves (no parsing): read, never mutate them."""
        selector = LabelSelector.parse(label_selector)
        candidates: builtins.list[RawObject] = (
            self._store.list() if namespace is None else self._store.by_index(NAMESPACE_INDEX, namespace)
        )
        if not selector.empty:
            candidates = [raw for raw in candidates if selector.matches(_labels(raw))]
        return sorted(candidates, key=_sort_key)

    def by_index(self, index_name: str, value: str) -> builtins.list[M]:
        """Objects from a custom index (`Informer(indexers=...)`)."""
        return [self.model.model_validate(raw) for raw in self._store.by_index(index_name, value)]

    def namespace(self, namespace: str) -> NamespaceLister[M]:
        return NamespaceLister(self, namespace)


class NamespaceLister(Generic[M]):
    """A lister bound to one namespace (client-go's `Lister.Namespace(ns)`)."""

    def __init__(self, lister: Lister[M], namespace: str) -> None:
        self._lister = lister
        self.namespace = namespace

    def get(self, name: str) -> M | None:
        return self._lister.get(name, self.namespace)

    def list(self, label_selector: LabelSelectorInput = None) -> builtins.list[M]:
        return self._lister.list(self.namespace, label_selector)


def _labels(raw: RawObject) -> dict[str, Any]:
    return (raw.get("metadata") or {}).get("labels") or {}


def _sort_key(raw: RawObject) -> tuple[str, str]:
    metadata = raw.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")
