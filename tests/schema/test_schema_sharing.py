"""Pruning, null pruning and defaulting never modify their input; the shared forms reuse what they leave alone.

The test API server stores ``normalize(..., share=True)`` results next to the previous version of an object, so
an input changed in place, or a result that is not a function of the input alone, would corrupt stored objects.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.schema import apply_defaults, normalize, prune, prune_nulls, unknown_fields

# Every feature the three passes look at: defaults (nested, in list items and map values), nullable, embedded
# resources, preserved unknown fields, additionalProperties true and schema-valued.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "strategy": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "default": "RollingUpdate"},
                        "rolling": {
                            "type": "object",
                            "default": {},
                            "properties": {"maxSurge": {"type": "integer", "default": 25}},
                        },
                    },
                },
                "note": {"type": "string", "default": "none"},
                "comment": {"type": "string"},
                "optional": {"type": "string", "nullable": True, "default": "x"},
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"protocol": {"type": "string", "default": "TCP"}, "port": {"type": "integer"}},
                    },
                },
                "env": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"value": {"type": "string", "default": ""}},
                    },
                },
                "raw": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"image": {"type": "string"}}}},
                },
                "anything": {"type": "object", "additionalProperties": True},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
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
    ]
)
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "TCP"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=25,
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=5) | st.fixed_dictionaries({"spec": st.dictionaries(KEYS, VALUES)})


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


@settings(max_examples=150, deadline=None)
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


@settings(max_examples=150, deadline=None)
@given(OBJECTS)
def test_shared_normalize_equals_the_copying_one(obj: dict[str, Any]) -> None:
    assert normalize(obj, SCHEMA, share=True) == normalize(obj, SCHEMA)


@settings(max_examples=150, deadline=None)
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
