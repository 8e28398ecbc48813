"""Structural defaulting and null pruning, in the order kube-apiserver applies them.

``apply_defaults`` follows ``schema/defaulting/algorithm.go``: at each object, a property with
a ``default`` is filled when missing (or null while not nullable); then every present field is
descended into — including one just defaulted — so nested defaults apply only where their
parent exists. Defaults are never applied at the root, and nothing is invented for a parent
that is absent and has no default of its own.
"""

from __future__ import annotations

from typing import Any

from pyop.schema.values import copy_json, mapped_shared


def _non_nullable_null(value: Any, schema: Any) -> bool:
    return value is None and isinstance(schema, dict) and not schema.get("nullable")


def _defaulted(value: Any, schema: Any) -> Any:
    """``value`` with defaults applied: ``value`` itself when none applies, else a new container
    sharing the untouched parts (``value`` is never modified)."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        result: dict[str, Any] | None = None  # the copy, made at the first change
        properties: dict[str, Any] = schema.get("properties") or {}
        for name, field_schema in properties.items():
            if not isinstance(field_schema, dict) or field_schema.get("default") is None:
                continue
            if name not in value or _non_nullable_null(value[name], field_schema):
                if result is None:
                    result = dict(value)
                result[name] = copy_json(field_schema["default"])
        current = value if result is None else result
        additional = schema.get("additionalProperties")
        for name, field_value in current.items():
            field_schema = properties.get(name)
            if field_schema is not None:
                new_value = _defaulted(field_value, field_schema)
            elif isinstance(additional, dict):
                new_value = field_value
                if _non_nullable_null(field_value, additional) and additional.get("default") is not None:
                    new_value = copy_json(additional["default"])
                new_value = _defaulted(new_value, additional)
            else:
                continue
            if new_value is not field_value:
                if result is None:
                    result = dict(value)
                result[name] = new_value  # an existing key: safe while iterating
        return value if result is None else result
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return value
        return mapped_shared(value, lambda _, item: _defaulted_item(item, items))
    return value


def _defaulted_item(item: Any, items: dict[str, Any]) -> Any:
    if _non_nullable_null(item, items) and items.get("default") is not None:
        item = copy_json(items["default"])
    return _defaulted(item, items)


def apply_defaults(obj: Any, schema: dict[str, Any]) -> Any:
    """A defaulted copy of ``obj`` (the input is not modified)."""
    return copy_json(defaulted_shared(obj, schema))


def defaulted_shared(obj: Any, schema: dict[str, Any]) -> Any:
    """``apply_defaults`` without the copy: ``obj`` itself when no default applies, else a new
    value sharing every untouched subtree with ``obj`` (neither may be modified in place)."""
    return _defaulted(obj, schema)


def _nulls_pruned(value: Any, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        result: dict[str, Any] | None = None
        for name, field_value in value.items():
            field_schema = properties.get(name, additional if isinstance(additional, dict) else None)
            if not isinstance(field_schema, dict):
                continue
            if _non_nullable_null(field_value, field_schema) and field_schema.get("default") is None:
                if result is None:
                    result = dict(value)
                del result[name]
                continue
            new_value = _nulls_pruned(field_value, field_schema)
            if new_value is not field_value:
                if result is None:
                    result = dict(value)
                result[name] = new_value
        return value if result is None else result
    if isinstance(value, list):
        items = schema.get("items")
        return mapped_shared(value, lambda _, item: _nulls_pruned(item, items))
    return value


def prune_nulls(obj: Any, schema: dict[str, Any]) -> Any:
    """A copy without ``null`` fields that are not nullable and have no default to replace them
    (``defaulting/prunenulls.go``); list items are left alone, as in Kubernetes."""
    return copy_json(nulls_pruned_shared(obj, schema))


def nulls_pruned_shared(obj: Any, schema: dict[str, Any]) -> Any:
    """``prune_nulls`` without the copy: ``obj`` itself when it has no such null, else a new value
    sharing every untouched subtree with ``obj`` (neither may be modified in place)."""
    return _nulls_pruned(obj, schema)
