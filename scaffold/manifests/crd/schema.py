"""From pydantic models to Kubernetes structural schemas.

pydantic's own JSON Schema is not structural (`$ref`, `anyOf` with null, titles everywhere), so pyop walks the
model fields itself: every node gets a type, nested models are inlined, `Optional` means "may be omitted" (not
nullable), and both spellings of a constraint (a `+kubebuilder:validation:` marker and a pydantic `Field`/
`Annotated` constraint) land on the same keywords. Where both spell the same keyword differently, that is an error.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import enum
import inspect
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from scaffold.manifests.errors import MarkerError, SourceLocation
from scaffold.manifests.markers.comments import EMPTY, DocBlock, ModuleDocs, read_module_docs
from scaffold.manifests.markers.parser import ParsedMarker
from scaffold.manifests.markers.registry import MarkerUsageError, Target

Schema = dict[str, Any]

_REQUIRED = {"required", "kubebuilder:validation:Required"}
_OPTIONAL = {"optional", "kubebuilder:validation:Optional"}
_SCHEMALESS = "kubebuilder:validation:Schemaless"
_PRESERVE = {"kubebuilder:pruning:PreserveUnknownFields", "kubebuilder:validation:XPreserveUnknownFields"}


class SchemaError(Exception):
    """A model that cannot become a structural schema; the message names the model and field."""


class SchemaBuilder:
    """Builds (and caches) object schemas of model classes."""

    def __init__(self, builtin_schema: Any) -> None:
        self._builtin_schema = builtin_schema
        self._cache: dict[type, Schema] = {}
        self._stack: list[type] = []

    # -- classes --------------------------------------------------------------------------------------------------

    def model_schema(self, cls: type[BaseModel]) -> Schema:
        """The object schema of a model class, with its type-level markers applied. Returns a fresh copy."""
        key = cls
        if key not in self._cache:
            if cls in self._stack:
                chain = " -> ".join(c.__name__ for c in [*self._stack, cls])
                raise SchemaError(f"model {cls.__name__} refers to itself ({chain}); structural schemas are finite")
            self._stack.append(cls)
            try:
                self._cache[key] = self._build_model_schema(cls)
            finally:
                self._stack.pop()
        return copy.deepcopy(self._cache[key])

    def _build_model_schema(self, cls: type[BaseModel]) -> Schema:
        docs = class_docs(cls)
        required_by_default = package_default_required(cls)
        schema: Schema = {"type": "object"}
        if docs.description:
            schema["description"] = docs.description
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for name, info in cls.model_fields.items():
            wire_name = info.serialization_alias or info.alias or name
            field_docs = field_docs_of(cls, name)
            prop, is_required = self.field_schema(cls, name, info, field_docs, required_by_default)
            properties[wire_name] = prop
            if is_required:
                required.append(wire_name)
        if properties:
            schema["properties"] = properties
        if required:
            schema["required"] = sorted(required)
        _apply_markers(schema, [m for m in docs.markers if _is_schema_marker(m, Target.TYPE)], f"class {cls.__name__}")
        return schema

    # -- fields ---------------------------------------------------------------------------------------------------

    def field_schema(
        self, owner: type, name: str, info: FieldInfo, docs: DocBlock, required_by_default: bool
    ) -> tuple[Schema, bool]:
        where = f"field {owner.__name__}.{name}"
        location = SourceLocation(*_source_of(owner)) if docs is EMPTY else SourceLocation(_docs_path(owner), docs.line)
        try:
            if docs.has(_SCHEMALESS):
                schema: Schema = {}
            elif name == "metadata" and issubclass_safe(owner, "Resource"):
                schema = {"type": "object"}
            else:
                builtin = [m for m in info.metadata if type(m).__name__ == "BuiltinType"]
                schema = self.type_schema(info.annotation, builtin, where, allow_any=_preserves(docs))
            from_pydantic = _field_keywords(info, schema)
            description = info.description or docs.description
            if description:
                schema["description"] = description
            _apply_field_markers(schema, docs, from_pydantic, where)
            default = _default_of(info)
            if default is not _NO_DEFAULT and "default" not in schema:
                schema["default"] = default
        except (MarkerUsageError, SchemaError) as exc:
            raise MarkerError(f"{where}: {exc}", location) from None
        return schema, _is_required(info, docs, required_by_default)

    # -- types ----------------------------------------------------------------------------------------------------

    def type_schema(self, tp: Any, metadata: list[Any], where: str, *, allow_any: bool = False) -> Schema:
        """The schema of a Python type annotation (with its `Annotated` metadata)."""
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            inner, *extra = typing.get_args(tp)
            return self.type_schema(inner, [*extra, *metadata], where, allow_any=allow_any)
        builtin = next((m for m in metadata if type(m).__name__ == "BuiltinType"), None)
        if builtin is not None:
            return self._builtin(builtin.definition, where)
        schema = self._bare_type_schema(tp, origin, where, allow_any)
        for item in metadata:
            _apply_constraint(schema, item, where)
        return schema

    def _bare_type_schema(self, tp: Any, origin: Any, where: str, allow_any: bool) -> Schema:
        if tp is Any or tp is object:
            if allow_any:
                return {}
            raise SchemaError(
                "type Any has no schema; mark the field +kubebuilder:validation:Schemaless or "
                "+kubebuilder:pruning:PreserveUnknownFields, or give it a concrete type"
            )
        if origin in (typing.Union, types.UnionType):
            return self._union_schema(tp, where, allow_any)
        if origin is Literal:
            return _enum_schema(list(typing.get_args(tp)), where)
        if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence) or (
            inspect.isclass(origin) and issubclass(origin, (list, tuple, set, frozenset))
        ):
            return self._array_schema(tp, origin, where, allow_any)
        if origin in (dict, Mapping, typing.Mapping) or (inspect.isclass(origin) and issubclass(origin, dict)):
            key_type, value_type = typing.get_args(tp) or (str, Any)
            if _strip_annotated(key_type) is not str:
                raise SchemaError(f"map keys must be str, not {key_type!r}")
            if _strip_annotated(value_type) is Any:
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return {
                "type": "object",
                "additionalProperties": self.type_schema(value_type, [], where, allow_any=allow_any),
            }
        if not inspect.isclass(tp):
            raise SchemaError(f"unsupported type {tp!r}")
        definition = getattr(tp, "__k8s_definition__", None)
        if isinstance(definition, str):
            return self._builtin(definition, where)
        if issubclass(tp, bool):
            return {"type": "boolean"}
        if issubclass(tp, enum.Enum):
            return _enum_schema([member.value for member in tp], where)
        if issubclass(tp, int):
            return {"type": "integer"}
        if issubclass(tp, float) or issubclass(tp, decimal.Decimal):
            return {"type": "number"}
        if issubclass(tp, str):
            return {"type": "string"}
        if issubclass(tp, bytes):
            return {"type": "string", "format": "byte"}
        if issubclass(tp, datetime.datetime):
            return {"type": "string", "format": "date-time"}
        if issubclass(tp, datetime.date):
            return {"type": "string", "format": "date"}
        if issubclass(tp, datetime.timedelta):
            return {"type": "string"}
        if tp is dict:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if tp in (list, tuple, set):
            raise SchemaError(f"bare {tp.__name__} needs an item type, e.g. {tp.__name__}[str]")
        if issubclass(tp, BaseModel):
            return self.model_schema(tp)
        raise SchemaError(f"unsupported type {tp.__name__}")

    def _union_schema(self, tp: Any, where: str, allow_any: bool) -> Schema:
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return self.type_schema(members[0], [], where, allow_any=allow_any)
        bare = {_strip_annotated(m) for m in members}
        if bare == {int, str}:
            return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        names = ", ".join(getattr(m, "__name__", repr(m)) for m in members)
        raise SchemaError(f"union of {names} is not a structural schema; only `int | str` (int-or-string) is")

    def _array_schema(self, tp: Any, origin: Any, where: str, allow_any: bool) -> Schema:
        args = typing.get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise SchemaError("tuples must be homogeneous (tuple[T, ...]) to become a list")
        item_type = args[0] if args else Any
        schema: Schema = {"type": "array", "items": self.type_schema(item_type, [], where, allow_any=allow_any)}
        if origin in (set, frozenset):
            schema["x-kubernetes-list-type"] = "set"
        return schema

    def _builtin(self, definition: str, where: str) -> Schema:
        if self._builtin_schema is None:
            raise SchemaError(f"built-in type {definition} needs the Kubernetes schema source")
        try:
            return dict(self._builtin_schema(definition))
        except KeyError as exc:
            raise SchemaError(str(exc).strip("'\"")) from None


# -- docs lookups -----------------------------------------------------------------------------------------------------


def _module_docs(cls: type) -> ModuleDocs | None:
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    return read_module_docs(Path(path))


def class_docs(cls: type) -> DocBlock:
    docs = _module_docs(cls)
    return docs.for_class(cls.__qualname__) if docs else EMPTY


def field_docs_of(cls: type, name: str) -> DocBlock:
    """The comment block above a field, looked up in the class that declares the field."""
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            docs = _module_docs(klass)
            return docs.for_field(klass.__qualname__, name) if docs else EMPTY
    return EMPTY


def package_markers(cls: type) -> list[ParsedMarker]:
    """Markers of the API package a class lives in: its `__init__` and `groupversion_info` docstrings."""
    package = cls.__module__.rpartition(".")[0]
    found: list[ParsedMarker] = []
    for name in (package, f"{package}.groupversion_info"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py"):
            found.extend(read_module_docs(Path(path)).module.markers)
    return found


def package_default_required(cls: type) -> bool:
    """Fields without a default are required, unless the package says `+kubebuilder:validation:Optional`."""
    names = {m.name for m in package_markers(cls)}
    return "kubebuilder:validation:Optional" not in names


def _docs_path(cls: type) -> str:
    docs = _module_docs(cls)
    return docs.path if docs else cls.__module__


def _source_of(cls: type) -> tuple[str, int]:
    docs = _module_docs(cls)
    block = docs.for_class(cls.__qualname__) if docs else EMPTY
    return (docs.path if docs else cls.__module__), block.line


def issubclass_safe(cls: type, base_name: str) -> bool:
    return any(klass.__name__ == base_name and klass.__module__.startswith("pyop.") for klass in cls.__mro__)


# -- markers and constraints ------------------------------------------------------------------------------------------


def _is_schema_marker(marker: ParsedMarker, target: Target) -> bool:
    return marker.definition.apply is not None and bool(marker.definition.targets & target)


def _preserves(docs: DocBlock) -> bool:
    return any(m.name in _PRESERVE for m in docs.markers)


def _apply_markers(schema: Schema, markers: list[ParsedMarker], where: str) -> None:
    for marker in sorted(markers, key=lambda m: m.definition.priority):
        target = schema
        if marker.items:
            if schema.get("type") != "array":
                raise MarkerError(
                    f"{where}: +{marker.text} applies to list items, but the field is not a list", marker.location
                )
            target = schema["items"]
        try:
            assert marker.definition.apply is not None
            marker.definition.apply(target, marker.value)
        except MarkerUsageError as exc:
            raise MarkerError(f"{where}: +{marker.text}: {exc}", marker.location) from None


def _apply_field_markers(schema: Schema, docs: DocBlock, from_pydantic: dict[str, Any], where: str) -> None:
    """Apply the field's markers; one that sets a keyword a pydantic constraint set differently is an error."""
    markers = [m for m in docs.markers if _is_schema_marker(m, Target.FIELD)]
    for marker in sorted(markers, key=lambda m: m.definition.priority):
        before = copy.deepcopy(schema)
        _apply_markers(schema, [marker], where)
        for key, (value, spelling) in from_pydantic.items():
            if key in schema and schema.get(key) != before.get(key) and schema[key] != value:
                raise MarkerError(
                    f"{where}: +{marker.text} disagrees with {spelling} ({key}: {schema[key]!r} vs {value!r}); "
                    "keep one of them",
                    marker.location,
                )


