"""Kinds defined by an OpenAPI schema (apiextensions-apiserver's customresource strategy): admission against the
schema (prune, default, validate) and the registry strategy built on it.

Used for the test API server's custom resources (`pyop.testing.crds.strategy` adds the CRD-being-deleted check) and
for an aggregated server's kinds (`registry.aggregated`, whose schemas come from the models). Every such kind has a
generation; its status is a subresource's or part of the object as its definition says; its body is pruned,
defaulted and validated against the served version's schema after the metadata rules every kind shares; strategic
merge patches are refused (a schema has no patch merge keys).

The order of `admit` is the API server's: unknown fields are pruned, non-nullable nulls dropped and defaults applied
while decoding, then the result is validated (with the stored object as ``oldSelf`` for transition rules on update).
The schema engine is ``pyop.schema``; the registry passes each served version's schema compiled once
(``ResourceType.compiled_schema``, `pyop.schema.compiled`), interpreted otherwise, with the same result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyop import schema as schema_engine
from pyop.api.status import StatusCause, bad_request
from pyop.apiserver.registry.object_meta import validate_object_meta
from pyop.apiserver.registry.strategy import Generation, Strategy
from pyop.schema.compiled import CompiledSchema, InterpretedSchema
from pyop.schema.ratcheting import ratchet

# field.ErrorType display strings -> the ``reason`` of a Status cause (metav1.CauseType).
CAUSE_REASONS = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Forbidden": "FieldValueForbidden",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Duplicate value": "FieldValueDuplicate",
    "Not found": "FieldValueNotFound",
    "Internal error": "InternalError",
    "Unknown field": "FieldValueUnknown",
}


def unknown_field_warning(path: str) -> str:
    return f'unknown field "{path}"'


def strict_error_text(paths: list[str]) -> str:
    """The 400 of ``fieldValidation=Strict`` (kube's strict decoding error)."""
    return "strict decoding error: " + ", ".join(unknown_field_warning(path) for path in paths)


def cause_from_field_error(error: schema_engine.FieldError) -> StatusCause:
    return StatusCause(reason=CAUSE_REASONS.get(error.type, error.type), message=error.body(), field=error.field)


def admit(
    obj: dict[str, Any],
    schema: Mapping[str, Any] | None,
    *,
    old: dict[str, Any] | None = None,
    field_validation: str = "Warn",
    warnings: list[str] | None = None,
    validate: bool = True,
    compiled: CompiledSchema | None = None,
    ratcheting: bool = False,
) -> tuple[dict[str, Any], list[StatusCause]]:
    """The object as it would be stored (pruned, defaulted) and the validation failures, if any.

    The result shares every subtree that admission leaves alone with ``obj`` (a copy of the
    whole object per write used to be its largest cost); the registry never modifies stored
    objects in place, so sharing is safe.
    ``field_validation`` is the request's ``fieldValidation``: ``Strict`` makes unknown fields a 400,
    ``Warn`` (the API's default) appends an ``unknown field "<path>"`` text per dropped field to
    ``warnings``, ``Ignore`` drops them silently.
    ``validate=False`` only decodes (what mutating webhooks are shown before the object is validated).
    ``compiled``: ``schema`` compiled (the served version's ``ResourceType.compiled_schema``); without it the
    schema is interpreted, with the same result. ``ratcheting``: on an update, errors in parts ``old`` already
    had unchanged are dropped (custom resources' validation ratcheting, `pyop.schema.ratcheting`).
    """
    if schema is None:
        return obj, []
    engine = compiled if compiled is not None else InterpretedSchema(schema)
    admitted = engine.normalize(obj)
    assert isinstance(admitted, dict)
    # Normalization drops every unknown field, so an object it leaves as it is has none: the common write costs
    # no second walk (normalizing first changes nothing else: it never modifies ``obj``).
    if admitted is not obj:
        if field_validation == "Strict":
            unknown = engine.unknown_fields(obj)
            if unknown:
                raise bad_request(strict_error_text(unknown))
        elif field_validation == "Warn" and warnings is not None:
            warnings.extend(unknown_field_warning(path) for path in engine.unknown_fields(obj))
    if not validate:
        return admitted, []
    errors = engine.validate(admitted, old if old is not None else schema_engine.ABSENT)
    if errors and ratcheting and old is not None:
        errors = ratchet(errors, admitted, old, schema)
    return admitted, [cause_from_field_error(error) for error in errors] if errors else []


_EVERY_CHANGE = Generation()


class SchemaStrategy(Strategy):
    """The registry strategy of a kind defined by its schema (see the module docstring)."""

    generation: Generation | None = _EVERY_CHANGE
    supports_strategic_merge = False
    # Custom resources' updates ratchet (apiextensions-apiserver's CRDValidationRatcheting, on since 1.30).
    ratcheting = True

    def prune(self, obj: dict[str, Any], field_validation: str, warnings: list[str]) -> dict[str, Any]:
        if self.resource_type.schema is None:
            return obj
        admitted, _ = admit(
            obj,
            self.resource_type.schema,
            field_validation=field_validation,
            warnings=warnings,
            validate=False,
            compiled=self.resource_type.compiled_schema,
        )
        return admitted

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        causes = list(validate_object_meta(obj.get("metadata") or {}))  # the metadata rules every kind shares
        obj, schema_causes = admit(
            obj,
            self.resource_type.schema,
            old=old,
            field_validation=field_validation,
            warnings=warnings,
            compiled=self.resource_type.compiled_schema,
            ratcheting=self.ratcheting,
        )
        if not causes:
            return obj, schema_causes  # the valid write's: no third list
        return obj, [*causes, *schema_causes]


__all__ = [
    "CAUSE_REASONS",
    "SchemaStrategy",
    "admit",
    "cause_from_field_error",
    "strict_error_text",
    "unknown_field_warning",
]
