"""The protobuf message model both descriptor readers produce (protobuf_descriptors reads it from gogo
FileDescriptorProtos, protobuf_struct_tags from Go struct tags): the fields a message table needs, per file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

LABEL_OPTIONAL, LABEL_REQUIRED, LABEL_REPEATED = 1, 2, 3
# google/protobuf/descriptor.proto FieldDescriptorProto.Type values used by Kubernetes' messages.
TYPE_DOUBLE, TYPE_FLOAT, TYPE_INT64, TYPE_UINT64, TYPE_INT32 = 1, 2, 3, 4, 5
TYPE_BOOL, TYPE_STRING, TYPE_MESSAGE, TYPE_BYTES, TYPE_UINT32 = 8, 9, 11, 12, 13
TYPE_SINT32, TYPE_SINT64 = 17, 18
MAP_KEY: Final = "key"
MAP_VALUE: Final = "value"


@dataclass
class FieldDescriptor:
    name: str
    number: int
    label: int
    type: int
    type_name: str  # full name without the leading dot; "" for scalars
    nullable: bool  # gogoproto.nullable (default true: a Go pointer)
    customname: str  # gogoproto.customname: the Go field name when it differs from the proto name
    json_name: str = ""  # the Go field's `json:` name, when the source is Go struct tags


@dataclass
class MessageDescriptor:
    full_name: str
    fields: list[FieldDescriptor] = field(default_factory=list)
    map_entry: bool = False


@dataclass
class FileDescriptor:
    name: str
    package: str
    messages: list[MessageDescriptor] = field(default_factory=list)
    enums: dict[str, dict[int, str]] = field(default_factory=dict)
