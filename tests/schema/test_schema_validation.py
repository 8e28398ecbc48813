"""pyop.schema.validate: one test per keyword, asserting the API server's exact message text."""

from __future__ import annotations

from typing import Any

import pytest

from pyop.schema import FieldError, validate


def messages(obj: Any, schema: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(obj, schema)]


def spec_with(field_schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": field_schema}}}}


def check(field_schema: dict[str, Any], value: Any) -> list[str]:
    return messages({"spec": {"x": value}}, spec_with(field_schema))


@pytest.mark.parametrize(
    ("field_schema", "value", "expected"),
    [
        ({"type": "integer"}, "3", 'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'),
        ({"type": "integer"}, 1.5, 'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"'),
        ({"type": "string"}, None, 'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'),
        ({"type": "boolean"}, 1, 'spec.x: Invalid value: "integer": spec.x in body must be of type boolean: "integer"'),
        ({"type": "object"}, [], 'spec.x: Invalid value: "array": spec.x in body must be of type object: "array"'),
        (
            {"type": "integer", "minimum": 0},
            -1,
            "spec.x: Invalid value: -1: spec.x in body should be greater than or equal to 0",
        ),
        (
            {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
            0,
            "spec.x: Invalid value: 0: spec.x in body should be greater than 0",
        ),
        (
            {"type": "integer", "maximum": 2147483647},
            2147483648,
            "spec.x: Invalid value: 2147483648: spec.x in body should be less than or equal to 2.147483647e+09",
        ),
        (
            {"type": "number", "maximum": 1.5, "exclusiveMaximum": True},
            1.5,
            "spec.x: Invalid value: 1.5: spec.x in body should be less than 1.5",
        ),
        (
            {"type": "integer", "multipleOf": 5},
            12,
            "spec.x: Invalid value: 12: spec.x in body should be a multiple of 5",
        ),
        ({"type": "string", "maxLength": 3}, "héllo", "spec.x: Too long: may not be more than 3 bytes"),
        (
            {"type": "string", "minLength": 2},
            "a",
            'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long',
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "A1",
            "spec.x: Invalid value: \"A1\": spec.x in body should match '^[a-z]+$'",
        ),
        ({"type": "string", "enum": ["a", "b"]}, "c", 'spec.x: Unsupported value: "c": supported values: "a", "b"'),
        ({"type": "integer", "enum": [1, 2]}, 3, 'spec.x: Unsupported value: 3: supported values: "1", "2"'),
        (
            {"type": "array", "items": {"type": "string"}, "minItems": 1},
            [],
            "spec.x: Invalid value: 0: spec.x in body should have at least 1 items",
        ),
        (
            {"type": "array", "items": {"type": "string"}, "maxItems": 1},
            ["a", "b"],
            "spec.x: Too many: 2: must have at most 1 items",
        ),
        (
            {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
            [1, 1],
            'spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates',
        ),
        ({"type": "object", "maxProperties": 1}, {"a": 1, "b": 2}, "spec.x: Too many: 2: must have at most 1 items"),
        (
            {"type": "object", "minProperties": 1},
            {},
            "spec.x: Invalid value: 0: spec.x in body should have at least 1 properties",
        ),
        ({"type": "object", "required": ["name"]}, {}, "spec.x.name: Required value"),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"k": "v"},
            'spec.x.k: Invalid value: "string": spec.x.k in body must be of type integer: "string"',
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
            {"b": 1},
            'spec.x: Invalid value: "": spec.x.b in body is a forbidden property',
        ),
        (
            {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}}},
            [{"name": ""}],
            'spec.x[0].name: Invalid value: "": spec.x[0].name in body should be at least 1 chars long',
        ),
    ],
)
def test_keyword_message(field_schema: dict[str, Any], value: Any, expected: str) -> None:
    assert check(field_schema, value) == [expected]


@pytest.mark.parametrize(
    ("field_schema", "value"),
    [
        ({"type": "integer"}, 3.0),  # Go decodes 3.0 to a float64 that go-openapi accepts as integer
        ({"type": "number"}, 3),
        ({"type": "string", "nullable": True}, None),
        ({"type": "string", "maxLength": 5}, "héllo"),  # characters, not bytes
        ({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}, 8080),
        ({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}, "http"),
        ({"x-kubernetes-preserve-unknown-fields": True}, {"anything": [1, {"goes": True}]}),
        ({"type": "string", "format": "unknown-format"}, "whatever"),
        ({"type": "boolean", "enum": [True]}, True),
    ],
)
def test_valid_values(field_schema: dict[str, Any], value: Any) -> None:
    assert check(field_schema, value) == []


