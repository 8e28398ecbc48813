"""Validate a decoded custom resource against a structural schema, as kube-apiserver does.

The pipeline mirrors ``customresource/strategy.go``: OpenAPI value validation (kube-openapi),
embedded-resource checks (``schema/objectmeta``), list-type uniqueness (``schema/listtype``),
then CEL rules (``x-kubernetes-validations``) unless an earlier error is a type error, which
would make rule evaluation meaningless. Everything happens in one walk over the value; each
stage's errors are kept apart and joined in the API server's order.

Paths: value errors use kube-openapi's names (``spec.items[0].name``, map entries as
``spec.labels.app``); list-type, embedded-resource and CEL errors use ``field.Path``
(map entries as ``spec.labels[app]``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from pyop.schema import cel as _cel
from pyop.schema import formats as _formats
from pyop.schema.errors import (
    OMITTED,
    FieldError,
    child,
    duplicate,
    go_bound,
    index,
    invalid,
    key,
    not_supported,
    required,
    too_long,
    too_many,
)
from pyop.schema.patterns import matches
from pyop.schema.values import ABSENT, equal, json_type, type_matches

_BLOCKED_CEL_DETAIL: Final = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)


# Exact types of decoded JSON to their OpenAPI names; anything else (subclasses, floats) goes to json_type.
_JSON_TYPES: Final = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "array"}


def _in_body(name: str, text: str) -> str:
    return f"{name} in body {text}" if name else f"in body {text}"


def _enum_values(allowed: list[Any]) -> list[str]:
    return [v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for v in allowed]


class Walk:
    """One validation pass; keeps each stage's errors apart to join them in server order.

    ``compiled_validation`` drives the same object from its compiled nodes and calls its keyword methods
    (``type_error``, ``null``, ``enum``, ``embedded_resource``), so both give the same texts.
    """

    __slots__ = ("value_errors", "meta_errors", "list_errors", "rule_nodes", "blocking", "with_rules")

    def __init__(self, with_rules: bool) -> None:
        self.value_errors: list[FieldError] = []
        self.meta_errors: list[FieldError] = []
        self.list_errors: list[FieldError] = []
        self.rule_nodes: list[tuple[Any, dict[str, Any], str, Any, bool]] = []
        self.blocking = False
        self.with_rules = with_rules

    # -- value validation (kube-openapi) -------------------------------------------------
    def node(self, value: Any, schema: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
        if not isinstance(schema, dict):
            return
        if value is None:
            self.null(schema, name)
            return
        actual = _JSON_TYPES.get(type(value)) or json_type(value)
        declared = schema.get("type")
        if declared:
            if declared != actual and not type_matches(declared, actual):
                self.type_error(name, declared, actual)
        elif schema.get("x-kubernetes-int-or-string") and "anyOf" not in schema and actual not in ("integer", "string"):
            # Usually anyOf [{type: integer}, {type: string}] reports this; without it, still refuse.
            self.type_error(name, "integer,string", actual)

        if "allOf" in schema or "anyOf" in schema or "oneOf" in schema or "not" in schema:
            self._junctors(value, schema, name)
        # ``actual`` is json_type's isinstance-based name, so these are the isinstance tests.
        if actual == "string":
            self._string(value, schema, name)
        elif actual == "integer" or actual == "number":
            self._number(value, schema, name, declared)
        elif actual == "array":
            self._array(value, schema, name, path, old)
        if "enum" in schema:
            self.enum(value, schema["enum"], name)
        if actual == "object":
            self._object(value, schema, name, path, old)
            if schema.get("x-kubernetes-embedded-resource"):
                self.embedded_resource(value, path)

        if self.with_rules and "x-kubernetes-validations" in schema:
            self.rule_nodes.append((value, schema, path, old, resource_root))

    def type_error(self, name: str, declared: str, actual: str) -> None:
        self.blocking = True
        self.value_errors.append(
            invalid(name, actual, _in_body(name, f"must be of type {declared}: {json.dumps(actual)}"))
        )

    def null(self, schema: dict[str, Any], name: str) -> None:
        # go-openapi's early exit for nil: only the type and enum validators run.
        if not schema.get("nullable"):
            declared = schema.get("type") or ("integer,string" if schema.get("x-kubernetes-int-or-string") else "")
            if declared:
                self.type_error(name, declared, "null")
        if "enum" in schema:
            self.enum(None, schema["enum"], name)

    def _junctors(self, value: Any, schema: dict[str, Any], name: str) -> None:
        errors = self.value_errors
        all_of = schema.get("allOf")
        if all_of:
            passed = 0
            for sub in all_of:
                sub_errors = _value_errors(value, sub, name)
                errors.extend(sub_errors)
                passed += not sub_errors
            if passed != len(all_of):
                suffix = ". None validated" if passed == 0 else ""
                errors.append(invalid(name, "", _in_body(name, f"must validate all the schemas (allOf){suffix}")))
        any_of = schema.get("anyOf")
        if any_of:
            first_failure: list[FieldError] | None = None
            for sub in any_of:
                sub_errors = _value_errors(value, sub, name)
                if not sub_errors:
                    first_failure = None
                    break
                if first_failure is None:
                    first_failure = sub_errors
            if first_failure is not None:
                errors.append(invalid(name, "", _in_body(name, "must validate at least one schema (anyOf)")))
                errors.extend(first_failure)
        one_of = schema.get("oneOf")
        if one_of:
            results = [_value_errors(value, sub, name) for sub in one_of]
            passed = sum(1 for r in results if not r)
            if passed != 1:
                errors.append(invalid(name, "", _in_body(name, "must validate one and only one schema (oneOf)")))
                if passed == 0:
                    errors.extend(results[0])
        not_schema = schema.get("not")
        if isinstance(not_schema, dict) and not _value_errors(value, not_schema, name):
            errors.append(invalid(name, "", _in_body(name, "must not validate the schema (not)")))

    def _string(self, value: str, schema: dict[str, Any], name: str) -> None:
        errors = self.value_errors
        max_length = schema.get("maxLength")
        if max_length is not None and len(value) > max_length:
            errors.append(too_long(name, int(max_length)))
        min_length = schema.get("minLength")
        if min_length is not None and len(value) < min_length:
            errors.append(invalid(name, value, _in_body(name, f"should be at least {min_length} chars long")))
        pattern = schema.get("pattern")
        if pattern is not None and not matches(pattern, value):
            errors.append(invalid(name, value, _in_body(name, f"should match '{pattern}'")))
        format_name = schema.get("format")
        if format_name:
            checker = _formats.string_checker(format_name)
            if checker is not None and not checker(value):
                self.blocking = True
                errors.append(
                    invalid(name, value, _in_body(name, f"must be of type {format_name}: {json.dumps(value)}"))
                )

    def _number(self, value: int | float, schema: dict[str, Any], name: str, declared: str | None) -> None:
        errors = self.value_errors
        factor = schema.get("multipleOf")
        if factor and not _is_multiple(value, factor):
            errors.append(invalid(name, value, _in_body(name, f"should be a multiple of {go_bound(factor)}")))
        maximum = schema.get("maximum")
        if maximum is not None:
            if schema.get("exclusiveMaximum"):
                if value >= maximum:
                    errors.append(invalid(name, value, _in_body(name, f"should be less than {go_bound(maximum)}")))
            elif value > maximum:
                detail = f"should be less than or equal to {go_bound(maximum)}"
                errors.append(invalid(name, value, _in_body(name, detail)))
        minimum = schema.get("minimum")
        if minimum is not None:
            if schema.get("exclusiveMinimum"):
                if value <= minimum:
                    detail = f"should be greater than {go_bound(minimum)}"
                    errors.append(invalid(name, value, _in_body(name, detail)))
            elif value < minimum:
                detail = f"should be greater than or equal to {go_bound(minimum)}"
                errors.append(invalid(name, value, _in_body(name, detail)))
        format_name = schema.get("format")
        if format_name and declared == "integer":
            bounds = _formats.INTEGER_RANGES.get(_formats.normalize(format_name))
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                errors.append(invalid(name, value, _in_body(name, f"must be of type {format_name}")))

    def _array(self, value: list[Any], schema: dict[str, Any], name: str, path: str, old: Any) -> None:
        errors = self.value_errors
        min_items = schema.get("minItems")
        if min_items is not None and len(value) < min_items:
            errors.append(invalid(name, len(value), _in_body(name, f"should have at least {min_items} items")))
        max_items = schema.get("maxItems")
        if max_items is not None and len(value) > max_items:
            errors.append(too_many(name, len(value), int(max_items)))
        if schema.get("uniqueItems") and _first_duplicate(value) is not None:
            errors.append(invalid(name, "", _in_body(name, "shouldn't contain duplicates")))

        list_type = schema.get("x-kubernetes-list-type")
        map_keys: list[str] = schema.get("x-kubernetes-list-map-keys") or []
        if list_type == "set":
            self.list_errors.extend(set_duplicates(value, path))
        elif list_type == "map":
            self.list_errors.extend(map_duplicates(value, map_keys, path))

        items = schema.get("items")
        if not isinstance(items, dict):
            return
        old_items = _correlate_list(old, list_type, map_keys)
        for position, item in enumerate(value):
            old_item = ABSENT
            if old_items is not None and isinstance(item, dict):
                old_item = old_items.get(_map_key(item, map_keys), ABSENT)
            self.node(item, items, index(name, position), index(path, position), old_item, False)

    def enum(self, value: Any, allowed: list[Any], name: str) -> None:
        if not any(equal(value, candidate) for candidate in allowed):
            self.value_errors.append(not_supported(name, value, _enum_values(allowed)))

    def _object(self, value: dict[str, Any], schema: dict[str, Any], name: str, path: str, old: Any) -> None:
        errors = self.value_errors
        max_properties = schema.get("maxProperties")
        if max_properties is not None and len(value) > max_properties:
            errors.append(too_many(name, len(value), int(max_properties)))
        min_properties = schema.get("minProperties")
        if min_properties is not None and len(value) < min_properties:
            detail = f"should have at least {min_properties} properties"
            errors.append(invalid(name, len(value), _in_body(name, detail)))
        for field_name in schema.get("required") or ():
            if field_name not in value:
                errors.append(required(child(name, field_name)))

        properties: dict[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        old_map = old if isinstance(old, dict) else None
        for field_name, field_value in value.items():
            old_value = old_map.get(field_name, ABSENT) if old_map is not None else ABSENT
            field_schema = properties.get(field_name)
            if field_schema is not None:
                child_name = f"{name}.{field_name}" if name else field_name  # child(), inlined: hot
                child_path = child_name if path == name else child(path, field_name)
                self.node(field_value, field_schema, child_name, child_path, old_value, False)
            elif isinstance(additional, dict):
                self.node(field_value, additional, child(name, field_name), key(path, field_name), old_value, False)
            elif additional is False:
                detail = f"{name}.{field_name} in body is a forbidden property"
                errors.append(invalid(name, "", detail))

    # -- embedded resources (schema/objectmeta) -----------------------------------------
    def embedded_resource(self, value: dict[str, Any], path: str) -> None:
        errors = self.meta_errors
        for field_name in ("apiVersion", "kind"):
            if field_name not in value:
                errors.append(required(child(path, field_name), "must not be empty"))
        api_version = value.get("apiVersion")
        if "apiVersion" in value:
            if not isinstance(api_version, str):
                errors.append(invalid(child(path, "apiVersion"), api_version, "must be a string"))
            elif not api_version:
                errors.append(invalid(child(path, "apiVersion"), api_version, "must not be empty"))
            elif api_version.count("/") > 1:
                detail = f"unexpected GroupVersion string: {api_version}"
                errors.append(invalid(child(path, "apiVersion"), api_version, detail))
        kind = value.get("kind")
        if "kind" in value:
            if not isinstance(kind, str):
                errors.append(invalid(child(path, "kind"), kind, "must be a string"))
            elif not kind:
                errors.append(invalid(child(path, "kind"), kind, "must not be empty"))
        metadata = value.get("metadata")
        if "metadata" in value and not isinstance(metadata, dict):
            errors.append(invalid(child(path, "metadata"), metadata, "must be an object"))


def _is_multiple(value: int | float, factor: int | float) -> bool:
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    quotient = (1 / factor) * value if factor < 1 else value / factor
    return abs(quotient - round(quotient)) < 1e-9


def _scalar_identity(value: Any) -> Any:
    # Go map keys: int64(1), float64(1) and true are three different keys.
    if isinstance(value, dict | list):
        return ("json", json.dumps(value, sort_keys=True, separators=(",", ":")))
    return (type(value).__name__, value)


def _first_duplicate(values: list[Any]) -> int | None:
    seen: set[Any] = set()
    for position, item in enumerate(values):
        identity = _scalar_identity(item)
        if identity in seen:
            return position
        seen.add(identity)
    return None


def set_duplicates(values: list[Any], path: str) -> list[FieldError]:
    """``x-kubernetes-list-type: set``: each repeated value once, at its second occurrence."""
    counts: dict[Any, int] = {}
    errors: list[FieldError] = []
    for position, item in enumerate(values):
        identity = _scalar_identity(item)
        seen = counts.get(identity, 0)
        counts[identity] = seen + 1
        if seen == 1:
            errors.append(duplicate(index(path, position), item))
    return errors


_MISSING_KEY: Final = ("missing",)


def _map_key(item: dict[str, Any], keys: list[str]) -> tuple[Any, ...]:
    return tuple(_scalar_identity(item[k]) if k in item else _MISSING_KEY for k in keys)


def map_duplicates(values: list[Any], keys: list[str], path: str) -> list[FieldError]:
    """``x-kubernetes-list-type: map``: elements must be objects with unique key tuples."""
    for position, item in enumerate(values):
        if not isinstance(item, dict):
            return [invalid(index(path, position), item, "must be an object for an array of list-type map")]
    counts: dict[tuple[Any, ...], int] = {}
    errors: list[FieldError] = []
    for position, item in enumerate(values):
        identity = _map_key(item, keys)
        seen = counts.get(identity, 0)
        counts[identity] = seen + 1
        if seen == 1:
            errors.append(duplicate(index(path, position), item))
    return errors


def _correlate_list(old: Any, list_type: str | None, keys: list[str]) -> dict[tuple[Any, ...], Any] | None:
    """Old items by key: only list-type map items correlate with their previous value."""
    if list_type != "map" or not keys or not isinstance(old, list):
        return None
    return {_map_key(item, keys): item for item in old if isinstance(item, dict)}


def _value_errors(value: Any, schema: Any, name: str) -> list[FieldError]:
    """Value-only validation of a junctor branch (no list-type, metadata or CEL there)."""
    walk = Walk(with_rules=False)
    walk.node(value, schema, name, name, ABSENT, False)
    return walk.value_errors


def validate(
    obj: Any,
    schema: dict[str, Any],
    path: str = "",
    *,
    old: Any = ABSENT,
    rules: bool = True,
    resource_root: bool | None = None,
) -> list[FieldError]:
    """All errors kube-apiserver would report for ``obj`` under ``schema`` (``[]`` = valid).

    ``old`` is the stored object on update; it enables transition rules (``oldSelf``).
    ``rules=False`` skips CEL. ``resource_root`` (default: ``path == ""``) limits what CEL
    sees of ``metadata`` to name and generateName, as for the root of a custom resource.
    """
    walk = Walk(with_rules=rules)
    root = (path == "") if resource_root is None else resource_root
    walk.node(obj, schema, path, path, old, root)
    return walk_errors(walk)


def walk_errors(walk: Walk) -> list[FieldError]:
    """A finished walk's errors in the API server's order, CEL rules evaluated last (unless a type error
    blocks them)."""
    errors = walk.value_errors + walk.meta_errors + walk.list_errors
    if walk.rule_nodes:
        if walk.blocking:
            errors.append(FieldError("Invalid value", "", _BLOCKED_CEL_DETAIL, None))
        else:
            for value, node_schema, node_path, old_value, is_root in walk.rule_nodes:
                errors.extend(_cel.evaluate_rules(value, node_schema, node_path, old_value, is_root))
    return errors


__all__ = ["ABSENT", "OMITTED", "validate", "set_duplicates", "map_duplicates"]
