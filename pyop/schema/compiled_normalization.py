"""Normalization (prune, drop non-nullable nulls, default) and the unknown-field list, compiled per schema node.

``normalization.py`` interprets the schema on every write: at each node it looks the keywords up again and tests
what they are. A CRD version's schema does not change between writes, so here each node is turned once into a
closure that does only what its keywords ask (a field table, the defaults to fill, whether unknown fields go),
and a subtree that can never change (a ``x-kubernetes-preserve-unknown-fields`` status with nothing specified
below it) compiles to ``None``: its parent leaves the value alone without a call.

The closures give exactly the interpreter's results (``normalized_shared``, ``defaulted_shared``,
``nulls_pruned_shared``, ``unknown_fields``), sharing untouched subtrees the same way; the interpreter stays the
reference, and tests/schema/test_schema_compiled.py compares the two on generated schemas and objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from pyop.schema.compiled_memo import Guard
from pyop.schema.errors import child, index
from pyop.schema.pruning import OBJECT_META_FIELDS, pruned_object_meta, pruned_unspecified
from pyop.schema.values import copy_json

Transform = Callable[[Any], Any]
"""A value to its normalized (defaulted, null-pruned) form: the value itself when nothing changes."""
Collect = Callable[[Any, str, list[str]], None]
"""Appends the paths pruning would drop below a value (at ``path``) to the list."""

_RESOURCE_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})
_PRESERVE: Final = "x-kubernetes-preserve-unknown-fields"
_EMBEDDED: Final = "x-kubernetes-embedded-resource"
_CONTAINERS: Final = (dict, list)


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return properties if isinstance(properties, dict) else {}


def _non_nullable(schema: Any) -> bool:
    return isinstance(schema, dict) and not schema.get("nullable")


def _has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("default") is not None


def _shared_map(values: list[Any], transform: Transform) -> list[Any]:
    """``values.mapped_shared`` for a transform of the item alone (no position): the list itself when no item
    changes, else one copy sharing the unchanged items."""
    result: list[Any] | None = None
    for position, item in enumerate(values):
        new_item = transform(item)
        if new_item is not item:
            if result is None:
                result = list(values)
            result[position] = new_item
    return values if result is None else result


# --- defaulting (defaulting.py's _defaulted) ---------------------------------------------------------------


def compile_defaulting(schema: Any, guard: Guard) -> Transform | None:
    """``defaulted_shared(value, schema)`` as a closure; None when no default can apply below ``schema``."""
    return guard.run(("default", id(schema)), lambda: _defaulting(schema, guard))  # type: ignore[no-any-return]


def _filler(schema: Any, guard: Guard) -> Callable[[], Any]:
    """A fresh copy of ``schema``'s default, defaulted inside (a property or item that was missing or null)."""
    default = schema["default"]
    inner = compile_defaulting(schema, guard)
    if inner is None:
        return lambda: copy_json(default)
    return lambda: inner(copy_json(default))


