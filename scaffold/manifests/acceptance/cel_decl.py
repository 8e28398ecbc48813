"""The CEL type of a schema node, as kube-apiserver declares it to its rules (apiserver's ``SchemaDeclType``).

Besides the type itself the cost estimate needs two numbers per type, both from the same code: the most
elements a value can have (``MaxElements``: a list's maxItems, a map's maxProperties, four bytes per code point
of a string's maxLength, or, without a bound, how many of the smallest elements fit into one 3 MiB request)
and the smallest serialized size of a value (``MinSerializedSize``, which those estimates divide by). Scalars
other than strings and bytes have no element count (0).

Each estimated (unbounded) count remembers which keyword on which node would bound it, in the schema's
dotted terms (``spec.items``, ``spec.items[*].name``), so that an over-budget rule can say what to add.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

MAX_REQUEST_SIZE_BYTES: Final = 3 * 1024 * 1024
MAX_DURATION_SIZE_JSON: Final = 32
MAX_DATETIME_SIZE_JSON: Final = 32
MIN_DURATION_SIZE_JSON: Final = 3
JSON_DATE_SIZE: Final = 12
MIN_DATETIME_SIZE_JSON: Final = 21
MIN_STRING_SIZE: Final = 2
MIN_BOOL_SIZE: Final = 4
MIN_NUMBER_SIZE: Final = 1


@dataclass
class CelType:
    """One CEL type. `kind` is bool, int, uint, double, string, bytes, duration, timestamp, null, list, map,
    object, dyn, type, or unknown (a value this checker does not model: never reported, any use allowed)."""

    kind: str
    elem: CelType | None = None  # a list's items, a map's values
    key: CelType | None = None  # a map's keys
    max_elements: int = 0
    min_size: int = 1
    unbounded: tuple[str, str] | None = None  # (keyword, schema place) that would bound max_elements
    schema_place: str = ""  # the dotted place of the schema node (for hints)
    # An object's CEL-visible field schemas by CEL name; each field's type is built on first use: a rule reads a
    # few fields of a node whose subtree may be thousands of nodes (a PodTemplateSpec).
    field_schemas: dict[str, tuple[Any, str]] | None = None
    _fields: dict[str, CelType | None] | None = None

    def field(self, name: str) -> CelType | None:
        """The type of the CEL-visible field `name` (an escaped property name), None when there is none."""
        if self.field_schemas is None:
            return None
        if self._fields is None:
            self._fields = {}
        if name not in self._fields:
            found = self.field_schemas.get(name)
            self._fields[name] = None
            if found is not None:
                prop, place = found
                embedded = isinstance(prop, dict) and bool(prop.get("x-kubernetes-embedded-resource"))
                self._fields[name] = decl_type(prop, embedded, place)
        return self._fields[name]

    def name(self) -> str | None:
        """cel-go's name of the type, or None where the name is not certain (objects carry generated names)."""
        if self.kind in _SIMPLE_NAMES:
            return _SIMPLE_NAMES[self.kind]
        if self.kind == "list" and self.elem is not None:
            inner = self.elem.name()
            return None if inner is None else f"list({inner})"
        if self.kind == "map" and self.elem is not None and self.key is not None:
            key, value = self.key.name(), self.elem.name()
            return None if key is None or value is None else f"map({key}, {value})"
        return None


_SIMPLE_NAMES: Final = {
    "bool": "bool",
    "int": "int",
    "uint": "uint",
    "double": "double",
    "string": "string",
    "bytes": "bytes",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
    "null": "null_type",
    "dyn": "dyn",
}

UNKNOWN: Final = CelType("unknown")
BOOL: Final = CelType("bool", min_size=MIN_BOOL_SIZE)
INT: Final = CelType("int", min_size=MIN_NUMBER_SIZE)
UINT: Final = CelType("uint", min_size=1)
DOUBLE: Final = CelType("double", min_size=MIN_NUMBER_SIZE)
STRING: Final = CelType("string", min_size=MIN_STRING_SIZE)
BYTES: Final = CelType("bytes", min_size=MIN_STRING_SIZE)
DURATION: Final = CelType("duration", min_size=MIN_DURATION_SIZE_JSON)
TIMESTAMP: Final = CelType("timestamp", min_size=JSON_DATE_SIZE)
NULL: Final = CelType("null", min_size=4)
DYN: Final = CelType("dyn")
TYPE: Final = CelType("type")


