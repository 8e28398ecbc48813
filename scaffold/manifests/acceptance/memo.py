"""Clean verdicts of schema subtrees, remembered by content so that repeated subtrees are checked once.

A project's CRDs repeat themselves: every kind that embeds a PodTemplateSpec carries the same 1,300-node
schema, and small shapes (conditions, a port, a quantity) recur everywhere. Each rule family of the acceptance
check is a recursive walk whose outcome inside a subtree depends only on the subtree's content and on a few
flags handed down from its ancestors (the family's *context*, e.g. "inside resource metadata" or "below an
atomic map"); paths only go into messages. So when a family found no error in a subtree, it will find none in
any subtree with the same content in the same context, wherever that sits, and may skip it.

Only clean verdicts are remembered. A subtree with errors is walked again each time, so every error keeps its
own path and order, and a wrong memo can only ever hide an error, which the key below rules out:

- The key of a schema node is its content with the text of a `description` reduced to "empty or not". No
  family reads more of a description than that (the structural rules forbid a non-empty one under a junctor,
  the status rules allow it at the root), so nodes that differ only in documentation share verdicts, which is
  what lets the nodes of kinds that differ in their doc comments share them.
- Every other value is keyed exactly, with its type (`1`, `1.0` and `true` are different keys) and in its
  order (a reordered mapping is a miss, never a false hit).
- Keys are interned to small integers, so a node's key is a tuple of its keywords, scalars and its children's
  integers, hashed without walking the children again.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

_SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "definitions", "dependencies"})
_SCHEMA_ONE_OR_LIST: Final = frozenset({"items", "additionalProperties", "additionalItems", "not"})
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf"})

# Interned content keys (tuple -> small int) and the clean verdicts recorded with them, shared by every check in
# the process. Both are dropped together when the table grows past the bound (the integers are reused then).
_INTERNED: dict[tuple[Any, ...], int] = {}
_CLEAN: set[tuple[str, int, Hashable]] = set()
# Keys of the nodes with an x-kubernetes-validations rule at or below them: the rule walks skip the others.
_RULED: set[int] = set()
_MAX_INTERNED: Final = 1 << 19


class SchemaMemo:
    """The content keys of one schema's nodes (by identity, valid while the schema is neither freed nor changed,
    i.e. during one check) and the process-wide clean verdicts they index."""

    __slots__ = ("_keys",)

    def __init__(self, root: Any) -> None:
        if len(_INTERNED) > _MAX_INTERNED:
            _INTERNED.clear()
            _CLEAN.clear()
            _RULED.clear()
        self._keys: dict[int, int] = {}
        if type(root) is dict:
            _schema_key(root, self._keys)

    def is_clean(self, family: str, node: Any, context: Hashable = None) -> bool:
        """Whether `family` found no error in a subtree like `node`'s, in the same context."""
        key = self._keys.get(id(node))
        return key is not None and (family, key, context) in _CLEAN

    def has_rules(self, node: Any) -> bool:
        """Whether `node` or a schema below it has x-kubernetes-validations (True for a node not known here)."""
        key = self._keys.get(id(node))
        return key is None or key in _RULED

    def key_of(self, node: Any) -> int | None:
        """The interned content key of `node` (None for a node of no schema this memo was built for)."""
        return self._keys.get(id(node))

    def record_clean(self, family: str, node: Any, context: Hashable = None) -> None:
        key = self._keys.get(id(node))
        if key is not None:
            _CLEAN.add((family, key, context))


class CheckMemos:
    """One `SchemaMemo` per schema object of a CRD, built on first use during one `check_crd`."""

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: dict[int, tuple[Any, SchemaMemo]] = {}

    def for_schema(self, root: Any) -> SchemaMemo:
        found = self._memos.get(id(root))
        if found is None or found[0] is not root:
            found = (root, SchemaMemo(root))
            self._memos[id(root)] = found
        return found[1]


def _schema_key(node: dict[Any, Any], keys: dict[int, int]) -> int:
    """The interned key of a schema node, remembered in `keys` for it and every schema node below it.

    The content is flattened to (name, value key, name, value key, ...); a schema node's value key is its integer
    (no other key is a bare integer), a description's is whether it is empty.
    """
    parts: list[Hashable] = []
    append = parts.append
    ruled = False
    for name, value in node.items():
        append(name if type(name) is str else _value_key(name))
        kind = type(value)
        if kind is str:
            append(value != "" if name == "description" else value)
        elif kind is dict:
            if name in _SCHEMA_MAPS:
                entries: list[Hashable] = ["map"]
                for sub, item in value.items():
                    entries.append(sub if type(sub) is str else _value_key(sub))
                    child = _child_key(item, keys)
                    ruled = ruled or child in _RULED
                    entries.append(child)
                append(tuple(entries))
            elif name in _SCHEMA_ONE_OR_LIST:
                child = _schema_key(value, keys)
                ruled = ruled or child in _RULED
                append(child)
            else:
                append(_value_key(value))
        elif kind is list and (name in _SCHEMA_LISTS or name in _SCHEMA_ONE_OR_LIST):
            children = [_child_key(item, keys) for item in value]
            ruled = ruled or any(child in _RULED for child in children)
            append(("schemas", *children))
        else:
            if name == "x-kubernetes-validations":
                ruled = True
            append(_value_key(value))
    content = tuple(parts)
    key = _INTERNED.get(content)
    if key is None:
        key = _INTERNED[content] = len(_INTERNED)
    if ruled:
        _RULED.add(key)
    keys[id(node)] = key
    return key


def _child_key(value: Any, keys: dict[int, int]) -> Hashable:
    return _schema_key(value, keys) if type(value) is dict else _value_key(value)


def _value_key(value: Any) -> Hashable:
    """An exact key of a JSON value: types kept apart, order kept; never a bare integer."""
    kind = type(value)
    if kind is str:
        return value
    if kind is dict:
        return ("dict", tuple([(name, _value_key(item)) for name, item in value.items()]))
    if kind is list:
        return ("list", tuple([_value_key(item) for item in value]))
    if kind is int or kind is bool or kind is float or value is None:
        return (kind, value)
    return ("object", object())  # not JSON: a key equal to no other, so such a node never shares a verdict
