"""Objects the API server sent, as models whose fields are validated when first read.

Why: pydantic validates a whole object up front, and for a small custom resource as the API server stores it (uid,
timestamps, two managedFields entries, labels, spec, status) that costs ~15 us, twice what listing it over HTTP and
decoding its JSON costs (~7 us): reading every item of a typed list cost twice the official client's plain dicts.
A controller reads a few fields of each object (its spec, its name); managedFields, timestamps and most of
metadata go back to the server untouched or not at all. `from_server(Model, data)` therefore makes an instance
that keeps `data`, and validates a field when it is first read, by that field's own schema (`model_fields_set` and
`model_extra` are made when first asked for); a nested KubeModel is built the same way, so `item.spec.replicas`
validates `spec.replicas` and nothing else.

What stays exactly as with `Model.model_validate(data)`:
- the values: a field read is the field's validated value (`item.metadata` an `ObjectMeta`, `creation_timestamp` a
  UTC datetime), a field not sent its default; `model_fields_set` and the unknown fields (`model_extra`, under
  their wire names) are the same;
- whole-object operations (`model_dump`, `model_dump_json`, a dump of any model or TypeAdapter that contains this
  one, `==`, `repr`, copies, pickling, `vars()`, assigning a field) go through the instance's `__dict__`, and
  KubeModel's `__dict__` first validates every field not read yet (`materialize`; nested models fully, in
  pydantic-core), so no operation sees a field missing or unconverted, and the field order is `model_validate`'s
  (a read-modify-write round-trips byte for byte);
- a model this cannot stand in for is simply validated: a class that is not a KubeModel, one with validators of
  its own (`field_validator`, `model_validator`; Resource's apiVersion/kind filling is done here as it does it),
  private attributes or `model_post_init`, extra other than "allow", `validate_default`, alias choices or paths,
  a schema of a shape not recognised here, or data that names a field by its Python name.

What differs: a malformed field raises pydantic's ValidationError where it is first read (or dumped), not in the
call that fetched the object; the error is the one `model_validate` of the enclosing object gives. `data` is kept
and read later, so it must be a dict nobody changes (a decoded response body). Only objects a server sent come
through here: what a caller builds is validated as usual.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Final, TypeVar, Union

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from pydantic_core import SchemaValidator

from pyop.api.model import PENDING, KubeModel, Resource

M = TypeVar("M", bound=BaseModel)

# The instance's own slots, past KubeModel's `__dict__` property.
_get_dict: Final = BaseModel.__dict__["__dict__"].__get__
_set_dict: Final = BaseModel.__dict__["__dict__"].__set__
_get_fields_set: Final = BaseModel.__dict__["__pydantic_fields_set__"].__get__
_set_fields_set: Final = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra: Final = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private: Final = BaseModel.__dict__["__pydantic_private__"].__set__
_MISSING: Final = object()

# Core schemas of plain data: validated on first read by the field's own schema node, or kept as sent when the
# value's type is exactly the one the node would return unchanged (`_exact_types`).
_PLAIN: Final = frozenset({"str", "int", "bool", "float", "any", "none", "literal", "bytes"})
_UNCONSTRAINED: Final = frozenset({"type", "metadata", "ref", "serialization"})
_STR_CONFIG: Final = ("str_strip_whitespace", "str_to_lower", "str_to_upper", "str_min_length", "str_max_length")


class _Field:
    """One field: its wire name, and how a sent value becomes the field's on first read and when materialized."""

    __slots__ = (
        "name",
        "key",
        "exact",
        "plain",
        "model",
        "many",
        "nested",
        "info",
        "_annotation",
        "_config",
        "_adapter",
    )

    def __init__(self, name: str, info: FieldInfo, schema: Any, core_config: Any, config: dict[str, Any]) -> None:
        self.name = name
        self.key: str = info.validation_alias if isinstance(info.validation_alias, str) else (info.alias or name)
        self.info = info
        value_schema = schema["schema"] if schema.get("type") == "default" else schema
        self.exact: tuple[type, ...] | None = _exact_types(value_schema, config)
        self.plain: SchemaValidator | None = (
            SchemaValidator(value_schema, core_config) if _is_plain(value_schema) else None
        )
        self.model, self.many = _nested_model(info)
        self.nested: _Plan | None = None  # the plan of `model` when it has one and this is not a list (`_link`)
        constraints: list[Any] = list(info.metadata)
        if info.discriminator is not None:
            constraints.append(Field(discriminator=info.discriminator))
        self._annotation: Any = Annotated[(info.annotation, *constraints)] if constraints else info.annotation
        self._config = config
        self._adapter: TypeAdapter[Any] | None = None

    def read(self, value: Any) -> Any:
        """The value for a first read: kept, a nested KubeModel built by `from_server`, or validated."""
        exact = self.exact
        if exact is not None and type(value) in exact:
            return value
        model = self.model
        if model is not None:
            if not self.many and type(value) is dict:
                return from_server(model, value)
            if self.many and type(value) is list and all(type(item) is dict for item in value):
                return [from_server(model, item) for item in value]
        return self.validate(value)

    def validate(self, value: Any) -> Any:
        """The value as `model_validate` of the enclosing model makes it."""
        exact = self.exact
        if exact is not None and type(value) in exact:
            return value
        if self.plain is not None:
            return self.plain.validate_python(value)
        adapter = self._adapter
        if adapter is None:
            adapter = self._adapter = _adapter_for(self._annotation, self._config)
        return adapter.validate_python(value)

    def default(self) -> Any:
        return self.info.get_default(call_default_factory=True)


