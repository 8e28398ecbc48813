"""The general path of ``pyop.api.managedfields.typed`` as it was before its walks were specialized (commit
6c99a5d): the oracle that test_managedfields_walks compares the fast walks with. Kept verbatim on purpose (a
second copy, in the tests only): a shortcut in typed.py that changes an answer makes the comparison fail.
"""

# ruff: noqa
from __future__ import annotations

import json
from typing import Any

from pyop.api.managedfields.fieldpath import SELF, FieldSet, path_string
from pyop.api.managedfields.schema import LIST, MAP, UNTYPED, Type
from pyop.api.managedfields.typed import SchemaError

_MISSING: Any = object()
_LEAF, _MAP, _LIST = 0, 1, 2


class Comparison:
    def __init__(self) -> None:
        self.added: FieldSet = {}
        self.modified: FieldSet = {}
        self.removed: FieldSet = {}


def _printable(element: str) -> str:
    return path_string((element,))


def _prefixed(error: SchemaError, element: str) -> SchemaError:
    text = str(error)
    separator = "" if text.startswith((".", "[")) else ": "
    return SchemaError(_printable(element) + separator + text)


def is_member(node: FieldSet) -> bool:
    """Whether the element holding ``node`` is itself in the set (``{}`` or ``{".": {}, ...}``)."""
    return not node or SELF in node


def children(node: FieldSet) -> FieldSet:
    """The elements below ``node`` (``node`` without its ``"."``)."""
    if SELF not in node:
        return node
    return {key: value for key, value in node.items() if key != SELF}


def make(member: bool, below: FieldSet) -> FieldSet | None:
    """The node of an element that is a member or not and has ``below`` under it; None: not in the set at all."""
    if not below:
        return {} if member else None
    if member:
        return {SELF: {}, **below}
    return below


def encode_value(value: Any) -> str:
    """JSON as Go's encoding/json writes it for FieldsV1 keys: compact, keys sorted."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def key_element(keys: dict[str, Any]) -> str:
    return "k:" + encode_value(keys)


def value_element(value: Any) -> str:
    return "v:" + encode_value(value)


def index_element(index: int) -> str:
    return f"i:{index}"


def insert(node: FieldSet, path: tuple[str, ...]) -> None:
    """Add ``path`` as a member of a set being built (in place: only for sets this module's callers own)."""
    if not path:
        return
    for element in path[:-1]:
        child = node.get(element)
        if child is None:
            child = node[element] = {}
        elif not child:  # a member leaf gains children: keep it a member
            child[SELF] = {}
        node = child
    last = path[-1]
    existing = node.get(last)
    if existing is None:
        node[last] = {}
    elif existing and SELF not in existing:
        node[last] = {SELF: {}, **existing}  # "." first, as kube-apiserver writes FieldsV1


def _shape(t: Type, value: Any) -> int:
    kind = t.kind
    if kind == MAP:
        return _MAP if not t.atomic and isinstance(value, dict) else _LEAF
    if kind == LIST:
        return _LIST if not t.atomic and isinstance(value, list) else _LEAF
    if kind == UNTYPED and isinstance(value, dict):
        return _MAP
    return _LEAF


def item_element(t: Type, index: int, item: Any) -> str:
    """The path element of a list item: its key fields, its value (sets) or its index (atomic lists)."""
    if t.keys:
        if not isinstance(item, dict):
            raise SchemaError(f"element {index}: associative list with keys has an element that is not a map")
        keys: dict[str, Any] = {}
        for name in t.keys:
            if name in item and item[name] is not None:
                keys[name] = item[name]
            elif name in t.key_defaults:
                keys[name] = t.key_defaults[name]
            else:
                raise SchemaError(
                    f'element {index}: associative list with keys has an element that omits key field "{name}" '
                    "(and doesn't have default value)"
                )
        return key_element(keys)
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
        for key, item in value.items():
            child_type = t.child(key)
            below: FieldSet = {}
            child_shape = _shape(child_type, item)
            if child_shape != _LEAF:
                try:
                    _fill(item, child_type, below, allow_duplicates)
                except SchemaError as error:
                    raise _prefixed(error, "f:" + key) from None
            member = child_shape == _LEAF or item is None or item == {} or untyped or not t.is_named(key)
            entry = make(member, below)
            if entry is not None:
                node["f:" + key] = entry
    elif shape == _LIST:
        element_type = t.element or Type(UNTYPED)
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
        out = dict(live)
        same = True
        for key, item in applied.items():
            current = live.get(key, _MISSING)
            merged = merge(current, item, t.child(key))
            if merged is None:
                if key in out:
                    del out[key]
                    same = False
            elif merged is not current:
                out[key] = merged
                same = False
        return live if same else out
    element_type = t.element or Type(UNTYPED)
    incoming: dict[str, Any] = {}
    order: list[str] = []
    for index, item in enumerate(applied):
        element = item_element(t, index, item)
        if element not in incoming:
            order.append(element)
        incoming[element] = item
    result: list[Any] = []
    seen: set[str] = set()
    same = True
    for index, item in enumerate(live):
        try:
            element = item_element(t, index, item)
        except SchemaError:
            result.append(item)
            continue
        if element in incoming and element not in seen:
            seen.add(element)
            merged = merge(item, incoming[element], element_type)
            same = same and merged is item
            result.append(merged)
        else:
            result.append(item)
    added = [incoming[element] for element in order if element not in seen]
    if same and not added:
        return live
    result.extend(added)
    return result


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


_SCALARS = (str, int, float, bool)


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
    for key, item in old_map.items():
        if key in skip:
            continue
        other = new_map.get(key, _MISSING)
        if other is item or (type(item) in _SCALARS and type(other) is type(item) and other == item):
            continue  # shared or equal scalars: the common case, decided without a call
        if skip_metadata and key == "metadata" and isinstance(item, dict) and isinstance(other, dict):
            _compare_map(item, other, t.child(key), (*path, "f:" + key), result, skip=skip_metadata)
            continue
        _compare(item, other, t.child(key), (*path, "f:" + key), result)
    for key, item in new_map.items():
        if key not in old_map and key not in skip:
            _compare(_MISSING, item, t.child(key), (*path, "f:" + key), result)


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
        element_type = t.element or Type(UNTYPED)
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


def _items_by_element(t: Type, items: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        try:
            element = item_element(t, index, item)
        except SchemaError:
            element = index_element(index)
        found.setdefault(element, item)
    return found


MISSING = _MISSING
