"""From pydantic models to Kubernetes structural schemas.

pydantic's own JSON Schema is not structural (`$ref`, `anyOf` with null, titles everywhere), so pyop walks the
model fields itself: every node gets a type, nested models are inlined, `Optional` means "may be omitted" (not
nullable), and both spellings of a constraint (a `+kubebuilder:validation:` marker and a pydantic `Field`/
`Annotated` constraint, `Literal`, an `Enum`, a default) land on the same keywords. Where a marker would change a
keyword the Python side already set to something else, that is an error naming both.

The walker knows nothing about individual markers: it collects the markers above a class or field and lets each
registry definition apply itself, in controller-tools' priority order.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import enum
import functools
import inspect
import marshal
import pickle
import re
import types
import typing
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, PydanticUndefinedAnnotation, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from pyop_scaffold.errors import PyopError
from pyop_scaffold.manifests.crd.aliases import AliasIndex, NamedAlias, alias_use
from pyop_scaffold.manifests.crd.constraints import (
    DECIMAL_PATTERN,
    Schema,
    SchemaError,
    apply_constraint,
    apply_markers,
    field_keywords,
    flat_metadata,
    preserves_unknown,
    schema_markers,
    strip_annotated,
    strip_optional,
    to_json,
    type_name,
    type_spellings,
)
from pyop_scaffold.manifests.crd.docs import (
    class_docs,
    docs_path,
    field_annotation_of,
    field_docs_of,
    issubclass_safe,
    package_default_required,
    package_markers,
    source_of,
)
from pyop_scaffold.manifests.errors import DEBUG_HINT, MarkerError, SourceLocation, describe_exception
from pyop_scaffold.manifests.markers.comments import EMPTY, DocBlock
from pyop_scaffold.manifests.markers.registry import MarkerUsageError, Target

__all__ = ["Schema", "SchemaBuilder", "SchemaError", "class_docs", "package_markers"]

_REQUIRED = {"required", "kubebuilder:validation:Required"}
_OPTIONAL = {"optional", "kubebuilder:validation:Optional"}
_SCHEMALESS = "kubebuilder:validation:Schemaless"
_IMMUTABLE = "k8s:immutable"
_CONDITION = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"


class SchemaBuilder:
    """Builds (and caches) the schemas of model classes and of other named classes (Enums, str subclasses)."""

    def __init__(self, builtin_schema: Any, *, embedded_object_meta: bool = False) -> None:
        self._builtin_schema = builtin_schema
        self._embedded_object_meta = embedded_object_meta
        # Named schemas, frozen (pickled) when built. The first use takes the built object itself, later uses a
        # fresh copy: most models are used once, and unpickling was a third of building the CRDs.
        self._cache: dict[Any, bytes] = {}
        self._stack: list[Any] = []
        self._aliases = AliasIndex()
        # Cache key of a named class or alias -> the keywords its own type markers set. A field marker may
        # differ from those (kept under allOf, as controller-gen does); keywords of the Python type it may not.
        self._marker_keys: dict[Any, frozenset[str]] = {}
        # The modules whose classes and aliases went into each cached schema, and the sets of the builds under
        # way: what a CRD was made from (`recording`), so that a later run can tell it would come out the same.
        self._modules: dict[Any, frozenset[str]] = {}
        self._recording: list[set[str]] = []

    @contextlib.contextmanager
    def recording(self) -> Iterator[set[str]]:
        """The names of the modules of every class and alias the schemas built inside the block come from."""
        modules: set[str] = set()
        self._recording.append(modules)
        try:
            yield modules
        finally:
            self._recording.pop()

    # -- classes --------------------------------------------------------------------------------------------------

    def model_schema(self, cls: type[BaseModel]) -> Schema:
        """The object schema of a model class, with its type-level markers applied. Returns a fresh copy."""
        return self._named(cls, self._build_model_schema)

    def _named(self, cls: Any, build: Callable[[Any], Schema], key: Any = None) -> Schema:
        """The cached schema of a named class or type alias (built once, handed out as fresh copies)."""
        if key is None:
            key = cls if isinstance(cls, type) else id(cls)
        frozen = self._cache.get(key)
        module = cls.__module__ if isinstance(cls, type) else getattr(cls, "module", None)
        if frozen is None:
            if any(entry is cls for entry in self._stack):
                chain = " -> ".join(type_name(c) for c in [*self._stack, cls])
                raise SchemaError(f"model {cls.__name__} refers to itself ({chain}); structural schemas are finite")
            self._stack.append(cls)
            modules: set[str] = {module} if isinstance(module, str) else set()
            self._recording.append(modules)
            try:
                schema = build(cls)
            finally:
                self._stack.pop()
                self._recording.pop()
            self._modules[key] = frozenset(modules)
            self._cache[key] = _freeze(schema)
            if self._recording:
                self._recording[-1].update(modules)
            return schema
        if self._recording:
            self._recording[-1].update(self._modules.get(key, ()))
        return _thaw(frozen)

    def _alias_schema(self, alias: NamedAlias) -> Schema:
        """The cached schema of a documented alias (a fresh copy)."""
        return self._named(alias, self._build_alias_schema, key=alias.key)

    def _build_alias_schema(self, alias: NamedAlias) -> Schema:
        """A documented type alias (`Callsign = Annotated[str, Field(max_length=7)]`, `ConcurrencyPolicy = str`):
        its schema, description and type markers, as controller-gen treats a named Go type. A second name of an
        alias (`Percent = Int32`) starts from the first one's schema, as a Go type defined from another does."""
        where = f"alias {alias.name}"
        target = self._aliases.resolve(alias.module, alias.renames) if alias.renames else None
        inherited: frozenset[str] = frozenset()
        spellings: dict[str, str] = {}
        if target is not None:
            schema = self._alias_schema(target)
            inherited = self._marker_keys.get(target.key, frozenset())
            spellings = {key: f"the Python type of alias {target.name}" for key in schema if key not in inherited}
        else:
            schema = self.type_schema(alias.value, [], where, resolve_alias=False)
        if alias.docs.description:
            schema["description"] = alias.docs.description
        self._apply_type_markers(alias.key, schema, alias.docs, where, spellings, inherited)
        return schema

    def _apply_type_markers(
        self,
        key: Any,
        schema: Schema,
        docs: DocBlock,
        where: str,
        spellings: dict[str, str],
        inherited: frozenset[str] = frozenset(),
    ) -> None:
        """Apply a named type's markers, remembering which keywords they set (see `_marker_keys`)."""
        markers = schema_markers(docs, Target.TYPE)
        changed: set[str] = set()
        if markers:  # (a model's schema holds its whole subtree: compared only when something may change it)
            before = _marker_view(schema)
            apply_markers(schema, markers, where, spellings, inherited=inherited)
            after = _marker_view(schema)
            changed = {name for name in after if before.get(name, _NO_DEFAULT) != after[name]}
        self._marker_keys[key] = frozenset((inherited & schema.keys()) | changed) - {"description"}

    def index_aliases(self, cls: type) -> None:
        """Learn the documented type aliases of the project package `cls` belongs to (its top-level package)."""
        self._aliases.index_package(cls.__module__.split(".")[0])

    def _build_model_schema(self, cls: type[BaseModel]) -> Schema:
        self.index_aliases(cls)
        if getattr(cls, "__pydantic_fields_complete__", True) is False:
            # A forward reference (a model defined further down the module) is resolved now that all exist.
            try:
                cls.model_rebuild(force=True)
            except PydanticUndefinedAnnotation as exc:
                raise _undefined_name(cls, exc.name or "?") from exc
        docs = class_docs(cls)
        required_by_default = package_default_required(cls)
        schema: Schema = {"type": "object"}
        if docs.description:
            schema["description"] = docs.description
        properties: dict[str, Schema] = {}
        required: list[str] = []
        immutable_optional: list[str] = []
        for name, info in cls.model_fields.items():
            if info.exclude is True:
                continue  # never serialised, so never on the wire: Go's `json:"-"`
            wire_name = info.serialization_alias or info.alias or name
            field_docs = field_docs_of(cls, name)
            prop, is_required = self.field_schema(cls, name, info, field_docs, required_by_default)
            properties[wire_name] = prop
            if is_required:
                required.append(wire_name)
            elif field_docs.has(_IMMUTABLE):
                immutable_optional.append(wire_name)
        if properties:
            schema["properties"] = properties
        if required:
            schema["required"] = sorted(required)
        for name in immutable_optional:
            # Removing an optional field would skip its own `self == oldSelf`; the parent refuses the removal.
            schema.setdefault("x-kubernetes-validations", []).append(
                {"message": f"field {name} is immutable once set", "rule": f"!has(oldSelf.{name}) || has(self.{name})"}
            )
        self._apply_type_markers(cls, schema, docs, f"class {cls.__name__}", {})
        return schema

    def _build_class_schema(self, cls: type) -> Schema:
        """A named non-model class (an Enum, a str or int subclass): its base schema, docstring and type markers."""
        schema = _scalar_class_schema(cls)
        spellings: dict[str, str] = {}
        if issubclass(cls, enum.Enum):
            spellings["enum"] = f"the members of {cls.__name__}"
        docs = class_docs(cls)
        if docs.description:
            schema["description"] = docs.description
        self._apply_type_markers(cls, schema, docs, f"class {cls.__name__}", spellings)
        return schema

    # -- fields ---------------------------------------------------------------------------------------------------

    def field_schema(
        self, owner: type, name: str, info: FieldInfo, docs: DocBlock, required_by_default: bool
    ) -> tuple[Schema, bool]:
        where = f"field {owner.__name__}.{name}"
        try:
            own_metadata: list[Any] = []
            from_alias: dict[str, str] = {}
            named_keys: frozenset[str] = frozenset()
            if docs.has(_SCHEMALESS):
                schema: Schema = {}
            elif name == "metadata" and issubclass_safe(owner, "Resource"):
                schema = {"type": "object"}
            else:
                written = field_annotation_of(owner, name)
                schema, own_metadata, alias = self._field_type_schema(info, where, preserves_unknown(docs), written)
                named_keys = self._marker_keys.get(alias.key if alias else _named_class(info.annotation), frozenset())
                if alias is not None:  # a marker disagreeing with the alias's Python type names the alias
                    from_alias = {key: f"the Python type of alias {alias.name}" for key in schema}
            spellings = from_alias | field_keywords(own_metadata, info, schema)
            spellings.update(type_spellings(info.annotation, schema))
            description = info.description or docs.description
            if description:
                schema["description"] = description
            if info.default_factory is not None and not callable(info.default_factory):
                raise SchemaError(
                    f"default_factory={info.default_factory!r} is not callable; pass a class or function "
                    "(default_factory=list), or default= for a value"
                )
            default = _python_default(info)
            if default is not _NO_DEFAULT:
                schema["default"] = default
                spellings["default"] = f"the Python default {info.default!r}"
            apply_markers(schema, schema_markers(docs, Target.FIELD), where, spellings, inherited=named_keys)
            if "default" not in schema and _applies_defaults(schema) and _nested_defaults(info):
                schema["default"] = {}
            _condition_list(info.annotation, schema)
        except (MarkerUsageError, SchemaError) as exc:
            place = source_of(owner) if docs is EMPTY else (docs_path(owner), docs.line)
            raise MarkerError(f"{where}: {exc}", SourceLocation(*place)) from exc.__cause__
        except PyopError:
            raise
        except Exception as exc:  # the user's types, defaults and validators may raise anything: name the field
            place = source_of(owner) if docs is EMPTY else (docs_path(owner), docs.line)
            raise MarkerError(f"{where}: {describe_exception(exc)} {DEBUG_HINT}", SourceLocation(*place)) from exc
        return schema, _is_required(info, docs, required_by_default)

    def _field_type_schema(
        self, info: FieldInfo, where: str, allow_any: bool, written: tuple[str, str] | None
    ) -> tuple[Schema, list[Any], NamedAlias | None]:
        """The schema of a field's type, the field's own constraints still to apply, and the alias it is of.

        A documented alias brings its markers: found by the name the annotation is written with (`written`: the
        declaring module and the annotation's source), else by identity. pydantic unpacks a field's top-level
        `Annotated[...]` into `info.metadata`, losing which alias the field was written with;
        `_original_annotation` keeps the object for the identity lookup.
        """
        raw = getattr(info, "_original_annotation", None)
        named, position = self._written_alias(written) if written else (None, None)
        if named is None and self._aliases.by_identity(raw) is not None:
            named, position = self._aliases.by_identity(raw), "self"
        if named is not None and position == "self":
            value = named.value
            alias_items = (
                {id(item) for item in flat_metadata(typing.get_args(value)[1:])}
                if typing.get_origin(value) is typing.Annotated
                else set()
            )
            return self._alias_schema(named), [m for m in info.metadata if id(m) not in alias_items], named
        builtin = [m for m in info.metadata if type(m).__name__ == "BuiltinType"]
        schema = self.type_schema(info.annotation, builtin, where, allow_any=allow_any)
        if named is not None and position == "items" and "items" in schema:
            schema["items"] = self._alias_schema(named)
        return schema, list(info.metadata), None

    def _written_alias(self, written: tuple[str, str]) -> tuple[NamedAlias | None, str | None]:
        """The alias a field's annotation is written with, and where it goes; an alias that only its name finds
        (`= str`, or a second name) written anywhere else would lose its markers, so that is refused."""
        module_name, source = written
        use, others = alias_use(source)
        for name in sorted(others):
            stray = self._aliases.resolve(module_name, name)
            if stray is not None and stray.by_name_only and stray.docs.markers:
                raise SchemaError(
                    f"the markers of alias {stray.name} apply where a field's type is {stray.name}, "
                    f"{stray.name} | None or list[{stray.name}], not inside {source}; "
                    "use one of those forms or write the markers on the field"
                )
        if use is None:
            return None, None
        named = self._aliases.resolve(module_name, use.name)
        if named is None or (use.position == "items" and not named.by_name_only):
            return None, None  # an Annotated alias among the items is found by identity, as deeper ones are
        return named, use.position

    # -- types ----------------------------------------------------------------------------------------------------

    def type_schema(
        self,
        tp: Any,
        metadata: list[Any],
        where: str,
        *,
        allow_any: bool = False,
        nested: bool = False,
        resolve_alias: bool = True,
    ) -> Schema:
        """The schema of a Python type annotation (with its `Annotated` metadata)."""
        origin = typing.get_origin(tp)
        named = self._aliases.by_identity(tp) if resolve_alias else None
        if named is not None:
            schema = self._alias_schema(named)
            for item in metadata:
                apply_constraint(schema, item)
            return schema
        if origin is typing.Annotated:
            inner, *extra = typing.get_args(tp)
            return self.type_schema(inner, [*extra, *metadata], where, allow_any=allow_any, nested=nested)
        builtin = next((m for m in metadata if type(m).__name__ == "BuiltinType"), None)
        if builtin is not None:
            return self._builtin(builtin.definition)
        schema = self._bare_type_schema(tp, origin, where, allow_any, nested)
        for item in metadata:
            apply_constraint(schema, item)
        return schema

    def _bare_type_schema(self, tp: Any, origin: Any, where: str, allow_any: bool, nested: bool) -> Schema:
        plain = _PLAIN_SCALARS.get(tp) if type(tp) is type else None
        if plain is not None:
            return {"type": plain}  # what the checks below come to for the four builtin scalars, without them
        if tp is Any or tp is object:
            if allow_any:
                # A nested node needs a type or preserve-unknown-fields to stay structural.
                return {"x-kubernetes-preserve-unknown-fields": True} if nested else {}
            raise SchemaError(
                "type Any has no schema; mark the field +kubebuilder:validation:Schemaless or "
                "+kubebuilder:pruning:PreserveUnknownFields, or give it a concrete type"
            )
        if origin in (typing.Union, types.UnionType):
            return self._union_schema(tp, where, allow_any, nested)
        if origin is Literal:
            return _literal_schema(list(typing.get_args(tp)))
        if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence) or (
            inspect.isclass(origin) and issubclass(origin, (list, tuple, set, frozenset))
        ):
            return self._array_schema(tp, origin, where, allow_any)
        if origin in (dict, Mapping, typing.Mapping) or (inspect.isclass(origin) and issubclass(origin, dict)):
            return self._map_schema(tp, where, allow_any)
        if not inspect.isclass(tp):
            raise SchemaError(f"unsupported type {tp!r}")
        definition = getattr(tp, "__k8s_definition__", None)
        if isinstance(definition, str):
            return self._builtin(definition)
        if issubclass(tp, BaseModel):
            return self.model_schema(tp)
        if tp is dict:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if tp in (list, tuple, set, frozenset):
            raise SchemaError(f"bare {tp.__name__} needs an item type, e.g. {tp.__name__}[str]")
        if _is_user_class(tp):
            return self._named(tp, self._build_class_schema)
        return _scalar_class_schema(tp)

    def _union_schema(self, tp: Any, where: str, allow_any: bool, nested: bool) -> Schema:
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return self.type_schema(members[0], [], where, allow_any=allow_any, nested=nested)
        if all(typing.get_origin(strip_annotated(m)) is Literal for m in members):
            return _literal_schema([v for m in members for v in typing.get_args(strip_annotated(m))])
        bare = {strip_annotated(m) for m in members}
        if bare == {int, str}:
            return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        names = ", ".join(getattr(m, "__name__", repr(m)) for m in members)
        raise SchemaError(f"union of {names} is not a structural schema; only `int | str` (int-or-string) is")

    def _array_schema(self, tp: Any, origin: Any, where: str, allow_any: bool) -> Schema:
        args = typing.get_args(tp)
        fixed_length: int | None = None
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if not args or len({repr(a) for a in args}) != 1:
                raise SchemaError(
                    f"tuple{list(args)} mixes item types; a list item type is one type (tuple[T, ...] or tuple[T, T])"
                )
            fixed_length = len(args)
        item_type = args[0] if args else Any
        items = self.type_schema(item_type, [], where, allow_any=allow_any, nested=True)
        schema: Schema = {"type": "array", "items": items}
        if fixed_length is not None:
            schema["maxItems"] = schema["minItems"] = fixed_length
        if origin in (set, frozenset) or (inspect.isclass(origin) and issubclass(origin, (set, frozenset))):
            if items.get("type") in ("object", "array") or "type" not in items and "anyOf" not in items:
                raise SchemaError("set items must be scalars (a set list compares whole items); use a list")
            schema["x-kubernetes-list-type"] = "set"
        return schema

    def _map_schema(self, tp: Any, where: str, allow_any: bool) -> Schema:
        key_type, value_type = typing.get_args(tp) or (str, Any)
        key = strip_annotated(key_type)
        if not (inspect.isclass(key) and issubclass(key, str)):
            raise SchemaError(f"map keys must be str, not {getattr(key, '__name__', key)!r}")
        if strip_annotated(value_type) in (Any, object):
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        value = self.type_schema(value_type, [], where, allow_any=allow_any, nested=True)
        return {"type": "object", "additionalProperties": value}

    def _builtin(self, definition: str) -> Schema:
        if self._builtin_schema is None:
            raise SchemaError(f"built-in type {definition} needs the Kubernetes schema source")
        try:
            if self._embedded_object_meta:
                return dict(self._builtin_schema(definition, embedded_object_meta=True))
            return dict(self._builtin_schema(definition))
        except KeyError as exc:
            raise SchemaError(str(exc).strip("'\"")) from None


