"""Decoding of built-in objects into their types, as kube-apiserver's JSON decoder does it.

kube-apiserver unmarshals a built-in kind into its Go struct and encodes the struct again to store it. Three things
follow that a client sees, and that this module reproduces from the kind's OpenAPI definition
(`pyop.api.definitions`, the same definitions the CRD generator uses):

- a value of the wrong JSON type is a 400 (`data: {"n": 3}` in a ConfigMap: `json: cannot unmarshal number into Go
  struct field ConfigMap.data of type string`), as is Secret `data` that is not base64 or a malformed quantity;
- fields the type does not have are dropped, and reported (`unknown field "spec.foo"`) for `fieldValidation`
  Warn (a `Warning` header) and Strict (a 400);
- `resource.Quantity` values come back canonical (`1000m` -> `"1"`), and JSON nulls are gone (Go's zero values are
  omitted on encoding).

Results share every unchanged subtree with the input (stored objects are never modified in place).
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pyop.api.definitions import Definitions, load_definitions, reference_target
from pyop.api.quantity import QuantityError, canonical_quantity

QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_BASE64: Final = re.compile(r"[A-Za-z0-9+/=]")


class DecodeError(ValueError):
    """The body cannot be decoded into the kind's type; the message is the Go decoder's."""


@dataclass
class DecodeResult:
    obj: dict[str, Any]
    unknown: list[str] = field(default_factory=list)  # `spec.foo`, `spec.containers[0].bar`, in document order


class TypeDecoder:
    """Decodes values against one Kubernetes version's definitions (definitions resolved once, lazily)."""

    def __init__(self, definitions: Definitions) -> None:
        self._definitions = definitions
        self._resolved: dict[str, Mapping[str, Any]] = {}

    def decode(self, obj: dict[str, Any], definition: str) -> DecodeResult:
        unknown: list[str] = []
        decoded = self._value(obj, {"$ref": "#/$defs/" + definition}, "", (definition.rsplit(".", 1)[-1], ""), unknown)
        return DecodeResult(decoded, unknown)

    def _resolve(self, schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
        ref = schema.get("$ref")
        if ref is None:
            return schema, ""
        name = reference_target(ref)
        return self._definitions[name], name

    def _value(self, value: Any, schema: Mapping[str, Any], path: str, go: tuple[str, str], unknown: list[str]) -> Any:
        """`go`: (innermost struct name, JSON field path without list indexes), for the Go decoder's messages."""
        schema, name = self._resolve(schema)
        if name == QUANTITY:
            return _quantity(value)
        if name == INT_OR_STRING:
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise DecodeError(_type_error(value, go, "intstr.IntOrString"))
            return value
        if "properties" in schema:
            if not isinstance(value, dict):
                raise DecodeError(_type_error(value, go, _go_type_name(name) if name else "struct"))
            return self._struct(value, schema, path, (name.rsplit(".", 1)[-1] if name else go[0], go[1]), unknown)
        types = _types(schema)
        if "object" in types or "additionalProperties" in schema:
            additional = schema.get("additionalProperties")
            if not isinstance(value, dict):
                raise DecodeError(_type_error(value, go, _go_type(schema, self)))
            if not isinstance(additional, Mapping):
                return value  # free-form (RawExtension, FieldsV1, JSON): kept as sent
            return self._map(value, additional, path, go, unknown)
        if "array" in types:
            if not isinstance(value, list):
                raise DecodeError(_type_error(value, go, _go_type(schema, self)))
            items = schema.get("items")
            if not isinstance(items, Mapping):
                return value
            return self._list(value, items, path, go, unknown)
        return _scalar(value, schema, go)

    def _omits(self, schema: Mapping[str, Any]) -> bool:
        """Typed maps and lists are omitted when empty; structs (`securityContext: {}`) and free-form objects stay."""
        resolved, _ = self._resolve(schema)
        if "properties" in resolved:
            return False
        return "items" in resolved or isinstance(resolved.get("additionalProperties"), Mapping)

    def _struct(
        self, value: dict[str, Any], schema: Mapping[str, Any], path: str, go: tuple[str, str], unknown: list[str]
    ) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema["properties"]
        required = schema.get("required") or ()
        result: dict[str, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            child_schema = properties.get(key)
            child_path = f"{path}.{key}" if path else key
            if child_schema is None or item is None:
                if child_schema is None:
                    unknown.append(child_path)
                if result is None:
                    result = _prefix(value, index)
                continue
            go_field = f"{go[1]}.{key}" if go[1] else key
            new_item = self._value(item, child_schema, child_path, (go[0], go_field), unknown)
            empty = not new_item and isinstance(new_item, (dict, list))
            if empty and key not in required and self._omits(child_schema):
                # `omitempty`: an empty map or list is not encoded (`labels: {}` reads back without labels).
                if result is None:
                    result = _prefix(value, index)
                continue
            if result is not None:
                result[key] = new_item
            elif new_item is not item:
                result = _prefix(value, index)
                result[key] = new_item
        return value if result is None else result

    def _map(
        self, value: dict[str, Any], schema: Mapping[str, Any], path: str, go: tuple[str, str], unknown: list[str]
    ) -> dict[str, Any]:
        result: dict[str, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            if item is None:
                new_item: Any = "" if _types(self._resolve(schema)[0]) == {"string"} else item
            else:
                new_item = self._value(item, schema, f"{path}.{key}" if path else key, go, unknown)
            if result is not None:
                result[key] = new_item
            elif new_item is not item:
                result = _prefix(value, index)
                result[key] = new_item
        return value if result is None else result

    def _list(
        self, value: list[Any], schema: Mapping[str, Any], path: str, go: tuple[str, str], unknown: list[str]
    ) -> list[Any]:
        result: list[Any] | None = None
        for index, item in enumerate(value):
            new_item = item if item is None else self._value(item, schema, f"{path}[{index}]", go, unknown)
            if result is not None:
                result.append(new_item)
            elif new_item is not item:
                result = [*value[:index], new_item]
        return value if result is None else result


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


def _type_error(value: Any, go: tuple[str, str], go_type: str) -> str:
    json_type = _json_type(value)
    if json_type == "number" and go_type.startswith("int"):
        json_type = f"number {value!r}"
    return f"json: cannot unmarshal {json_type} into Go struct field {go[0]}.{go[1]} of type {go_type}"


def _go_type_name(definition: str) -> str:
    """`io.k8s.api.core.v1.Container` -> `v1.Container` (Go's package-qualified name)."""
    parts = definition.split(".")
    return ".".join(parts[-2:])


def _go_type(schema: Mapping[str, Any], decoder: TypeDecoder) -> str:
    ref = schema.get("$ref")
    if ref is not None:
        name = reference_target(ref)
        if name == QUANTITY:
            return "resource.Quantity"
        resolved = decoder._definitions[name]
        return _go_type_name(name) if "properties" in resolved else _go_type(resolved, decoder)
    types = _types(schema)
    if "array" in types:
        items = schema.get("items")
        return "[]" + (_go_type(items, decoder) if isinstance(items, Mapping) else "interface {}")
    if "object" in types or "additionalProperties" in schema:
        additional = schema.get("additionalProperties")
        inner = _go_type(additional, decoder) if isinstance(additional, Mapping) else "interface {}"
        return f"map[string]{inner}"
    if "string" in types:
        return "[]uint8" if schema.get("format") == "byte" else "string"
    if "integer" in types:
        return "int64" if schema.get("format") == "int64" else "int32"
    if "number" in types:
        return "float64"
    if "boolean" in types:
        return "bool"
    return "interface {}"


def _scalar(value: Any, schema: Mapping[str, Any], go: tuple[str, str]) -> Any:
    types = _types(schema)
    if not types:
        return value
    if "string" in types:
        if not isinstance(value, str):
            raise DecodeError(_type_error(value, go, "[]uint8" if schema.get("format") == "byte" else "string"))
        if schema.get("format") == "byte":
            _check_base64(value)
        return value
    if "integer" in types:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise DecodeError(_type_error(value, go, "int64" if schema.get("format") == "int64" else "int32"))
        return value
    if "number" in types:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DecodeError(_type_error(value, go, "float64"))
        return value
    if "boolean" in types:
        if not isinstance(value, bool):
            raise DecodeError(_type_error(value, go, "bool"))
        return value
    return value


def _quantity(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DecodeError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    try:
        return canonical_quantity(value)
    except QuantityError as error:
        raise DecodeError(str(error)) from None


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
    return TypeDecoder(load_definitions(kubernetes_version))
