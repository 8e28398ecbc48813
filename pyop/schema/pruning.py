"""Unknown-field pruning (``schema/pruning/algorithm.go``).

Fields a structural schema does not specify are dropped unless
``x-kubernetes-preserve-unknown-fields: true`` says to keep them. A resource root and every
``x-kubernetes-embedded-resource`` object keep ``apiVersion``, ``kind`` and ``metadata``;
embedded ``metadata`` is cut down to ObjectMeta's fields, as the API server's decoding does.
``additionalProperties: true`` keeps the keys of a map but prunes inside its values (no schema
there), exactly like the API server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from pyop.schema.errors import child, index
from pyop.schema.values import copy_json, mapped_shared

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


def _pruned(value: Any, schema: Any, path: str, resource_root: bool, dropped: list[str]) -> Any:
    """``value`` without unknown fields: ``value`` itself when nothing goes, else a new container
    that shares the untouched parts (``value`` is never modified)."""
    if isinstance(schema, dict) and schema.get("x-kubernetes-preserve-unknown-fields"):
        return _pruned_preserving(value, schema, path, resource_root, dropped)
    if isinstance(value, dict):
        if not isinstance(schema, dict):
            if not value:
                return value
            dropped.extend(child(path, name) for name in value)
            return {}
        embedded = resource_root or bool(schema.get("x-kubernetes-embedded-resource"))
        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        result: dict[str, Any] | None = None  # the copy, made at the first change
        for name, item in value.items():
            if embedded and name in _RESOURCE_FIELDS:
                if name != "metadata" or resource_root:
                    continue
                new_item = _pruned_object_meta(item, child(path, name), dropped)
            elif name in properties:
                new_item = _pruned(item, properties[name], child(path, name), False, dropped)
            elif additional is not None and additional is not False:
                sub_schema = additional if isinstance(additional, dict) else None
                new_item = _pruned(item, sub_schema, child(path, name), False, dropped)
            else:
                dropped.append(child(path, name))
                if result is None:
                    result = dict(value)
                del result[name]
                continue
            if new_item is not item:
                if result is None:
                    result = dict(value)
                result[name] = new_item
        return value if result is None else result
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return _pruned_items(value, items, path, dropped, _pruned)
    return value


def _pruned_items(
    values: list[Any],
    items: Any,
    path: str,
    dropped: list[str],
    prune_item: Callable[[Any, Any, str, bool, list[str]], Any],
) -> list[Any]:
    return mapped_shared(values, lambda position, item: prune_item(item, items, index(path, position), False, dropped))


def _pruned_preserving(value: Any, schema: dict[str, Any], path: str, resource_root: bool, dropped: list[str]) -> Any:
    """Keep unknown fields here, but still prune below the properties that are specified."""
    if isinstance(value, dict):
        embedded = resource_root or bool(schema.get("x-kubernetes-embedded-resource"))
        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        result: dict[str, Any] | None = None
        for name, item in value.items():
            if embedded and name in _RESOURCE_FIELDS:
                if name != "metadata" or resource_root:
                    continue
                new_item = _pruned_object_meta(item, child(path, name), dropped)
            elif name in properties:
                new_item = _pruned(item, properties[name], child(path, name), False, dropped)
            elif additional is not None and additional is not False:
                sub_schema = additional if isinstance(additional, dict) else None
                new_item = _pruned(item, sub_schema, child(path, name), False, dropped)
            else:
                continue
            if new_item is not item:
                if result is None:
                    result = dict(value)
                result[name] = new_item
        return value if result is None else result
    if isinstance(value, list):
        # Items of a preserving list preserve too (pruning's skipPrune recursion).
        items = schema.get("items")
        if isinstance(items, dict):
            return _pruned_items(value, items, path, dropped, _pruned_preserving)
    return value


def _pruned_object_meta(metadata: Any, path: str, dropped: list[str]) -> Any:
    if not isinstance(metadata, dict) or all(name in OBJECT_META_FIELDS for name in metadata):
        return metadata
    kept = {}
    for name, item in metadata.items():
        if name in OBJECT_META_FIELDS:
            kept[name] = item
        else:
            dropped.append(child(path, name))
    return kept


def prune(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> Any:
    """A copy of ``obj`` without the fields the schema does not specify.

    ``resource_root`` (default True) treats ``obj`` as a whole custom resource, whose
    ``apiVersion``/``kind``/``metadata`` are never pruned (the API server owns them).
    """
    return copy_json(pruned_shared(obj, schema, resource_root=resource_root))


def pruned_shared(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> Any:
    """``prune`` without the copy: ``obj`` itself when nothing is unknown, else a new value that
    shares every untouched subtree with ``obj``. ``obj`` is never modified; the result must not
    be modified in place either (it may be ``obj`` or contain parts of it)."""
    return _pruned(obj, schema, "", resource_root, [])


def pruned_object_meta(metadata: Any) -> Any:
    """An embedded resource's ``metadata`` cut to ObjectMeta's fields (shared when nothing goes)."""
    return _pruned_object_meta(metadata, "", [])


def pruned_unspecified(value: Any) -> Any:
    """A value where the schema specifies nothing (``additionalProperties: true``): objects in it
    are emptied, lists descended (shared when nothing goes)."""
    return _pruned(value, None, "", False, [])


def unknown_fields(obj: Any, schema: dict[str, Any], *, resource_root: bool = True) -> list[str]:
    """Paths ``prune`` would drop, in document order (``spec.foo``, ``spec.items[0].bar``).

    These are the fields ``kubectl apply --validate=strict`` reports as ``unknown field``.
    """
    dropped: list[str] = []
    _pruned(obj, schema, "", resource_root, dropped)
    return dropped
