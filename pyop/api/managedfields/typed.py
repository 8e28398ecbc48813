"""Values walked by their schema: the field set of a value, the merge of an applied configuration into a live
object, the comparison of two versions of an object and the removal of a set's fields from a value.

These are structured-merge-diff's ``ToFieldSet``, ``Merge``, ``Compare``, ``RemoveItems`` and
``EnsureNamedFieldsAreMembers`` over plain JSON values. Inputs are never modified: results share every
unchanged subtree with their inputs (stored objects are shared between versions, so this is both safe and cheap).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyop.api.managedfields.fieldpath import (
    SELF,
    FieldSet,
    children,
    index_element,
    insert,
    is_member,
    key_element,
    make,
    value_element,
)
from pyop.api.managedfields.schema import DEDUCED, LIST, MAP, UNTYPED, Type

_MISSING: Any = object()
_LEAF, _MAP, _LIST = 0, 1, 2
_SCALARS = (str, int, float, bool)  # JSON scalars but null: leaves whatever the schema says
_CONTAINERS = (dict, list)  # a tuple: ``isinstance(x, dict | list)`` builds the union at every call (4x slower)


class SchemaError(ValueError):
    """A value that the schema cannot place (a map list item without its key, duplicate keys)."""


def _shape(t: Type, value: Any) -> int:
    kind = t.kind
    if kind == MAP:
        return _MAP if not t.atomic and isinstance(value, dict) else _LEAF
    if kind == LIST:
        return _LIST if not t.atomic and isinstance(value, list) else _LEAF
    if kind == UNTYPED and isinstance(value, dict):
        return _MAP
    return _LEAF


_KEY_ELEMENTS: dict[tuple[Any, ...], str] = {}  # (key names, *values) -> the item's k: element
_KEY_ELEMENTS_SIZE = 4096


def item_element(t: Type, index: int, item: Any) -> str:
    """The path element of a list item: its key fields, its value (sets) or its index (atomic lists).

    A map list item's element is looked up by its key values when they are strings and ints (their JSON is not
    written again: an apply finds each item's element up to five times, in the field set, the merge and the
    comparison); a value of another type (1.0 and True equal 1 as dict keys) is written each time."""
    names = t.keys
    if names:
        if not isinstance(item, dict):
            raise SchemaError(f"element {index}: associative list with keys has an element that is not a map")
        values: list[Any] = []
        cacheable = True
        for name in names:
            value = item.get(name)
            if value is None:
                if name not in t.key_defaults:
                    raise SchemaError(
                        f'element {index}: associative list with keys has an element that omits key field "{name}" '
                        "(and doesn't have default value)"
                    )
                value = t.key_defaults[name]
            kind = type(value)
            if kind is not str and kind is not int:
                cacheable = False
            values.append(value)
        if not cacheable:
            return key_element(dict(zip(names, values, strict=True)))
        lookup = (names, *values)
        found = _KEY_ELEMENTS.get(lookup)
        if found is None:
            if len(_KEY_ELEMENTS) >= _KEY_ELEMENTS_SIZE:
                _KEY_ELEMENTS.clear()
            found = _KEY_ELEMENTS[lookup] = key_element(dict(zip(names, values, strict=True)))
        return found
    if t.atomic:
        return index_element(index)
    return value_element(item)


def to_field_set(value: Any, t: Type, *, allow_duplicates: bool = False) -> FieldSet:
    """Every leaf and every list or map item of ``value``, as SMD's ``ToFieldSet``."""
    node: FieldSet = {}
    _fill(value, t, node, allow_duplicates)
    return node


