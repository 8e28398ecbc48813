"""What a registry knows of its server's compiled-in kinds (kube-apiserver's scheme): their OpenAPI definitions (for
managed fields) and their strategies.

The test API server's are the built-in kinds of one Kubernetes version (`pyop.testing.builtins.strategy.
BuiltinStrategy`); a server without compiled-in kinds (an aggregated server, the generic tests) uses `SchemaKinds`:
every kind is defined by its schema.
"""

from __future__ import annotations

from typing import Protocol

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.registry.schema import SchemaStrategy
from pyop.apiserver.registry.strategy import RESTStrategy, Strategy


class CompiledKinds(Protocol):
    """The questions `Operations` asks of its server's compiled-in kinds."""

    kubernetes_version: str

    def definition(self, resource_type: ResourceType) -> str:
        """The kind's OpenAPI definition name ("" for a kind defined by its schema)."""
        ...

    def strategy_for(self, resource_type: ResourceType) -> RESTStrategy:
        """A new strategy for ``resource_type``."""
        ...


class SchemaKinds:
    """No compiled-in kinds: a custom kind gets the schema strategy, any other the plain one."""

    def __init__(self, kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> None:
        self.kubernetes_version = kubernetes_version

    def definition(self, resource_type: ResourceType) -> str:
        return ""

    def strategy_for(self, resource_type: ResourceType) -> RESTStrategy:
        return SchemaStrategy(resource_type) if resource_type.custom else Strategy(resource_type)


__all__ = ["CompiledKinds", "SchemaKinds"]
