"""Structural defaulting and pruning, as the API server applies them before validation."""

from __future__ import annotations

import copy

from schema_fixtures import WORKLOAD_SCHEMA

from pyop.schema import apply_defaults, normalize, prune, prune_nulls, unknown_fields

SCHEMA = WORKLOAD_SCHEMA


def test_nested_defaults_need_their_parent() -> None:
    assert apply_defaults({"spec": {}}, SCHEMA)["spec"] == {"replicas": 1, "note": "none", "optional": "x"}


def test_defaults_apply_inside_a_present_parent_and_inside_a_defaulted_parent() -> None:
    result = apply_defaults({"spec": {"strategy": {}}}, SCHEMA)
    assert result["spec"]["strategy"] == {"type": "RollingUpdate", "rolling": {"maxSurge": 25}}


def test_defaults_never_at_root_or_for_missing_spec() -> None:
    assert apply_defaults({}, SCHEMA) == {}


def test_null_is_defaulted_only_when_not_nullable() -> None:
    result = apply_defaults({"spec": {"note": None, "optional": None}}, SCHEMA)
    assert result["spec"]["note"] == "none"
    assert result["spec"]["optional"] is None


def test_defaults_in_list_items_and_map_values() -> None:
    result = apply_defaults({"spec": {"ports": [{"port": 80}], "env": {"A": {}}}}, SCHEMA)
    assert result["spec"]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert result["spec"]["env"] == {"A": {"value": ""}}


def test_apply_defaults_does_not_modify_its_input() -> None:
    original = {"spec": {"strategy": {}}}
    snapshot = copy.deepcopy(original)
    apply_defaults(original, SCHEMA)
    assert original == snapshot


def test_prune_drops_unknown_fields_and_keeps_resource_fields() -> None:
    obj = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a", "custom": 1},
        "status": {"ready": True},
        "spec": {"replicas": 2, "bogus": 1, "ports": [{"port": 1, "extra": 2}]},
    }
    assert prune(obj, SCHEMA) == {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a", "custom": 1},  # root metadata belongs to the API server, untouched
        "spec": {"replicas": 2, "ports": [{"port": 1}]},
    }
    assert unknown_fields(obj, SCHEMA) == ["status", "spec.bogus", "spec.ports[0].extra"]


def test_preserve_unknown_fields_keeps_unknown_but_prunes_known_subtrees() -> None:
    obj = {"spec": {"raw": {"free": {"deep": [1]}, "known": {"a": "x", "b": "y"}}}}
    assert prune(obj, SCHEMA)["spec"]["raw"] == {"free": {"deep": [1]}, "known": {"a": "x"}}
    assert unknown_fields(obj, SCHEMA) == ["spec.raw.known.b"]


def test_embedded_resource_keeps_type_meta_and_prunes_object_meta() -> None:
    template = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": True},
        "spec": {"image": "nginx", "extra": 1},
        "status": {},
    }
    assert prune({"spec": {"template": template}}, SCHEMA)["spec"]["template"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"image": "nginx"},
    }
    assert unknown_fields({"spec": {"template": template}}, SCHEMA) == [
        "spec.template.metadata.bogus",
        "spec.template.spec.extra",
        "spec.template.status",
    ]


def test_additional_properties_true_keeps_keys_but_empties_nested_objects() -> None:
    obj = {"spec": {"anything": {"a": 1, "b": {"c": 2}}}}
    assert prune(obj, SCHEMA)["spec"]["anything"] == {"a": 1, "b": {}}


def test_prune_nulls_then_normalize_pipeline() -> None:
    obj = {"spec": {"comment": None, "note": None, "optional": None, "bogus": 1}}
    assert prune_nulls(obj, SCHEMA)["spec"] == {"note": None, "optional": None, "bogus": 1}
    assert normalize(obj, SCHEMA) == {"spec": {"note": "none", "optional": None, "replicas": 1}}
