"""Validation ratcheting (KEP-4008, `CRDValidationRatcheting`, on by default since Kubernetes 1.30): on an update,
kube-apiserver drops the schema errors of every part of a custom resource the update left unchanged.

Why: an operator that tightens its CRD schema (a new `maxLength`, `enum` or `pattern`) must still be able to update
objects written under the old schema, their status above all: on a cluster the untouched invalid field is tolerated,
and a test server without ratcheting refused such updates with a 422 no cluster sends.

How (kube-apiserver's `CorrelatedObject`): a node of the new object is correlated with the old object's node at the
same place: object properties by name, items of `x-kubernetes-list-type: map` lists by their keys; items of other
lists (atomic, set) are not correlatable, so an error at one of their items stands even when the list is unchanged
(an error at the list itself, such as `maxItems`, is ratcheted). An error reported at a correlatable node whose value
equals the old one is dropped. As kube-apiserver documents, some errors
are never ratcheted: a missing `required` field, a duplicate in a `set` or `map` list, errors at a node with
quantors (`allOf`, `anyOf`, `oneOf`, `not`), and rules that read `oldSelf` (transition rules). This filter runs only
when validation found errors, so the valid write pays nothing for it.

Known difference: validations written inside a quantor's branches for a descendant are not ratcheted by
kube-apiserver; here only the quantor node's own errors are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from pyop.schema.errors import DUPLICATE, REQUIRED, FieldError
from pyop.schema.values import ABSENT, equal

__all__ = ["ratchet"]

_NEVER_RATCHETED: Final = frozenset({REQUIRED, DUPLICATE})
_QUANTORS: Final = ("allOf", "anyOf", "oneOf", "not")
_TYPE_META: Final = frozenset({"apiVersion", "kind"})
_STEP: Final = re.compile(r"\[([^\]]*)\]|\.?([^.\[]+)")
_OLD_SELF: Final = re.compile(r"\boldSelf\b")


def ratchet(errors: list[FieldError], new: Any, old: Any, schema: Mapping[str, Any]) -> list[FieldError]:
    """The errors kube-apiserver still reports for updating ``old`` to ``new`` (all of them on create)."""
    if old is ABSENT or old is None or not errors:
        return errors
    return [error for error in errors if not _ratcheted(error, new, old, schema)]


def _ratcheted(error: FieldError, new: Any, old: Any, schema: Mapping[str, Any]) -> bool:
    if error.type in _NEVER_RATCHETED:
        return False
    value, old_value, node_schema = new, old, schema
    for depth, step in enumerate(_steps(error.field)):
        if depth == 0 and step in _TYPE_META:
            return False  # both sides were converted to the requested version: a change there is not visible
        child = _correlated_child(value, old_value, node_schema, step)
        if child is None:
            return False  # not correlatable: the error stands
        value, old_value, node_schema = child
    if any(quantor in node_schema for quantor in _QUANTORS) or _from_transition_rule(error, node_schema):
        return False
    return equal(value, old_value)


def _steps(path: str) -> Iterator[str]:
    """The names, map keys and list indices of a ``field.Path`` (``spec.ports[0].name``, ``spec.labels[a]``)."""
    for match in _STEP.finditer(path):
        bracketed, name = match.groups()
        yield bracketed if bracketed is not None else name


def _correlated_child(
    value: Any, old: Any, schema: Mapping[str, Any], step: str
) -> tuple[Any, Any, Mapping[str, Any]] | None:
    """The child of a correlated node at ``step`` with its old value and schema, or None if not correlatable."""
    if isinstance(value, dict) and isinstance(old, dict):
        if step not in value or step not in old:
            return None
        properties = schema.get("properties") or {}
        child_schema = properties.get(step)
        if child_schema is None:
            additional = schema.get("additionalProperties")
            child_schema = additional if isinstance(additional, Mapping) else None
        return None if child_schema is None else (value[step], old[step], child_schema)
    if isinstance(value, list) and isinstance(old, list) and step.isdigit():
        position = int(step)
        items = schema.get("items")
        if position >= len(value) or not isinstance(items, Mapping) or schema.get("x-kubernetes-list-type") != "map":
            return None  # atomic and set lists are not correlatable item by item
        keys = schema.get("x-kubernetes-list-map-keys") or []
        item = value[position]
        if not isinstance(item, dict):
            return None
        match = next(
            (
                candidate
                for candidate in old
                if isinstance(candidate, dict) and all(equal(candidate.get(k), item.get(k)) for k in keys)
            ),
            None,
        )
        return None if match is None else (item, match, items)
    return None


def _from_transition_rule(error: FieldError, schema: Mapping[str, Any]) -> bool:
    """Whether ``error`` may come from one of the node's rules that read ``oldSelf`` (told by its message: the
    rule's ``message`` or ``failed rule: <rule>``; a rule with a ``messageExpression`` could say anything)."""
    for rule in schema.get("x-kubernetes-validations") or []:
        if not isinstance(rule, Mapping) or not _OLD_SELF.search(str(rule.get("rule", ""))):
            continue
        if rule.get("messageExpression") or error.detail in (rule.get("message"), f"failed rule: {rule.get('rule')}"):
            return True
    return False