def _fill(value: Any, t: Type, node: FieldSet, allow_duplicates: bool) -> None:
    shape = _shape(t, value)
    if shape == _MAP:
        untyped = t.kind == UNTYPED
        fields = t.fields
        other_type = t.element or DEDUCED  # what t.child(key) gives for a key that is not a named field
        for key, item in value.items():
            if item is None or type(item) in _SCALARS:
                node["f:" + key] = {}  # a leaf whatever its type says: a member with nothing below
                continue
            child_type = fields.get(key) or other_type
            below: FieldSet = {}
            child_shape = _shape(child_type, item)
            if child_shape != _LEAF:
                try:
                    _fill(item, child_type, below, allow_duplicates)
                except SchemaError as error:
                    raise _prefixed(error, "f:" + key) from None
            member = child_shape == _LEAF or item == {} or untyped or key not in fields
            entry = make(member, below)
            if entry is not None:
                node["f:" + key] = entry
    elif shape == _LIST:
        element_type = t.element or DEDUCED
        for index, item in enumerate(value):
            element = item_element(t, index, item)
            if element in node:
                if allow_duplicates:
                    continue
                raise SchemaError(f"duplicate entries for key {_printable(element)}")
            below = {}
            if _shape(element_type, item) != _LEAF:
                try:
                    _fill(item, element_type, below, allow_duplicates)
                except SchemaError as error:
                    raise _prefixed(error, element) from None
            node[element] = make(True, below)


def added_field_set(value: Any, t: Type) -> FieldSet:
    """The paths below a value that is new as a whole: what ``compare`` reports as added against nothing
    (every leaf, and every map and list item itself too)."""
    node: FieldSet = {}
    shape = _shape(t, value)
    if shape == _MAP:
        fields = t.fields
        other_type = t.element or DEDUCED  # what t.child(key) gives for a key that is not a named field
        for key, item in value.items():
            if isinstance(item, _CONTAINERS) and item:
                below = added_field_set(item, fields.get(key) or other_type)
                node["f:" + key] = {SELF: {}, **below} if below else {}
            else:
                node["f:" + key] = {}  # a leaf, null or an empty map or list
    elif shape == _LIST:
        element_type = t.element or DEDUCED
        for index, item in enumerate(value):
            try:
                element = item_element(t, index, item)
            except SchemaError:
                element = index_element(index)
            if element in node:
                continue
            below = added_field_set(item, element_type) if isinstance(item, _CONTAINERS) and item else {}
            node[element] = {SELF: {}, **below} if below else {}
    return node


def _printable(element: str) -> str:
    from pyop.api.managedfields.fieldpath import path_string

    return path_string((element,))


def _prefixed(error: SchemaError, element: str) -> SchemaError:
    text = str(error)
    separator = "" if text.startswith((".", "[")) else ": "
    return SchemaError(_printable(element) + separator + text)


def merge(live: Any, applied: Any, t: Type) -> Any:
    """``applied`` merged into ``live``: granular maps by key and map lists and sets by item, live order first
    and new items after; scalars, atomic values and mismatched shapes are replaced. ``None`` results drop the
    field. Whatever the configuration does not change is ``live``'s own value (the very object), so that what
    comes after (comparison, validation, decoding) can skip it by identity."""
    if live is _MISSING:
        return applied
    if applied is _MISSING or live is applied:
        return live
    shape = _shape(t, live)
    if shape == _LEAF or shape != _shape(t, applied) or (not live and not applied):
        return live if live == applied and type(live) is type(applied) else applied
    if shape == _MAP:
        out: dict[str, Any] | None = None  # copied on the first change: most applies change a value or two
        fields = t.fields
        other_type = t.element or DEDUCED
        for key, item in applied.items():
            current = live.get(key, _MISSING)
            if type(item) in _SCALARS:
                if type(current) is type(item) and current == item:
                    continue  # an equal scalar: merge gives live's own value
                merged = item  # a scalar replaces whatever was there
            else:
                merged = merge(current, item, fields.get(key) or other_type)
            if merged is None:
                if current is not _MISSING:
                    if out is None:
                        out = dict(live)
                    del out[key]
            elif merged is not current:
                if out is None:
                    out = dict(live)
                out[key] = merged
        return live if out is None else out
    element_type = t.element or DEDUCED
    incoming: dict[str, Any] = {}
    order: list[str] = []
    for index, item in enumerate(applied):
        element = item_element(t, index, item)
        if element not in incoming:
            order.append(element)
        incoming[element] = item
    result, seen, same = _merged_items(
        t, live, incoming, lambda item, element: merge(item, incoming[element], element_type)
    )
    added = [incoming[element] for element in order if element not in seen]
    if same and not added:
        return live
    result.extend(added)
    return result