class _Plan:
    """How `from_server` builds one model class."""

    __slots__ = ("cls", "fields", "name_of", "wire_keys", "required", "name_keys", "type_meta", "shapes")

    def __init__(self, cls: type[KubeModel], fields: dict[str, _Field]) -> None:
        config = cls.model_config
        by_name = config.get("populate_by_name") or config.get("validate_by_name")
        self.cls = cls
        self.fields = fields  # in the model's field order
        self.name_of = {field.key: field.name for field in fields.values()}.get  # (key, key) for unknown keys
        self.wire_keys = frozenset(field.key for field in fields.values())
        self.required = frozenset(field.key for field in fields.values() if field.info.is_required())
        self.name_keys = frozenset(name for name, field in fields.items() if by_name and name != field.key)
        info = getattr(cls, "resource_info", None) if issubclass(cls, Resource) else None
        self.type_meta: tuple[str, str] | None = (info.api_version, info.kind) if info is not None else None
        self.shapes: dict[tuple[str, ...], Any] = {}

    def shape(self, keys: tuple[str, ...]) -> Any:
        """What the keys of a sent object (in order) make of it: (fields set, has unknown keys, fields to fill
        in), or _VALIDATE when only validation can tell (a field by its Python name, a required field missing);
        remembered for the few shapes a kind's objects have."""
        if (self.name_keys and not self.name_keys.isdisjoint(keys)) or not self.required.issubset(keys):
            shape: Any = _VALIDATE
        else:
            fields_set = set(map(self.name_of, keys, keys))  # pydantic counts unknown fields as set too
            filled: dict[str, str] = {}
            if self.type_meta is not None:  # Resource._fill_type_meta: objects get their apiVersion and kind
                if "apiVersion" not in keys:
                    filled["api_version"] = self.type_meta[0]
                if "kind" not in keys:
                    filled["kind"] = self.type_meta[1]
            shape = (frozenset(fields_set | set(filled)), not self.wire_keys.issuperset(keys), filled)
        if len(self.shapes) < _SHAPES:
            self.shapes[keys] = shape
        return shape


_UNPLANNED: Final = object()
_VALIDATE: Final[tuple[frozenset[str], bool, dict[str, str]]] = (
    frozenset(),
    False,
    {},
)  # a shape only model_validate can build (compared by identity)
_SHAPES: Final = 64  # shapes remembered per class: objects of one kind come in a few
_PLANS: dict[type, _Plan | None] = {}


