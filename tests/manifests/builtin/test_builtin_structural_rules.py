"""The offline rule checker used by the other tests flags what the API server would reject."""

from __future__ import annotations

from typing import Any

import pytest
from builtin_structural_rules import structural_problems

from scaffold.manifests.builtin import builtin_schema


def field_problems(schema: dict[str, Any]) -> list[str]:
    return [path for path, _ in structural_problems(schema, root=False)]


MAP_LIST = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
    "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}


@pytest.mark.parametrize(
    ("schema", "flagged_path"),
    [
        ({"$ref": "#/definitions/x"}, "<S>.$ref"),
        ({"description": "no type"}, "<S>.type"),
        ({"type": "array"}, "<S>.items"),
        ({"type": "strng"}, "<S>.type"),
        ({"type": "object", "properties": {"a": {}}}, "<S>.properties[a].type"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}], "x-kubernetes-int-or-string": True}, "<S>.anyOf"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "<S>.additionalProperties",
        ),
        ({"type": "string", "x-kubernetes-map-type": "atomic"}, "<S>.type"),
        ({"type": "object", "examples": [{}]}, "<S>.examples"),
        ({"type": "string", "pattern": "(unclosed"}, "<S>.pattern"),
        ({"type": "string", "default": 3}, "<S>.default"),
        (
            {**MAP_LIST, "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "<S>.items.properties[name].default",
        ),
        ({**MAP_LIST, "x-kubernetes-list-map-keys": ["missing"]}, "<S>.x-kubernetes-list-map-keys"),
        (
            {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object", "properties": {}}},
            "<S>.items.x-kubernetes-map-type",
        ),
    ],
)
def test_rejected_shapes_are_reported_at_their_path(schema: dict[str, Any], flagged_path: str) -> None:
    assert flagged_path in field_problems(schema)


def test_accepted_shapes_produce_no_problems() -> None:
    assert field_problems(MAP_LIST) == []
    assert (
        field_problems({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}) == []
    )
    assert field_problems({"x-kubernetes-preserve-unknown-fields": True}) == []


def test_the_root_must_be_an_object_without_additional_properties() -> None:
    paths = [path for path, _ in structural_problems({"type": "object", "additionalProperties": {"type": "string"}})]
    assert "<S>.additionalProperties" in paths
    assert "<S>.type" in [path for path, _ in structural_problems({"type": "string"})]


def test_without_the_upstream_protocol_default_a_pod_spec_would_be_rejected() -> None:
    pod = builtin_schema("io.k8s.api.core.v1.PodSpec")
    del pod["properties"]["containers"]["items"]["properties"]["ports"]["items"]["properties"]["protocol"]["default"]
    assert "<S>.properties[containers].items.properties[ports].items.properties[protocol].default" in field_problems(
        pod
    )
