"""Structural-schema rules (``pkg/apiserver/schema/{convert,validation,complete}.go``).

A structural schema says everything about *shape* (type, properties, items,
additionalProperties, x-kubernetes-* shape extensions) outside ``allOf``/``anyOf``/``oneOf``/
``not``; junctors may only add value validations about fields the shape already declares.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.schema.errors import FieldError, child, forbidden, index, invalid, key, required
from pyop_scaffold.manifests.acceptance.memo import SchemaMemo

ROOT, ITEMS, FIELD = "root", "items", "field"
_UNSUPPORTED_BY_NEW_STRUCTURAL: Final = (
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
)
_INT_OR_STRING_ANY_OF: Final = [{"type": "integer"}, {"type": "string"}]
_METADATA_ALLOWED_PROPERTY_SETS: Final = ({"name"}, {"generateName"}, {"name", "generateName"})


def new_structural_error(root: dict[str, Any], root_path: str, memo: SchemaMemo | None = None) -> FieldError | None:
    """The single error ``NewStructural`` reports (shown only when nothing else failed)."""

    def visit(node: Any) -> str | None:
        if not isinstance(node, dict):
            return None
        if memo is None:
            return visit_node(node)
        if memo.is_clean("new-structural", node):
            return None
        problem = visit_node(node)
        if problem is None:
            memo.record_clean("new-structural", node)
        return problem

    def visit_node(node: dict[str, Any]) -> str | None:
        for keyword, label in _UNSUPPORTED_BY_NEW_STRUCTURAL:
            if node.get(keyword) not in (None, "", {}):
                return f"OpenAPIV3Schema '{label}' is not supported"
        if isinstance(node.get("items"), list):
            return "OpenAPIV3Schema 'items' must be a schema, but is an array"
        children = list((node.get("properties") or {}).values())
        children += [node.get(k) for k in ("items", "additionalProperties", "not")]
        for junctor in ("allOf", "anyOf", "oneOf"):
            children += list(node.get(junctor) or ())
        for sub in children:
            problem = visit(sub)
            if problem:
                return problem
        return None

    problem = visit(root)
    return invalid(root_path, "", problem) if problem else None


def _generic_type_error(node: dict[str, Any], path: str, level: str) -> FieldError | None:
    declared = node.get("type") or ""
    if node.get("x-kubernetes-embedded-resource") and declared != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        return required(child(path, "type"), detail) if not declared else invalid(child(path, "type"), declared, detail)
    if (
        not declared
        and not node.get("x-kubernetes-int-or-string")
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        where = {ROOT: "at the root", ITEMS: "for specified array items", FIELD: "for specified object fields"}
        return required(child(path, "type"), f"must not be empty {where[level]}")
    return None


def _invariants(node: Any, path: str, level: str, errors: list[FieldError], memo: SchemaMemo | None) -> None:
    if not isinstance(node, dict):
        return
    if memo is None:
        _node_invariants(node, path, level, errors, memo)
        return
    if memo.is_clean("invariants", node, level):
        return
    found = len(errors)
    _node_invariants(node, path, level, errors, memo)
    if len(errors) == found:
        memo.record_clean("invariants", node, level)


def _node_invariants(
    node: dict[str, Any], path: str, level: str, errors: list[FieldError], memo: SchemaMemo | None
) -> None:
    declared = node.get("type") or ""
    if declared == "array" and node.get("items") is None:
        errors.append(required(child(path, "items"), "must be specified"))
    if isinstance(node.get("items"), dict):
        _invariants(node["items"], child(path, "items"), ITEMS, errors, memo)
    for name, prop in (node.get("properties") or {}).items():
        _invariants(prop, key(child(path, "properties"), name), FIELD, errors, memo)
    additional = node.get("additionalProperties")
    if additional is not None:
        if level == ROOT:
            errors.append(forbidden(child(path, "additionalProperties"), "must not be used at the root"))
        if isinstance(additional, dict):
            _invariants(additional, child(path, "additionalProperties"), FIELD, errors, memo)
    _junctor_invariants(node, path, errors)
    _extension_invariants(node, path, errors)

    type_error = _generic_type_error(node, path, level)
    if type_error:
        errors.append(type_error)
    elif node.get("x-kubernetes-embedded-resource") and additional is not None:
        errors.append(
            forbidden(child(path, "additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set")
        )
    if level == ROOT and declared and declared != "object":
        errors.append(invalid(child(path, "type"), declared, "must be object at the root"))
    _resource_meta_invariants(node, path, level, errors)


def _extension_invariants(node: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    int_or_string = bool(node.get("x-kubernetes-int-or-string"))
    if int_or_string and node.get("x-kubernetes-preserve-unknown-fields"):
        errors.append(
            invalid(
                child(path, "x-kubernetes-preserve-unknown-fields"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and node.get("x-kubernetes-embedded-resource"):
        errors.append(
            invalid(
                child(path, "x-kubernetes-embedded-resource"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if (
        node.get("x-kubernetes-embedded-resource")
        and not node.get("x-kubernetes-preserve-unknown-fields")
        and not node.get("properties")
    ):
        errors.append(
            required(
                child(path, "properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )
        )


def _resource_meta_invariants(node: dict[str, Any], path: str, level: str, errors: list[FieldError]) -> None:
    properties = node.get("properties") or {}
    check_meta = level == ROOT or bool(node.get("x-kubernetes-embedded-resource"))
    props_path = child(path, "properties")
    if check_meta:
        for name in ("kind", "apiVersion"):
            if name in properties and (properties[name] or {}).get("type") != "string":
                errors.append(
                    invalid(
                        child(key(props_path, name), "type"),
                        (properties[name] or {}).get("type") or "",
                        "must be string",
                    )
                )
        if "metadata" in properties and (properties["metadata"] or {}).get("type") != "object":
            errors.append(
                invalid(
                    child(key(props_path, "metadata"), "type"),
                    (properties["metadata"] or {}).get("type") or "",
                    "must be object",
                )
            )
    if level == ROOT and "metadata" in properties and not _metadata_is_implicit(properties["metadata"]):
        errors.append(
            forbidden(
                key(props_path, "metadata"),
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            )
        )


def _metadata_is_implicit(metadata: Any) -> bool:
    """Root metadata may only be ``type: object`` with properties {name}, {generateName} or both."""
    if not isinstance(metadata, dict):
        return True
    rest = {k: v for k, v in metadata.items() if k not in ("type", "default") and v not in (None, False, "", [], {})}
    properties = rest.pop("properties", None)
    if rest:
        return False
    return properties is None or set(properties) in _METADATA_ALLOWED_PROPERTY_SETS


def _junctor_invariants(node: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    skip_any_of = node.get("anyOf") == _INT_OR_STRING_ANY_OF
    all_of = node.get("allOf") or []
    skip_first_all_of_any_of = (
        bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF
    )
    _value_validation(node, path, skip_any_of, skip_first_all_of_any_of, errors)


def _value_validation(
    node: dict[str, Any], path: str, skip_any_of: bool, skip_first: bool, errors: list[FieldError]
) -> None:
    if not skip_any_of:
        for position, sub in enumerate(node.get("anyOf") or ()):
            _nested(sub, index(child(path, "anyOf"), position), False, errors)
    for position, sub in enumerate(node.get("allOf") or ()):
        _nested(sub, index(child(path, "allOf"), position), skip_first and position == 0, errors)
    for position, sub in enumerate(node.get("oneOf") or ()):
        _nested(sub, index(child(path, "oneOf"), position), False, errors)
    if isinstance(node.get("not"), dict):
        _nested(node["not"], child(path, "not"), False, errors)


_NESTED_FORBIDDEN: Final = (
    ("type", "must be empty to be structural", lambda v: bool(v)),
    ("additionalProperties", "must be undefined to be structural", lambda v: v is not None),
    ("default", "must be undefined to be structural", lambda v: v is not None),
    ("title", "must be empty to be structural", lambda v: bool(v)),
    ("description", "must be empty to be structural", lambda v: bool(v)),
    ("nullable", "must be false to be structural", lambda v: bool(v)),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural", lambda v: bool(v)),
    ("x-kubernetes-embedded-resource", "must be false to be structural", lambda v: bool(v)),
    ("x-kubernetes-int-or-string", "must be false to be structural", lambda v: bool(v)),
    ("x-kubernetes-list-map-keys", "must be empty to be structural", lambda v: bool(v)),
    ("x-kubernetes-list-type", "must be undefined to be structural", lambda v: v is not None),
    ("x-kubernetes-map-type", "must be undefined to be structural", lambda v: v is not None),
    ("x-kubernetes-validations", "must be empty to be structural", lambda v: bool(v)),
)


def _nested(node: Any, path: str, skip_any_of: bool, errors: list[FieldError]) -> None:
    if not isinstance(node, dict):
        return
    _value_validation(node, path, skip_any_of, False, errors)
    if isinstance(node.get("items"), dict):
        _nested(node["items"], child(path, "items"), False, errors)
    for name, prop in (node.get("properties") or {}).items():
        _nested(prop, key(child(path, "properties"), name), False, errors)
    for keyword, detail, present in _NESTED_FORBIDDEN:
        if present(node.get(keyword)):
            errors.append(forbidden(child(path, keyword), detail))
    if "metadata" in (node.get("properties") or {}):
        errors.append(
            forbidden(key(child(path, "properties"), "metadata"), "must not be specified in a nested context")
        )


def _completeness(node: Any, path: str, errors: list[FieldError], memo: SchemaMemo | None) -> None:
    """Every property/items a junctor mentions must exist in the structural part at that place."""
    if not isinstance(node, dict):
        return
    if memo is not None and memo.is_clean("completeness", node):
        return
    found = len(errors)
    if isinstance(node.get("items"), dict):
        _completeness(node["items"], child(path, "items"), errors, memo)
    for name, prop in (node.get("properties") or {}).items():
        _completeness(prop, key(child(path, "properties"), name), errors, memo)
    if isinstance(node.get("additionalProperties"), dict):
        _completeness(node["additionalProperties"], child(path, "additionalProperties"), errors, memo)
    _junctors_complete(node, node, path, path, errors)
    if memo is not None and len(errors) == found:
        memo.record_clean("completeness", node)


def _junctors_complete(
    value_node: dict[str, Any], shape: Any, shape_path: str, value_path: str, errors: list[FieldError]
) -> None:
    subs: list[tuple[Any, str]] = []
    if isinstance(value_node.get("not"), dict):
        subs.append((value_node["not"], child(value_path, "not")))
    for junctor in ("allOf", "anyOf", "oneOf"):
        subs += [(sub, index(child(value_path, junctor), i)) for i, sub in enumerate(value_node.get(junctor) or ())]
    for sub, sub_path in subs:
        _nested_complete(sub, shape, shape_path, sub_path, errors)


def _nested_complete(value_node: Any, shape: Any, shape_path: str, value_path: str, errors: list[FieldError]) -> None:
    if not isinstance(value_node, dict):
        return
    if not isinstance(shape, dict):
        errors.append(required(shape_path, f"because it is defined in {value_path}"))
        return
    _junctors_complete(value_node, shape, shape_path, value_path, errors)
    if isinstance(value_node.get("items"), dict):
        _nested_complete(
            value_node["items"], shape.get("items"), child(shape_path, "items"), child(value_path, "items"), errors
        )
    shape_properties = shape.get("properties") or {}
    for name, prop in (value_node.get("properties") or {}).items():
        prop_value_path = key(child(value_path, "properties"), name)
        if name in shape_properties:
            _nested_complete(
                prop, shape_properties[name], key(child(shape_path, "properties"), name), prop_value_path, errors
            )
        elif isinstance(shape.get("additionalProperties"), dict):
            _nested_complete(
                prop, shape["additionalProperties"], child(shape_path, "additionalProperties"), prop_value_path, errors
            )
        else:
            errors.append(
                required(key(child(shape_path, "properties"), name), f"because it is defined in {prop_value_path}")
            )


def structural_errors(root: dict[str, Any], root_path: str, memo: SchemaMemo | None = None) -> list[FieldError]:
    """``ValidateStructural``: invariants and completeness, sorted like the API server sorts them."""
    errors: list[FieldError] = []
    _invariants(root, root_path, ROOT, errors, memo)
    _completeness(root, root_path, errors, memo)
    return sorted(errors, key=str)
