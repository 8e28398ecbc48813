"""Applying markers and pydantic constraints to schema nodes, and catching where the two disagree.

The walker (`schema.py`) knows no individual marker: it hands the markers of a class or field to `apply_markers`,
which lets each registry definition apply itself in controller-tools' priority order and reports a marker that
contradicts the Python spelling of the same keyword (`Field(ge=0)`, `Literal[...]`, a default, `Int32`).
"""

from __future__ import annotations

import base64
import datetime
import enum
import inspect
import json
import types
import typing
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from pyop.api.types import SchemaFormat
from pyop_scaffold.manifests.errors import MarkerError
from pyop_scaffold.manifests.markers.comments import DocBlock
from pyop_scaffold.manifests.markers.parser import ParsedMarker
from pyop_scaffold.manifests.markers.registry import MarkerUsageError, Target

Schema = dict[str, Any]

_PRESERVE = {"kubebuilder:pruning:PreserveUnknownFields", "kubebuilder:validation:XPreserveUnknownFields"}

# Keywords a Python spelling (Field constraint, Literal, Enum, default, Int32, the type itself) can set and a marker
# can contradict. A marker that changes one of them from a Python-given value is reported, never applied silently.
CONSTRAINT_KEYS = (
    "default",
    "enum",
    "example",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "pattern",
    "title",
    "uniqueItems",
)

# Decimal travels as a JSON string (pydantic writes `Decimal("1.50")` as "1.50"), so the schema is a string that
# must read as a decimal number; a `number` schema would make the API server refuse what the operator writes.
DECIMAL_PATTERN = r"^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$"


class SchemaError(Exception):
    """A model that cannot become a structural schema; the message names the model and field."""


def schema_markers(docs: DocBlock, target: Target) -> list[ParsedMarker]:
    wanted = target.value  # a plain int: `Flag & Flag` builds a new member per marker
    return [m for m in docs.markers if m.definition.apply is not None and m.definition.targets.value & wanted]


def preserves_unknown(docs: DocBlock) -> bool:
    return any(m.name in _PRESERVE for m in docs.markers)


def apply_markers(
    schema: Schema,
    markers: list[ParsedMarker],
    where: str,
    spellings: dict[str, str],
    *,
    inherited: frozenset[str] = frozenset(),
) -> None:
    """Apply markers in controller-tools' priority order (stable for equal priorities).

    A marker that changes or removes a keyword the Python side set (listed in `spellings`, or present before any
    marker ran, which means the type gave it) is an error naming both. A later marker may override
    an earlier marker (`+kubebuilder:default` over `+default`), as in controller-gen.

    `inherited` names the keywords a named type gave (a field of alias or class type, an alias of another
    alias). A marker may differ from those: controller-gen flattens the type's schema and the field's into one
    node and keeps both values of a keyword they disagree on under `allOf` (both must hold), and so does this;
    the field's `x-kubernetes-validations` come before the type's, and a field's default replaces the type's
    (a default inside `allOf` would not be structural).
    """
    set_by_markers: set[tuple[int, str]] = set()
    overridden: dict[str, Any] = {}
    type_rules = list(schema.get("x-kubernetes-validations", [])) if "x-kubernetes-validations" in inherited else []
    for marker in sorted(markers, key=lambda m: m.definition.priority):
        target = schema
        if marker.items:
            if schema.get("type") != "array":
                raise MarkerError(
                    f"{where}: +{marker.text} applies to list items, but the field is not a list", marker.location
                )
            target = schema["items"]
        before = {key: target[key] for key in CONSTRAINT_KEYS if key in target}
        try:
            assert marker.definition.apply is not None
            marker.definition.apply(target, marker.value)
        except MarkerUsageError as exc:
            raise MarkerError(f"{where}: +{marker.text}: {exc}", marker.location) from None
        for key, old in before.items():
            if (id(target), key) in set_by_markers or (key in target and _same(key, target[key], old)):
                continue  # unchanged, or last set by an earlier marker (which a later one may override)
            if target is schema and key in inherited and key in target:
                overridden.setdefault(key, old)
                continue
            origin = spellings[key] if target is schema and key in spellings else "the Python type"
            raise MarkerError(
                f"{where}: +{marker.text} disagrees with {origin} ({key}: {_show(old)}); keep one of them",
                marker.location,
            )
        for key in CONSTRAINT_KEYS:
            if key in target and (key not in before or not _same(key, target[key], before[key])):
                set_by_markers.add((id(target), key))
    hoisted = {key: old for key, old in overridden.items() if key != "default"}
    if hoisted:
        schema.setdefault("allOf", []).extend([hoisted, {key: schema.pop(key) for key in hoisted}])
    if type_rules:
        rules = schema["x-kubernetes-validations"]
        schema["x-kubernetes-validations"] = rules[len(type_rules) :] + rules[: len(type_rules)]


