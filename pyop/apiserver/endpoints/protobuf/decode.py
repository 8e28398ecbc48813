"""Protobuf message bytes -> the JSON object Go's encoding/json writes for the same Go struct.

kube-apiserver decodes a protobuf body into the Go type and from there on the object is the same as one sent in
JSON; the test server works on JSON objects, so a body is turned into exactly the JSON kubectl would have sent:
- a value (non-pointer) scalar is always on the wire; its zero value is dropped unless the field has no
  omitempty (the definition's `required`), while a pointer's zero is a value that was set and stays;
- value structs are always on the wire and always in the JSON (`resources: {}`); an empty metav1.Time is Go's
  zero time, JSON `null` (`creationTimestamp: null`);
- maps and repeated fields are objects and lists; bytes are base64; inline embedded structs are merged;
- Time, MicroTime, Duration, Quantity, IntOrString, RawExtension and FieldsV1 take their own JSON forms, and so
  do apiextensions' JSON and JSONSchemaPropsOr{Array,Bool,StringArray} (CustomResourceDefinition schemas).
Unknown field numbers are skipped, as Go's generated Unmarshal does.
"""

from __future__ import annotations

import base64
import json
from typing import Any

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
    enum_name,
    message_spec,
)
from pyop.apiserver.endpoints.protobuf.wire import (
    LENGTH,
    MAGIC,
    WireError,
    double,
    float32,
    iter_fields,
    read_varint,
    signed32,
    signed64,
    zigzag_decode,
)

_VARINT_TYPES = frozenset({INT32, INT64, UINT32, UINT64, BOOL, ENUM, SINT32, SINT64})
_FIXED64_TYPES = frozenset({FIXED64, SFIXED64, DOUBLE})
_FIXED32_TYPES = frozenset({FIXED32, SFIXED32, FLOAT})


class ProtobufDecodeError(ValueError):
    """The bytes do not decode as the message (the message says where)."""


unknown_numbers_seen = 0
"""How many unknown field numbers decoding has skipped so far: a hint the HTTP edge compares before and after a
body (`unknown.unknown_fields` then says which), so bodies without any pay no second pass."""


def decode_message(name: str, data: bytes) -> Any:
    """The JSON value of message `name` encoded in `data` (an object for plain messages)."""
    try:
        return _message(message_spec(name), data)
    except WireError as error:
        raise ProtobufDecodeError(f"{name.rsplit('.', 1)[-1]}: {error}") from None


def _message(spec: MessageSpec, data: bytes) -> Any:
    if spec.special:
        return _special(spec, data)
    out: dict[str, Any] = {}
    inline: list[dict[str, Any]] = []
    for number, wire_type, raw in iter_fields(data):
        item = spec.by_number.get(number)
        if item is None:
            global unknown_numbers_seen
            unknown_numbers_seen += 1
            continue
        if item.is_map:
            key, value = _map_entry(item, raw)
            out.setdefault(item.name, {})[key] = value
        elif item.repeated:
            values = out.setdefault(item.name, [])
            if wire_type == LENGTH and item.type in _VARINT_TYPES | _FIXED32_TYPES | _FIXED64_TYPES:
                values.extend(_packed(item, raw))  # type: ignore[arg-type]
            else:
                values.append(_value(item, wire_type, raw))
        else:
            value = _value(item, wire_type, raw)
            if item.inline:
                inline.append(value)
            else:
                out[item.name] = value
    for item in spec.fields:
        if item.pointer or item.repeated or item.keep_zero or item.type == MESSAGE:
            continue
        if item.name in out and _is_zero(out[item.name]):
            del out[item.name]  # a value field Go always writes; JSON's omitempty drops its zero
    for embedded in inline:
        out.update(embedded)
    return out


def _is_zero(value: Any) -> bool:
    return value == 0 or value == "" or value is False


def _value(item: FieldSpec, wire_type: int, raw: int | bytes) -> Any:
    kind = item.type
    if kind == MESSAGE:
        if wire_type != LENGTH:
            raise WireError(f"field {item.name}: a message must be length-delimited")
        assert isinstance(raw, bytes)
        return _message(item.message, raw)
    if kind == STRING:
        if not isinstance(raw, bytes):
            raise WireError(f"field {item.name}: a string must be length-delimited")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(f"field {item.name}: invalid UTF-8") from None
    if kind == BYTES:
        if not isinstance(raw, bytes):
            raise WireError(f"field {item.name}: bytes must be length-delimited")
        return base64.b64encode(raw).decode("ascii")
    if not isinstance(raw, int):
        raise WireError(f"field {item.name}: wire type {wire_type} for a scalar")
    return _scalar(item, raw)


def _scalar(item: FieldSpec, raw: int) -> Any:
    kind = item.type
    if kind == INT32:
        return signed32(raw)
    if kind in (INT64, SFIXED64):
        return signed64(raw)
    if kind in (UINT32, UINT64, FIXED32, FIXED64):
        return raw
    if kind == BOOL:
        return raw != 0
    if kind == ENUM:
        return enum_name(item.type_name, signed32(raw))
    if kind in (SINT32, SINT64):
        return zigzag_decode(raw)
    if kind == SFIXED32:
        return signed32(raw)
    if kind == DOUBLE:
        return _go_float(double(raw))
    if kind == FLOAT:
        return _go_float(float32(raw))
    raise WireError(f"field {item.name}: unsupported type {kind}")


