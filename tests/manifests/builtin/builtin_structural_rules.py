"""A test-side subset of the API server's CRD schema rules (`reference/crd-rules.md` §1a/§1b), applied offline.

Only the rules that embedded built-in schemas can break are here; each returns `(path, message)` problems rather
than raising, so a test can show every violation at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# JSONSchemaProps keys the v1 CRD decoder accepts (apiextensions v1/types_jsonschema.go).
ALLOWED_KEYS = frozenset(
    [
        "id",
        "$schema",
        "$ref",
        "description",
        "type",
        "format",
        "title",
        "default",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "properties",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
        "externalDocs",
        "example",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    ]
)
# Keys the structural-schema conversion (NewStructural) or the per-node checks reject outright.
FORBIDDEN_KEYS = frozenset(
    {"id", "$schema", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions"}
)
TYPES = frozenset({"array", "boolean", "integer", "number", "object", "string"})
SCALARS = frozenset({"boolean", "integer", "number", "string"})
INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]

Problem = tuple[str, str]


def structural_problems(schema: dict[str, Any], *, root: bool = True, path: str = "<S>") -> list[Problem]:
    """Every rule violation under `schema` (the openAPIV3Schema root when `root` is true)."""
    problems = list(_node_problems(schema, path, level="root" if root else "field"))
    if root and schema.get("type") != "object":
        problems.append((f"{path}.type", "must be object at the root"))
    if root and "additionalProperties" in schema:
        problems.append((f"{path}.additionalProperties", "must not be used at the root"))
    return problems


def _node_problems(node: Any, path: str, *, level: str) -> Iterator[Problem]:
    if not isinstance(node, dict):
        yield (path, f"schema must be an object, got {type(node).__name__}")
        return
    for key in sorted(set(node) - ALLOWED_KEYS):
        yield (f"{path}.{key}", "unknown field (strict decoding)")
    for key in sorted(set(node) & FORBIDDEN_KEYS):
        yield (f"{path}.{key}", "not supported in a structural schema")
    yield from _type_problems(node, path, level=level)
    yield from _junctor_problems(node, path)
    yield from _list_problems(node, path)
    yield from _map_problems(node, path)
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        yield (f"{path}.x-kubernetes-preserve-unknown-fields", "must be true or undefined")
    if node.get("uniqueItems") is True:
        yield (f"{path}.uniqueItems", "cannot be set to true")
    if "pattern" in node:
        try:
            re.compile(node["pattern"])
        except re.error as exc:
            yield (f"{path}.pattern", f"invalid regular expression: {exc}")
    additional = node.get("additionalProperties")
    if "properties" in node and additional not in (None, True):
        yield (f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive")
    if "required" in node and not isinstance(node["required"], list):
        yield (f"{path}.required", "must be a list")
    for name, child in node.get("properties", {}).items():
        yield from _node_problems(child, f"{path}.properties[{name}]", level="field")
    if isinstance(node.get("items"), dict):
        yield from _node_problems(node["items"], f"{path}.items", level="items")
    if isinstance(additional, dict):
        yield from _node_problems(additional, f"{path}.additionalProperties", level="field")


def _type_problems(node: dict[str, Any], path: str, *, level: str) -> Iterator[Problem]:
    node_type = node.get("type")
    if node_type is None:
        exempt = node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
        if not exempt:
            yield (f"{path}.type", f"must not be empty ({level})")
        return
    if node_type not in TYPES:
        yield (f"{path}.type", f"unsupported value {node_type!r}")
    if node_type == "array" and not isinstance(node.get("items"), dict):
        yield (f"{path}.items", "must be specified (one schema) for an array")
    if node_type != "object" and ("properties" in node or isinstance(node.get("additionalProperties"), dict)):
        yield (f"{path}.type", "properties need type object")
    if "default" in node and not _matches_type(node["default"], node_type):
        yield (f"{path}.default", f"default {node['default']!r} is not a {node_type}")


def _junctor_problems(node: dict[str, Any], path: str) -> Iterator[Problem]:
    for junctor in ("allOf", "oneOf", "not"):
        if junctor in node:
            yield (f"{path}.{junctor}", "built-in schemas are expected to use no junctors besides int-or-string")
    if "anyOf" in node:
        if node["anyOf"] != INT_OR_STRING_ANY_OF or not node.get("x-kubernetes-int-or-string"):
            yield (f"{path}.anyOf", "only the int-or-string anyOf is structural without a type")
        if "type" in node:
            yield (f"{path}.type", "an int-or-string node has no type")


def _list_problems(node: dict[str, Any], path: str) -> Iterator[Problem]:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    if list_type is None:
        if keys:
            yield (f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty")
        return
    if list_type not in ("atomic", "set", "map"):
        yield (f"{path}.x-kubernetes-list-type", f"unsupported value {list_type!r}")
    if node.get("type") != "array":
        yield (f"{path}.type", "must be array if x-kubernetes-list-type is specified")
    items = node.get("items") if isinstance(node.get("items"), dict) else {}
    if list_type == "set":
        item_type = items.get("type")
        if item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
            yield (f"{path}.items.x-kubernetes-map-type", "must be atomic as item of a list-type set")
        if item_type == "array" and items.get("x-kubernetes-list-type") != "atomic":
            yield (f"{path}.items.x-kubernetes-list-type", "must be atomic as item of a list-type set")
    if list_type != "map":
        if keys:
            yield (f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty")
        return
    if not keys:
        yield (f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map")
        return
    if items.get("type") != "object":
        yield (f"{path}.items.type", "must be object if parent array's x-kubernetes-list-type is map")
    if len(set(keys)) != len(keys):
        yield (f"{path}.x-kubernetes-list-map-keys", "must not contain duplicate entries")
    properties = items.get("properties", {})
    for key in keys:
        key_schema = properties.get(key)
        if key_schema is None:
            yield (f"{path}.x-kubernetes-list-map-keys", f"{key!r} is not a property of the items")
            continue
        if key_schema.get("type") not in SCALARS:
            yield (f"{path}.items.properties[{key}].type", "must be a scalar type (list-map key)")
        if key not in items.get("required", []) and "default" not in key_schema:
            yield (
                f"{path}.items.properties[{key}].default",
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be required",
            )
        if key_schema.get("nullable"):
            yield (f"{path}.items.properties[{key}].nullable", "a list-map key cannot be nullable")


def _map_problems(node: dict[str, Any], path: str) -> Iterator[Problem]:
    map_type = node.get("x-kubernetes-map-type")
    if map_type is None:
        return
    if map_type not in ("atomic", "granular"):
        yield (f"{path}.x-kubernetes-map-type", f"unsupported value {map_type!r}")
    if node.get("type") != "object":
        yield (f"{path}.type", "must be object if x-kubernetes-map-type is specified")


def _matches_type(value: Any, node_type: str) -> bool:
    checks: dict[str, Any] = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    return bool(checks.get(node_type, lambda v: True)(value))