def from_server(model: type[M], data: Any) -> M:
    """`model` from a dict the API server sent, each field validated when first read (see the module doc)."""
    plan = _PLANS.get(model, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = _PLANS[model] = _plan_for(model)
    if plan is None or type(data) is not dict:
        return model.model_validate(data)
    result: M = _build(plan, data)  # type: ignore[arg-type]
    return result


def list_from_server(model: type[M], items: list[Any]) -> list[M]:
    """`[from_server(model, item) for item in items]`, with what the items share looked up once (a list answer)."""
    plan = _PLANS.get(model, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = _PLANS[model] = _plan_for(model)
    if plan is None:
        return [model.model_validate(item) for item in items]
    assert isinstance(plan, _Plan)
    shapes, new = plan.shapes, model.__new__
    result: list[M] = []
    append = result.append
    for data in items:
        shape = shapes.get(tuple(data)) if type(data) is dict else _VALIDATE
        if shape is None or shape is _VALIDATE or shape[1] or shape[2]:  # the general case
            append(from_server(model, data))
            continue
        obj = new(model)
        _set_dict(obj, {PENDING: data})
        _set_private(obj, None)
        append(obj)
    return result


def _build(plan: _Plan, data: dict[str, Any]) -> Any:
    keys = tuple(data)
    shape = plan.shapes.get(keys) or plan.shape(keys)
    if shape is _VALIDATE:
        return plan.cls.model_validate(data)
    values: dict[str, Any] = {PENDING: data}
    if shape[2]:
        values.update(shape[2])
    model = plan.cls
    obj = model.__new__(model)
    _set_dict(obj, values)  # `__pydantic_fields_set__` and `__pydantic_extra__` stay unset until used (`fill_slots`)
    _set_private(obj, None)
    return obj


def fill_slots(obj: BaseModel, data: dict[str, Any]) -> None:
    """Set `obj`'s fields set and unknown fields from the data it was built from, unless set already.

    `_build` leaves them unset, so an object nobody asks about them costs two containers less; the first
    reader (KubeModel.__getattr__, reached because the slot is unset, or `materialize`) makes them."""
    plan = _PLANS[type(obj)]
    assert plan is not None
    try:
        _get_fields_set(obj)
    except AttributeError:
        shape = plan.shapes.get(tuple(data)) or plan.shape(tuple(data))
        _set_fields_set(obj, set(shape[0]))
        _set_extra(obj, {k: v for k, v in data.items() if k not in plan.wire_keys} if shape[1] else {})


class _Unread:
    """A field of a class `from_server` builds, as a class attribute that only an unread field reaches.

    A non-data descriptor: an attribute lookup finds the instance dict's value first (every validated model, every
    field read before), so ordinary reads cost nothing more; a field not read yet is absent from the instance dict
    and lands here, which validates it and keeps the value in the instance dict.
    """

    __slots__ = ("plan", "field", "name", "key", "exact", "nested")

    def __init__(self, plan: _Plan, field: _Field) -> None:
        self.plan = plan
        self.field = field
        self.name, self.key, self.exact, self.nested = field.name, field.key, field.exact, field.nested

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:  # on the class, a pydantic field is not an attribute
            raise AttributeError(f"type object {owner.__name__!r} has no attribute {self.name!r}")
        values = _get_dict(obj)
        data = values.get(PENDING)
        if data is None:  # a deleted field of a validated model: what pydantic's __getattr__ says
            raise AttributeError(self.name)
        value = data.get(self.key, _MISSING)
        exact = self.exact
        if exact is not None and type(value) in exact:
            result = value
        elif self.nested is not None and type(value) is dict:
            result = _build(self.nested, value)
        elif value is _MISSING:
            result = self.field.default()
        else:
            try:
                result = self.field.read(value)
            except ValidationError:
                self.plan.cls.model_validate(data)  # raises the error as validating the whole object reports it
                raise
        values[self.name] = result
        return result


def materialize(obj: BaseModel, values: dict[str, Any]) -> dict[str, Any]:
    """Validate every field of `obj` not read yet; its `__dict__` then has the order `model_validate` gives."""
    data = values[PENDING]
    plan = _PLANS[type(obj)]
    assert plan is not None
    fill_slots(obj, data)
    merged: dict[str, Any] = {}
    try:
        for name, field in plan.fields.items():
            if name in values:
                merged[name] = values[name]
            else:
                value = data.get(field.key, _MISSING)
                merged[name] = field.default() if value is _MISSING else field.validate(value)
    except ValidationError:
        plan.cls.model_validate(data)
        raise
    _set_dict(obj, merged)
    return merged


def _plan_for(model: type[BaseModel]) -> _Plan | None:
    """A plan when `from_server` can stand in for `model_validate` on `model` (see the module doc), else None."""
    if not (isinstance(model, type) and issubclass(model, KubeModel)) or not model.__pydantic_complete__:
        return None
    config = model.model_config
    if config.get("extra") != "allow" or config.get("validate_default") or model.__private_attributes__:
        return None
    if model.__pydantic_post_init__ is not None or model.__pydantic_root_model__:
        return None
    decorators = model.__pydantic_decorators__
    if decorators.validators or decorators.field_validators or decorators.root_validators:
        return None
    if set(decorators.model_validators) - {"_fill_type_meta"}:
        return None
    if "_fill_type_meta" in decorators.model_validators and _own_fill_type_meta(model):
        return None
    schema: Any = model.__pydantic_core_schema__
    if schema.get("type") != "model" or schema.get("cls") is not model:
        return None
    inner = schema["schema"]
    if inner.get("type") == "function-before" and "_fill_type_meta" in decorators.model_validators:
        inner = inner["schema"]
    if inner.get("type") != "model-fields" or list(inner["fields"]) != list(model.model_fields):
        return None
    if "extras_schema" in inner:
        return None
    fields: dict[str, _Field] = {}
    for name, info in model.model_fields.items():
        field_schema = inner["fields"][name]
        alias = info.validation_alias
        if field_schema.get("type") != "model-field" or (alias is not None and not isinstance(alias, str)):
            return None
        if info.default_factory_takes_validated_data:
            return None
        try:
            fields[name] = _Field(name, info, field_schema["schema"], schema.get("config"), dict(config))
        except Exception:  # noqa: BLE001 - a schema node pydantic-core will not take alone: validate instead
            return None
    for name in fields:  # a name the class or a base has as an attribute stays theirs: validate instead
        if any(name in cls.__dict__ and not isinstance(cls.__dict__[name], _Unread) for cls in model.__mro__):
            return None
    plan = _Plan(model, fields)
    _PLANS[model] = plan  # before linking: a model may nest itself
    for field in fields.values():
        if field.model is not None and not field.many:
            nested = _PLANS.get(field.model, _UNPLANNED)
            if nested is _UNPLANNED:
                nested = _PLANS[field.model] = _plan_for(field.model)
            field.nested = nested  # type: ignore[assignment]
    for name, field in fields.items():
        type.__setattr__(model, name, _Unread(plan, field))
    return plan


_FILL_TYPE_META: Final = Resource.__dict__["_fill_type_meta"]


def _own_fill_type_meta(model: type[BaseModel]) -> bool:
    """Whether `model` has a `_fill_type_meta` validator other than Resource's (which `from_server` replicates)."""
    for cls in model.__mro__:
        if "_fill_type_meta" in cls.__dict__:
            return cls.__dict__["_fill_type_meta"] is not _FILL_TYPE_META
    return True


def _is_plain(schema: Any) -> bool:
    """Whether a core schema node validates plain data without references or functions (and can stand alone)."""
    kind = schema.get("type")
    if kind in _PLAIN:
        return True
    if kind == "nullable":
        return _is_plain(schema["schema"])
    if kind == "list":
        return "items_schema" not in schema or _is_plain(schema["items_schema"])
    if kind == "dict":
        return all(key not in schema or _is_plain(schema[key]) for key in ("keys_schema", "values_schema"))
    return False


def _exact_types(schema: Any, config: dict[str, Any]) -> tuple[type, ...] | None:
    """The value types a scalar schema node returns unchanged (a `str` for an unconstrained `str`), if any."""
    kind = schema.get("type")
    if kind == "nullable":
        inner = _exact_types(schema["schema"], config)
        return None if inner is None else (*inner, type(None))
    if not set(schema) <= _UNCONSTRAINED:
        return None
    if kind == "str" and not any(config.get(key) for key in _STR_CONFIG):
        return (str,)
    if kind == "int":
        return (int,)
    if kind == "bool":
        return (bool,)
    if kind == "float" and config.get("allow_inf_nan", True):
        return (float,)
    return None


def _nested_model(info: FieldInfo) -> tuple[type[KubeModel] | None, bool]:
    """(M, False) for a field of KubeModel M (or M | None), (M, True) for list[M] (or | None), else (None, False)."""
    if info.metadata or info.discriminator:
        return None, False
    annotation = info.annotation
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        arguments = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
        if len(arguments) != 1:
            return None, False
        annotation = arguments[0]
        origin = typing.get_origin(annotation)
    many = origin is list
    if many:
        arguments = list(typing.get_args(annotation))
        annotation = arguments[0] if len(arguments) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, KubeModel):
        return annotation, many
    return None, False


_NOT_FOR_ADAPTER: Final = frozenset(
    {
        "alias_generator",
        "populate_by_name",
        "validate_by_name",
        "validate_by_alias",
        "extra",
        "title",
        "json_schema_extra",
        "frozen",
        "defer_build",
    }
)


def _adapter_for(annotation: Any, config: dict[str, Any]) -> TypeAdapter[Any]:
    """A validator for one field's type under its model's configuration."""
    settings = {key: value for key, value in config.items() if key not in _NOT_FOR_ADAPTER}
    try:
        return TypeAdapter(annotation, config=settings)  # type: ignore[arg-type]
    except PydanticUserError:  # a model or dataclass brings its own configuration
        return TypeAdapter(annotation)
