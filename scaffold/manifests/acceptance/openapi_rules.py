"""Per-node OpenAPI checks of a CRD schema (``ValidateCustomResourceDefinitionOpenAPISchema``).

These run on every node reachable through properties, additionalProperties, items and the
junctors, whatever else is wrong, and decide most "Forbidden"/"Unsupported value" errors.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from pyop.schema.errors import FieldError, child, forbidden, index, invalid, key, not_supported, required
from pyop_scaffold.manifests.acceptance.memo import SchemaMemo
from pyop_scaffold.manifests.acceptance.regex import go_regexp_error

OPENAPI_TYPES: Final = ["array", "boolean", "integer", "number", "object", "string"]
_META_FIELDS: Final = frozenset({"metadata", "kind", "apiVersion"})
_JUNCTOR_LISTS: Final = ("allOf", "oneOf", "anyOf")
_FAMILY: Final = "openapi"


@dataclass(frozen=True)
class _Context:
    inside_resource_meta: bool = False
    defaults_forbidden_reason: str = ""


def _type_requirement(node: dict[str, Any], path: str, wanted: str, because: str) -> FieldError | None:
    declared = node.get("type") or ""
    if declared == wanted:
        return None
    detail = f"must be {wanted} if {because} is specified"
    return required(child(path, "type"), detail) if not declared else invalid(child(path, "type"), declared, detail)


def _standard(node: dict[str, Any], path: str, context: _Context) -> list[FieldError]:
    """specStandardValidatorV3: keywords CRDs never support, and regexp syntax."""
    errors: list[FieldError] = []
    declared = node.get("type")
    if declared and declared not in OPENAPI_TYPES:
        errors.append(not_supported(child(path, "type"), declared, OPENAPI_TYPES))
    if node.get("default") is not None and context.defaults_forbidden_reason:
        errors.append(forbidden(child(path, "default"), "must not be set " + context.defaults_forbidden_reason))
    for keyword, label in (
        ("id", "id"),
        ("additionalItems", "additionalItems"),
        ("patternProperties", "patternProperties"),
        ("definitions", "definitions"),
        ("dependencies", "dependencies"),
        ("$ref", "$ref"),
    ):
        if node.get(keyword) not in (None, "", {}):
            errors.append(forbidden(child(path, keyword), f"{label} is not supported"))
    if declared == "null":
        errors.append(forbidden(child(path, "type"), "type cannot be set to null, use nullable as an alternative"))
    if isinstance(node.get("items"), list) and node["items"]:
        errors.append(forbidden(child(path, "items"), "items must be a schema object and not an array"))
    if context.inside_resource_meta and node.get("x-kubernetes-embedded-resource"):
        errors.append(
            forbidden(child(path, "x-kubernetes-embedded-resource"), "must not be used inside of resource meta")
        )
    pattern = node.get("pattern")
    if isinstance(pattern, str) and pattern:
        problem = go_regexp_error(pattern)
        if problem is not None:
            detail = f"must be a valid regular expression, but isn't: {problem}"
            errors.append(invalid(child(path, "pattern"), pattern, detail))
    return errors


def _list_and_map_types(node: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is False:
        errors.append(invalid(child(path, "x-kubernetes-preserve-unknown-fields"), False, "must be true or undefined"))
    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None:
        problem = _type_requirement(node, path, "object", "x-kubernetes-map-type")
        if problem:
            errors.append(problem)
        if map_type not in ("atomic", "granular"):
            errors.append(not_supported(child(path, "x-kubernetes-map-type"), map_type, ["atomic", "granular"]))
    list_type = node.get("x-kubernetes-list-type")
    items = node.get("items")
    item_schema = items if isinstance(items, dict) else None
    if list_type is not None:
        problem = _type_requirement(node, path, "array", "x-kubernetes-list-type")
        if problem:
            errors.append(problem)
        if list_type not in ("atomic", "set", "map"):
            errors.append(not_supported(child(path, "x-kubernetes-list-type"), list_type, ["atomic", "set", "map"]))
    if list_type == "set" and item_schema is not None:
        set_detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
        if item_schema.get("type") == "array" and item_schema.get("x-kubernetes-list-type", "atomic") != "atomic":
            item_list_type = item_schema.get("x-kubernetes-list-type")
            errors.append(invalid(child(path, "items.x-kubernetes-list-type"), item_list_type, set_detail))
        if item_schema.get("type") == "object" and item_schema.get("x-kubernetes-map-type") != "atomic":
            errors.append(
                invalid(
                    child(path, "items.x-kubernetes-map-type"), item_schema.get("x-kubernetes-map-type"), set_detail
                )
            )
    map_keys = node.get("x-kubernetes-list-map-keys") or []
    if map_keys:
        if list_type is None:
            errors.append(
                required(
                    child(path, "x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty"
                )
            )
        elif list_type != "map":
            errors.append(
                invalid(
                    child(path, "x-kubernetes-list-type"),
                    list_type,
                    "must be map if x-kubernetes-list-map-keys is non-empty",
                )
            )
    if list_type == "map":
        errors.extend(_list_map(node, path, map_keys, items))
    if list_type in ("set", "map") and item_schema is not None:
        errors.extend(_set_and_map_items(node, path, list_type, map_keys, item_schema))
    return errors


def _list_map(node: dict[str, Any], path: str, map_keys: list[str], items: Any) -> list[FieldError]:
    errors: list[FieldError] = []
    if not map_keys:
        errors.append(
            required(child(path, "x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map")
        )
    if items is None:
        errors.append(required(child(path, "items"), "must have a schema if x-kubernetes-list-type is map"))
        return errors
    if not isinstance(items, dict):
        errors.append(
            invalid(child(path, "items"), items, "must only have a single schema if x-kubernetes-list-type is map")
        )
        return errors
    if items.get("type") != "object":
        errors.append(
            invalid(
                child(path, "items.type"),
                items.get("type") or "",
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
    properties = items.get("properties") or {}
    seen: set[str] = set()
    for map_key in map_keys:
        if map_key in properties:
            if (properties[map_key] or {}).get("type") in ("array", "object"):
                errors.append(
                    invalid(
                        child(path, f"items.properties[{map_key}].type"),
                        items.get("type") or "",
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    )
                )
        else:
            errors.append(
                invalid(
                    child(path, "x-kubernetes-list-map-keys"), map_keys, "entries must all be names of item properties"
                )
            )
        if map_key in seen:
            errors.append(
                invalid(child(path, "x-kubernetes-list-map-keys"), map_keys, "must not contain duplicate entries")
            )
        seen.add(map_key)
    return errors


def _set_and_map_items(
    node: dict[str, Any], path: str, list_type: str, map_keys: list[str], items: dict[str, Any]
) -> list[FieldError]:
    errors: list[FieldError] = []
    if items.get("nullable"):
        errors.append(
            forbidden(child(path, "items.nullable"), f"cannot be nullable when x-kubernetes-list-type is {list_type}")
        )
    if list_type != "map":
        return errors
    required_keys = set(items.get("required") or [])
    properties = items.get("properties") or {}
    for map_key in map_keys:
        prop = properties.get(map_key)
        if not isinstance(prop, dict):
            continue
        if map_key not in required_keys and prop.get("default") is None:
            errors.append(
                required(
                    child(path, f"items.properties[{map_key}].default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required "
                    "property",
                )
            )
        if prop.get("nullable"):
            errors.append(
                forbidden(
                    child(path, f"items.properties[{map_key}].nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            )
    return errors


def _node(
    node: Any, path: str, context: _Context, is_root: bool, errors: list[FieldError], memo: SchemaMemo | None
) -> None:
    if not isinstance(node, dict):
        return
    if memo is None:
        _node_checks(node, path, context, is_root, errors, memo)
        return
    verdict_context = (context, is_root)
    if memo.is_clean(_FAMILY, node, verdict_context):
        return
    found = len(errors)
    _node_checks(node, path, context, is_root, errors, memo)
    if len(errors) == found:
        memo.record_clean(_FAMILY, node, verdict_context)


def _node_checks(
    node: dict[str, Any], path: str, context: _Context, is_root: bool, errors: list[FieldError], memo: SchemaMemo | None
) -> None:
    errors.extend(_standard(node, path, context))
    if node.get("uniqueItems") is True:
        errors.append(
            forbidden(
                child(path, "uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    properties = node.get("properties") or {}
    additional = node.get("additionalProperties")
    if additional is not None:
        if properties and (additional is False or isinstance(additional, dict)):
            errors.append(
                forbidden(
                    child(path, "additionalProperties"), "additionalProperties and properties are mutual exclusive"
                )
            )
        sub_context = context
        if context.inside_resource_meta:
            sub_context = replace(
                context, defaults_forbidden_reason="inside additionalProperties applying to object metadata"
            )
        _node(additional, child(path, "additionalProperties"), sub_context, False, errors, memo)
    for name, prop in properties.items():
        sub_context = context
        if (is_root or node.get("x-kubernetes-embedded-resource")) and name in _META_FIELDS:
            sub_context = replace(sub_context, inside_resource_meta=True)
            if is_root:
                sub_context = replace(sub_context, defaults_forbidden_reason=f"in top-level {name}")
        _node(prop, key(child(path, "properties"), name), sub_context, False, errors, memo)
    for junctor in _JUNCTOR_LISTS:
        for position, sub in enumerate(node.get(junctor) or ()):
            _node(sub, index(child(path, junctor), position), context, False, errors, memo)
    if isinstance(node.get("not"), dict):
        _node(node["not"], child(path, "not"), context, False, errors, memo)
    items = node.get("items")
    if isinstance(items, dict):
        _node(items, child(path, "items"), context, False, errors, memo)
    elif isinstance(items, list):
        for position, sub in enumerate(items):
            _node(sub, index(child(path, "items"), position), context, False, errors, memo)
    errors.extend(_list_and_map_types(node, path))


def openapi_errors(
    root: dict[str, Any], root_path: str, status_enabled: bool, memo: SchemaMemo | None = None
) -> list[FieldError]:
    """Errors of ``validateCustomResourceDefinitionValidation`` before the structural checks."""
    errors: list[FieldError] = []
    if status_enabled:
        errors.extend(_status_root_errors(root, root_path))
    if root.get("nullable"):
        errors.append(forbidden(child(root_path, "nullable"), "nullable cannot be true at the root"))
    _node(root, root_path, _Context(), True, errors, memo)
    return errors


_ALLOWED_AT_ROOT_WITH_STATUS: Final = [
    "description",
    "type",
    "format",
    "title",
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
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
]
_ALLOWED_GO_NAMES: Final = (
    "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern "
    "MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields "
    "XValidations]"
)


# JSONSchemaProps fields that are plain bools in Go: false is their zero value. Every other
# optional field is a pointer, a string or a collection, so being present (even as false/0)
# makes it non-zero.
_PLAIN_BOOLS: Final = frozenset(
    {
        "nullable",
        "uniqueItems",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    }
)


def _is_zero(name: str, value: Any) -> bool:
    if value is None:
        return True
    if name in _PLAIN_BOOLS:
        return value is False
    return value == "" or value == [] or (value == {} and name != "additionalProperties")


def _status_root_errors(root: dict[str, Any], root_path: str) -> list[FieldError]:
    for name, value in root.items():
        if _is_zero(name, value):
            continue
        if name == "type":
            if value != "object":
                detail = (
                    'only "object" is allowed as the type at the root of the schema if the status subresource is '
                    "enabled"
                )
                return [invalid(child(root_path, "type"), value, detail)]
            continue
        if name not in _ALLOWED_AT_ROOT_WITH_STATUS:
            detail = (
                f"only {_ALLOWED_GO_NAMES} fields are allowed at the root of the schema if the status subresource "
                "is enabled"
            )
            return [invalid(root_path, root, detail)]
    return []
