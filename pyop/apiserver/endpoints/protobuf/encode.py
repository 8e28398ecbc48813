"""A JSON object -> the protobuf bytes Go's generated Marshal writes for the same Go struct.

Go writes fields in field-number order; a value (non-pointer) field always, its zero value included (an empty
string, 0, an empty struct); a pointer, slice, map or []byte only when set; map entries sorted by key. The bytes
therefore match what a client-go program sends for the object it decoded from the same JSON (the tests compare
with kubectl's own bodies).
"""

from __future__ import annotations

import base64
import binascii
import functools
import struct
from collections.abc import Mapping
from typing import Any

from pyop.apiserver.endpoints import wire as json_wire
from pyop.apiserver.endpoints.protobuf import gotypes
from pyop.apiserver.endpoints.protobuf.schema import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    ENUM,
    FIELDS_V1,
    FIXED32,
    FIXED64,
    FLOAT,
    INT32,
    INT64,
    INT_OR_STRING,
    JSON_VALUE,
    LIST_WRAPPER,
    MESSAGE,
    MICRO_TIME,
    QUANTITY,
    RAW_EXTENSION,
    SCHEMA_OR_ARRAY,
    SCHEMA_OR_BOOL,
    SCHEMA_OR_STRINGS,
    SFIXED32,
    SFIXED64,
    SINT32,
    SINT64,
    STRING,
    TIME,
    UINT32,
    UINT64,
    FieldSpec,
    MessageSpec,
    enum_number,
    message_spec,
)
from pyop.apiserver.endpoints.protobuf.wire import (
    FIXED32 as WIRE_FIXED32,
)
from pyop.apiserver.endpoints.protobuf.wire import (
    FIXED64 as WIRE_FIXED64,
)
from pyop.apiserver.endpoints.protobuf.wire import (
    VARINT,
    encode_varint,
    length_delimited,
    tag,
    zigzag_encode,
)


class ProtobufEncodeError(ValueError):
    """The object does not fit its message (a value of the wrong JSON type); stored objects never do this."""