def _freeze(schema: Schema) -> bytes:
    """A schema as bytes to copy it from: marshal (a third of pickle's time) for the plain JSON data schemas are,
    pickle for anything else a marker or type may have put in."""
    try:
        return b"m" + marshal.dumps(schema)
    except ValueError:
        return b"p" + pickle.dumps(schema, protocol=pickle.HIGHEST_PROTOCOL)


def _thaw(frozen: bytes) -> Schema:
    """A fresh deep copy of a frozen schema (same types, same sharing of objects within it)."""
    body = memoryview(frozen)[1:]
    return marshal.loads(body) if frozen[:1] == b"m" else pickle.loads(body)  # type: ignore[no-any-return]


_PLAIN_SCALARS: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


def _scalar_class_schema(tp: type) -> Schema:
    """Schemas of the scalar Python classes (bool before int: bool is an int)."""
    if issubclass(tp, enum.Enum):
        return _literal_schema([member.value for member in tp])
    if issubclass(tp, bool):
        return {"type": "boolean"}
    if issubclass(tp, int):
        return {"type": "integer"}
    if issubclass(tp, float):
        return {"type": "number"}
    if issubclass(tp, decimal.Decimal):
        return {"type": "string", "pattern": DECIMAL_PATTERN}
    if issubclass(tp, str):
        return {"type": "string"}
    if issubclass(tp, bytes):
        return {"type": "string", "format": "byte"}
    if issubclass(tp, datetime.datetime):
        return {"type": "string", "format": "date-time"}
    if issubclass(tp, datetime.date):
        return {"type": "string", "format": "date"}
    if issubclass(tp, datetime.timedelta):
        return {"type": "string"}  # pydantic writes ISO 8601 (`PT30S`); Go-style `30s` is the Duration alias
    if issubclass(tp, uuid.UUID):
        return {"type": "string", "format": "uuid"}
    raise SchemaError(f"unsupported type {tp.__name__}")