_LENGTH_KEYS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def _apply_constraint(schema: Schema, item: Any, where: str) -> dict[str, Any]:
    """Apply one pydantic/annotated-types constraint; returns {keyword: (value, spelling)} it set."""
    name = type(item).__name__
    kind = schema.get("type", "string" if schema.get("x-kubernetes-int-or-string") else "")
    set_keys: dict[str, Any] = {}

    def put(key: str, value: Any, spelling: str) -> None:
        schema[key] = value
        set_keys[key] = (value, spelling)

    if isinstance(item, FieldInfo):
        for inner in item.metadata:
            set_keys.update(_apply_constraint(schema, inner, where))
        if item.description:
            schema["description"] = item.description
        return set_keys
    if name == "Ge":
        put("minimum", item.ge, f"Field(ge={item.ge})")
    elif name == "Gt":
        put("minimum", item.gt, f"Field(gt={item.gt})")
        put("exclusiveMinimum", True, f"Field(gt={item.gt})")
    elif name == "Le":
        put("maximum", item.le, f"Field(le={item.le})")
    elif name == "Lt":
        put("maximum", item.lt, f"Field(lt={item.lt})")
        put("exclusiveMaximum", True, f"Field(lt={item.lt})")
    elif name == "MultipleOf":
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
    return set_keys