class ProtobufFieldGapError(ProtobufEncodeError):
    """The object has a field its message lacks: a field of a Kubernetes version newer than the table's sources
    (kube-apiserver would encode it; dropping it would hand the client a different object)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} has no protobuf field here")
        self.path = path


def encode_message(name: str, obj: Any) -> bytes:
    """The bytes of message `name` holding the JSON value `obj`."""
    return _message(message_spec(name), obj, name.rsplit(".", 1)[-1])


def _message(spec: MessageSpec, obj: Any, path: str, inline: bool = False) -> bytes:
    """`path`: where `obj` is, for error messages (children's paths are formatted only when they are needed);
    `inline`: `obj` is the parent's object (an inline child checks no keys: the parent did)."""
    if spec.special:
        return _special(spec, obj, path)
    if obj is None:
        return _empty(spec)
    if not isinstance(obj, dict) and not isinstance(obj, Mapping):
        raise ProtobufEncodeError(f"{path}: expected an object, got {type(obj).__name__}")
    if not inline and not obj.keys() <= spec.json_names:  # a subset test allocates nothing
        for key in obj.keys() - spec.json_names:
            if obj[key] is not None:
                raise ProtobufFieldGapError(f"{path}.{key}")
    out = bytearray()
    for item in spec.fields:
        if item.inline:
            out += length_delimited(item.number, _message(item.message, obj, path, inline=True))
            continue
        value = obj.get(item.name)
        if item.is_map:
            if value:
                out += _map(item, value, f"{path}.{item.name}")
        elif item.repeated:
            if value:
                if not isinstance(value, list):
                    raise ProtobufEncodeError(f"{path}.{item.name}: expected a list, got {type(value).__name__}")
                if item.type == MESSAGE:
                    for index, element in enumerate(value):
                        out += _field(item, element, f"{path}.{item.name}[{index}]")
                else:
                    for element in value:
                        out += _field(item, element, f"{path}.{item.name}[]")
        elif value is None:
            if not item.pointer and item.type != BYTES:
                out += _zero_field(item)
        else:
            out += _field(item, value, f"{path}.{item.name}")
    return bytes(out)


@functools.cache
def _empty(spec: MessageSpec) -> bytes:
    """A message whose fields are all unset: what Go writes for a zero struct (its value fields' zeros)."""
    return _message(spec, {}, spec.name)


@functools.cache
def _zero_field(item: FieldSpec) -> bytes:
    """A value field Go writes although the JSON has none: its zero value (cached per field)."""
    return _field(item, _zero(item), item.name)


def _zero(item: FieldSpec) -> Any:
    if item.type == MESSAGE:
        return None  # an empty struct (or Go's zero Time, Quantity, ...): the message of nothing
    if item.type == STRING:
        return ""
    if item.type == BOOL:
        return False
    return 0


def _field(item: FieldSpec, value: Any, where: str) -> bytes:
    kind = item.type
    if kind == MESSAGE:
        return length_delimited(item.number, _message(item.message, value, where))
    if kind == STRING:
        if not isinstance(value, str):
            raise ProtobufEncodeError(f"{where}: expected a string, got {type(value).__name__}")
        return length_delimited(item.number, value.encode("utf-8"))
    if kind == BYTES:
        return length_delimited(item.number, _base64(value, where))
    if kind == BOOL:
        if not isinstance(value, bool):
            raise ProtobufEncodeError(f"{where}: expected a boolean, got {type(value).__name__}")
        return tag(item.number, VARINT) + (b"\x01" if value else b"\x00")
    if kind in (DOUBLE, FLOAT):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProtobufEncodeError(f"{where}: expected a number, got {type(value).__name__}")
        if kind == DOUBLE:
            return tag(item.number, WIRE_FIXED64) + struct.pack("<d", float(value))
        return tag(item.number, WIRE_FIXED32) + struct.pack("<f", float(value))
    if kind == ENUM:
        try:
            value = enum_number(item.type_name, value)
        except ValueError as error:
            raise ProtobufEncodeError(f"{where}: {error}") from None
    number = _integer(value, where)
    if kind in (INT32, INT64, UINT32, UINT64, ENUM):
        return tag(item.number, VARINT) + encode_varint(number)
    if kind in (SINT32, SINT64):
        return tag(item.number, VARINT) + encode_varint(zigzag_encode(number))
    if kind in (FIXED32, SFIXED32):
        return tag(item.number, WIRE_FIXED32) + (number & 0xFFFFFFFF).to_bytes(4, "little")
    if kind in (FIXED64, SFIXED64):
        return tag(item.number, WIRE_FIXED64) + (number & ((1 << 64) - 1)).to_bytes(8, "little")
    raise ProtobufEncodeError(f"{where}: unsupported protobuf type {kind}")


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtobufEncodeError(f"{where}: expected an integer, got {type(value).__name__}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ProtobufEncodeError(f"{where}: expected an integer, got {value!r}")
        return int(value)
    return value


def _base64(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise ProtobufEncodeError(f"{where}: expected base64 text, got {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ProtobufEncodeError(f"{where}: not base64") from None


def _map(item: FieldSpec, value: Any, where: str) -> bytes:
    if not isinstance(value, Mapping):
        raise ProtobufEncodeError(f"{where}: expected an object, got {type(value).__name__}")
    entry = item.message
    key_field, value_field = entry.by_number[1], entry.by_number[2]
    out = bytearray()
    for key in sorted(value, key=lambda k: str(k).encode("utf-8")):
        element = value[key]
        body = _field(key_field, str(key), where)
        if element is None:
            if value_field.type == MESSAGE:
                body += _field(value_field, None, f"{where}.{key}")
            elif value_field.type != BYTES:
                body += _field(value_field, _zero(value_field), f"{where}.{key}")
        else:
            body += _field(value_field, element, f"{where}.{key}")
        out += length_delimited(item.number, body)
    return bytes(out)


def _special(spec: MessageSpec, value: Any, where: str) -> bytes:
    name = spec.special
    if name in (TIME, MICRO_TIME):
        if value is None:
            return b""  # Go's zero time
        if not isinstance(value, str):
            raise ProtobufEncodeError(f"{where}: expected an RFC 3339 time, got {type(value).__name__}")
        try:
            seconds, nanos = gotypes.parse_time(value)
        except gotypes.GoValueError as error:
            raise ProtobufEncodeError(f"{where}: {error}") from None
        if name == TIME:
            nanos = 0  # metav1.Time keeps whole seconds on both wires
        else:
            nanos -= nanos % 1000
        return tag(1, VARINT) + encode_varint(seconds) + tag(2, VARINT) + encode_varint(nanos)
    if name == DURATION:
        if value is None:
            nanoseconds = 0
        elif isinstance(value, str):
            try:
                nanoseconds = gotypes.parse_duration(value)
            except gotypes.GoValueError as error:
                raise ProtobufEncodeError(f"{where}: {error}") from None
        else:
            raise ProtobufEncodeError(f"{where}: expected a duration string, got {type(value).__name__}")
        return tag(1, VARINT) + encode_varint(nanoseconds)
    if name == QUANTITY:
        if value is None:
            value = "0"
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ProtobufEncodeError(f"{where}: expected a quantity, got {type(value).__name__}")
        return length_delimited(1, str(value).encode("utf-8"))
    if name == INT_OR_STRING:
        if isinstance(value, str):
            return tag(1, VARINT) + b"\x01" + tag(2, VARINT) + b"\x00" + length_delimited(3, value.encode("utf-8"))
        number = 0 if value is None else _integer(value, where)
        return tag(1, VARINT) + b"\x00" + tag(2, VARINT) + encode_varint(number) + length_delimited(3, b"")
    if name in (RAW_EXTENSION, FIELDS_V1):
        if value is None:
            return b""
        return length_delimited(1, json_wire.dumps(value))
    if name == LIST_WRAPPER:
        if value is None:
            return b""
        if not isinstance(value, list):
            raise ProtobufEncodeError(f"{where}: expected a list, got {type(value).__name__}")
        item = spec.fields[0]
        return b"".join(_field(item, element, f"{where}[{index}]") for index, element in enumerate(value))
    if name == JSON_VALUE:
        return b"" if value is None else length_delimited(1, json_wire.dumps(value))
    if name == SCHEMA_OR_BOOL:  # Allows (a Go value: always written), then the schema when there is one
        if value is None or isinstance(value, bool):
            return tag(1, VARINT) + (b"\x01" if value else b"\x00")
        return tag(1, VARINT) + b"\x01" + _field(spec.by_number[2], value, where)
    if name in (SCHEMA_OR_ARRAY, SCHEMA_OR_STRINGS):  # the schema (1) or the list (2)
        if value is None:
            return b""
        if isinstance(value, list):
            item = spec.by_number[2]
            return b"".join(_field(item, element, f"{where}[{index}]") for index, element in enumerate(value))
        return _field(spec.by_number[1], value, where)
    raise ProtobufEncodeError(f"{where}: no encoder for {name}")
