"""The compiled schema (pyop.schema.compiled) gives exactly the interpreter's answers.

The registry admits custom resources through `CompiledSchema` (one per served version); the interpreting functions
of pyop.schema are the reference. Hypothesis draws structural schemas (every keyword the engine reads, nested) and
objects whose keys collide with the schemas' property names, and compares: the normalized object (values and key
order, and whether it is the input itself), the unknown-field paths, the validation errors (type, path, detail and
bad value, in order) with and without an old object, and admission's result, causes and warnings per
fieldValidation mode.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from schema_fixtures import WORKLOAD_SCHEMA
from test_schema_sharing import SCHEMA as SHARING_SCHEMA
from test_schema_sharing import TRICKY

from pyop.api.status import ApiError
from pyop.apiserver.registry.schema import admit
from pyop.schema import ABSENT, normalize, unknown_fields, validate
from pyop.schema.compiled import CompiledSchema

NAMES = ["a", "b", "c", "apiVersion", "kind", "metadata", "name", "x"]
KEYS = st.sampled_from(NAMES)
SCALARS = (
    st.none()
    | st.booleans()
    | st.sampled_from([0, 1, 2, 3, -1, 2**40, 1.5, 2.0, -0.5])
    | st.sampled_from(["", "x", "ab", "abc", "v1", "g/v1", "a/b/c", "10.0.0.1", "2024-01-01", "5s"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=5)

# CEL rules the engine evaluates (plain, transition, failing with a field path and a reason).
RULES = [
    {"rule": "self == self"},
    {"rule": "has(self.a)", "message": "a is required", "fieldPath": ".a", "reason": "FieldValueRequired"},
    {"rule": "self == oldSelf", "message": "immutable"},
    {"rule": "size(self) < 2"},
]


def _leaf_keywords(draw: Any, kind: str | None) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    if kind is not None:
        schema["type"] = kind
    if kind in (None, "string"):
        for name, values in (
            ("maxLength", [0, 1, 2]),
            ("minLength", [1, 2]),
            ("pattern", ["^a", "b$", "[", "^[a-z]+$"]),
            ("format", ["date", "ipv4", "duration", "unknown-format", "int32"]),
        ):
            if draw(st.booleans()):
                schema[name] = draw(st.sampled_from(values))
    if kind in (None, "integer", "number"):
        for name, values in (
            ("minimum", [0, 1, 1.5]),
            ("maximum", [1, 2, 2.5]),
            ("multipleOf", [2, 0.5]),
            ("format", ["int32", "int64", "float"]),
        ):
            if draw(st.booleans()) and draw(st.booleans()):
                schema[name] = draw(st.sampled_from(values))
        if "minimum" in schema and draw(st.booleans()):
            schema["exclusiveMinimum"] = True
        if "maximum" in schema and draw(st.booleans()):
            schema["exclusiveMaximum"] = draw(st.sampled_from([True, False]))
    return schema


@st.composite
def schemas(draw: Any, depth: int = 0) -> dict[str, Any]:
    """A structural schema node (with some keywords a structural schema forbids, which the engine still reads)."""
    leaf = depth >= 3 or draw(st.booleans())
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", None] if leaf else ["object", "array"]))
    schema = _leaf_keywords(draw, kind)
    if kind == "object":
        names = draw(st.lists(KEYS, max_size=4, unique=True))
        schema["properties"] = {name: draw(schemas(depth + 1)) for name in names}
        choice = draw(st.integers(0, 5))
        if choice == 1:
            schema["additionalProperties"] = draw(schemas(depth + 1))
        elif choice == 2:
            schema["additionalProperties"] = draw(st.booleans())
        if names and draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
        if draw(st.integers(0, 4)) == 0:
            schema["maxProperties"] = draw(st.integers(0, 2))
        if draw(st.integers(0, 4)) == 0:
            schema["minProperties"] = draw(st.integers(1, 3))
        if draw(st.integers(0, 5)) == 0:
            schema["x-kubernetes-embedded-resource"] = True
    elif kind == "array":
        if draw(st.integers(0, 5)) > 0:
            schema["items"] = draw(schemas(depth + 1))
        for name, values in (("minItems", [1, 2]), ("maxItems", [0, 1, 2]), ("uniqueItems", [True])):
            if draw(st.integers(0, 4)) == 0:
                schema[name] = draw(st.sampled_from(values))
        list_type = draw(st.sampled_from([None, None, "atomic", "set", "map"]))
        if list_type is not None:
            schema["x-kubernetes-list-type"] = list_type
        if list_type == "map":
            schema["x-kubernetes-list-map-keys"] = draw(st.lists(KEYS, min_size=1, max_size=2, unique=True))
    if draw(st.integers(0, 4)) == 0:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    if draw(st.integers(0, 4)) == 0:
        schema["nullable"] = True
    if draw(st.integers(0, 4)) == 0:
        schema["default"] = draw(VALUES)
    if draw(st.integers(0, 6)) == 0:
        schema["enum"] = draw(st.lists(SCALARS | st.dictionaries(KEYS, SCALARS, max_size=1), min_size=1, max_size=3))
    if draw(st.integers(0, 8)) == 0:
        schema["x-kubernetes-int-or-string"] = True
        if draw(st.booleans()):
            schema["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if depth > 0 and draw(st.integers(0, 8)) == 0:
        junctor = draw(st.sampled_from(["allOf", "anyOf", "oneOf", "not"]))
        if junctor == "not":
            schema["not"] = draw(schemas(3))
        else:
            schema[junctor] = draw(st.lists(schemas(3), min_size=1, max_size=2))
    if draw(st.integers(0, 10)) == 0:
        schema["x-kubernetes-validations"] = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=2))
    return schema


@st.composite
def roots(draw: Any) -> dict[str, Any]:
    """A resource's schema: an object at the root."""
    schema = {"type": "object", "properties": {name: draw(schemas(1)) for name in draw(st.lists(KEYS, unique=True))}}
    if draw(st.integers(0, 4)) == 0:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    if draw(st.integers(0, 4)) == 0:
        schema["additionalProperties"] = draw(schemas(1))
    return schema


