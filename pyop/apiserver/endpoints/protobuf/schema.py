"""The generated descriptor table compiled into linked message specs, once per message, on first use.

A field of the table is (number, JSON name, protobuf type, flags, type name); a spec adds what the codec asks on
every value: the resolved child message, whether the message is one of the few whose JSON is not an object
(metav1.Time is an RFC 3339 string, IntOrString a number or a string, ...), and the map entry's key and value.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Final

# Protobuf field types (google/protobuf/descriptor.proto FieldDescriptorProto.Type).
DOUBLE, FLOAT, INT64, UINT64, INT32, FIXED64, FIXED32, BOOL, STRING = 1, 2, 3, 4, 5, 6, 7, 8, 9
GROUP, MESSAGE, BYTES, UINT32, ENUM, SFIXED32, SFIXED64, SINT32, SINT64 = 10, 11, 12, 13, 14, 15, 16, 17, 18

_META: Final = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME: Final = _META + "Time"
MICRO_TIME: Final = _META + "MicroTime"
DURATION: Final = _META + "Duration"
FIELDS_V1: Final = _META + "FieldsV1"
QUANTITY: Final = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING: Final = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION: Final = "k8s.io.apimachinery.pkg.runtime.RawExtension"
UNKNOWN: Final = "k8s.io.apimachinery.pkg.runtime.Unknown"
WATCH_EVENT: Final = _META + "WatchEvent"
# Messages whose Go type marshals its own JSON: a string, a number-or-string or embedded raw JSON, not an object.
SPECIAL: Final = frozenset({TIME, MICRO_TIME, DURATION, FIELDS_V1, QUANTITY, INT_OR_STRING, RAW_EXTENSION})
# apiextensions' self-marshalling wrappers (CustomResourceDefinition schemas): `JSON` is raw JSON bytes, the
# `JSONSchemaPropsOr*` are a schema or an array / a bool / a string list, whichever is set.
JSON_VALUE, SCHEMA_OR_ARRAY, SCHEMA_OR_BOOL, SCHEMA_OR_STRINGS = "json", "schema|array", "schema|bool", "schema|strings"
_APIEXTENSIONS: Final = (
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.",
)
_WRAPPERS: Final = {
    "JSON": JSON_VALUE,
    "JSONSchemaPropsOrArray": SCHEMA_OR_ARRAY,
    "JSONSchemaPropsOrBool": SCHEMA_OR_BOOL,
    "JSONSchemaPropsOrStringArray": SCHEMA_OR_STRINGS,
}
_TYPE_META: Final = frozenset({"apiVersion", "kind"})  # in the envelope of an object, not its message
LIST_WRAPPER: Final = "list"
"""A named Go slice (`type Verbs []string`, authentication's ExtraValue): the message `{repeated items = 1}`,
the JSON a plain list."""


@dataclass(slots=True, eq=False)
class FieldSpec:
    number: int
    name: str
    type: int
    repeated: bool
    pointer: bool  # a Go pointer (or slice, map, []byte): absent when nil; values are always written
    inline: bool  # `json:",inline"`: the child's fields are the parent's JSON fields
    is_map: bool
    keep_zero: bool  # no omitempty: JSON keeps the zero value
    type_name: str

    @property
    def message(self) -> MessageSpec:
        return message_spec(self.type_name)


@dataclass(slots=True, eq=False)
class MessageSpec:
    name: str
    fields: tuple[FieldSpec, ...]
    by_number: dict[int, FieldSpec] = field(default_factory=dict)
    special: str = ""  # one of SPECIAL, LIST_WRAPPER or apiextensions' wrappers; "" for a plain object
    json_names: frozenset[str] = frozenset()  # its JSON fields, inline children's and apiVersion/kind included


@functools.cache
def _table() -> ModuleType:
    """The generated table, imported on the first protobuf request (50 ms: servers that see none never pay)."""
    return importlib.import_module("pyop.apiserver.endpoints.protobuf._descriptors")


class UnknownMessageError(KeyError):
    """The table has no such message (a type newer than the table's sources)."""


@functools.cache
def message_spec(name: str) -> MessageSpec:
    table = _table()
    rows = table.MESSAGES.get(name)
    if rows is None:
        raise UnknownMessageError(name)
    fields = tuple(
        FieldSpec(
            number=number,
            name=json_name,
            type=proto_type,
            repeated=bool(flags & table.REPEATED),
            pointer=bool(flags & table.POINTER),
            inline=bool(flags & table.INLINE),
            is_map=bool(flags & table.MAP),
            keep_zero=bool(flags & table.KEEP_ZERO),
            type_name=type_name,
        )
        for number, json_name, proto_type, flags, type_name in rows
    )
    special = name if name in SPECIAL else ""
    if name.startswith(_APIEXTENSIONS):
        special = _WRAPPERS.get(name.rsplit(".", 1)[-1], "")
    if (
        not special
        and len(fields) == 1
        and fields[0].name == "items"
        and fields[0].repeated
        and fields[0].type != MESSAGE
        and not name.endswith("List")
    ):
        special = LIST_WRAPPER
    names = {f.name for f in fields if not f.inline} | _TYPE_META
    for item in fields:
        if item.inline:
            names |= message_spec(item.type_name).json_names
    return MessageSpec(name, fields, {f.number: f for f in fields}, special, frozenset(names))


@functools.cache
def _kinds() -> dict[tuple[str, str], str]:
    rows = _table().KINDS
    return {(f"{group}/{version}" if group else version, kind): message for group, version, kind, message in rows}


def message_for_kind(api_version: str, kind: str) -> str | None:
    """The message of a built-in kind (`apps/v1`, `Deployment`), meta.k8s.io/v1's kinds (Status, WatchEvent,
    DeleteOptions, ...) under any group version; None for kinds the table does not know (custom resources,
    apiregistration, which neither source binary links, and kinds newer than the newest source)."""
    found = _kinds().get((api_version, kind))
    if found is not None:
        return found
    meta = _META + kind
    return meta if kind and meta in _table().MESSAGES else None


def newest_source() -> str:
    """The Kubernetes version of the table's newest source binary (`v1.35.1`): messages stop there."""
    return str(_table().SOURCES[0][1])


def enum_name(type_name: str, number: int) -> str | int:
    return _table().ENUMS.get(type_name, {}).get(number, number)


def enum_number(type_name: str, value: str | int) -> int:
    if isinstance(value, int):
        return value
    for number, name in _table().ENUMS.get(type_name, {}).items():
        if name == value:
            return number
    raise ValueError(f"{value!r} is not a value of the enum {type_name}")
