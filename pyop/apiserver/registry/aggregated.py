"""The generic registry as an aggregated API server runs it: the user's typed strategies at their points, and the
namespaces of the cluster rather than of its own storage.

Until the generic registry has a per-kind strategy lookup of its own (``registry/strategy.py``), the two hooks are
the registry's admission step (`_admit`: after schema pruning, defaulting and validation) and its namespace check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyop.api.status import not_found
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.strategy import TypedStrategy

# Whether a namespace exists in the cluster.
NamespaceLookup = Callable[[str], bool]


class AggregatedOperations(Operations):
    """`Operations` whose writes also run the kinds' typed strategies; its store holds only the served kinds."""

    def __init__(
        self,
        *args: Any,
        strategies: Mapping[str, TypedStrategy],
        namespace_lookup: NamespaceLookup | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.strategies = dict(strategies)  # storage key -> adapter
        self.namespace_lookup = namespace_lookup

    def _admit(
        self,
        resource_type: ResourceType,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        options: WriteOptions,
    ) -> dict[str, Any]:
        obj = super()._admit(resource_type, obj, old, options)
        adapter = self.strategies.get(resource_type.storage_key)
        return adapter.admit(obj, old) if adapter is not None else obj

    def _require_live_namespace(self, namespace: str, resource_type: ResourceType, name: str = "") -> None:
        """NamespaceLifecycle against the cluster's namespaces, given a lookup (the server's own storage has none);
        without one, any namespace is accepted."""
        if self.namespace_lookup is not None and not self.namespace_lookup(namespace):
            raise not_found("namespaces", "", namespace)


__all__ = ["AggregatedOperations", "NamespaceLookup"]