def decl_type(schema: Any, resource_root: bool, place: str) -> CelType | None:
    """The CEL type of `schema` (None: not visible to rules), `place` naming the node in hints."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string"):
        return CelType("dyn", max_elements=MAX_REQUEST_SIZE_BYTES - 2, min_size=1, unbounded=None, schema_place=place)
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            return None
        item_type = decl_type(items, bool(items.get("x-kubernetes-embedded-resource")), f"{place}[*]")
        if item_type is None:
            return None
        bound = _bound(schema, "maxItems")
        if bound is not None:
            return CelType("list", elem=item_type, max_elements=bound, min_size=2, schema_place=place)
        count = (MAX_REQUEST_SIZE_BYTES - 2) // (item_type.min_size + 1)
        return CelType(
            "list", elem=item_type, max_elements=count, min_size=2, unbounded=("maxItems", place), schema_place=place
        )
    if kind == "object":
        return _object_type(schema, resource_root, place)
    if kind == "string":
        return _string_type(schema, place)
    if kind == "boolean":
        return CelType("bool", min_size=MIN_BOOL_SIZE, schema_place=place)
    if kind == "number":
        return CelType("double", min_size=MIN_NUMBER_SIZE, schema_place=place)
    if kind == "integer":
        return CelType("int", min_size=MIN_NUMBER_SIZE, schema_place=place)
    return None


def _object_type(schema: dict[str, Any], resource_root: bool, place: str) -> CelType | None:
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        value_type = decl_type(additional, bool(additional.get("x-kubernetes-embedded-resource")), f"{place}[*]")
        if value_type is None:
            return None
        bound = _bound(schema, "maxProperties")
        key = CelType("string", min_size=MIN_STRING_SIZE)
        if bound is not None:
            return CelType("map", elem=value_type, key=key, max_elements=bound, min_size=2, schema_place=place)
        count = (MAX_REQUEST_SIZE_BYTES - 2) // (value_type.min_size + 6)
        return CelType(
            "map",
            elem=value_type,
            key=key,
            max_elements=count,
            min_size=2,
            unbounded=("maxProperties", place),
            schema_place=place,
        )
    if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
        return CelType("unknown", schema_place=place)  # its fields are whatever is stored: not checked here
    properties: dict[str, Any] = dict(schema.get("properties") or {})
    if resource_root and not _has_type_and_object_meta(properties):
        properties["kind"] = {"type": "string"}
        properties["apiVersion"] = {"type": "string"}
        properties["metadata"] = {
            "type": "object",
            "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
        }
    required = set(schema.get("required") or ())
    min_size = 2
    for name in properties:
        prop = properties[name]
        if name in required and isinstance(prop, dict) and prop.get("default") is None:
            field_type = decl_type(prop, bool(prop.get("x-kubernetes-embedded-resource")), _child_place(place, name))
            if field_type is not None:
                min_size += len(name) + field_type.min_size + 4

    field_schemas: dict[str, tuple[Any, str]] = {}
    for name, prop in properties.items():
        escaped = escape_property(name)
        if escaped is not None:
            field_schemas[escaped] = (prop, _child_place(place, name))
    return CelType("object", min_size=min_size, schema_place=place, field_schemas=field_schemas)


def _child_place(place: str, name: str) -> str:
    return f"{place}.{name}" if place else name


def _has_type_and_object_meta(properties: dict[str, Any]) -> bool:
    def typed(node: Any, kind: str) -> bool:
        return isinstance(node, dict) and node.get("type") == kind

    metadata = properties.get("metadata")
    meta_properties = metadata.get("properties") if isinstance(metadata, dict) else None
    return (
        typed(properties.get("kind"), "string")
        and typed(properties.get("apiVersion"), "string")
        and typed(metadata, "object")
        and isinstance(meta_properties, dict)
        and typed(meta_properties.get("name"), "string")
        and typed(meta_properties.get("generateName"), "string")
    )


def _string_type(schema: dict[str, Any], place: str) -> CelType:
    string_format = schema.get("format")
    bound = _bound(schema, "maxLength")
    if string_format == "byte":
        if bound is not None:
            return CelType("bytes", max_elements=bound, min_size=MIN_STRING_SIZE, schema_place=place)
        return CelType(
            "bytes",
            max_elements=_max_string_length(string_format),
            min_size=MIN_STRING_SIZE,
            unbounded=("maxLength", place),
            schema_place=place,
        )
    if string_format == "duration":
        return CelType(
            "duration", max_elements=MAX_DURATION_SIZE_JSON, min_size=MIN_DURATION_SIZE_JSON, schema_place=place
        )
    if string_format == "date":
        return CelType("timestamp", max_elements=JSON_DATE_SIZE, min_size=JSON_DATE_SIZE, schema_place=place)
    if string_format == "date-time":
        return CelType(
            "timestamp", max_elements=MAX_DATETIME_SIZE_JSON, min_size=MIN_DATETIME_SIZE_JSON, schema_place=place
        )
    if bound is not None:
        return CelType("string", max_elements=bound * 4, min_size=MIN_STRING_SIZE, schema_place=place)
    return CelType(
        "string",
        max_elements=_max_string_length(string_format),
        min_size=MIN_STRING_SIZE,
        unbounded=("maxLength", place),
        schema_place=place,
    )


def _bound(schema: dict[str, Any], keyword: str) -> int | None:
    """A maxItems/maxProperties/maxLength, negative ones as 0 (zeroIfNegative); None when unset."""
    value = schema.get(keyword)
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value, 0)
    return None


def _max_string_length(string_format: Any) -> int:
    if string_format == "duration":
        return MAX_DURATION_SIZE_JSON
    if string_format == "date":
        return JSON_DATE_SIZE
    if string_format == "date-time":
        return MAX_DATETIME_SIZE_JSON
    return MAX_REQUEST_SIZE_BYTES - 2


_CEL_RESERVED: Final = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
        "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
    }
)  # fmt: skip


def escape_property(name: str) -> str | None:
    """The CEL field name of a schema property, or None when CEL cannot address it (apiserver's ``Escape``)."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] in "_.-/")):
        return None
    for char in name[1:]:
        if not (char.isascii() and (char.isalnum() or char in "_.-/")):
            return None
    return (
        name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")
    )
