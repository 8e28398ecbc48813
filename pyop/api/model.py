"""Base classes for resource models: pydantic v2 models that are snake_case in Python and camelCase on the wire.

One model serves three purposes: typed access in controllers, validation of objects read from the API server, and
the source of the CRD schema (`pyop make manifests` walks these classes and the `+kubebuilder:` comments above them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pyop.api.builtin_types import Time
from pyop.api.naming import default_plural, json_name

PENDING: Final = "\x00pending"
"""The key under which an object built by `pyop.api.trusted.from_server` keeps its not yet validated fields in
its `__dict__` (no field or wire name can be it)."""

_instance_dict: Final = BaseModel.__dict__["__dict__"].__get__


def _validated_dict(obj: BaseModel) -> dict[str, Any]:
    values: dict[str, Any] = _instance_dict(obj)
    if PENDING in values:
        return _trusted.materialize(obj, values)
    return values


_set_dict: Final = BaseModel.__dict__["__dict__"].__set__
_LAZY_SLOTS: Final = frozenset({"__pydantic_fields_set__", "__pydantic_extra__"})


class KubeModel(BaseModel):
    """A part of a Kubernetes object: camelCase aliases on the wire, Python names in code.

    Fields a model does not declare are kept as they came (pydantic's `extra="allow"`, under their wire names) and
    written back unchanged: a partial model of a built-in kind, or an operator older than the API server, must never
    drop what it does not know when it updates an object (the fields of a newer server, `spec.strategy` of a
    Deployment a hand-written model leaves out). They read as attributes under the wire name
    (`spec.minReadySeconds`) and as `model_extra`. Attribute docstrings document fields in the
    CRD, but `pyop make manifests` reads them from the source; pydantic's `use_attribute_docstrings` would parse
    every model's source at import time, in every operator start-up.
    """

    model_config = ConfigDict(
        alias_generator=json_name,
        populate_by_name=True,
        extra="allow",
        # `bytes` is `format: byte` in the CRD: base64 on the wire, as Kubernetes encodes []byte.
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )

    # Everything that reads or writes a model as a whole (pydantic's dumps, also of an enclosing model or
    # TypeAdapter, ==, repr, copies, pickling, vars(), field assignment) reads `__dict__`; for an object built by
    # pyop.api.trusted.from_server, this first validates the fields not read yet. Reading one field (`obj.spec`)
    # stays an ordinary attribute lookup (see pyop.api.trusted._Unread).
    __dict__ = property(_validated_dict, _set_dict)  # type: ignore[assignment]

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # An object from_server built has its fields set and unknown fields made when first asked for.
            values = _instance_dict(self)
            if PENDING in values:
                _trusted.fill_slots(self, values[PENDING])
                if name in _LAZY_SLOTS:
                    return object.__getattribute__(self, name)
            return super().__getattr__(name)

    def to_dict(self) -> dict[str, Any]:
        """The object as the API server expects it: aliases, no unset optional fields (Go's `omitempty`)."""
        return wire_dump(self)


def wire_dump(obj: BaseModel) -> dict[str, Any]:
    """A model as the API server expects it: aliases, no None (Go's `omitempty` on pointers), and no empty list
    or map in a field whose default is that empty list or map that nobody set (Go's `omitempty` on slices and
    maps). Without the latter, a status read without `conditions` and written back unchanged would gain
    `conditions: []` from its `= []` default: a field the stored object did not have."""
    data: dict[str, Any] = obj.model_dump(by_alias=True, exclude_none=True, mode="json")
    _omit_unset_empty(obj, data)
    return data


def _omit_unset_empty(obj: BaseModel, data: dict[str, Any]) -> None:
    fields_set = obj.model_fields_set
    for key, name, empty_default in _wire_fields(type(obj)):
        if key not in data:
            continue
        value = getattr(obj, name, None)
        if empty_default and name not in fields_set and data[key] in ([], {}):
            del data[key]
        elif type(value) in _LEAVES:  # holds no model (the common case: a name, a number, a timestamp)
            continue
        elif isinstance(value, BaseModel) and isinstance(data[key], dict):
            _omit_unset_empty(value, data[key])
        elif isinstance(value, list) and isinstance(data[key], list):
            for item, dumped in zip(value, data[key], strict=False):
                if isinstance(item, BaseModel) and isinstance(dumped, dict):
                    _omit_unset_empty(item, dumped)
        elif isinstance(value, dict) and isinstance(data[key], dict):
            for item_key, item in value.items():
                dumped = data[key].get(item_key)
                if isinstance(item, BaseModel) and isinstance(dumped, dict):
                    _omit_unset_empty(item, dumped)


def _empty_default(info: Any) -> bool:
    factory = info.default_factory
    if factory in (list, dict):
        return True
    return factory is None and info.default in ([], {})


# Types of values that are neither a model nor a container of one (nothing to walk into).
_LEAVES: Final = frozenset({str, int, float, bool, type(None), datetime})

_WireField = tuple[str, str, bool]  # wire key, field name, whether the default is an empty list or map

# Per model class: the field table its plan was read from (pydantic makes a new one when a model is rebuilt) and
# the plan. One entry per model class ever dumped, as pydantic's own per-class caches.
_WIRE_FIELDS: Final[dict[type[BaseModel], tuple[object, tuple[_WireField, ...]]]] = {}


def _wire_fields(cls: type[BaseModel]) -> tuple[_WireField, ...]:
    """A model class's fields as `_omit_unset_empty` needs them, read from its field table once rather than at
    every field of every dump (alias, default and default factory lookups were most of its cost)."""
    known = _WIRE_FIELDS.get(cls)
    fields = cls.__pydantic_fields__
    if known is not None and known[0] is fields:
        return known[1]
    plan = tuple(
        (info.serialization_alias or info.alias or name, name, _empty_default(info)) for name, info in fields.items()
    )
    _WIRE_FIELDS[cls] = (fields, plan)
    return plan


def wire_aliases(irregular: Mapping[str, str]) -> ConfigDict:
    """A model config whose wire names are KubeModel's camelCase except the `irregular` ones (`pod_ips` ->
    `podIPs`, `continue_` -> `continue`).

    The generated built-in models use it instead of `Field(alias=...)`, which type checkers read as the name of the
    constructor argument (PEP 681): with it, `PodStatus(pod_ips=[...])` type-checks and `podIPs` is on the wire.
    """
    table = dict(irregular)

    def alias(name: str) -> str:
        return table.get(name) or json_name(name)

    return ConfigDict(alias_generator=alias)


@dataclass(frozen=True)
class GroupVersion:
    """An API group and version, declared once per API package (Kubebuilder's `groupversion_info.go`)."""

    group: str
    version: str

    @property
    def api_version(self) -> str:
        """The `apiVersion` string: `group/version`, or just `version` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True)
class ResourceInfo:
    """What a client needs to address a kind: group, version, kind, plural and scope."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class OwnerReference(KubeModel):
    """A reference from a dependent object to its owner, used for garbage collection and `owns` watches."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(KubeModel):
    """One field manager's record in `metadata.managedFields` (server-side apply's ownership)."""

    __k8s_definition__: ClassVar[str] = "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"

    api_version: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = Field(default=None, alias="fieldsV1")
    manager: str | None = None
    operation: str | None = None
    subresource: str | None = None
    time: Time | None = None


class ObjectMeta(KubeModel):
    """Standard object metadata (`metav1.ObjectMeta`), every field of it; pyop's one model of the concept.

    Timestamps are UTC-aware datetimes, written back as the API server writes them (`2024-05-01T10:20:30Z`).
    """

    __k8s_definition__: ClassVar[str] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None


class Condition(KubeModel):
    """A status condition (`metav1.Condition`); its CRD schema is Kubernetes' own."""

    __k8s_definition__: ClassVar[str] = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"

    type: str
    status: str
    reason: str
    message: str = ""
    last_transition_time: Time
    observed_generation: int | None = None


class Resource(KubeModel):
    """A root kind (`+kubebuilder:object:root=true`): apiVersion, kind, metadata, and usually spec and status.

    Subclasses declare their group and version with class keywords::

        class Captain(Resource, group_version=GROUP_VERSION): ...

    `kind` defaults to the class name and `plural` to Kubebuilder's pluralisation of it.
    """

    resource_info: ClassVar[ResourceInfo]

    api_version: str = Field(default="", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    def __init_subclass__(
        cls,
        *,
        group_version: GroupVersion | None = None,
        kind: str | None = None,
        plural: str | None = None,
        namespaced: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if group_version is not None:
            kind_name = kind or cls.__name__
            cls.resource_info = ResourceInfo(
                group=group_version.group,
                version=group_version.version,
                kind=kind_name,
                plural=plural or default_plural(kind_name),
                namespaced=namespaced,
            )

    @model_validator(mode="before")
    @classmethod
    def _fill_type_meta(cls, data: Any) -> Any:
        """New objects get their apiVersion and kind without the caller spelling them out."""
        info = getattr(cls, "resource_info", None)
        if isinstance(data, dict) and info is not None:
            data = dict(data)
            data.setdefault("apiVersion", info.api_version)
            data.setdefault("kind", info.kind)
        return data


ItemT = TypeVar("ItemT", bound=Resource)


class ListMeta(KubeModel):
    """Metadata of a list: the resourceVersion to watch from and the continue token of the next page."""

    resource_version: str | None = None
    self_link: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: int | None = None


class ResourceList(KubeModel, Generic[ItemT]):
    """The list kind of a root kind (`CaptainList`), as returned by a list call."""

    api_version: str = Field(default="", alias="apiVersion")
    kind: str = ""
    metadata: ListMeta = Field(default_factory=ListMeta)
    items: list[ItemT] = Field(default_factory=list)


from pyop.api import trusted as _trusted  # noqa: E402  (it builds KubeModels; KubeModel calls back into it)
