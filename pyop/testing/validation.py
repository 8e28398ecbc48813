"""Admission of custom resources against their CRD schema: prune, default, validate.

The order is the API server's: unknown fields are pruned and defaults applied while decoding,
then the defaulted object is validated. ``apiVersion``, ``kind`` and ``metadata`` are handled by
the server itself (metadata is ObjectMeta, not part of the structural schema's pruning).
The schema engine is ``pyop.schema``; if it is not importable, custom resources are stored as sent.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from pyop.testing.errors import StatusCause

_IDENTITY_FIELDS = ("apiVersion", "kind", "metadata")

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


def _schema_module() -> Any | None:
    try:
        return importlib.import_module("pyop.schema")
    except ImportError:
        return None


def schema_engine_available() -> bool:
    module = _schema_module()
    return module is not None and all(
        hasattr(module, name) for name in ("validate", "apply_defaults", "prune")
    )


def _body_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _IDENTITY_FIELDS}
    return {**schema, "properties": properties}


def cause_from_field_error(error: Any) -> StatusCause:
    body = error.body() if hasattr(error, "body") else str(error)
    return StatusCause(reason=CAUSE_REASONS.get(error.type, error.type), message=body, field=error.field)


def admit(obj: dict[str, Any], schema: Mapping[str, Any] | None) -> tuple[dict[str, Any], list[StatusCause]]:
    """The object as it would be stored (pruned, defaulted) and the validation failures, if any."""
    engine = _schema_module()
    if schema is None or engine is None or not schema_engine_available():
        return obj, []
    body: Any = {k: v for k, v in obj.items() if k not in _IDENTITY_FIELDS}
    body_schema = _body_schema(schema)
    pruned = engine.prune(body, body_schema)
    body = body if pruned is None else pruned
    defaulted = engine.apply_defaults(body, body_schema)
    body = body if defaulted is None else defaulted
    errors = engine.validate(body, body_schema)
    admitted = {k: obj[k] for k in _IDENTITY_FIELDS if k in obj}
    admitted.update(body)
    return admitted, [cause_from_field_error(error) for error in errors]
