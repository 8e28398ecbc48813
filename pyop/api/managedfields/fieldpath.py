"""Field sets in their wire form, FieldsV1: the tries kube-apiserver stores in ``metadata.managedFields``.

A set is a dict whose keys are path elements as FieldsV1 spells them (``f:<field>``, ``k:<key fields as JSON>``,
``v:<value as JSON>``, ``i:<index>``) and whose values are the sets below them. An element whose value is ``{}``, or
holds ``"."``, is a member of the set (the field itself is owned); one whose value holds other elements only is a
path to members further down. Working on this form directly (instead of decoding it into objects) means a stored
entry is used as is on the next write, and unchanged subtrees are shared between results instead of copied.

Sets are never modified in place: every operation returns a new dict (or one of its inputs when nothing changed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Any

FieldSet = dict[str, Any]
SELF = "."
EMPTY: FieldSet = {}


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


def field(name: str) -> str:
    return "f:" + name


_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def encode_value(value: Any) -> str:
    """JSON as Go's encoding/json writes it for FieldsV1 keys: compact, keys sorted. Strings and ints (the values
    of nearly every key field) are written by the encoder's own C functions directly: ``json.dumps`` with options
    builds a new encoder per call, a third of an apply's cost on a kind with map lists."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is int:
        return int.__repr__(value)
    return _ENCODER.encode(value)


def key_element(keys: dict[str, Any]) -> str:
    """``k:`` and the key fields as JSON (``encode_value`` of the dict: names sorted, compact)."""
    if len(keys) == 1:
        for name, value in keys.items():
            return "k:{" + encode_basestring(name) + ":" + encode_value(value) + "}"
    return "k:{" + ",".join(encode_basestring(name) + ":" + encode_value(keys[name]) for name in sorted(keys)) + "}"


def value_element(value: Any) -> str:
    return "v:" + encode_value(value)


def index_element(index: int) -> str:
    return f"i:{index}"


def union(left: FieldSet, right: FieldSet) -> FieldSet:
    """Every path in either set; ``left`` itself when ``right`` adds nothing."""
    if not right or left is right:
        return left
    if not left:
        return right
    merged: FieldSet | None = None
    for key, value in right.items():
        existing = left.get(key)
        if existing is None:
            combined = value
        elif key == SELF or existing is value:
            continue
        else:
            combined = _union_node(existing, value)
            if combined is existing:
                continue
        if merged is None:
            merged = dict(left)
        merged[key] = combined
    return left if merged is None else merged


def _union_node(left: FieldSet, right: FieldSet) -> FieldSet:
    member = is_member(left) or is_member(right)
    below = union(children(left), children(right))
    if member == is_member(left) and below is children(left):
        return left
    node = make(member, below)
    return node if node is not None else {}


def difference(left: FieldSet, right: FieldSet) -> FieldSet:
    """The paths of ``left`` that are not in ``right`` (members and paths below are told apart); ``left`` itself
    when nothing is taken away. Only elements in both matter, so the smaller side is walked."""
    if not right or not left:
        return left
    result: FieldSet | None = None
    keys = right if len(right) < len(left) else left
    for key in keys:
        if key == SELF:
            continue
        value = left.get(key)
        other = right.get(key)
        if value is None or other is None:
            continue
        if other is value:
            node = None
        else:
            member = (not value or SELF in value) and not (not other or SELF in other)
            below_left = children(value) if SELF in value else value
            below = difference(below_left, children(other) if SELF in other else other)
            if below is below_left and member == (not value or SELF in value):
                continue
            node = make(member, below)
        if result is None:
            result = dict(left)
        if node is None:
            del result[key]
        else:
            result[key] = node
    return left if result is None else result


def intersection(left: FieldSet, right: FieldSet) -> FieldSet:
    """The paths in both sets."""
    if not left or not right:
        return EMPTY
    result: FieldSet = {}
    for key, value in left.items():
        other = right.get(key)
        if other is None:
            continue
        if other is value:
            result[key] = value
            continue
        node = make(is_member(value) and is_member(other), intersection(children(value), children(other)))
        if node is not None:
            result[key] = node
    return result


def paths(node: FieldSet, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every member of the set as a path of elements, in sorted order (as SMD iterates a set)."""
    for key in sorted(key for key in node if key != SELF):
        value = node[key]
        path = (*prefix, key)
        if is_member(value):
            yield path
        yield from paths(children(value), path)


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


def filter_top_level(node: FieldSet, keep: frozenset[str] | None, drop: frozenset[str]) -> FieldSet:
    """The set without the top-level fields in ``drop`` (or outside ``keep``): the fields a strategy resets;
    ``node`` itself when it has none of them (told by lookups, without building a copy)."""
    if keep is None:
        for key in drop:
            if key in node:
                break
        else:
            return node
        return {key: value for key, value in node.items() if key not in drop}
    for key in node:
        if key not in keep or key in drop:
            break
    else:
        return node
    return {key: value for key, value in node.items() if key in keep and key not in drop}


def path_string(path: tuple[str, ...]) -> str:
    """A path as kube-apiserver prints it in conflicts: ``.spec.containers[name="app"].image``."""
    parts: list[str] = []
    for element in path:
        kind, text = element[0], element[2:]
        if kind == "f":
            parts.append("." + text)
        elif kind == "k":
            keys = json.loads(text)
            parts.append("[" + ",".join(f"{name}={encode_value(keys[name])}" for name in sorted(keys)) + "]")
        elif kind == "v":
            parts.append("[=" + text + "]")
        else:
            parts.append("[" + text + "]")
    return "".join(parts)


def validate(node: Any, where: str = "") -> str | None:
    """Why ``node`` is not a FieldsV1 set (None: it is one), for managedFields sent by a client."""
    if not isinstance(node, dict):
        return f"{where or 'fieldsV1'}: expected an object"
    for key, value in node.items():
        if key == SELF:
            if value != {}:
                return f"{where}.: expected {{}}"
            continue
        if key[:2] not in ("f:", "k:", "v:", "i:"):
            return f"{where}: unknown path element {key!r}"
        problem = validate(value, f"{where}/{key}")
        if problem:
            return problem
    return None
