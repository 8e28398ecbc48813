"""The generic registry as an aggregated API server runs it: each kind's strategy is the schema strategy custom
resources get (pruning, defaults and validation from the model's OpenAPI schema, generation on every change,
no strategic merge) with the user's typed `Strategy` after it. Namespaces are the cluster's: the server checks them
before a create (`pyop.apiserver.admission.namespaces`), its own storage has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyop.api.status import StatusCause
from pyop.apiserver.registry.operations import Operations
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.registry.schema import SchemaStrategy
from pyop.apiserver.registry.strategy import RESTStrategy
from pyop.apiserver.strategy import TypedStrategy


class AggregatedStrategy(SchemaStrategy):
    """The model's schema first (as for a custom resource), then the user's typed hooks on what it admitted."""

    ratcheting = False  # a CRD behaviour (apiextensions-apiserver's); the generic registry validates every write

    def __init__(self, resource_type: ResourceType, typed: TypedStrategy | None) -> None:
        super().__init__(resource_type)
        self.typed = typed
        # Table output (gets, lists and watches): the typed strategy's columns, else the printcolumn markers'.
        self.printer = typed.printer() if typed is not None else None

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        obj, causes = super().validate(obj, old, field_validation, warnings)
        if causes or self.typed is None:
            return obj, causes
        return self.typed.apply(obj, old)


class AggregatedOperations(Operations):
    """`Operations` over the served kinds only, each with its `AggregatedStrategy`."""

    def __init__(
        self,
        *args: Any,
        strategies: Mapping[tuple[str, str], TypedStrategy],
        **kwargs: Any,
    ) -> None:
        # (storage key, version) -> the version's adapter (set before the registry builds strategies)
        self.typed_strategies = dict(strategies)
        super().__init__(*args, **kwargs)

    def make_strategy(self, resource_type: ResourceType) -> RESTStrategy:
        key = (resource_type.storage_key, resource_type.version)
        return AggregatedStrategy(resource_type, self.typed_strategies.get(key))

    def _require_live_namespace(self, namespace: str, resource_type: ResourceType, name: str = "") -> None:
        """The registry's own check reads namespaces from its storage, which has none here: the server asks the
        cluster before the write instead (`pyop.apiserver.admission.namespaces`)."""


__all__ = ["AggregatedOperations", "AggregatedStrategy"]
