"""The small path language of ``fieldPath`` (CEL rules) and ``selectableFields``.

``.spec.replicas``, ``.spec['dotted.key']``, ``.items[0]``: parsed into segments so the
acceptance check can resolve them against a schema and the validator can report errors at
the field a rule names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from pyop.schema.errors import child, index, key

_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED: Final = re.compile(r"'((?:[^'\\]|\\.)*)'")
_NUMBER: Final = re.compile(r"\d+")


@dataclass(frozen=True)
class Segment:
    """A property/map key name (``position is None``) or a list index."""

    name: str = ""
    position: int | None = None


class FieldPathError(ValueError):
    """The path does not parse, or does not resolve in the schema."""


def parse(text: str) -> list[Segment]:
    """Segments of a path that must start with ``.`` or ``[``."""
    segments: list[Segment] = []
    cursor = 0
    if not text:
        raise FieldPathError("must not be empty")
    while cursor < len(text):
        char = text[cursor]
        if char == ".":
            match = _IDENTIFIER.match(text, cursor + 1)
            if not match:
                raise FieldPathError(f"expected a field name after '.' at position {cursor}")
            segments.append(Segment(name=match.group()))
            cursor = match.end()
        elif char == "[":
            quoted = _QUOTED.match(text, cursor + 1)
            number = _NUMBER.match(text, cursor + 1)
            if quoted and text[quoted.end() : quoted.end() + 1] == "]":
                segments.append(Segment(name=quoted.group(1).replace("\\'", "'")))
                cursor = quoted.end() + 1
            elif number and text[number.end() : number.end() + 1] == "]":
                segments.append(Segment(position=int(number.group())))
                cursor = number.end() + 1
            else:
                raise FieldPathError(f"unexpected character inside brackets at position {cursor}")
        else:
            raise FieldPathError(f"expected '.' or '[' at position {cursor}")
    return segments


def resolve(segments: list[Segment], schema: dict[str, Any], allow_array: bool) -> dict[str, Any]:
    """The schema node the path points to; FieldPathError if a step leaves the schema."""
    node = schema
    for segment in segments:
        if segment.position is not None:
            if not allow_array:
                raise FieldPathError("array notation is not allowed")
            items = node.get("items")
            if node.get("type") != "array" or not isinstance(items, dict):
                raise FieldPathError("does not refer to a valid field")
            node = items
            continue
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        if segment.name in properties:
            node = properties[segment.name]
        elif isinstance(additional, dict):
            node = additional
        else:
            raise FieldPathError("does not refer to a valid field")
    return node


def render(base: str, segments: list[Segment], schema: dict[str, Any] | None = None) -> str:
    """``field.Path`` text of ``base`` followed by the segments (map entries as ``[key]``)."""
    path = base
    node = schema
    for segment in segments:
        if segment.position is not None:
            path = index(path, segment.position)
            node = node.get("items") if isinstance(node, dict) else None
            continue
        properties = (node or {}).get("properties") or {}
        if node is not None and segment.name not in properties and isinstance(node.get("additionalProperties"), dict):
            path = key(path, segment.name)
            node = node["additionalProperties"]
        else:
            path = child(path, segment.name)
            node = properties.get(segment.name) if node is not None else None
    return path