def _merged_items(
    t: Type, live: list[Any], incoming: dict[str, Any], merge_one: Callable[[Any, str], Any]
) -> tuple[list[Any], set[str], bool]:
    """A map list's or set's live items, each one whose key the configuration has (``incoming``, by element) merged
    with it by ``merge_one(item, element)``; the first live item of a key only, and an item whose key cannot be
    read kept as it is, as structured-merge-diff's merge does. Returns the items, the keys paired and whether
    every merge returned its live item (then the live list itself can stand)."""
    merged: list[Any] = []
    seen: set[str] = set()
    same = True
    for index, item in enumerate(live):
        try:
            element = item_element(t, index, item)
        except SchemaError:
            merged.append(item)
            continue
        if element in incoming and element not in seen:
            seen.add(element)
            merged_item = merge_one(item, element)
            same = same and merged_item is item
            merged.append(merged_item)
        else:
            merged.append(item)
    return merged, seen, same


class Comparison:
    """What changed between two versions of an object, as sets of paths (a slots class: one per write)."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: FieldSet = {}
        self.modified: FieldSet = {}
        self.removed: FieldSet = {}

    def is_same(self) -> bool:
        return not (self.added or self.modified or self.removed)


def compare(old: Any, new: Any, t: Type, *, skip_metadata: frozenset[str] = frozenset()) -> Comparison:
    """SMD's ``Compare``: leaves added, modified and removed, plus maps and items added or removed as a whole.
    Subtrees shared by both versions (the same object) are skipped without a walk. ``skip_metadata``: keys of
    two objects' ``metadata`` left out (``managedFields``: never compared, as kube-apiserver strips it first)."""
    comparison = Comparison()
    if skip_metadata and isinstance(old, dict) and isinstance(new, dict):
        _compare_map(old, new, t, (), comparison, skip_metadata)
    else:
        _compare(old, new, t, (), comparison)
    return comparison


def _compare_map(
    old_map: dict[str, Any],
    new_map: dict[str, Any],
    t: Type,
    path: tuple[str, ...],
    result: Comparison,
    skip_metadata: frozenset[str] = frozenset(),
    *,
    skip: frozenset[str] = frozenset(),
) -> None:
    """The entries of two maps compared (``skip``: keys of these maps left out)."""
    fields = t.fields
    other_type = t.element or DEDUCED  # t.child(key) for a key that is not a named field
    for key, item in old_map.items():
        if key in skip:
            continue
        other = new_map.get(key, _MISSING)
        if other is item:
            continue  # shared: the common case, decided without a call
        if type(item) in _SCALARS and type(other) in _SCALARS:
            if item != other:  # two leaves: modified unless equal (1 and 1.0 are, as _compare finds)
                insert(result.modified, (*path, "f:" + key))
            continue
        if skip_metadata and key == "metadata" and isinstance(item, dict) and isinstance(other, dict):
            _compare_map(item, other, fields.get(key) or other_type, (*path, "f:" + key), result, skip=skip_metadata)
            continue
        _compare(item, other, fields.get(key) or other_type, (*path, "f:" + key), result)
    for key, item in new_map.items():
        if key not in old_map and key not in skip:
            _compare(_MISSING, item, fields.get(key) or other_type, (*path, "f:" + key), result)


def _compare(old: Any, new: Any, t: Type, path: tuple[str, ...], result: Comparison) -> None:
    if old is new:
        return
    if old is not _MISSING and new is not _MISSING and type(old) is type(new) and old == new:
        return  # equal subtrees: one comparison in C instead of a walk
    old_shape = _shape(t, old) if old is not _MISSING else None
    new_shape = _shape(t, new) if new is not _MISSING else None
    shape = old_shape if new_shape is None else new_shape if old_shape is None else old_shape
    if old_shape is not None and new_shape is not None and old_shape != new_shape:
        shape = _LEAF
    if shape != _LEAF and not (old if old is not _MISSING else None) and not (new if new is not _MISSING else None):
        shape = _LEAF
    if shape == _LEAF:
        if old is _MISSING:
            insert(result.added, path)
        elif new is _MISSING:
            insert(result.removed, path)
        elif old != new:
            insert(result.modified, path)
        return
    if shape == _MAP:
        _compare_map(old if old is not _MISSING else {}, new if new is not _MISSING else {}, t, path, result)
    else:
        element_type = t.element or DEDUCED
        old_items = _items_by_element(t, old if old is not _MISSING else [])
        new_items = _items_by_element(t, new if new is not _MISSING else [])
        for element, item in old_items.items():
            _compare(item, new_items.get(element, _MISSING), element_type, (*path, element), result)
        for element, item in new_items.items():
            if element not in old_items:
                _compare(_MISSING, item, element_type, (*path, element), result)
    if old is _MISSING:
        insert(result.added, path)
    elif new is _MISSING:
        insert(result.removed, path)