def _field_keywords(info: FieldInfo, schema: Schema) -> dict[str, Any]:
    """Apply the pydantic spellings on the field itself (`Field(...)`, `Annotated` constraints).

    Returns {keyword: (value, how it was spelled)} so that a disagreeing marker can be reported with both.
    """
    set_keys: dict[str, Any] = {}
    for item in info.metadata:
        set_keys.update(_apply_constraint(schema, item, ""))
    if info.title:
        schema["title"] = info.title
        set_keys["title"] = (info.title, f"Field(title={info.title!r})")
    if info.examples:
        schema["example"] = _to_json(info.examples[0])
        set_keys["example"] = (schema["example"], "Field(examples=...)")
    return set_keys


def _enum_schema(values: list[Any], where: str) -> Schema:
    json_values = [_to_json(v) for v in values]
    kinds = {_json_type(v) for v in json_values}
    if len(kinds) != 1:
        return (
            {"enum": json_values, "x-kubernetes-int-or-string": True}
            if kinds == {"integer", "string"}
            else _fail(f"enum values {json_values!r} mix types")
        )
    return {"type": kinds.pop(), "enum": json_values}


def _fail(message: str) -> Schema:
    raise SchemaError(message)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise SchemaError(f"enum value {value!r} is not a scalar")


