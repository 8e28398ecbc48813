"""Listers: typed, read-only views of an informer's cache (what reconcilers read instead of the API server).

The cache holds raw dicts only. By default a lister makes a model of the cached dict on each read, so every
caller gets its own instance and a reconciler mutating what it read cannot corrupt the cache (client-go needs
`DeepCopy` discipline for that). The model is `pyop.api.trusted.from_server`'s: each field is validated when the
reconciler first reads it (the cache's dicts are replaced, never changed, so reading them later is safe), which
is the cheapest private copy there is: a reconcile that reads `spec` and `metadata.generation` pays for those.

`shared=True` reads instead the one model of each cached object version, validated on the first such read and
kept until the object changes (the informer replaces its dict): the same instance for every caller, which must
not mutate it (controller-runtime's `UnsafeDisableDeepCopy`). That costs a dict lookup per read instead of a
validation, and one model per cached object that was read this way.
"""

from __future__ import annotations

import builtins
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pyop.api.trusted import from_server, list_from_server
from pyop.client.selectors import LabelSelector, LabelSelectorInput
from pyop.informers.store import NAMESPACE_INDEX, Indexer, RawObject

M = TypeVar("M", bound=BaseModel)


class Lister(Generic[M]):
    """Get and list objects of one kind from the cache as `model` instances."""

    def __init__(self, store: Indexer, model: type[M]) -> None:
        self._store = store
        self.model = model
        # id(cached dict) -> (that dict, its model): `shared=True` reads, one model per cached object version.
        self._snapshots: dict[int, tuple[RawObject, M]] = {}

    def get(self, name: str, namespace: str | None = None, *, shared: bool = False) -> M | None:
        """The cached object, or None when the cache does not have it; `shared=True`: the read-only snapshot
        (see the module doc)."""
        raw = self._store.get(name, namespace)
        if raw is None:
            return None
        return self._snapshot(raw) if shared else from_server(self.model, raw)

    def list(
        self, namespace: str | None = None, label_selector: LabelSelectorInput = None, *, shared: bool = False
    ) -> builtins.list[M]:
        """Objects in `namespace` (all when None) matching `label_selector`, sorted by namespace/name."""
        if shared:
            return [self._snapshot(raw) for raw in self.list_raw(namespace, label_selector)]
        return list_from_server(self.model, self.list_raw(namespace, label_selector))

    def _snapshot(self, raw: RawObject) -> M:
        entry = self._snapshots.get(id(raw))
        if entry is not None and entry[0] is raw:
            return entry[1]
        model = from_server(self.model, raw)
        if len(self._snapshots) >= 2 * len(self._store) + 64:
            self._forget_old_versions()
        self._snapshots[id(raw)] = (raw, model)
        return model

    def _forget_old_versions(self) -> None:
        """Drop the snapshots of dicts the cache no longer holds (replaced or deleted objects)."""
        live = {id(raw) for raw in self._store.list()}
        self._snapshots = {key: entry for key, entry in self._snapshots.items() if key in live}

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
        return list_from_server(self.model, self._store.by_index(index_name, value))

    def namespace(self, namespace: str) -> NamespaceLister[M]:
        return NamespaceLister(self, namespace)


class NamespaceLister(Generic[M]):
    """A lister bound to one namespace (client-go's `Lister.Namespace(ns)`)."""

    def __init__(self, lister: Lister[M], namespace: str) -> None:
        self._lister = lister
        self.namespace = namespace

    def get(self, name: str, *, shared: bool = False) -> M | None:
        return self._lister.get(name, self.namespace, shared=shared)

    def list(self, label_selector: LabelSelectorInput = None, *, shared: bool = False) -> builtins.list[M]:
        return self._lister.list(self.namespace, label_selector, shared=shared)


def _labels(raw: RawObject) -> dict[str, Any]:
    return (raw.get("metadata") or {}).get("labels") or {}


def _sort_key(raw: RawObject) -> tuple[str, str]:
    metadata = raw.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")