def _same(key: str, new: Any, old: Any) -> bool:
    if key == "enum" and isinstance(new, list) and isinstance(old, list):
        return sorted(map(_canonical, new)) == sorted(map(_canonical, old))
    return _canonical(new) == _canonical(old)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _show(value: Any) -> str:
    return json.dumps(value, default=str)


_LENGTH_KEYS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def apply_constraint(schema: Schema, item: Any) -> dict[str, str]:
    """Apply one pydantic/annotated-types constraint; returns {keyword: how it was spelled} for what it set."""
    name = type(item).__name__
    kind = schema.get("type", "string" if schema.get("x-kubernetes-int-or-string") else "")
    spelled: dict[str, str] = {}

    def put(key: str, value: Any, spelling: str) -> None:
        schema[key] = value
        spelled[key] = spelling

    def numeric(spelling: str) -> None:
        if kind not in ("integer", "number"):
            hint = " (Decimal travels as a string)" if schema.get("pattern") == DECIMAL_PATTERN else ""
            raise SchemaError(f"{spelling} needs a number, not {kind or 'this type'}{hint}")

    if isinstance(item, FieldInfo):
        for inner in item.metadata:
            spelled.update(apply_constraint(schema, inner))
        if item.description:
            schema["description"] = item.description
        return spelled
    if isinstance(item, SchemaFormat):
        put("format", item.format, {"int32": "Int32", "int64": "Int64"}.get(item.format, repr(item)))
    elif name == "Ge":
        numeric(f"Field(ge={item.ge})")
        put("minimum", item.ge, f"Field(ge={item.ge})")
    elif name == "Gt":
        numeric(f"Field(gt={item.gt})")
        put("minimum", item.gt, f"Field(gt={item.gt})")
        put("exclusiveMinimum", True, f"Field(gt={item.gt})")
    elif name == "Le":
        numeric(f"Field(le={item.le})")
        put("maximum", item.le, f"Field(le={item.le})")
    elif name == "Lt":
        numeric(f"Field(lt={item.lt})")
        put("maximum", item.lt, f"Field(lt={item.lt})")
        put("exclusiveMaximum", True, f"Field(lt={item.lt})")
    elif name == "MultipleOf":
        numeric(f"Field(multiple_of={item.multiple_of})")
        put("multipleOf", item.multiple_of, f"Field(multiple_of={item.multiple_of})")
    elif name in ("MinLen", "MaxLen"):
        if kind not in _LENGTH_KEYS:
            raise SchemaError(f"{name} needs a string, list or dict, not {kind or 'this type'}")
        low, high = _LENGTH_KEYS[kind]
        if name == "MinLen":
            put(low, item.min_length, f"Field(min_length={item.min_length})")
        else:
            put(high, item.max_length, f"Field(max_length={item.max_length})")
    elif getattr(item, "pattern", None) is not None:
        pattern = item.pattern if isinstance(item.pattern, str) else item.pattern.pattern
        put("pattern", pattern, f"Field(pattern={pattern!r})")
    return spelled


def flat_metadata(items: Sequence[Any]) -> list[Any]:
    """`Annotated` metadata with `Field(...)` objects opened up into their constraints (pydantic does the same)."""
    flat: list[Any] = []
    for item in items:
        flat.append(item)
        if isinstance(item, FieldInfo):
            flat.extend(item.metadata)
    return flat


def type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def field_keywords(metadata: list[Any], info: FieldInfo, schema: Schema) -> dict[str, str]:
    """Apply the pydantic spellings on the field itself (`Field(...)`, `Annotated` constraints, title, examples).

    Returns {keyword: how it was spelled} so that a disagreeing marker can be reported with both.
    """
    spelled: dict[str, str] = {}
    for item in metadata:
        spelled.update(apply_constraint(schema, item))
    if info.title:
        schema["title"] = info.title
        spelled["title"] = f"Field(title={info.title!r})"
    if info.examples:
        schema["example"] = to_json(info.examples[0])
        spelled["example"] = f"Field(examples=[{info.examples[0]!r}, ...])"
    return spelled


def type_spellings(annotation: Any, schema: Schema) -> dict[str, str]:
    """Name the Python type as the origin of the keywords it implies (`Literal[...]`, an Enum, Int32...)."""
    spelled: dict[str, str] = {}
    if "enum" in schema:
        bare = strip_optional(annotation)
        if typing.get_origin(strip_annotated(bare)) is Literal:
            spelled["enum"] = f"Literal{list(typing.get_args(strip_annotated(bare)))}"
        elif inspect.isclass(strip_annotated(bare)):
            spelled["enum"] = f"the members of {strip_annotated(bare).__name__}"
    return spelled


def strip_annotated(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return members[0]
    return tp


def to_json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_json(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")  # format: byte is base64, as Go writes []byte
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return to_jsonable_python(value)  # Decimal, UUID, timedelta...: as pydantic writes them
