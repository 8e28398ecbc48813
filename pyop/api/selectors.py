"""Label and field selectors with the grammar of ``k8s.io/apimachinery`` (labels.Parse, fields.ParseSelector).

Parsing happens once per request; matching is a loop over small requirement tuples, so filtering
10,000 objects costs one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyop.api.status import ApiError, bad_request

_OPERATORS = ("in", "notin")
_KEY = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One clause: ``key op values``; ``op`` is one of =, !=, in, notin, exists, !exists, gt, lt."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        if self.op in ("!=", "notin"):
            return not present or labels[self.key] not in self.values
        if not present:
            return False
        try:
            actual = int(labels[self.key])
        except ValueError:
            return False
        bound = int(self.values[0])
        return actual > bound if self.op == "gt" else actual < bound


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``( )`` (set-based values contain commas)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _check_key(key: str, selector: str) -> str:
    if not _KEY.match(key):
        raise bad_request(f"unable to parse requirement: invalid label key {key!r} in selector {selector!r}")
    return key


_SET_CLAUSE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)$")
_CMP_CLAUSE = re.compile(r"^(?P<key>[^=!<>\s]+)\s*(?P<op>==|!=|=|>|<)\s*(?P<value>[^=!<>\s]*)$")


def parse_label_selector(selector: str | None) -> tuple[Requirement, ...]:
    """Parse ``a=b,c!=d,e in (f,g),!h,i``; raise 400 like the API server on bad syntax."""
    if not selector:
        return ()
    requirements: list[Requirement] = []
    for clause in _split_top_level(selector):
        if match := _SET_CLAUSE.match(clause):
            values = tuple(value.strip() for value in match["values"].split(",") if value.strip())
            requirements.append(Requirement(_check_key(match["key"], selector), match["op"], values))
        elif clause.startswith("!"):
            requirements.append(Requirement(_check_key(clause[1:].strip(), selector), "!exists"))
        elif match := _CMP_CLAUSE.match(clause):
            op = {"==": "=", ">": "gt", "<": "lt"}.get(match["op"], match["op"])
            if op in ("gt", "lt") and not match["value"].lstrip("-").isdigit():
                raise bad_request(f"unable to parse requirement: {clause!r}: value must be an integer")
            requirements.append(Requirement(_check_key(match["key"], selector), op, (match["value"],)))
        elif _KEY.match(clause):
            requirements.append(Requirement(clause, "exists"))
        else:
            raise bad_request(f"unable to parse requirement: found {clause!r} in selector {selector!r}")
    return tuple(requirements)


def labels_match(requirements: tuple[Requirement, ...], obj: Mapping[str, Any]) -> bool:
    if not requirements:
        return True
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(requirement.matches(labels) for requirement in requirements)


def selector_from_label_selector(selector: Mapping[str, Any] | None) -> str:
    """Render a ``metav1.LabelSelector`` (matchLabels/matchExpressions) as its string form (scale status)."""
    if not selector:
        return ""
    clauses = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if operator == "Exists":
            clauses.append(key)
        elif operator == "DoesNotExist":
            clauses.append(f"!{key}")
        else:
            clauses.append(f"{key} {operator.lower()} ({','.join(values)})")
    return ",".join(clauses)


# --- field selectors -------------------------------------------------------------------------------

FieldGetter = Callable[[Mapping[str, Any]], str | None]


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    negate: bool
    value: str
    getter: FieldGetter

    def matches(self, obj: Mapping[str, Any]) -> bool:
        actual = self.getter(obj)
        actual_text = "" if actual is None else actual
        return (actual_text != self.value) if self.negate else (actual_text == self.value)


def path_getter(path: str) -> FieldGetter:
    """A getter for a dotted path; booleans and numbers render as the API server renders them."""
    parts = tuple(path.split("."))

    def get(obj: Mapping[str, Any]) -> str | None:
        value: Any = obj
        for part in parts:
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


_FIELD_CLAUSE = re.compile(r"^(?P<field>[^=!\s]+)\s*(?P<op>==|!=|=)\s*(?P<value>.*)$")


def parse_field_selector(selector: str | None, supported: Mapping[str, FieldGetter]) -> tuple[FieldRequirement, ...]:
    """Parse ``metadata.name=x,spec.color!=red``; unsupported fields get 400 as on a real server."""
    if not selector:
        return ()
    requirements = []
    for clause in _split_top_level(selector):
        match = _FIELD_CLAUSE.match(clause)
        if not match:
            raise bad_request(f"invalid selector: {selector!r}; can't understand {clause!r}")
        name = match["field"]
        getter = supported.get(name)
        if getter is None:
            raise ApiError(400, f"field label not supported: {name}")
        requirements.append(FieldRequirement(name, match["op"] == "!=", match["value"].strip(), getter))
    return tuple(requirements)


def fields_match(requirements: tuple[FieldRequirement, ...], obj: Mapping[str, Any]) -> bool:
    return all(requirement.matches(obj) for requirement in requirements)
