"""The registry strategy of custom resources: the schema strategy (`pyop.apiserver.registry.schema`) and, as
apiextensions-apiserver refuses it, no custom resource created while its CRD is being deleted."""

from __future__ import annotations

from pyop.api.status import ApiError
from pyop.apiserver.registry.schema import SchemaStrategy as GenericSchemaStrategy
from pyop.apiserver.registry.strategy import RegistryContext
from pyop.testing.builtins.kinds import crd_terminating


class SchemaStrategy(GenericSchemaStrategy):
    def check_create(self, ctx: RegistryContext) -> None:
        if crd_terminating(ctx.store, self.resource_type):
            raise ApiError(405, "create not allowed while custom resource definition is terminating")


__all__ = ["SchemaStrategy"]
