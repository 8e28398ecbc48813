"""What an Update changed, found in one walk of the two versions of an object.

An Update's bookkeeping needs what changed between the live object and the new one. ``typed.compare`` answers
with three sets (added, modified, removed) that the caller then unions, filters by the write's scope and walks
again against every manager's fields. Most updates only change values that already existed (a new image, a new
replica count, the next ``status.observedGeneration``): then the answer is a short list of leaf paths, and each
can be looked up in the managers' sets directly, with no set built at all (``ownership.update``).

``changes`` is ``compare`` as a record of what it would insert: it visits the same entries in the same order and
lists the paths it finds modified, and the values it finds added or removed as a whole (with their paths and
types), leaving out the top-level fields outside the write's scope. The three sets, when they are needed, are
built from that record exactly as ``compare`` builds them (``modified_set``, ``added_set``, ``removed_set``).
"""

from __future__ import annotations

from typing import Any

from pyop.api.managedfields.fieldpath import SELF, FieldSet, insert
from pyop.api.managedfields.schema import DEDUCED, Type
from pyop.api.managedfields.typed import _CONTAINERS, _LEAF, _MAP, _SCALARS, _items_by_element, _shape, added_field_set

Path = tuple[str, ...]
Whole = tuple[Path, Any, Type]  # a value added or removed as a whole: its path, the value and its type
_MISSING: Any = object()
_NEVER_COMPARED = frozenset({"managedFields"})
_NOTHING: frozenset[str] = frozenset()


class Changes:
    """The record of one comparison (a slots class: one per write)."""

    __slots__ = ("modified", "added", "removed")

    def __init__(self) -> None:
        self.modified: list[Path] = []  # leaves whose value changed, in the order compare inserts them
        self.added: list[Whole] = []
        self.removed: list[Whole] = []

    def modified_set(self) -> FieldSet:
        """``compare(...).modified``."""
        node: FieldSet = {}
        for path in self.modified:
            insert(node, path)
        return node

    def added_set(self) -> FieldSet:
        """``compare(...).added``."""
        return _wholes(self.added)

    def removed_set(self) -> FieldSet:
        """``compare(...).removed``."""
        return _wholes(self.removed)


def _wholes(wholes: list[Whole]) -> FieldSet:
    """The set ``compare`` builds for values added (or removed) as a whole: each path a member, and below it
    every leaf and every map and list item of the value, as ``added_field_set`` lists them. The paths of a walk
    are disjoint (it does not go below a value it records whole), so each is placed once."""
    root: FieldSet = {}
    for path, value, t in wholes:
        node = root
        for element in path[:-1]:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            node = child
        below = added_field_set(value, t) if isinstance(value, _CONTAINERS) and value else {}
        node[path[-1]] = {SELF: {}, **below} if below else {}
    return root


def changes(
    old: dict[str, Any],
    new: dict[str, Any],
    t: Type,
    keep: frozenset[str] | None = None,
    drop: frozenset[str] = frozenset(),
) -> Changes:
    """What ``compare(old, new, t, skip_metadata={"managedFields"})`` records, less the top-level elements
    (``"f:status"``) a write's scope filters out of it (``keep`` / ``drop`` as ``Scope``): those are not visited.
    ``metadata.managedFields`` is never compared, as kube-apiserver strips it first."""
    found = Changes()
    if keep is None:  # the main resource: all but the reset fields (status), as the top-level map's skip
        _map(old, new, t, (), found, _key_names(drop), top=True)
        return found
    fields = t.fields
    other_type = t.element or DEDUCED
    if len(keep) == 1:  # a subresource's one field (status): looked up, not searched for
        (element,) = keep
        if element not in drop:
            key = element[2:]
            item, other = old.get(key, _MISSING), new.get(key, _MISSING)
            if item is not other:
                _entry(key, item, other, fields.get(key) or other_type, (element,), found)
        return found
    complete = True  # every old key left out by the scope is in ``new`` too (the others are looked up)
    for key, item in old.items():
        element = "f:" + key
        if element not in keep or element in drop:
            if complete and key not in new:
                complete = False
            continue
        other = new.get(key, _MISSING)
        if other is item:
            continue
        kind = type(item)
        if kind in _SCALARS and type(other) in _SCALARS:
            if item != other:
                found.modified.append((element,))
            continue
        if other is _MISSING:
            complete = False
        _entry(key, item, other, fields.get(key) or other_type, (element,), found)
    if not complete or len(new) != len(old):
        for key, item in new.items():
            if key not in old:
                element = "f:" + key
                if element in keep and element not in drop:
                    found.added.append(((element,), item, fields.get(key) or other_type))
    return found