def _go_float(value: float) -> float | int:
    """Go's encoding/json writes a whole float64 below 1e21 without a fraction (`minimum: 1`, not `1.0`)."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _packed(item: FieldSpec, raw: bytes) -> list[Any]:
    values = []
    index = 0
    while index < len(raw):
        if item.type in _FIXED64_TYPES:
            bits, index = int.from_bytes(raw[index : index + 8], "little"), index + 8
        elif item.type in _FIXED32_TYPES:
            bits, index = int.from_bytes(raw[index : index + 4], "little"), index + 4
        else:
            bits, index = read_varint(raw, index)
        values.append(_scalar(item, bits))
    if index != len(raw):
        raise WireError(f"field {item.name}: truncated packed values")
    return values


def _map_entry(item: FieldSpec, raw: int | bytes) -> tuple[str, Any]:
    if not isinstance(raw, bytes):
        raise WireError(f"field {item.name}: a map entry must be length-delimited")
    entry = item.message
    key_field, value_field = entry.by_number.get(1), entry.by_number.get(2)
    assert key_field is not None and value_field is not None
    key: Any = _zero(key_field)
    value: Any = _zero(value_field)
    for number, wire_type, part in iter_fields(raw):
        if number == 1:
            key = _value(key_field, wire_type, part)
        elif number == 2:
            value = _value(value_field, wire_type, part)
    return str(key), value


def _zero(item: FieldSpec) -> Any:
    """The Go zero value of a map entry's absent key or value, as JSON."""
    if item.type == MESSAGE:
        return _message(item.message, b"")
    if item.type == STRING:
        return ""
    if item.type == BYTES:
        return None  # a nil []byte
    if item.type == BOOL:
        return False
    return 0


def _special(spec: MessageSpec, data: bytes) -> Any:
    fields = {number: raw for number, _wire, raw in iter_fields(data)}
    name = spec.special
    if name == TIME:
        if not data:
            return None
        return gotypes.format_time(signed64(_int(fields.get(1, 0))))
    if name == MICRO_TIME:
        if not data:
            return None
        return gotypes.format_micro_time(signed64(_int(fields.get(1, 0))), signed32(_int(fields.get(2, 0))))
    if name == DURATION:
        return gotypes.format_duration(signed64(_int(fields.get(1, 0))))
    if name == QUANTITY:
        text = fields.get(1, b"")
        return _bytes(text).decode("utf-8") or "0"
    if name == INT_OR_STRING:
        if _int(fields.get(1, 0)) == 1:
            return _bytes(fields.get(3, b"")).decode("utf-8")
        return signed32(_int(fields.get(2, 0)))
    if name in (RAW_EXTENSION, FIELDS_V1):
        raw = fields.get(1)
        if raw is None:
            return None
        return _embedded_json(_bytes(raw))
    if name == LIST_WRAPPER:
        item = spec.fields[0]
        return [_value(item, wire_type, raw) for number, wire_type, raw in iter_fields(data) if number == item.number]
    if name == JSON_VALUE:
        raw = fields.get(1)
        return None if raw is None else _embedded_json(_bytes(raw))
    if name in (SCHEMA_OR_ARRAY, SCHEMA_OR_BOOL, SCHEMA_OR_STRINGS):
        return _schema_or(spec, data)
    raise WireError(f"no decoder for {name}")


def _schema_or(spec: MessageSpec, data: bytes) -> Any:
    """JSONSchemaPropsOrBool: the schema if set, else `allows`; ...OrArray and ...OrStringArray: the list if it
    has items, else the schema (or null) - their Go MarshalJSON."""
    with_bool = spec.special == SCHEMA_OR_BOOL
    schema_number = 2 if with_bool else 1
    schema: Any = None
    allows = False
    rest: list[Any] = []
    for number, wire_type, raw in iter_fields(data):
        item = spec.by_number.get(number)
        if item is None:
            continue
        if number == schema_number:
            schema = _value(item, wire_type, raw)
        elif with_bool:
            allows = bool(raw)
        else:
            rest.append(_value(item, wire_type, raw))
    if with_bool:
        return schema if schema is not None else allows
    return rest or schema


def _embedded_json(raw: bytes) -> Any:
    """RawExtension's bytes: JSON as a client sent it, or an object in the protobuf envelope."""
    if raw.startswith(MAGIC):
        from pyop.apiserver.endpoints.protobuf.envelope import decode_object

        return decode_object(raw)
    try:
        return json.loads(raw)
    except ValueError:
        raise WireError("embedded raw bytes are neither JSON nor a protobuf object") from None


def _int(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise WireError("expected a varint")
    return value


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise WireError("expected length-delimited bytes")
    return value