def _defaulting(schema: Any, guard: Guard) -> Transform | None:
    if not isinstance(schema, dict):
        return None
    properties = _properties(schema)
    fills = [
        (name, not field_schema.get("nullable"), field_schema["default"])
        for name, field_schema in properties.items()
        if isinstance(field_schema, dict) and field_schema.get("default") is not None
    ]
    # Present fields whose own schema defaults something below them (in document order at run time).
    children = {name: compile_defaulting(field_schema, guard) for name, field_schema in properties.items()}
    additional = schema.get("additionalProperties")
    map_values: Transform | None = None
    map_fill: Callable[[], Any] | None = None
    if isinstance(additional, dict):
        map_values = compile_defaulting(additional, guard)
        if _non_nullable(additional) and _has_default(additional):
            map_fill = _filler(additional, guard)
    items = schema.get("items")
    item_fn = compile_defaulting(items, guard) if isinstance(items, dict) else None
    item_fill = _filler(items, guard) if _non_nullable(items) and _has_default(items) else None
    walk_fields = any(fn is not None for fn in children.values())
    walk_map = map_values is not None or map_fill is not None
    if not fills and not walk_fields and not walk_map and item_fn is None and item_fill is None:
        return None
    field_fns = {name: fn for name, fn in children.items() if fn is not None}
    # properties.get(name) is not None: such a field is the property's, any other the map's.
    property_names = {name for name, field_schema in properties.items() if field_schema is not None}

    def defaulted_object(value: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] | None = None
        for name, non_nullable, default in fills:
            if name not in value or (non_nullable and value[name] is None):
                if result is None:
                    result = dict(value)
                result[name] = copy_json(default)
        current = value if result is None else result
        if walk_fields or walk_map:
            for name, field_value in current.items():
                if name in property_names:
                    fn = field_fns.get(name)
                    if fn is None:
                        continue
                    new_value = fn(field_value)
                elif walk_map:
                    if map_fill is not None and field_value is None:
                        new_value = map_fill()  # copy of the default, defaulted inside
                    else:
                        new_value = map_values(field_value) if map_values is not None else field_value
                else:
                    continue
                if new_value is not field_value:
                    if result is None:
                        result = dict(value)
                    result[name] = new_value  # an existing key: safe while iterating
        return value if result is None else result

    def defaulted_item(item: Any) -> Any:
        if item_fill is not None and item is None:
            return item_fill()
        return item_fn(item) if item_fn is not None else item

    with_items = item_fn is not None or item_fill is not None

    def defaulted(value: Any) -> Any:
        if isinstance(value, dict):
            return defaulted_object(value)
        if with_items and isinstance(value, list):
            return _shared_map(value, defaulted_item)
        return value

    return defaulted


# --- null pruning (defaulting.py's _nulls_pruned) ----------------------------------------------------------


def compile_null_pruning(schema: Any, guard: Guard) -> Transform | None:
    """``nulls_pruned_shared(value, schema)`` as a closure; None when no null can be dropped below ``schema``."""
    return guard.run(("nulls", id(schema)), lambda: _null_pruning(schema, guard))  # type: ignore[no-any-return]


def _null_pruning(schema: Any, guard: Guard) -> Transform | None:
    if not isinstance(schema, dict):
        return None
    properties = _properties(schema)
    additional = schema.get("additionalProperties")
    additional_schema = additional if isinstance(additional, dict) else None
    # name -> (drop a null here, the closure below), None for a property whose schema is not an object (left
    # alone: properties.get(name, additional) finds it); other names use the map values' entry.
    entries: dict[str, tuple[bool, Transform | None] | None] = {}
    for name, field_schema in properties.items():
        if isinstance(field_schema, dict):
            goes = not field_schema.get("nullable") and field_schema.get("default") is None
            entries[name] = (goes, compile_null_pruning(field_schema, guard))
        else:
            entries[name] = None
    map_entry: tuple[bool, Transform | None] | None = None
    if additional_schema is not None:
        goes = not additional_schema.get("nullable") and additional_schema.get("default") is None
        map_entry = (goes, compile_null_pruning(additional_schema, guard))
    items = schema.get("items")
    item_fn = compile_null_pruning(items, guard)
    if all(entry is None for entry in entries.values()) and map_entry is None and item_fn is None:
        return None
    sentinel: Any = object()

    def pruned_object(value: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] | None = None
        for name, field_value in value.items():
            entry = entries.get(name, sentinel)
            if entry is sentinel:
                entry = map_entry
            if entry is None:
                continue
            goes, fn = entry
            if field_value is None:
                if goes:
                    if result is None:
                        result = dict(value)
                    del result[name]
                continue
            if fn is None:
                continue
            new_value = fn(field_value)
            if new_value is not field_value:
                if result is None:
                    result = dict(value)
                result[name] = new_value
        return value if result is None else result

    def pruned(value: Any) -> Any:
        if isinstance(value, dict):
            return pruned_object(value)
        if item_fn is not None and isinstance(value, list):
            return _shared_map(value, item_fn)
        return value

    return pruned


# --- the one-walk normalization (normalization.py) ---------------------------------------------------------


