"""The registry strategy of custom resources (apiextensions-apiserver's customresource strategy).

Every custom resource has a generation; its status is a subresource's or part of the object as its CRD says; its
body is pruned, defaulted and validated against the served version's schema (`validation.admit`), after the
metadata rules every kind shares; strategic merge patches are refused (a CRD has no patch merge keys), and no
custom resource is created while its CRD is being deleted.
"""

from __future__ import annotations

from typing import Any

from pyop.api.status import ApiError, StatusCause
from pyop.apiserver.registry.strategy import Generation, RegistryContext, Strategy
from pyop.testing.builtins.kinds import crd_terminating
from pyop.testing.builtins.validation import validate_object
from pyop.testing.crds.validation import admit

_EVERY_CHANGE = Generation()


class SchemaStrategy(Strategy):
    generation: Generation | None = _EVERY_CHANGE
    supports_strategic_merge = False

    def check_create(self, ctx: RegistryContext) -> None:
        if crd_terminating(ctx.store, self.resource_type):
            raise ApiError(405, "create not allowed while custom resource definition is terminating")

    def prune(self, obj: dict[str, Any], field_validation: str, warnings: list[str]) -> dict[str, Any]:
        if self.resource_type.schema is None:
            return obj
        admitted, _ = admit(
            obj, self.resource_type.schema, field_validation=field_validation, warnings=warnings, validate=False
        )
        return admitted

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        causes = validate_object(self.resource_type, obj, old)  # the metadata rules every kind shares
        obj, schema_causes = admit(
            obj, self.resource_type.schema, old=old, field_validation=field_validation, warnings=warnings
        )
        return obj, [*causes, *schema_causes]


__all__ = ["SchemaStrategy"]
