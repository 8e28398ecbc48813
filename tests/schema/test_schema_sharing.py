"""Pruning, null pruning and defaulting never modify their input; the shared forms reuse what they leave alone.

The test API server stores ``normalize(..., share=True)`` results next to the previous version of an object, so
an input changed in place, or a result that is not a function of the input alone, would corrupt stored objects.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from schema_fixtures import WORKLOAD_SCHEMA

from pyop.schema import apply_defaults, normalize, prune, prune_nulls, unknown_fields

# The schema of tests/schema/schema_fixtures.py, with a status whose unknown fields are kept.
SCHEMA: dict[str, Any] = {
    **WORKLOAD_SCHEMA,
    "properties": {
        **WORKLOAD_SCHEMA["properties"],
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}

# Corners of the three passes' interplay: defaults that are not themselves pruned or null-free, defaults of list
# items and map values, lists kept by preserve-unknown-fields, lists without item schemas, embedded resources
# whose metadata and kind have schemas and defaults.
TRICKY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metadata": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "labels": {"type": "object", "default": {"d": "1"}}},
        },
        "spec": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "known": {"type": "object", "properties": {"a": {"type": "string", "default": "A"}}},
                "list": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "default": {"a": "item", "junk": None},
                        "properties": {"a": {"type": "string", "default": "A"}},
                    },
                },
                "bare": {"type": "array"},
                "plain": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                "weird": {"type": "object", "default": {"x": 1, "a": None}, "properties": {"a": {"type": "string"}}},
                "maps": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "default": {"a": "m"},
                        "properties": {"a": {"type": "string", "default": "z"}},
                    },
                },
                "anything": {"type": "object", "additionalProperties": True},
                "nullable": {"type": "string", "nullable": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "metadata": {
                            "type": "object",
                            "properties": {"annotations": {"type": "object", "default": {}}},
                        },
                        "kind": {"type": "string", "default": "K"},
                        "spec": {"type": "object"},
                    },
                },
            },
        },
        "status": {"type": "object", "additionalProperties": {"type": "string", "default": "s"}},
        "kept": {
            "type": "array",
            "x-kubernetes-preserve-unknown-fields": True,
            "items": {"type": "object", "properties": {"a": {"type": "string", "default": "A"}}},
        },
    },
}

KEYS = st.sampled_from(
    [
        "apiVersion",
        "kind",
        "metadata",
        "name",
        "custom",
        "spec",
        "status",
        "replicas",
        "strategy",
        "type",
        "rolling",
        "maxSurge",
        "note",
        "comment",
        "optional",
        "ports",
        "protocol",
        "port",
        "env",
        "A",
        "value",
        "raw",
        "known",
        "a",
        "free",
        "template",
        "image",
        "anything",
        "bogus",
        "labels",
        "d",
        "list",
        "junk",
        "bare",
        "plain",
        "weird",
        "x",
        "maps",
        "nullable",
        "annotations",
        "kept",
    ]
)
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "TCP"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=25,
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=5) | st.fixed_dictionaries({"spec": st.dictionaries(KEYS, VALUES)})


def example_corners(test: Any) -> Any:
    """Hypothesis examples: every corner object under both schemas, as a resource root and not."""
    for corner in CORNERS:
        for schema in (SCHEMA, TRICKY):
            for root in (True, False):
                test = example(corner, schema, root)(test)
    return test


def shared_ids(value: Any) -> set[int]:
    """Identities of every container inside ``value``."""
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            found.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


@settings(max_examples=100, deadline=None)
@given(OBJECTS)
def test_no_function_modifies_its_input(obj: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(obj)
    prune(obj, SCHEMA)
    prune_nulls(obj, SCHEMA)
    apply_defaults(obj, SCHEMA)
    unknown_fields(obj, SCHEMA)
    normalize(obj, SCHEMA)
    normalize(obj, SCHEMA, share=True)
    assert obj == snapshot


CORNERS = [
    {"status": {"x": None, "y": "set"}},
    {"spec": {"maps": {"m": None, "n": {}, "o": {"a": None}}}},
    {"spec": {"template": {"metadata": {"annotations": None, "bogus": 1}, "kind": None, "spec": None}}},
    {"spec": {"template": {"apiVersion": None, "metadata": {"name": "n"}}}},
    {"metadata": {"labels": None, "name": None}, "kind": None},
    {"metadata": {"name": "n"}},
    {"spec": {"list": [None, {"junk": 1}, {"a": None}], "bare": [{"a": 1}, None], "plain": [{"a": 1, "b": 2}]}},
    {"kept": [{"z": 1}, None, {"a": None}], "spec": {"weird": None, "free": {"deep": None}}},
    {"spec": {"anything": {"k": {"deep": 1}, "l": [{"x": 1}]}, "nullable": None, "known": None}},
    {"spec": {}},
]


@settings(max_examples=200, deadline=None)
@given(OBJECTS, st.sampled_from([SCHEMA, TRICKY]), st.booleans())
@example_corners
def test_one_walk_normalize_equals_the_three_passes(obj: dict[str, Any], schema: dict[str, Any], root: bool) -> None:
    three_passes = apply_defaults(prune_nulls(prune(obj, schema, resource_root=root), schema), schema)
    one_walk = normalize(obj, schema, resource_root=root, share=True)
    assert json.dumps(one_walk) == json.dumps(three_passes)  # the same values in the same key order


@settings(max_examples=100, deadline=None)
@given(OBJECTS)
def test_shared_normalize_equals_the_copying_one(obj: dict[str, Any]) -> None:
    assert normalize(obj, SCHEMA, share=True) == normalize(obj, SCHEMA)


@settings(max_examples=100, deadline=None)
@given(OBJECTS)
def test_copying_results_share_nothing_with_the_input(obj: dict[str, Any]) -> None:
    inputs = shared_ids(obj)
    for result in (prune(obj, SCHEMA), prune_nulls(obj, SCHEMA), apply_defaults(obj, SCHEMA), normalize(obj, SCHEMA)):
        assert not shared_ids(result) & inputs


def test_shared_normalize_returns_the_input_when_nothing_changes() -> None:
    obj = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "spec": {"replicas": 2, "note": "n"}}
    obj["spec"].update(optional="o")
    assert normalize(obj, SCHEMA, share=True) is obj


def test_shared_normalize_copies_only_the_changed_path() -> None:
    ports = [{"port": 1, "protocol": "UDP"}]
    raw = {"free": 1}
    obj = {
        "metadata": {"name": "a"},
        "spec": {"replicas": 2, "note": "n", "optional": None, "ports": ports, "raw": raw},
    }
    obj["spec"]["bogus"] = True
    result = normalize(obj, SCHEMA, share=True)
    assert result is not obj and result["spec"] is not obj["spec"]
    assert "bogus" in obj["spec"] and "bogus" not in result["spec"]
    assert result["metadata"] is obj["metadata"]
    assert result["spec"]["ports"] is ports
    assert result["spec"]["raw"] is raw


def test_defaults_are_copied_into_each_result() -> None:
    first = normalize({"spec": {"strategy": {}}}, SCHEMA, share=True)
    second = normalize({"spec": {"strategy": {}}}, SCHEMA, share=True)
    assert first["spec"]["strategy"]["rolling"] == {"maxSurge": 25}
    assert first["spec"]["strategy"]["rolling"] is not second["spec"]["strategy"]["rolling"]
    schema_default = SCHEMA["properties"]["spec"]["properties"]["strategy"]["properties"]["rolling"]["default"]
    assert first["spec"]["strategy"]["rolling"] is not schema_default
    assert schema_default == {}