def compile_normalization(schema: Any, guard: Guard, preserving: bool = False, root: bool = False) -> Transform | None:
    """``normalized_shared`` at a node as a closure; None when the result is always the value itself."""
    key = ("normalize", id(schema), preserving, root)
    return guard.run(key, lambda: _normalization(schema, guard, preserving, root))  # type: ignore[no-any-return]


# What a field of an object does, decided per name when the object's schema is compiled.
_SKIP: Final = None  # nothing can change: the value is kept as it is


class _Field:
    """One field's treatment: its closure (on containers), whether a null goes or is filled, the metadata cut."""

    __slots__ = ("transform", "null_goes", "null_fill", "resource")

    def __init__(
        self,
        transform: Transform | None,
        null_goes: bool,
        null_fill: Callable[[], Any] | None,
        resource: Transform | None = None,
    ) -> None:
        self.transform = transform  # applied to dict and list values
        self.null_goes = null_goes
        self.null_fill = null_fill  # a map value's default replacing its null
        self.resource = resource  # an embedded resource's apiVersion/kind/metadata: applied to any value

    def trivial(self) -> bool:
        return self.transform is None and not self.null_goes and self.null_fill is None and self.resource is None


def _resource_field(name: str, field_schema: Any, in_properties: bool, root: bool, guard: Guard) -> _Field | None:
    """apiVersion, kind or metadata of an embedded resource: not pruned (embedded metadata is cut to ObjectMeta),
    nulls and defaults still apply."""
    cut = name == "metadata" and not root
    nulls = compile_null_pruning(field_schema, guard) if isinstance(field_schema, dict) else None
    defaults = compile_defaulting(field_schema, guard) if isinstance(field_schema, dict) else None
    steps = [step for step in ((_cut_metadata if cut else None), nulls, defaults) if step is not None]
    resource: Transform | None
    if not steps:
        resource = None
    elif len(steps) == 1:
        resource = steps[0]
    else:

        def resource(value: Any) -> Any:
            for step in steps:
                value = step(value)
            return value

    null_goes = _non_nullable(field_schema) and not _has_default(field_schema)
    fill = None
    if not in_properties and _non_nullable(field_schema) and _has_default(field_schema):
        fill = _filler(field_schema, guard)
    entry = _Field(None, null_goes, fill, resource)
    return None if entry.trivial() else entry


def _cut_metadata(value: Any) -> Any:
    if isinstance(value, dict):
        for name in value:
            if name not in OBJECT_META_FIELDS:
                return pruned_object_meta(value)
    return value


def _plain_field(field_schema: Any, in_properties: bool, guard: Guard) -> _Field | None:
    transform = compile_normalization(field_schema, guard)
    null_goes = _non_nullable(field_schema) and not _has_default(field_schema)
    fill = None
    if not in_properties and _non_nullable(field_schema) and _has_default(field_schema):
        fill = _filler(field_schema, guard)
    entry = _Field(transform, null_goes, fill)
    return None if entry.trivial() else entry


def _normalization(schema: Any, guard: Guard, preserving: bool, root: bool) -> Transform | None:
    if not isinstance(schema, dict):
        return pruned_unspecified  # nothing to default or null-prune without a schema
    preserving = preserving or bool(schema.get(_PRESERVE))
    object_fn = _object_normalization(schema, guard, preserving, root)
    list_fn = _list_normalization(schema, guard, preserving)
    if object_fn is None and list_fn is None:
        return None
    if list_fn is None:
        assert object_fn is not None
        dict_fn = object_fn
        return lambda value: dict_fn(value) if isinstance(value, dict) else value

    def normalized(value: Any) -> Any:
        if isinstance(value, dict):
            return object_fn(value) if object_fn is not None else value
        if isinstance(value, list):
            return list_fn(value)
        return value

    return normalized


_SCALARS: Final = frozenset({str, int, float, bool})
_GONE: Final = object()  # a field that null pruning removes


def _field_value(entry: _Field, item: Any) -> Any:
    """A field's normalized value (not a scalar: those stay as they are), or _GONE."""
    if entry.resource is not None:
        new_item = entry.resource(item)
    elif entry.transform is not None and isinstance(item, _CONTAINERS):
        new_item = entry.transform(item)
    else:
        new_item = item
    if new_item is None:
        if entry.null_goes:
            return _GONE
        if entry.null_fill is not None:
            return entry.null_fill()
    return new_item