def merge_and_compare(live: Any, applied: Any, t: Type) -> tuple[Any, FieldSet, Comparison] | None:
    """``merge(live, applied, t)``, ``to_field_set(applied, t)`` and ``compare(live, merged, t,
    skip_metadata={"managedFields"})`` in one walk of ``applied`` (an apply's three walks of its configuration):
    where merge recurses into two maps, each applied entry is merged, filled in and compared at once, and the live
    entries it does not touch are shared, so the comparison need not visit them. Lists and replaced values are
    handed to the general functions. None when the general path must answer: the objects are not two maps merge
    recurses into (or are one), the configuration carries ``metadata.managedFields`` (the comparison skips it),
    or a value does not fit the schema (the general path raises the error, as ``to_field_set`` words it)."""
    if live is applied or not isinstance(live, dict) or not isinstance(applied, dict) or not (live or applied):
        return None
    if _shape(t, live) != _MAP or _shape(t, applied) != _MAP:
        return None
    metadata = applied.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        return None
    result = Comparison()
    fields: FieldSet = {}
    try:
        merged = _merge_map(live, applied, t, (), result, fields)
    except SchemaError:
        return None
    return merged, fields, result


def _merge_walk(live: Any, applied: Any, t: Type, path: tuple[str, ...], result: Comparison, below: FieldSet) -> Any:
    """``merge(live, applied, t)``; fills ``below`` as ``_fill(applied, t, below)`` does and records what
    ``_compare(live, merged, t, path, result)`` records."""
    if live is _MISSING:
        _fill(applied, t, below, False)
        _compare(_MISSING, applied, t, path, result)
        return applied
    if live is applied:
        _fill(applied, t, below, False)
        return live
    if live or applied:
        shape = _shape(t, live)
        if shape == _MAP and _shape(t, applied) == _MAP:
            return _merge_map(live, applied, t, path, result, below)
        if shape == _LIST and _shape(t, applied) == _LIST:
            return _merge_list(live, applied, t, path, result, below)
    _fill(applied, t, below, False)
    merged = merge(live, applied, t)
    if merged is not live:
        _compare(live, merged, t, path, result)
    return merged


def _merge_list(
    live: list[Any], applied: list[Any], t: Type, path: tuple[str, ...], result: Comparison, node: FieldSet
) -> Any:
    """Two lists merge goes through item by item (map lists and sets): merge's list branch, ``_fill``'s list
    branch into ``node`` and what ``_compare(live, merged)`` records, in one pass over each list. A live item the
    configuration also has is merged with it by ``_merge_walk`` (which fills its node and records its changes);
    the others are the merged list's own (shared, so compare records nothing for them); the configuration's new
    items, appended, are recorded as added. Raises SchemaError where ``_fill`` does (an item without its key, a
    duplicate): ``merge_and_compare`` then leaves the configuration to the general path, which words the error."""
    element_type = t.element or DEDUCED
    incoming: dict[str, Any] = {}
    for index, item in enumerate(applied):
        element = item_element(t, index, item)
        if element in incoming:
            raise SchemaError(f"duplicate entries for key {_printable(element)}")
        incoming[element] = item
        node[element] = {}  # its place, in the configuration's order (filled in below)

    def merge_one(item: Any, element: str) -> Any:
        below: FieldSet = {}
        merged_item = _merge_walk(item, incoming[element], element_type, (*path, element), result, below)
        node[element] = make(True, below)
        return merged_item

    # An item merge cannot place stays as it is, and compare pairs it with itself.
    merged, seen, same = _merged_items(t, live, incoming, merge_one)
    if len(seen) < len(incoming):
        for element, item in incoming.items():
            if element not in seen:
                below: FieldSet = {}
                merged.append(_merge_walk(_MISSING, item, element_type, (*path, element), result, below))
                node[element] = make(True, below)
        return merged
    return live if same else merged


