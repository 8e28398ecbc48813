"""Structural defaulting and null pruning, in the order kube-apiserver applies them.

``apply_defaults`` follows ``schema/defaulting/algorithm.go``: at each object, a property with
a ``default`` is filled when missing (or null while not nullable); then every present field is
descended into — including one just defaulted — so nested defaults apply only where their
parent exists. Defaults are never applied at the root, and nothing is invented for a parent
that is absent and has no default of its own.
"""

from __future__ import annotations

from typing import Any

from pyop.schema.values import copy_json


def _non_nullable_null(value: Any, schema: Any) -> bool:
    return value is None and isinstance(schema, dict) and not schema.get("nullable")


def _default_in_place(value: Any, schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties") or {}
        for name, field_schema in properties.items():
            if not isinstance(field_schema, dict) or field_schema.get("default") is None:
                continue
            if name not in value or _non_nullable_null(value[name], field_schema):
                value[name] = copy_json(field_schema["default"])
        additional = schema.get("additionalProperties")
        for name, field_value in value.items():
            field_schema = properties.get(name)
            if field_schema is not None:
                _default_in_place(field_value, field_schema)
            elif isinstance(additional, dict):
                if _non_nullable_null(field_value, additional) and additional.get("default") is not None:
                    value[name] = copy_json(additional["default"])
                _default_in_place(value[name], additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return
        for position, item in enumerate(value):
            if _non_nullable_null(item, items) and items.get("default") is not None:
                value[position] = copy_json(items["default"])
            _default_in_place(value[position], items)


def apply_defaults(obj: Any, schema: dict[str, Any]) -> Any:
    """A defaulted copy of ``obj`` (the input is not modified)."""
    return apply_defaults_in_place(copy_json(obj), schema)


def apply_defaults_in_place(obj: Any, schema: dict[str, Any]) -> Any:
    """``apply_defaults`` without the copy: ``obj`` itself is defaulted and returned."""
    _default_in_place(obj, schema)
    return obj


def _prune_nulls_in_place(value: Any, schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for name in list(value):
            field_schema = properties.get(name, additional if isinstance(additional, dict) else None)
            if not isinstance(field_schema, dict):
                continue
            if _non_nullable_null(value[name], field_schema) and field_schema.get("default") is None:
                del value[name]
            else:
                _prune_nulls_in_place(value[name], field_schema)
    elif isinstance(value, list):
        items = schema.get("items")
        for item in value:
            _prune_nulls_in_place(item, items)


def prune_nulls(obj: Any, schema: dict[str, Any]) -> Any:
    """A copy without ``null`` fields that are not nullable and have no default to replace them
    (``defaulting/prunenulls.go``); list items are left alone, as in Kubernetes."""
    return prune_nulls_in_place(copy_json(obj), schema)


def prune_nulls_in_place(obj: Any, schema: dict[str, Any]) -> Any:
    """``prune_nulls`` without the copy: ``obj`` itself is changed and returned."""
    _prune_nulls_in_place(obj, schema)
    return obj