def _changed(result: dict[str, Any] | None, value: dict[str, Any], name: str, new_item: Any) -> dict[str, Any]:
    """The object's copy with field ``name`` now ``new_item`` (_GONE: removed), copied from ``value`` at its first
    change: the untouched common write never copies."""
    if result is None:
        result = dict(value)
    if new_item is _GONE:
        del result[name]
    else:
        result[name] = new_item
    return result


_DROP: Final = object()  # an unknown field that pruning removes
_KEEP: Final = object()  # an unknown field kept as it is (preserve-unknown-fields): no schema below it either


def _object_normalization(
    schema: dict[str, Any], guard: Guard, preserving: bool, root: bool
) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    embedded = root or bool(schema.get(_EMBEDDED))
    properties = _properties(schema)
    additional = schema.get("additionalProperties")
    additional_schema = additional if isinstance(additional, dict) else None
    # Every name the schema knows: its entry (None: nothing to do). Other names: `unknown`.
    known: dict[str, _Field | None] = {}
    for name, field_schema in properties.items():
        known[name] = _plain_field(field_schema, True, guard)
    if embedded:
        for name in _RESOURCE_FIELDS:
            in_properties = name in properties
            field_schema = properties[name] if in_properties else additional_schema
            known[name] = _resource_field(name, field_schema, in_properties, root, guard)
    unknown: Any
    if additional is not None and additional is not False:
        unknown = _plain_field(additional_schema, False, guard)
    elif preserving:
        unknown = _KEEP
    else:
        unknown = _DROP
    fills = [
        (name, not field_schema.get("nullable"), _filler(field_schema, guard))
        for name, field_schema in properties.items()
        if isinstance(field_schema, dict) and field_schema.get("default") is not None
    ]
    if not fills and all(entry is None for entry in known.values()) and unknown in (None, _KEEP):
        return None
    unknown_entry: _Field | None = unknown if isinstance(unknown, _Field) else None
    drop_unknown = unknown is _DROP
    sentinel: Any = object()

    def fill_defaults(value: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
        current = value if result is None else result
        for name, non_nullable, fill in fills:
            if name not in current or (non_nullable and current[name] is None):
                if result is None:
                    current = result = dict(value)
                result[name] = fill()
        return current

    if unknown_entry is not None:
        # additionalProperties with work below: every field has an entry, in document order (as the interpreter).

        def normalized_map(value: dict[str, Any]) -> dict[str, Any]:
            result: dict[str, Any] | None = None  # the copy, made at the first change
            for name, item in value.items():
                entry = known.get(name, sentinel)
                if entry is sentinel:
                    entry = unknown_entry
                if entry is None or type(item) in _SCALARS:
                    continue  # every entry leaves strings, numbers and booleans as they are
                new_item = _field_value(entry, item)
                if new_item is not item:
                    result = _changed(result, value, name, new_item)
            return fill_defaults(value, result) if fills else (value if result is None else result)

        return normalized_map

    # Otherwise only the known fields with an entry need a look, in any order: each change goes to its own key of
    # the copy, so the result is the one the interpreter's walk in document order builds. Unknown fields are
    # dropped at once (or kept).
    active = [(name, entry) for name, entry in known.items() if entry is not None]
    known_names = frozenset(known)
    all_known = known_names.issuperset

    def normalized_object(value: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] | None = None  # the copy, made at the first change
        if drop_unknown and not all_known(value):
            result = {name: item for name, item in value.items() if name in known_names}
        value_get = value.get
        for name, entry in active:
            item = value_get(name, sentinel)
            if item is sentinel or type(item) in _SCALARS:
                continue
            new_item = _field_value(entry, item)
            if new_item is not item:
                result = _changed(result, value, name, new_item)
        return fill_defaults(value, result) if fills else (value if result is None else result)

    return normalized_object


def _list_normalization(
    schema: dict[str, Any], guard: Guard, preserving: bool
) -> Callable[[list[Any]], list[Any]] | None:
    items = schema.get("items")
    if not isinstance(items, dict):
        # Pruning empties objects in a list without an item schema, unless unknown fields are kept.
        return None if preserving else pruned_unspecified
    item_fn = compile_normalization(items, guard, preserving)
    fill = _filler(items, guard) if _non_nullable(items) and _has_default(items) else None
    if item_fn is None and fill is None:
        return None

    def normalized_item(item: Any) -> Any:
        new_item = item_fn(item) if item_fn is not None and isinstance(item, _CONTAINERS) else item
        if fill is not None and new_item is None:
            return fill()
        return new_item

    return lambda value: _shared_map(value, normalized_item)


# --- unknown fields (pruning.py's _pruned and _pruned_preserving, for the paths they drop) ------------------


def compile_unknown_fields(schema: Any, guard: Guard, root: bool = False, preserving: bool = False) -> Collect | None:
    """``unknown_fields`` below a node as a closure; None when nothing can be unknown there."""
    key = ("unknown", id(schema), root, preserving)
    return guard.run(key, lambda: _unknown_fields(schema, guard, root, preserving))  # type: ignore[no-any-return]


def _drop_everything(value: Any, path: str, dropped: list[str]) -> None:
    """No schema (``additionalProperties: true``, a list without items): every field of an object is unknown."""
    if isinstance(value, dict):
        dropped.extend(child(path, name) for name in value)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            if isinstance(item, _CONTAINERS):
                _drop_everything(item, index(path, position), dropped)


def _metadata_unknown(value: Any, path: str, dropped: list[str]) -> None:
    if isinstance(value, dict):
        dropped.extend(child(path, name) for name in value if name not in OBJECT_META_FIELDS)


def _unknown_fields(schema: Any, guard: Guard, root: bool, preserving: bool) -> Collect | None:
    if not isinstance(schema, dict):
        return _drop_everything
    # `preserving` is pruning's _pruned_preserving (a preserving node, or an item of a preserving list).
    preserving = preserving or bool(schema.get(_PRESERVE))
    embedded = root or bool(schema.get(_EMBEDDED))
    properties = _properties(schema)
    additional = schema.get("additionalProperties")
    known: dict[str, Collect | None] = {
        name: compile_unknown_fields(field_schema, guard) for name, field_schema in properties.items()
    }
    if embedded:
        for name in _RESOURCE_FIELDS:
            known[name] = _metadata_unknown if name == "metadata" and not root else None
    unknown: Any
    if additional is not None and additional is not False:
        unknown = compile_unknown_fields(additional if isinstance(additional, dict) else None, guard)
    else:
        unknown = _KEEP if preserving else _DROP
    items = schema.get("items")
    item_fn: Collect | None
    if preserving:
        item_fn = compile_unknown_fields(items, guard, preserving=True) if isinstance(items, dict) else None
    else:
        item_fn = compile_unknown_fields(items if isinstance(items, dict) else None, guard)
    object_trivial = all(fn is None for fn in known.values()) and unknown in (None, _KEEP)
    if object_trivial and item_fn is None:
        return None
    sentinel = object()

    def collect(value: Any, path: str, dropped: list[str]) -> None:
        if isinstance(value, dict):
            if object_trivial:
                return
            for name, item in value.items():
                fn = known.get(name, sentinel)
                if fn is sentinel:
                    if unknown is _DROP:
                        dropped.append(child(path, name))
                        continue
                    if unknown is _KEEP:
                        continue
                    fn = unknown
                if fn is not None and isinstance(item, _CONTAINERS):
                    fn(item, child(path, name), dropped)  # type: ignore[operator]
        elif item_fn is not None and isinstance(value, list):
            for position, item in enumerate(value):
                if isinstance(item, _CONTAINERS):
                    item_fn(item, index(path, position), dropped)

    return collect


__all__ = [
    "Collect",
    "Transform",
    "compile_defaulting",
    "compile_normalization",
    "compile_null_pruning",
    "compile_unknown_fields",
]