def values_for(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values aimed at a schema node: of its type and near its bounds, its enum and default, or anything."""
    if not isinstance(schema, dict) or depth > 4:
        return VALUES
    aimed: list[st.SearchStrategy[Any]] = []
    kind = schema.get("type")
    if kind == "string" or "maxLength" in schema or "pattern" in schema:
        aimed.append(st.sampled_from(["", "a", "ab", "abc", "ba", "10.0.0.1", "2024-01-01", "5s", "x/y"]))
    if kind in ("integer", "number") or "minimum" in schema or "maximum" in schema:
        aimed.append(st.sampled_from([-1, 0, 1, 2, 3, 4, 0.5, 1.5, 2.0, 2.5, 2**31, 2**40]))
    if kind == "boolean":
        aimed.append(st.booleans())
    if "enum" in schema:
        aimed.append(st.sampled_from(schema["enum"]))
    if "default" in schema:
        aimed.append(st.just(copy.deepcopy(schema["default"])))
    properties = schema.get("properties") or {}
    if kind == "object" or properties:
        fields = {name: values_for(sub, depth + 1) for name, sub in properties.items()}
        extra = values_for(schema.get("additionalProperties"), depth + 1)
        names = sorted(fields)
        aimed.append(
            st.builds(
                lambda known, left_out, others: {**others, **{k: v for k, v in known.items() if k not in left_out}},
                st.fixed_dictionaries(fields),
                st.sets(st.sampled_from(names)) if names else st.just(set()),
                st.dictionaries(KEYS, extra, max_size=2),
            )
        )
    if kind == "array" or "items" in schema:
        aimed.append(st.lists(values_for(schema.get("items"), depth + 1), max_size=3))
    return st.one_of(*aimed, *aimed, *aimed, VALUES) if aimed else VALUES  # mostly aimed


@st.composite
def schemas_and_objects(draw: Any) -> tuple[dict[str, Any], Any, Any]:
    schema = draw(roots())
    aimed = values_for(schema)
    objects = st.one_of(aimed, aimed, aimed, OBJECTS)
    return schema, draw(objects), draw(objects)


def errors_text(errors: list[Any]) -> list[str]:
    return [
        f"{error.type}|{error.field}|{error.detail}|{error.bad_value!r}|{type(error.bad_value)}" for error in errors
    ]


def assert_same(obj: Any, schema: dict[str, Any], old: Any = ABSENT) -> None:
    compiled = CompiledSchema(schema)
    snapshot = copy.deepcopy(obj)
    expected = normalize(obj, schema, share=True)
    actual = compiled.normalize(obj)
    assert json.dumps(actual) == json.dumps(expected)  # the same values, types and key order
    assert (actual is obj) == (expected is obj)
    assert compiled.unknown_fields(obj) == unknown_fields(obj, schema)
    for value in (obj, expected):
        assert errors_text(compiled.validate(value)) == errors_text(validate(value, schema))
        assert errors_text(compiled.validate(value, old)) == errors_text(validate(value, schema, old=old))
    assert obj == snapshot  # neither path modified its input


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(schemas_and_objects())
@example((TRICKY, {"spec": {"template": {"metadata": {"x": 1}}, "list": [None, {"junk": 1}]}}, {}))
@example((WORKLOAD_SCHEMA, {"spec": {"replicas": None, "strategy": {"rolling": None}}, "bogus": 1}, {}))
def test_compiled_schema_answers_as_the_interpreter(case: tuple[dict[str, Any], Any, Any]) -> None:
    schema, obj, old = case
    assert_same(obj, schema, old)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_compiled_nodes_answer_as_the_interpreter(data: Any) -> None:
    """Any node on any value (not only objects), and on values aimed at it."""
    schema = data.draw(schemas(1))
    value, old = data.draw(values_for(schema)), data.draw(values_for(schema))
    assert_same(value, {"type": "object", "properties": {"a": schema}}, {"a": old})
    assert_same({"a": value}, {"type": "object", "properties": {"a": schema}}, {"a": old})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(schemas_and_objects(), st.sampled_from(["Strict", "Warn", "Ignore"]))
def test_admission_answers_as_with_the_interpreter(case: tuple[dict[str, Any], Any, Any], mode: str) -> None:
    """admit() with the compiled schema and without it: the same object, causes, warnings, or 400."""
    schema, obj, _ = case
    if not isinstance(obj, dict):
        obj = {"a": obj}  # admission takes an object
    answers = []
    for compiled in (CompiledSchema(schema), None):
        warnings: list[str] = []
        try:
            admitted, causes = admit(obj, schema, field_validation=mode, warnings=warnings, compiled=compiled)
        except ApiError as error:
            answers.append(("error", error.code, error.message))
            continue
        answers.append(("ok", json.dumps(admitted), [(c.reason, c.message, c.field) for c in causes], warnings))
    assert answers[0] == answers[1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(schemas_and_objects())
def test_an_object_normalization_leaves_alone_has_no_unknown_field(case: tuple[dict[str, Any], Any, Any]) -> None:
    """What admit() relies on to skip the unknown-field walk (Strict and Warn) when nothing changed."""
    schema, obj, _ = case
    if normalize(obj, schema, share=True) is obj:
        assert unknown_fields(obj, schema) == []


@pytest.mark.parametrize("schema", [SHARING_SCHEMA, TRICKY, WORKLOAD_SCHEMA])
def test_fixture_schemas_on_their_corner_objects(schema: dict[str, Any]) -> None:
    from test_schema_sharing import CORNERS

    for corner in CORNERS:
        assert_same(corner, schema)


def test_a_schema_that_contains_itself_is_interpreted() -> None:
    node: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 1}}}
    node["properties"]["child"] = node  # a recursive Python-built schema
    obj = {"name": "ab", "child": {"name": "cd", "junk": 1, "child": {"name": None}}}
    assert_same(obj, node)
    assert [str(error) for error in CompiledSchema(node).validate(obj)][:1] == [
        "name: Too long: may not be more than 1 byte"
    ]


def test_the_registry_compiles_each_served_version_once() -> None:
    from pyop.apiserver.registry.resources import ResourceType, types_from_crd

    crd = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": TRICKY}}],
        },
    }
    (served,) = types_from_crd(crd)
    assert served.compiled_schema is served.compiled_schema
    (changed,) = types_from_crd(crd)  # an updated CRD: new types, compiled anew
    assert changed.compiled_schema is not served.compiled_schema
    assert ResourceType("", "v1", "things", "Thing", True).compiled_schema is None