def _strip_annotated(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


# -- defaults and requiredness ----------------------------------------------------------------------------------------

_NO_DEFAULT = object()


def _default_of(info: FieldInfo) -> Any:
    """The schema default of a field: its plain default, or `{}` when a model factory has nested defaults.

    The `{}` is what controller-gen users add by hand (`+kubebuilder:default={}`) so that the API server applies
    the nested defaults of an omitted object; pyop adds it where the nested model has defaults to apply.
    """
    if info.default is not PydanticUndefined and info.default is not None:
        value = _to_json(info.default)
        if value in ([], {}, ""):
            return _NO_DEFAULT if value != "" else value
        return value
    factory = info.default_factory
    if inspect.isclass(factory) and issubclass(factory, BaseModel):
        if factory().model_dump(exclude_none=True):
            return {}
    return _NO_DEFAULT


def _to_json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, enum.Enum):
        return _to_json(value.value)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_to_json(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def _is_required(info: FieldInfo, docs: DocBlock, required_by_default: bool) -> bool:
    names = {m.name for m in docs.markers}
    if names & _OPTIONAL:
        if names & _REQUIRED:
            raise MarkerError("field is marked both required and optional", docs.markers[0].location)
        return False
    if names & _REQUIRED:
        return True
    if not info.is_required():
        return False
    return required_by_default
