"""The JSONPath of CRD printer columns, evaluated as kube-apiserver's ``k8s.io/client-go/util/jsonpath`` does.

A printer column's ``jsonPath`` (``.spec.replicas``, ``.status.conditions[?(@.type=="Ready")].status``,
``.spec.items[0].name``, ``.metadata.labels['app']``, ``.spec.ports[*].port``) is evaluated against the object and
the first result is the cell. Only the forms printer columns use are understood: field names, ``['quoted']`` names,
indices (negative from the end), ``[*]``, and ``[?(@.path == "literal")]`` / ``!=`` filters (string, number or
boolean literals). A path that finds nothing gives no result (an empty cell), as in kube-apiserver; a path outside
this subset is a `ValueError` naming it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

Step = Callable[[list[Any]], list[Any]]
_FIELD = re.compile(r"\.([A-Za-z0-9_\-$]*)")
_BRACKET = re.compile(r"\[(.*?)\](?=\.|\[|$)")
_FILTER = re.compile(r"^\?\(@((?:\.[A-Za-z0-9_\-]+)+)\s*(==|!=)\s*(.+)\)$")


def _field(name: str) -> Step:
    def step(values: list[Any]) -> list[Any]:
        return [value[name] for value in values if isinstance(value, dict) and name in value]

    return step


def _index(position: int) -> Step:
    def step(values: list[Any]) -> list[Any]:
        out = []
        for value in values:
            if isinstance(value, list) and -len(value) <= position < len(value):
                out.append(value[position])
        return out

    return step


def _wildcard(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if isinstance(value, list):
            out.extend(value)
        elif isinstance(value, dict):
            out.extend(value.values())
    return out


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(f"unsupported JSONPath filter literal {text!r}") from None


def _filter(path: str, operator: str, literal: str) -> Step:
    names = path.strip(".").split(".")
    expected = _literal(literal)

    def matches(item: Any) -> bool:
        value: Any = item
        for name in names:
            if not isinstance(value, dict) or name not in value:
                return False
            value = value[name]
        return (value == expected) == (operator == "==")

    def step(values: list[Any]) -> list[Any]:
        return [item for value in values if isinstance(value, list) for item in value if matches(item)]

    return step


@lru_cache(maxsize=1024)
def compile_path(path: str) -> tuple[Step, ...]:
    """``.a.b[0]`` (or ``{.a.b[0]}``) as evaluation steps."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    steps: list[Step] = []
    position = 0
    while position < len(text):
        field_match = _FIELD.match(text, position)
        if field_match:
            if field_match.group(1):
                steps.append(_field(field_match.group(1)))
            position = field_match.end()
            continue
        bracket = _BRACKET.match(text, position)
        if not bracket:
            raise ValueError(f"unsupported JSONPath {path!r} at {text[position:]!r}")
        inner = bracket.group(1).strip()
        filter_match = _FILTER.match(inner)
        if inner == "*":
            steps.append(_wildcard)
        elif filter_match:
            steps.append(_filter(*filter_match.groups()))
        elif re.fullmatch(r"-?\d+", inner):
            steps.append(_index(int(inner)))
        elif len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
            steps.append(_field(inner[1:-1]))
        else:
            raise ValueError(f"unsupported JSONPath {path!r} at {inner!r}")
        position = bracket.end()
    return tuple(steps)


def find_results(path: str, obj: Any) -> list[Any]:
    """Every value the path selects in ``obj``, in order (empty when it selects nothing)."""
    values = [obj]
    for step in compile_path(path):
        values = step(values)
        if not values:
            return []
    return values