def _is_user_class(tp: type) -> bool:
    """A class the project defines (its docstring and markers count), as opposed to a library's."""
    module = tp.__module__
    return module not in ("builtins", "datetime", "decimal", "uuid", "enum") and not module.startswith("pyop.")


def _literal_schema(values: list[Any]) -> Schema:
    values = [v for v in values if v is not None]
    if not values:
        raise SchemaError("Literal[None] has no schema")
    json_values = list(dict.fromkeys(to_json(v) for v in values))
    kinds = {_json_type(v) for v in json_values}
    if len(kinds) == 1:
        return {"type": kinds.pop(), "enum": json_values}
    if kinds == {"integer", "string"}:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "enum": json_values,
            "x-kubernetes-int-or-string": True,
        }
    raise SchemaError(f"enum values {json_values!r} mix types")


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


def _condition_list(annotation: Any, schema: Schema) -> None:
    """A `list[Condition]` is a map list keyed by `type`, as Kubernetes' own conditions are.

    controller-gen needs `+listType=map` and `+listMapKey=type` for it; without them server-side apply replaces
    the whole list whenever a controller sets one condition. pyop adds them unless the field's markers chose
    another list type.
    """
    if schema.get("type") != "array":
        return
    bare = strip_annotated(strip_optional(annotation))
    if typing.get_origin(bare) not in (list, Sequence, typing.Sequence):
        return
    args = typing.get_args(bare)
    item = strip_annotated(args[0]) if args else None
    if getattr(item, "__k8s_definition__", None) != _CONDITION:
        return
    list_type = schema.setdefault("x-kubernetes-list-type", "map")
    if list_type == "map":
        schema.setdefault("x-kubernetes-list-map-keys", ["type"])


