"""Decoding of built-in objects into their types, as kube-apiserver's JSON decoder does it.

kube-apiserver unmarshals a built-in kind into its Go struct and encodes the struct again to store it. Three things
follow that a client sees, and that this module reproduces from the kind's OpenAPI definition
(`pyop.api.definitions`, the same definitions the CRD generator uses):

- a value of the wrong JSON type is a 400 (`data: {"n": 3}` in a ConfigMap: `json: cannot unmarshal number into Go
  struct field ConfigMap.data of type string`), as is Secret `data` that is not base64 or a malformed quantity;
- fields the type does not have are dropped, and reported (`unknown field "spec.foo"`) for `fieldValidation`
  Warn (a `Warning` header) and Strict (a 400);
- `resource.Quantity` values come back canonical (`1000m` -> `"1"`), and JSON nulls are gone (Go's zero values are
  omitted on encoding);
- the fields Go's encoder writes even when zero are there (`resources: {}`, `reportingComponent: ""`, `eventTime:
  null`, `rules: null`): `_go_json_zero`, generated from the Go struct tags, names them per definition; an empty
  list or map survives exactly in those fields (no `omitempty`).

Results share every unchanged subtree with the input (stored objects are never modified in place).
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pyop.api.definitions import Definitions, load_definitions, normalise_version, reference_target
from pyop.api.quantity import QUANTITY_FORMAT_ERROR, QuantityError, canonical_quantity
from pyop.testing.builtins._go_json_zero import ZERO_FIELDS

QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_BASE64: Final = re.compile(r"[A-Za-z0-9+/=]")


class DecodeError(ValueError):
    """The body cannot be decoded into the kind's type; the message is the Go decoder's."""


@dataclass
class DecodeResult:
    obj: dict[str, Any]
    unknown: list[str] = field(default_factory=list)  # `spec.foo`, `spec.containers[0].bar`, in document order


# Node kinds.
STRUCT, MAP, LIST, STRING, BYTES, INTEGER, NUMBER, BOOLEAN, QUANTITY_KIND, INT_OR_STRING_KIND, ANY = range(11)


@dataclass(slots=True, eq=False)
class Node:
    """One schema node compiled for decoding: what JSON it takes and what Go type it is (for messages)."""

    kind: int
    go_type: str
    struct_name: str = ""  # STRUCT: the Go struct's name (the decoder's messages name the innermost struct)
    fields: dict[str, Node] = field(default_factory=dict)  # STRUCT
    required: frozenset[str] = frozenset()  # STRUCT: fields encoded even when empty (no omitempty)
    zero_fields: tuple[tuple[str, Any], ...] = ()  # STRUCT: (field, zero JSON) Go writes when the field is unset
    item: Node | None = None  # MAP values, LIST items
    omits_empty: bool = False  # MAP and LIST: an empty value is not encoded


class _MapKey(str):
    """A map key in a path (Go's field stack skips map keys; the reported path keeps them)."""


class TypeDecoder:
    """Decodes values against one Kubernetes version's definitions, compiled once per definition, lazily."""

    def __init__(self, definitions: Definitions, *, null_creation_timestamp: bool = False) -> None:
        """`null_creation_timestamp`: encode an embedded ObjectMeta's zero creationTimestamp as `null` (Kubernetes
        before v1.33, whose ObjectMeta had no `omitzero`: a Deployment's template reads back with
        `metadata: {creationTimestamp: null}`)."""
        self._definitions = definitions
        self._compiled: dict[str, Node] = {}
        self._null_creation_timestamp = null_creation_timestamp

    def decode(self, obj: dict[str, Any], definition: str, old: Any = None) -> DecodeResult:
        """`old`: the stored object the request was made from; subtrees it shares with `obj` were decoded when
        they were stored and are not walked again."""
        result = self.decode_fields(obj, definition, old)
        return DecodeResult(self.add_zero_fields(result.obj, definition, old), result.unknown)

    def decode_fields(self, obj: dict[str, Any], definition: str, old: Any = None) -> DecodeResult:
        """`decode` without the always-written zero fields: the object as the Go struct holds it before defaulting,
        so a defaulter sees an unset field as unset (kube defaults the struct, then encodes it; `add_zero_fields`
        is the encoding's part)."""
        unknown: list[str] = []
        node = self._node_for(definition)
        decoded = self._value(obj, old, node, node.struct_name, [], unknown)
        return DecodeResult(decoded, unknown)

    def add_zero_fields(self, obj: dict[str, Any], definition: str, old: Any = None) -> dict[str, Any]:
        """`obj` with every absent field that Go's encoder writes when zero (`resources: {}`, `rules: null`),
        sharing what did not change; subtrees shared with `old` (stored, so complete) are not walked."""
        result = self._zeros(obj, old, self._node_for(definition))
        assert isinstance(result, dict)
        return result

    def _zeros(self, value: Any, old: Any, node: Node) -> Any:
        if value is old:
            return value
        kind = node.kind
        if kind == STRUCT and isinstance(value, dict):
            old_map = old if isinstance(old, dict) else None
            result: dict[str, Any] | None = None
            fields = node.fields
            for key, item in value.items():
                child = fields.get(key)
                if child is None or child.kind not in _CONTAINERS or item is None:
                    continue
                new_item = self._zeros(item, old_map.get(key) if old_map is not None else None, child)
                if new_item is not item:
                    if result is None:
                        result = dict(value)
                    result[key] = new_item
            for key, zero in node.zero_fields:
                if key not in value:
                    if result is None:
                        result = dict(value)
                    result[key] = _fresh(zero)
            return value if result is None else result
        if kind in (MAP, LIST) and node.item is not None and node.item.kind in _CONTAINERS:
            item_node = node.item
            if isinstance(value, dict):
                old_map = old if isinstance(old, dict) else None
                changed = {
                    key: new
                    for key, item in value.items()
                    if (new := self._zeros(item, old_map.get(key) if old_map else None, item_node)) is not item
                }
                return {**value, **changed} if changed else value
            if isinstance(value, list):
                old_list = old if isinstance(old, list) else None
                items = [
                    self._zeros(item, old_list[i] if old_list is not None and i < len(old_list) else None, item_node)
                    for i, item in enumerate(value)
                ]
                return items if any(new is not item for new, item in zip(items, value, strict=True)) else value
        return value

    # --- compilation ------------------------------------------------------------------------------------

    def _node_for(self, definition: str) -> Node:
        node = self._compiled.get(definition)
        if node is None:
            schema = self._definitions[definition]
            if definition == QUANTITY:
                node = Node(QUANTITY_KIND, "resource.Quantity")
            elif definition == INT_OR_STRING:
                node = Node(INT_OR_STRING_KIND, "intstr.IntOrString")
            elif "properties" in schema:
                node = Node(STRUCT, _go_type_name(definition), struct_name=definition.rsplit(".", 1)[-1])
                self._compiled[definition] = node  # before the fields: definitions may be recursive
                zero_fields = ZERO_FIELDS.get(definition)
                if zero_fields is None:  # a type newer than the struct tags' client-go: the definition's word
                    node.required = frozenset(schema.get("required") or ())
                else:
                    node.required = frozenset(name for name, _zero in zero_fields)
                    node.zero_fields = tuple(item for item in zero_fields if item[0] in schema["properties"])
                node.fields = {key: self._compile(child) for key, child in schema["properties"].items()}
                return node
            else:
                node = self._compile(schema)
            self._compiled[definition] = node
        return node

    def _compile(self, schema: Mapping[str, Any]) -> Node:
        ref = schema.get("$ref")
        if ref is not None:
            return self._node_for(reference_target(ref))
        if "properties" in schema:
            return Node(
                STRUCT,
                "struct",
                struct_name="",
                fields={key: self._compile(child) for key, child in schema["properties"].items()},
                required=frozenset(schema.get("required") or ()),
            )
        types = _types(schema)
        if "object" in types or "additionalProperties" in schema:
            additional = schema.get("additionalProperties")
            if not isinstance(additional, Mapping):
                return Node(ANY, "map[string]interface {}")  # free-form (RawExtension, FieldsV1, JSON): kept
            item = self._compile(additional)
            return Node(MAP, f"map[string]{item.go_type}", item=item, omits_empty=True)
        if "array" in types:
            items = schema.get("items")
            if not isinstance(items, Mapping):
                return Node(ANY, "[]interface {}")
            item = self._compile(items)
            return Node(LIST, f"[]{item.go_type}", item=item, omits_empty=True)
        if "string" in types:
            return Node(BYTES, "[]uint8") if schema.get("format") == "byte" else Node(STRING, "string")
        if "integer" in types:
            return Node(INTEGER, "int64" if schema.get("format") == "int64" else "int32")
        if "number" in types:
            return Node(NUMBER, "float64")
        if "boolean" in types:
            return Node(BOOLEAN, "bool")
        return Node(ANY, "interface {}")

    # --- decoding ---------------------------------------------------------------------------------------

    def _value(self, value: Any, old: Any, node: Node, struct_name: str, trail: list[Any], unknown: list[str]) -> Any:
        """`trail`: the path so far (keys, list indexes, map keys), formatted only for messages."""
        if value is old:
            return value
        kind = node.kind
        if kind == STRUCT:
            if not isinstance(value, dict):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return self._struct(value, old if isinstance(old, dict) else None, node, struct_name, trail, unknown)
        if kind == MAP:
            if not isinstance(value, dict):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return self._map(value, old if isinstance(old, dict) else None, node, struct_name, trail, unknown)
        if kind == LIST:
            if not isinstance(value, list):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return self._list(value, old if isinstance(old, list) else None, node, struct_name, trail, unknown)
        if kind == STRING:
            if not isinstance(value, str):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return value
        if kind == INTEGER:
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    return int(value)
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return value
        if kind == QUANTITY_KIND:
            return _quantity(value)
        if kind == BOOLEAN:
            if not isinstance(value, bool):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return value
        if kind == BYTES:
            if not isinstance(value, str):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            _check_base64(value)
            return value
        if kind == INT_OR_STRING_KIND:
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return value
        if kind == NUMBER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DecodeError(_type_error(value, struct_name, trail, node.go_type))
            return value
        return value  # ANY

    def _struct(
        self,
        value: dict[str, Any],
        old: dict[str, Any] | None,
        node: Node,
        parent_struct: str,
        trail: list[Any],
        unknown: list[str],
    ) -> dict[str, Any]:
        fields = node.fields
        struct_name = node.struct_name or parent_struct
        result: dict[str, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            child = fields.get(key)
            if child is None or item is None:
                if child is None:
                    unknown.append(_format_path([*trail, key]))
                if result is None:
                    result = _prefix(value, index)
                continue
            trail.append(key)
            new_item = self._value(item, old.get(key) if old is not None else None, child, struct_name, trail, unknown)
            trail.pop()
            if child.omits_empty and not new_item and key not in node.required:
                # `omitempty`: an empty map or list is not encoded (`labels: {}` reads back without labels).
                if result is None:
                    result = _prefix(value, index)
                continue
            if result is not None:
                result[key] = new_item
            elif new_item is not item:
                result = _prefix(value, index)
                result[key] = new_item
        if (
            self._null_creation_timestamp
            and struct_name in _ZERO_TIME_HOLDERS
            and len(trail) > (struct_name == _OBJECT_META)
        ):
            result = _with_null_creation_timestamp(result if result is not None else value, struct_name)
        return value if result is None else result

    def _map(
        self,
        value: dict[str, Any],
        old: dict[str, Any] | None,
        node: Node,
        struct_name: str,
        trail: list[Any],
        unknown: list[str],
    ) -> dict[str, Any]:
        item_node = node.item
        assert item_node is not None
        result: dict[str, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            if item is None:
                new_item: Any = "" if item_node.kind == STRING else item
            else:
                trail.append(_MapKey(key))
                old_item = old.get(key) if old is not None else None
                new_item = self._value(item, old_item, item_node, struct_name, trail, unknown)
                trail.pop()
            if result is not None:
                result[key] = new_item
            elif new_item is not item:
                result = _prefix(value, index)
                result[key] = new_item
        return value if result is None else result

    def _list(
        self,
        value: list[Any],
        old: list[Any] | None,
        node: Node,
        struct_name: str,
        trail: list[Any],
        unknown: list[str],
    ) -> list[Any]:
        item_node = node.item
        assert item_node is not None
        result: list[Any] | None = None
        for index, item in enumerate(value):
            if item is None:
                new_item = item
            else:
                trail.append(index)
                old_item = old[index] if old is not None and index < len(old) else None
                new_item = self._value(item, old_item, item_node, struct_name, trail, unknown)
                trail.pop()
            if result is not None:
                result.append(new_item)
            elif new_item is not item:
                result = [*value[:index], new_item]
        return value if result is None else result


def go_zero_fields(definition: str) -> dict[str, Any] | None:
    """The fields Go's encoder writes for `definition`'s struct when they are zero, each a fresh zero value (the
    caller may change it); None for a type the struct-tag table does not know."""
    known = ZERO_FIELDS.get(definition)
    return None if known is None else {name: _fresh(zero) for name, zero in known}


def _fresh(zero: Any) -> Any:
    """A zero struct (`{}` or nested) copied, so no two objects share it; scalars and null as they are."""
    return copy.deepcopy(zero) if isinstance(zero, dict) else zero


_CONTAINERS: Final = frozenset({STRUCT, MAP, LIST})
_OBJECT_META: Final = "ObjectMeta"
_ZERO_TIME_HOLDERS: Final = frozenset({_OBJECT_META, "PodTemplateSpec", "JobTemplateSpec", "PersistentVolumeClaim"})


def _with_null_creation_timestamp(value: dict[str, Any], struct_name: str) -> dict[str, Any]:
    """An embedded ObjectMeta as pre-1.33 Go encoded it: `creationTimestamp: null`; templates always carry their
    (value-typed) metadata, so an absent one is `{creationTimestamp: null}` too."""
    if struct_name == _OBJECT_META:
        if "creationTimestamp" in value:
            return value
        return {**value, "creationTimestamp": None}
    metadata = value.get("metadata")
    if isinstance(metadata, dict) and "creationTimestamp" in metadata:
        return value
    return {**value, "metadata": {**(metadata or {}), "creationTimestamp": None}}


def _format_path(trail: list[Any]) -> str:
    """`spec.containers[0].foo` (the unknown-field path kube-apiserver reports)."""
    text = ""
    for part in trail:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else str(part)
    return text


def _go_field_path(trail: list[Any]) -> str:
    """The Go decoder's field stack: struct fields only (no list indexes, no map keys)."""
    return ".".join(part for part in trail if isinstance(part, str) and not isinstance(part, _MapKey))


def _prefix(value: dict[str, Any], count: int) -> dict[str, Any]:
    """The first `count` entries of `value`: the copy made at the first change, in the same key order."""
    return dict(itertools.islice(value.items(), count))


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if t != "null"}
    return set()


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _type_error(value: Any, struct_name: str, trail: list[Any], go_type: str) -> str:
    json_type = _json_type(value)
    if json_type == "number" and go_type.startswith("int"):
        json_type = f"number {value!r}"
    go_field = f"{struct_name}.{_go_field_path(trail)}"
    return f"json: cannot unmarshal {json_type} into Go struct field {go_field} of type {go_type}"


def _go_type_name(definition: str) -> str:
    """`io.k8s.api.core.v1.Container` -> `v1.Container` (Go's package-qualified name)."""
    parts = definition.split(".")
    return ".".join(parts[-2:])


def _quantity(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DecodeError(QUANTITY_FORMAT_ERROR)
    try:
        return _canonical_quantity(value)
    except QuantityError as error:
        raise DecodeError(str(error)) from None


@functools.lru_cache(maxsize=4096)
def _canonical_quantity(value: str | int | float) -> str:
    # Objects repeat the same few quantities (`500m`, `128Mi`): parsing each once is a tenth of a decode.
    return canonical_quantity(value)


def _check_base64(text: str) -> None:
    """Go's StdEncoding: `illegal base64 data at input byte N` (N: the first byte that cannot be decoded)."""
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        for index, char in enumerate(text):
            if not _BASE64.match(char) or (char == "=" and index < len(text) - 2):
                raise DecodeError(f"illegal base64 data at input byte {index}") from None
        raise DecodeError(f"illegal base64 data at input byte {len(text) - len(text) % 4}") from None


@functools.cache
def decoder_for(kubernetes_version: str) -> TypeDecoder:
    """One decoder per Kubernetes version (the definitions are parsed once per process)."""
    major, minor = (int(part) for part in normalise_version(kubernetes_version).split("."))
    return TypeDecoder(load_definitions(kubernetes_version), null_creation_timestamp=(major, minor) < (1, 33))
