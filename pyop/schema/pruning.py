"""Unknown-field pruning (``schema/pruning/algorithm.go``).

Fields a structural schema does not specify are dropped unless
``x-kubernetes-preserve-unknown-fields: true`` says to keep them. A resource root and every
``x-kubernetes-embedded-resource`` object keep ``apiVersion``, ``kind`` and ``metadata``;
embedded ``metadata`` is cut down to ObjectMeta's fields, as the API server's decoding does.
``additionalProperties: true`` keeps the keys of a map but prunes inside its values (no schema
there), exactly like the API server.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.schema.errors import child, index
from pyop.schema.values import copy_json

_RESOURCE_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})
OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


def _prune_in_place(value: Any, schema: Any, path: str, resource_root: bool, dropped: list[str]) -> None:
    if isinstance(schema, dict) and schema.get("x-kubernetes-preserve-unknown-fields"):
        _descend_preserving(value, schema, path, resource_root, dropped)
        return
    if isinstance(value, dict):
        if not isinstance(schema, dict):
            dropped.extend(child(path, name) for name in value)
            value.clear()
            return
        embedded = resource_root or bool(schema.get("x-kubernetes-embedded-resource"))
        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for name in list(value):
            field_path = child(path, name)
            if embedded and name in _RESOURCE_FIELDS:
                if name == "metadata" and not resource_root:
                    _prune_object_meta(value[name], field_path, dropped)
                continue
            if name in properties:
                _prune_in_place(value[name], properties[name], field_path, False, dropped)
            elif additional is not None and additional is not False:
                _prune_in_place(
                    value[name],
                    additional if isinstance(additional, dict) else None,
                    field_path,
                    False,
                    dropped,
                )
            else:
                dropped.append(field_path)
                del value[name]
    elif isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        for position, item in enumerate(value):
            _prune_in_place(item, items, index(path, position), False, dropped)


def _descend_preserving(value: Any, schema: dict[str, Any], path: str, resource_root: bool, dropped: list[str]) -> None:
    """Keep unknown fields here, but still prune below the properties that are specified."""
    if isinstance(value, dict):
        embedded = resource_root or bool(schema.get("x-kubernetes-embedded-resource"))
        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for name, item in value.items():
            if embedded and name in _RESOURCE_FIELDS:
                if name == "metadata" and not resource_root:
                    _prune_object_meta(item, child(path, name), dropped)
                continue
            if name in properties:
                _prune_in_place(item, properties[name], child(path, name), False, dropped)
            elif additional is not None and additional is not False:
                sub_schema = additional if isinstance(additional, dict) else None
                _prune_in_place(item, sub_schema, child(path, name), False, dropped)
    elif isinstance(value, list):
        # Items of a preserving list preserve too (pruning's skipPrune recursion).
        items = schema.get("items")
        if isinstance(items, dict):
            for position, item in enumerate(value):
                _descend_preserving(item, items, index(path, position), False, dropped)


def _prune_object_meta(metadata: Any, path: str, dropped: list[str]) -> None:
    if not isinstance(metadata, dict):
        return
    for name in list(metadata):
        if name not in OBJECT_META_FIELDS:
            dropped.append(child(path, name))
            del metadata[name]


def prune(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> Any:
    """A copy of ``obj`` without the fields the schema does not specify.

    ``resource_root`` (default True) treats ``obj`` as a whole custom resource, whose
    ``apiVersion``/``kind``/``metadata`` are never pruned (the API server owns them).
    """
    return prune_in_place(copy_json(obj), schema, resource_root=resource_root)


def prune_in_place(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> Any:
    """``prune`` without the copy: ``obj`` itself is pruned and returned (for callers that own it)."""
    _prune_in_place(obj, schema, "", resource_root, [])
    return obj


def unknown_fields(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> list[str]:
    """Paths ``prune`` would drop, in document order (``spec.foo``, ``spec.items[0].bar``).

    These are the fields ``kubectl apply --validate=strict`` reports as ``unknown field``.
    """
    dropped: list[str] = []
    _prune_in_place(copy_json(obj), schema, "", resource_root, dropped)
    return dropped