def test_int_or_string_rejects_other_types_through_any_of() -> None:
    schema = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert check(schema, True) == [
        'spec.x: Invalid value: "": spec.x in body must validate at least one schema (anyOf)',
        'spec.x: Invalid value: "boolean": spec.x in body must be of type integer: "boolean"',
    ]


def test_junctors() -> None:
    one_of = {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert check(one_of, {"a": 1}) == []
    assert check(one_of, {"a": 1, "b": 2}) == [
        'spec.x: Invalid value: "": spec.x in body must validate one and only one schema (oneOf)'
    ]
    assert check({"type": "string", "not": {"enum": ["admin"]}}, "admin") == [
        'spec.x: Invalid value: "": spec.x in body must not validate the schema (not)'
    ]
    all_of = {"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^a"}]}
    assert check(all_of, "b") == [
        'spec.x: Invalid value: "b": spec.x in body should be at least 2 chars long',
        "spec.x: Invalid value: \"b\": spec.x in body should match '^a'",
        'spec.x: Invalid value: "": spec.x in body must validate all the schemas (allOf). None validated',
    ]


@pytest.mark.parametrize(
    ("format_name", "good", "bad"),
    [
        ("int32", 2147483647, 2147483648),
        ("date-time", "2024-02-29T10:00:00Z", "2024-02-30T10:00:00Z"),
        ("date", "2024-02-29", "2024-13-01"),
        ("byte", "aGVsbG8=", "not base64!"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
        ("email", "ops@example.com", "ops.example.com"),
        ("hostname", "api.example.com", "-bad-.example"),
        ("ipv4", "10.0.0.1", "10.0.0.256"),
        ("ipv6", "fe80::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0"),
        ("uri", "https://example.com/x", "not a uri"),
        ("duration", "1h30m", "soon"),
        ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b"),
    ],
)
def test_formats(format_name: str, good: Any, bad: Any) -> None:
    schema = {"type": "integer" if isinstance(good, int) else "string", "format": format_name}
    assert check(schema, good) == []
    errors = validate({"spec": {"x": bad}}, spec_with(schema))
    assert [(e.type, e.field) for e in errors] == [("Invalid value", "spec.x")]
    assert f"spec.x in body must be of type {format_name}" in errors[0].detail


def test_list_type_set_and_map_duplicates() -> None:
    schema = spec_with(
        {
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": {"type": "string"},
        }
    )
    assert messages({"spec": {"x": ["a", "b", "a", "a", "b"]}}, schema) == [
        'spec.x[2]: Duplicate value: "a"',
        'spec.x[4]: Duplicate value: "b"',
    ]
    map_schema = spec_with(
        {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "port"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
        }
    )
    items = [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "a", "port": 1}]
    assert messages({"spec": {"x": items}}, map_schema) == ['spec.x[2]: Duplicate value: {"name":"a","port":1}']
    assert messages({"spec": {"x": [{"name": "a"}, "b"]}}, map_schema) == [
        'spec.x[1]: Invalid value: "string": spec.x[1] in body must be of type object: "string"',
        'spec.x[1]: Invalid value: "b": must be an object for an array of list-type map',
    ]


def test_set_keys_follow_go_json_types() -> None:
    """Go keeps int64(1), float64(1), true and "1" apart; Python's 1 == 1.0 == True must not leak in."""
    schema = spec_with(
        {"type": "array", "x-kubernetes-list-type": "set", "items": {"x-kubernetes-preserve-unknown-fields": True}}
    )
    assert messages({"spec": {"x": [1, True, "1", 1.5]}}, schema) == []
    assert messages({"spec": {"x": [1, True, 1]}}, schema) == ["spec.x[2]: Duplicate value: 1"]


def test_embedded_resource_requires_api_version_and_kind() -> None:
    schema = spec_with(
        {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}
    )
    assert messages({"spec": {"x": {"metadata": {}}}}, schema) == [
        "spec.x.apiVersion: Required value: must not be empty",
        "spec.x.kind: Required value: must not be empty",
    ]
    assert messages({"spec": {"x": {"apiVersion": "v1", "kind": ""}}}, schema) == [
        'spec.x.kind: Invalid value: "": must not be empty'
    ]


def test_field_error_formatting() -> None:
    assert str(FieldError("Required value", "spec.a", "")) == "spec.a: Required value"
    assert str(FieldError("Forbidden", "spec.a", "no", "ignored")) == "spec.a: Forbidden: no"
    assert (
        str(FieldError("Invalid value", "spec.a", "bad", {"b": [1, True]}))
        == 'spec.a: Invalid value: {"b":[1,true]}: bad'
    )
    assert str(FieldError("Invalid value", "", "root", None)) == "<nil>: Invalid value: null: root"