def _merge_map(
    live: dict[str, Any], applied: dict[str, Any], t: Type, path: tuple[str, ...], result: Comparison, node: FieldSet
) -> Any:
    """Two maps merge recurses into: merge's map branch, ``_fill``'s map branch into ``node`` and what
    ``_compare_map(live, merged)`` records (entries merge leaves alone are shared, so it records nothing for
    them), entry by entry of ``applied``."""
    out: dict[str, Any] | None = None
    untyped = t.kind == UNTYPED
    fields = t.fields
    other_type = t.element or DEDUCED
    for key, item in applied.items():
        current = live.get(key, _MISSING)
        element = "f:" + key
        if item is None:
            node[element] = {}
            if current is not _MISSING:  # null drops the field
                if out is None:
                    out = dict(live)
                del out[key]
                _compare(current, _MISSING, fields.get(key) or other_type, (*path, element), result)
            continue
        if type(item) in _SCALARS:
            node[element] = {}
            if type(current) is type(item) and current == item:
                continue
            if out is None:
                out = dict(live)
            out[key] = item
            if current is _MISSING:
                insert(result.added, (*path, element))
            elif type(current) in _SCALARS:
                if current != item:
                    insert(result.modified, (*path, element))
            else:
                _compare(current, item, fields.get(key) or other_type, (*path, element), result)
            continue
        child_type = fields.get(key) or other_type
        below: FieldSet = {}
        merged = _merge_walk(current, item, child_type, (*path, element), result, below)
        child_shape = _shape(child_type, item)
        entry = make(child_shape == _LEAF or item == {} or untyped or key not in fields, below)
        if entry is not None:
            node[element] = entry
        if merged is not current:
            if out is None:
                out = dict(live)
            out[key] = merged
    return live if out is None else out


def _items_by_element(t: Type, items: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        try:
            element = item_element(t, index, item)
        except SchemaError:
            element = index_element(index)
        found.setdefault(element, item)
    return found


def remove_items(value: Any, fields: FieldSet, t: Type) -> Any:
    """``value`` without the members of ``fields`` (whole subtrees); a map or list emptied by the removal becomes
    None (its field is then dropped by the caller)."""
    if not fields:
        return value
    shape = _shape(t, value)
    if shape == _LEAF or not value:
        return value
    if shape == _MAP:
        out: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            node = fields.get("f:" + key)
            if node is None:
                out[key] = item
            elif is_member(node):
                changed = True
            else:
                kept = remove_items(item, children(node), t.child(key))
                if kept is not item:
                    changed = True
                if kept is not None:
                    out[key] = kept
        if not changed:
            return value
        return out or None
    element_type = t.element or DEDUCED
    kept_items: list[Any] = []
    changed = False
    for index, item in enumerate(value):
        try:
            element = item_element(t, index, item)
        except SchemaError:
            kept_items.append(item)
            continue
        node = fields.get(element)
        if node is None:
            kept_items.append(item)
        elif is_member(node):
            changed = True
        else:
            kept = remove_items(item, children(node), element_type)
            if kept is not item:
                changed = True
            if kept is not None:
                kept_items.append(kept)
    if not changed:
        return value
    return kept_items or None


def ensure_named_fields_are_members(fields: FieldSet, t: Type) -> FieldSet:
    """``fields`` with every struct field that has owned fields below it made a member too (SMD does this before
    removing a set, so that a struct is removed only when nothing in it stays owned)."""
    if not fields:
        return fields
    out: FieldSet = {}
    is_struct = t.kind == MAP and not t.atomic
    for key, node in fields.items():
        below = children(node)
        member = is_member(node)
        if below:
            if key.startswith("f:"):
                child_type = t.child(key[2:]) if t.kind in (MAP, UNTYPED) else DEDUCED
            else:
                child_type = t.element or DEDUCED
            below = ensure_named_fields_are_members(below, child_type)
            if is_struct and key.startswith("f:") and t.is_named(key[2:]):
                member = True
        entry = make(member, below)
        if entry is not None:
            out[key] = entry
    return out


MISSING = _MISSING
