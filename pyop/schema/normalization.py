"""Prune, drop non-nullable nulls and default in one walk, with the result of three passes.

kube-apiserver prunes unknown fields, then drops nulls, then applies defaults, each over the
whole object. Each pass only looks at a node and what is below it, so the three can be done
node by node in one walk: below a node, its fields are finished first (all three passes), then
the node's own null decisions and defaults are applied. A default inserted here is defaulted
inside but neither pruned nor null-pruned, exactly as when defaulting runs last. The test API
server normalizes every write, and one walk instead of three is a quarter of a small write.

``pruning.py`` and ``defaulting.py`` keep the passes one by one (their public functions); the
tests check this walk against them.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.schema.defaulting import defaulted_shared, nulls_pruned_shared
from pyop.schema.pruning import pruned_object_meta, pruned_unspecified
from pyop.schema.values import copy_json, mapped_shared

_RESOURCE_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})
_PRESERVE: Final = "x-kubernetes-preserve-unknown-fields"


def _null_goes(value: Any, schema: Any) -> bool:
    """prunenulls: a null where the schema says neither nullable nor a default to fill it."""
    return value is None and isinstance(schema, dict) and not schema.get("nullable") and schema.get("default") is None


def _fills_null(value: Any, schema: Any) -> bool:
    """defaulting: a null replaced by the default, because the field is not nullable."""
    return (
        value is None and isinstance(schema, dict) and not schema.get("nullable") and schema.get("default") is not None
    )


def _normalized(value: Any, schema: Any, preserving: bool, resource_root: bool) -> Any:
    """One node: ``value`` itself when nothing changes, else a new container sharing the rest.

    ``preserving`` is true for the items of a list under ``x-kubernetes-preserve-unknown-fields``,
    which keep unknown fields even when their own schema does not say so (as pruning does).
    """
    if not isinstance(schema, dict):
        return pruned_unspecified(value)  # nothing to default or null-prune without a schema
    if isinstance(value, dict):
        return _normalized_object(value, schema, preserving or bool(schema.get(_PRESERVE)), resource_root)
    if isinstance(value, list):
        return _normalized_list(value, schema, preserving or bool(schema.get(_PRESERVE)))
    return value


def _normalized_object(value: dict[str, Any], schema: dict[str, Any], preserving: bool, resource_root: bool) -> Any:
    embedded = resource_root or bool(schema.get("x-kubernetes-embedded-resource"))
    properties: dict[str, Any] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    additional_schema = additional if isinstance(additional, dict) else None
    result: dict[str, Any] | None = None  # the copy, made at the first change
    for name, item in value.items():
        if embedded and name in _RESOURCE_FIELDS:
            # Not pruned (embedded ObjectMeta is cut to its fields); nulls and defaults still apply.
            field_schema = properties.get(name, additional_schema)
            new_item = pruned_object_meta(item) if name == "metadata" and not resource_root else item
            if isinstance(field_schema, dict):
                new_item = defaulted_shared(nulls_pruned_shared(new_item, field_schema), field_schema)
        elif name in properties:
            field_schema = properties[name]
            # Scalars come out as they went in (the common case, decided without a call).
            new_item = _normalized(item, field_schema, False, False) if isinstance(item, dict | list) else item
        elif additional is not None and additional is not False:
            field_schema = additional_schema
            new_item = _normalized(item, field_schema, False, False) if isinstance(item, dict | list) else item
        elif preserving:
            continue  # an unknown field kept as it is: no schema for nulls or defaults either
        else:
            if result is None:
                result = dict(value)
            del result[name]
            continue
        if new_item is None:
            if _null_goes(new_item, field_schema):
                if result is None:
                    result = dict(value)
                del result[name]
                continue
            if name not in properties and isinstance(field_schema, dict) and _fills_null(new_item, field_schema):
                # A map value (additionalProperties); null properties are filled with the defaults below.
                new_item = defaulted_shared(copy_json(field_schema["default"]), field_schema)
        if new_item is not item:
            if result is None:
                result = dict(value)
            result[name] = new_item
    current = value if result is None else result
    for name, field_schema in properties.items():
        if not isinstance(field_schema, dict) or field_schema.get("default") is None:
            continue
        if name not in current or _fills_null(current[name], field_schema):
            if result is None:
                current = result = dict(value)
            result[name] = defaulted_shared(copy_json(field_schema["default"]), field_schema)
    return current


def _normalized_list(value: list[Any], schema: dict[str, Any], preserving: bool) -> Any:
    items = schema.get("items")
    if not isinstance(items, dict):
        # Pruning empties objects in a list without an item schema, unless unknown fields are kept.
        return value if preserving else pruned_unspecified(value)
    return mapped_shared(value, lambda _, item: _normalized_item(item, items, preserving))


def _normalized_item(item: Any, items: dict[str, Any], preserving: bool) -> Any:
    new_item = _normalized(item, items, preserving, False)
    if _fills_null(new_item, items):
        new_item = defaulted_shared(copy_json(items["default"]), items)
    return new_item


def normalized_shared(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> Any:
    """``apply_defaults(prune_nulls(prune(obj)))`` without copies: ``obj`` itself when nothing
    changes, else a new value sharing every untouched subtree (neither may be modified after)."""
    return _normalized(obj, schema, False, resource_root)
