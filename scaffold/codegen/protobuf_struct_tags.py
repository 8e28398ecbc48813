"""Kubernetes' protobuf messages rebuilt from the Go struct tags of a client-go binary (Kubernetes 1.33 and later).

From 1.33 on, k8s.io/api and k8s.io/apimachinery no longer link gogo FileDescriptorProtos; their generated.proto
files are still made by go-to-protobuf from the Go types, and every field keeps the tag it came from:
`protobuf:"<wire>,<number>,<opt|rep|req>,name=<proto name>[,casttype=...]"` (plus `protobuf_key`/`protobuf_val`
for maps). go-to-protobuf's mapping, which this module applies to the struct types `go_binary_types` reads:
- a Go package `k8s.io/api/core/v1` is the proto package `k8s.io.api.core.v1` (`-` becomes `_`) of the file
  `k8s.io/api/core/v1/generated.proto`; a struct type is the message of its name;
- a field's label and protobuf type follow its Go type, not the tag's words (ParamKind's string apiVersion is
  tagged `rep`, PodFailurePolicy's []Rule and Overhead's map `opt`, SleepAction's int64 `bytes`): a Go map is a
  repeated map-entry message `<Message>.<FieldName>Entry` (`key = 1`, `value = 2`), a slice a repeated field,
  except a named slice tagged `opt` (`Verbs Verbs`), the message `{repeated items = 1}`; int32 is int32, string
  string, a struct that message, `[]byte` bytes (the wire type only picks zigzag encodings);
- the JSON name is the `json:` tag's (JSONSchemaProps' `ref` is `$ref`, `xKubernetesListType`
  `x-kubernetes-list-type`), used where the OpenAPI definitions do not name the proto name;
- gogoproto.nullable is whether the Go field can be nil (a pointer, slice or map; for a repeated message, whether
  its elements are pointers), and customname is the Go name.
Structs with fields but no protobuf tags marshal themselves (metav1.Time and MicroTime, resource.Quantity): their
messages cannot be read here and stay with a descriptor source.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from pyop_scaffold.codegen import go_binary_types as go
from pyop_scaffold.codegen.protobuf_messages import (
    LABEL_OPTIONAL,
    LABEL_REPEATED,
    LABEL_REQUIRED,
    MAP_KEY,
    MAP_VALUE,
    TYPE_BOOL,
    TYPE_BYTES,
    TYPE_DOUBLE,
    TYPE_FLOAT,
    TYPE_INT32,
    TYPE_INT64,
    TYPE_MESSAGE,
    TYPE_SINT32,
    TYPE_SINT64,
    TYPE_STRING,
    TYPE_UINT32,
    TYPE_UINT64,
    FieldDescriptor,
    FileDescriptor,
    MessageDescriptor,
)

# The Go packages whose types are Kubernetes API messages (apiextensions-apiserver's: CustomResourceDefinition).
API_PACKAGES: Final = (
    "k8s.io/api/",
    "k8s.io/apimachinery/pkg/",
    "k8s.io/apiextensions-apiserver/pkg/apis/",
    "k8s.io/kube-aggregator/pkg/apis/",
    "k8s.io/metrics/pkg/apis/",
)
_LABELS: Final = {"opt": LABEL_OPTIONAL, "req": LABEL_REQUIRED, "rep": LABEL_REPEATED}
_VARINT: Final = {
    go.BOOL: TYPE_BOOL,
    go.INT8: TYPE_INT32,
    go.INT16: TYPE_INT32,
    go.INT32: TYPE_INT32,
    go.INT: TYPE_INT64,
    go.INT64: TYPE_INT64,
    go.UINT8: TYPE_UINT32,
    go.UINT16: TYPE_UINT32,
    go.UINT32: TYPE_UINT32,
    go.UINT: TYPE_UINT64,
    go.UINT64: TYPE_UINT64,
}
_NILABLE: Final = frozenset({go.POINTER, go.SLICE, go.MAP})


class StructTagError(ValueError):
    """A protobuf tag or Go type go-to-protobuf would not have produced."""


def wanted(package: str) -> bool:
    return package.startswith(API_PACKAGES)


def proto_package(go_package: str) -> str:
    return go_package.replace("/", ".").replace("-", "_")


def _message_name(go_type: go.GoType) -> str:
    return f"{proto_package(go_type.package)}.{go_type.name}"


def _is_bytes(go_type: go.GoType) -> bool:
    return go_type.kind == go.SLICE and go_type.elem is not None and go_type.elem.kind == go.UINT8


def _tag(text: str, go_name: str) -> tuple[str, int, int, str]:
    """(wire type, number, label, proto name) of a `protobuf:"..."` value. The label may be left out
    (`bytes,1,name=name`: optional), and the name too (EphemeralContainer's `bytes,1,req`: the Go name with a
    lower-case first letter, go-to-protobuf's default)."""
    parts = text.split(",")
    options = dict(part.split("=", 1) for part in parts[2:] if "=" in part)
    labels = [_LABELS[part] for part in parts[2:] if part in _LABELS]
    if len(parts) < 2 or not parts[1].isdigit():
        raise StructTagError(f"not a go-to-protobuf tag: {text!r}")
    name = options.get("name") or go_name[:1].lower() + go_name[1:]
    return parts[0], int(parts[1]), labels[0] if labels else LABEL_OPTIONAL, name


class _Builder:
    def __init__(self, binary: go.GoBinary) -> None:
        self.binary = binary
        self.messages: dict[str, MessageDescriptor] = {}
        self.packages: dict[str, str] = {}  # message full name -> Go package
        self.pending: list[go.GoType] = []  # referenced message types still to build

    def scalar_or_message(self, wire: str, go_type: go.GoType, where: str) -> tuple[int, str]:
        """(protobuf type, message name) of a value of `go_type` sent as `wire`."""
        if go_type.kind == go.POINTER and go_type.elem is not None:
            go_type = go_type.elem
        if go_type.kind == go.STRING:
            return TYPE_STRING, ""
        if _is_bytes(go_type):
            return TYPE_BYTES, ""
        if go_type.kind in (go.STRUCT, go.SLICE) and go_type.name and wanted(go_type.package):
            self.pending.append(go_type)
            return TYPE_MESSAGE, _message_name(go_type)
        if go_type.kind in _VARINT:  # by the Go kind, as go-to-protobuf does (SleepAction's int64 says `bytes`)
            if wire in ("zigzag32", "zigzag64"):
                return (TYPE_SINT32 if wire == "zigzag32" else TYPE_SINT64), ""
            return _VARINT[go_type.kind], ""
        if go_type.kind in (go.FLOAT64, go.FLOAT32):
            return (TYPE_DOUBLE if go_type.kind == go.FLOAT64 else TYPE_FLOAT), ""
        raise StructTagError(f"{where}: a {wire} field of Go kind {go_type.kind} ({go_type.full_name or 'unnamed'})")

    def _field(self, message: str, item: go.GoField, tag: str) -> FieldDescriptor:
        wire, number, label, name = _tag(tag, item.name)
        where = f"{message}.{item.name}"
        go_type = item.type
        if go_type.kind == go.MAP and go_type.key and go_type.elem:
            entry = f"{message}.{name[:1].upper()}{name[1:]}Entry"
            self.map_entry(entry, item, go_type.key, go_type.elem)
            return FieldDescriptor(name, number, LABEL_REPEATED, TYPE_MESSAGE, entry, False, item.name)
        is_list = go_type.kind == go.SLICE and go_type.elem is not None and not _is_bytes(go_type)
        if is_list and (label == LABEL_REPEATED or not go_type.name):
            assert go_type.elem is not None
            proto_type, type_name = self.scalar_or_message(wire, go_type.elem, where)
            nullable = proto_type != TYPE_MESSAGE or go_type.elem.kind == go.POINTER  # []T of values: false
            return FieldDescriptor(name, number, LABEL_REPEATED, proto_type, type_name, nullable, item.name)
        proto_type, type_name = self.scalar_or_message(wire, go_type, where)
        return FieldDescriptor(name, number, LABEL_OPTIONAL, proto_type, type_name, go_type.kind in _NILABLE, item.name)

    def field(self, message: str, item: go.GoField, tag: str) -> FieldDescriptor:
        described = self._field(message, item, tag)
        json_name = (item.tag_value("json") or "").split(",", 1)[0]
        if json_name and json_name != "-":
            described.json_name = json_name
        return described

    def map_entry(self, entry: str, item: go.GoField, key: go.GoType, value: go.GoType) -> None:
        fields = []
        for number, part, go_type in ((1, MAP_KEY, key), (2, MAP_VALUE, value)):
            text = item.tag_value(f"protobuf_{part[:3]}") or ("bytes" if go_type.kind == go.STRING else "")
            wire = text.split(",", 1)[0]
            proto_type, type_name = self.scalar_or_message(wire, go_type, f"{entry}.{part}")
            fields.append(FieldDescriptor(part, number, LABEL_OPTIONAL, proto_type, type_name, True, ""))
        self.messages[entry] = MessageDescriptor(entry, fields, map_entry=True)

    def struct(self, struct: go.GoStruct) -> None:
        full_name = f"{proto_package(struct.package)}.{struct.name}"
        message = MessageDescriptor(full_name)
        self.messages[full_name] = message
        self.packages[full_name] = struct.package
        for item in struct.fields:
            tag = item.tag_value("protobuf")
            if tag is not None and tag != "-":
                message.fields.append(self.field(full_name, item, tag))
        message.fields.sort(key=lambda f: f.number)

    def named_slice(self, go_type: go.GoType) -> None:
        full_name = _message_name(go_type)
        assert go_type.elem is not None
        proto_type, type_name = self.scalar_or_message("bytes", go_type.elem, full_name)
        items = FieldDescriptor("items", 1, LABEL_REPEATED, proto_type, type_name, True, "Items")
        self.messages[full_name] = MessageDescriptor(full_name, [items])
        self.packages[full_name] = go_type.package

    def build(self) -> None:
        for struct in self.binary.structs.values():
            if wanted(struct.package) and any(item.tag_value("protobuf") not in (None, "-") for item in struct.fields):
                self.struct(struct)
        while self.pending:
            go_type = self.pending.pop()
            if _message_name(go_type) in self.messages:
                continue
            if go_type.kind == go.SLICE:
                self.named_slice(go_type)
                continue
            empty = self.binary.structs.get(go_type.full_name)
            if empty is not None and not empty.fields:
                self.struct(empty)  # an empty message (metav1.Patch, ...); one with untagged fields marshals itself


def files_from_struct_tags(binary: go.GoBinary) -> list[FileDescriptor]:
    """The messages the binary's Go types define, one file per Go package, sorted by file name."""
    builder = _Builder(binary)
    builder.build()
    files: dict[str, FileDescriptor] = {}
    for full_name in sorted(builder.messages):
        owner = full_name
        while owner not in builder.packages:  # a map entry belongs to its message's file
            owner = owner.rsplit(".", 1)[0]
        package = builder.packages[owner]
        file = files.setdefault(package, FileDescriptor(f"{package}/generated.proto", proto_package(package)))
        file.messages.append(builder.messages[full_name])
    return [files[package] for package in sorted(files, key=lambda p: f"{p}/generated.proto")]


def message_names(files: Iterable[FileDescriptor]) -> set[str]:
    return {message.full_name for file in files for message in file.messages}