def _entry(key: str, item: Any, other: Any, t: Type, path: Path, found: Changes) -> None:
    """A top-level entry (``item`` or ``other`` may be missing): metadata's maps are compared without
    ``managedFields``."""
    if item is _MISSING:
        found.added.append((path, other, t))
    elif other is _MISSING:
        found.removed.append((path, item, t))
    elif key == "metadata" and isinstance(item, dict) and isinstance(other, dict):
        _map(item, other, t, path, found, _NEVER_COMPARED)
    elif type(item) in _SCALARS and type(other) in _SCALARS:
        if item != other:
            found.modified.append(path)
    else:
        _value(item, other, t, path, found)


_KEY_NAMES: dict[frozenset[str], frozenset[str]] = {}


def _key_names(elements: frozenset[str]) -> frozenset[str]:
    """The field names of top-level elements (``"f:status"`` -> ``"status"``), remembered per scope."""
    found = _KEY_NAMES.get(elements)
    if found is None:
        if len(_KEY_NAMES) > 64:
            _KEY_NAMES.clear()
        found = _KEY_NAMES[elements] = frozenset(element[2:] for element in elements if element.startswith("f:"))
    return found


def _map(
    old: dict[str, Any],
    new: dict[str, Any],
    t: Type,
    path: Path,
    found: Changes,
    skip: frozenset[str],
    *,
    top: bool = False,
) -> None:
    """``typed._compare_map``: the entries of two maps (``skip``: keys left out; ``top``: the object's own, whose
    metadata maps are compared without ``managedFields``)."""
    fields = t.fields
    other_type = t.element or DEDUCED
    complete = True  # every old key is in ``new``: with equal lengths, no key is new
    for key, item in old.items():
        if key in skip:
            if complete and key not in new:
                complete = False
            continue
        other = new.get(key, _MISSING)
        if other is item:
            continue
        kind = type(item)
        if kind in _SCALARS and type(other) in _SCALARS:
            if item != other:
                found.modified.append((*path, "f:" + key))
            continue
        if other is _MISSING:
            complete = False
            found.removed.append(((*path, "f:" + key), item, fields.get(key) or other_type))
            continue
        if kind is type(other) and item == other:
            continue  # equal subtrees (a body sent whole shares nothing): decided in C, without a call
        if top and key == "metadata" and isinstance(item, dict) and isinstance(other, dict):
            _map(item, other, fields.get(key) or other_type, (*path, "f:" + key), found, _NEVER_COMPARED)
            continue
        _value(item, other, fields.get(key) or other_type, (*path, "f:" + key), found)
    if not complete or len(new) != len(old):
        for key, item in new.items():
            if key not in old and key not in skip:
                found.added.append(((*path, "f:" + key), item, fields.get(key) or other_type))


def _value(old: Any, new: Any, t: Type, path: Path, found: Changes) -> None:
    """``typed._compare`` of two present values."""
    if type(old) is type(new) and old == new:
        return  # (so two maps or lists of one shape are not both empty: compare's test for that is not needed)
    shape = _shape(t, old)
    if shape == _LEAF or shape != _shape(t, new):
        if old != new:
            found.modified.append(path)
    elif shape == _MAP:
        _map(old, new, t, path, found, _NOTHING)
    else:
        old_items = _items_by_element(t, old)
        new_items = _items_by_element(t, new)
        element_type = t.element or DEDUCED
        complete = True
        for element, item in old_items.items():
            other = new_items.get(element, _MISSING)
            if other is _MISSING:
                complete = False
                found.removed.append(((*path, element), item, element_type))
            elif other is not item:
                _value(item, other, element_type, (*path, element), found)
        if not complete or len(new_items) != len(old_items):
            for element, item in new_items.items():
                if element not in old_items:
                    found.added.append(((*path, element), item, element_type))