def _undefined_name(cls: type, name: str) -> MarkerError:
    """An annotation naming something the module does not define (`x: Any` without importing Any), at the
    field that uses it, with the import that would define it where the name is a well-known one."""
    where, line = source_of(cls)
    field = _field_using(cls, name)
    annotation = ""
    if field is not None:
        owner, field_name, field_line = field
        where, line = docs_path(owner), field_line or line
        subject = f"field {owner.__name__}.{field_name}"
        annotation = str(owner.__annotations__.get(field_name, ""))
    else:
        subject = f"class {cls.__name__}"
    known = _known_names().get(name)
    if re.search(rf"(?<![\w.]){re.escape(name)}\.", annotation):  # `datetime.date`: a module used by name
        fix = f"add `import {name}`"
    elif known:
        fix = f"add `from {known} import {name}`"
    else:
        fix = f"import or define {name} in {where}"
    return MarkerError(f"{subject}: name {name!r} is not defined; {fix}", SourceLocation(where, line))


def _field_using(cls: type, name: str) -> tuple[type, str, int] | None:
    """The first field (of the class or a base) whose annotation mentions `name`, and the line it is on."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    for klass in cls.__mro__:
        for field_name, annotation in getattr(klass, "__annotations__", {}).items():
            text = annotation if isinstance(annotation, str) else repr(annotation)
            if word.search(text):
                return klass, field_name, field_docs_of(klass, field_name).line
    return None


@functools.cache
def _known_names() -> dict[str, str]:
    """Names models commonly use, and the module to import each from (typing's, datetime's, pyop's)."""
    import pyop.api
    from pyop.api.builtin_types import BUILTIN_TYPE_ALIASES

    names = {name: "typing" for name in typing.__all__}
    names.update({"Field": "pydantic", "datetime": "datetime", "timedelta": "datetime", "Decimal": "decimal"})
    names.update(dict.fromkeys(BUILTIN_TYPE_ALIASES, "pyop.api.builtin_types"))
    names.update(dict.fromkeys(pyop.api.__all__, "pyop.api"))
    return names


# -- defaults and requiredness ----------------------------------------------------------------------------------------

_NO_DEFAULT = object()


def _python_default(info: FieldInfo) -> Any:
    """The schema default a field's plain Python default spells (`replicas: int = 3`).

    `None` and empty collections mean "may be omitted", not a default the API server should fill in.
    """
    if info.default is PydanticUndefined or info.default is None:
        return _NO_DEFAULT
    value = to_json(info.default)
    if value in ([], {}):
        return _NO_DEFAULT
    return value


def _applies_defaults(schema: Schema) -> bool:
    """Whether a `{}` default would bring anything: the object's schema defaults one of its properties (a Python
    default of `[]` or `None` writes none, so a model of empty lists gets no `default: {}`)."""
    return any("default" in prop for prop in schema.get("properties", {}).values())


def _nested_defaults(info: FieldInfo) -> bool:
    """A model built by its default factory has defaults of its own: the field defaults to `{}`.

    That `{}` is what controller-gen users add by hand (`+kubebuilder:default={}`) so that the API server applies
    the nested defaults of an omitted object; pyop adds it where the nested model has defaults to apply.

    Where the factory cannot build a valid object there is no default, as controller-gen writes none for a nested
    struct: the object must be given. A required field (`size: Int32`, here or in a model a field's own factory
    builds) is never filled in by the API server either, and it refuses a CRD whose `{}` default fails the
    nested `required`. Such a factory is not called; one whose validators refuse its defaults means the same.
    """
    factory = info.default_factory
    if not (inspect.isclass(factory) and issubclass(factory, BaseModel)):
        return False
    if _needs_arguments(factory, set()):
        return False
    try:
        known = _defaults_dump_non_empty(factory)
        if known is not None:
            return known
        return bool(factory().model_dump(exclude_none=True))
    except ValidationError:
        return False
    except Exception as exc:  # the user's validators, __init__ or model_post_init may raise anything
        raise SchemaError(
            f"its default factory {factory.__name__}() raised {describe_exception(exc)}; it must build a valid "
            f"{factory.__name__} from defaults alone {DEBUG_HINT}"
        ) from exc


def _needs_arguments(cls: type[BaseModel], seen: set[type]) -> bool:
    """Whether `cls()` is bound to fail: a required field, here or in a nested model a field's default factory
    builds. A model with an `__init__` of its own may fill fields in itself, so it is not judged here."""
    if cls in seen:
        return False
    seen.add(cls)
    if cls.__init__ is not BaseModel.__init__:
        return False
    for field in cls.model_fields.values():
        if field.is_required():
            return True
        factory = field.default_factory
        if inspect.isclass(factory) and issubclass(factory, BaseModel) and _needs_arguments(factory, seen):
            return True
    return False


def _defaults_dump_non_empty(cls: type[BaseModel]) -> bool | None:
    """`bool(cls().model_dump(exclude_none=True))` read from the field defaults, where pydantic would only copy
    the defaults in and dump them back: no validators, serializers or computed fields, no own `__init__`,
    `model_post_init` or `model_dump`, no required, validated or excluded field. None where it might do more.

    Instantiating the model would build its validator, which the project import deferred (a millisecond each).
    """
    decorators = cls.__pydantic_decorators__
    if (
        any(
            (
                decorators.validators,
                decorators.field_validators,
                decorators.root_validators,
                decorators.field_serializers,
                decorators.model_serializers,
                decorators.model_validators,
                decorators.computed_fields,
            )
        )
        or getattr(cls, "__pydantic_root_model__", False)
        or getattr(cls, "__pydantic_fields_complete__", True) is False
        or cls.__init__ is not BaseModel.__init__
        or cls.model_post_init is not BaseModel.model_post_init
        or cls.model_dump is not BaseModel.model_dump
        or cls.model_config.get("validate_default")
    ):
        return None
    fields = cls.model_fields.values()
    for field in fields:
        if (
            field.is_required()
            or field.validate_default
            or field.exclude
            or field.exclude_if is not None
            or field.default_factory_takes_validated_data
        ):
            return None
    return any(field.get_default(call_default_factory=True) is not None for field in fields)


def _named_class(annotation: Any) -> Any:
    """The class a field's type names (`Window`, `Window | None`), the key of its cached schema; else None."""
    bare = strip_annotated(strip_optional(annotation))
    return bare if inspect.isclass(bare) else None


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


def _marker_view(value: Any) -> Any:  # noqa: ANN401 - any JSON-able value
    """What a type marker can change in a keyword's value, comparable: its JSON, except that a `properties`
    mapping (the subtree of a model, by far the largest part) stands for itself. No marker edits properties in
    place (they read them, or drop the keyword), so its identity tells whether it changed."""
    if isinstance(value, dict):
        return {
            str(key): (("properties", id(item)) if key == "properties" else _marker_view(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_marker_view(item) for item in value]
    return to_json(value)
