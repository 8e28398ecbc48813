"""Marker families against controller-gen's documented output, on types of our own (a greenhouse and its
sprinkler, in fixtures/goldens/greenhouse_types.py).

Each golden is written from what the Kubebuilder book and controller-tools document for the marker (CRD
validation, CRD processing, CRD generation markers), not copied from a generated file: validation keywords
(`Minimum`, `MaxLength`, `Pattern`, `Enum`, `Format`, `MultipleOf`, `ExclusiveMinimum`, `MinItems`, `items:`,
`MinProperties`), `default`, `title`, `example`, `nullable`, list/map/struct types, `XValidation` on fields, types
and kinds, embedded resources, preserved unknown fields, `Schemaless`, `XIntOrString`, printer columns, the
status and scale subresources, selectable fields and the resource's scope and short names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from manifests_helpers import generate, project, spec_of, version_schema

TYPES = (Path(__file__).parent / "fixtures" / "goldens" / "greenhouse_types.py").read_text()


@pytest.fixture(scope="module")
def crds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = project(tmp_path_factory.mktemp("goldens") / "op", {"v1/greenhouse_types.py": TYPES})
    return generate(root)


def _greenhouse(crds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return crds["fleet.example.com_greenhouses.yaml"]


def _sprinkler(crds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return crds["fleet.example.com_sprinklers.yaml"]


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _without_descriptions(value) for key, value in node.items() if key != "description"}
    if isinstance(node, list):
        return [_without_descriptions(item) for item in node]
    return node


GREENHOUSE_FIELDS: dict[str, dict[str, Any]] = {
    # +kubebuilder:validation:Enum on a string: the listed values, in order.
    "crop": {"type": "string", "enum": ["Tomato", "Basil", "Fern"]},
    # MaxLength and Pattern (a backquoted raw string) as written.
    "keeper": {"type": "string", "maxLength": 32, "pattern": "^[a-z][a-z-]*$"},
    # An int32 is format int32; +kubebuilder:default puts the value as JSON; bounds as numbers.
    "rows": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 500, "default": 20},
    "plantedAt": {"type": "string", "format": "date-time"},
    "shadePercent": {"type": "integer", "title": "Shade", "example": 40},
    "motto": {"type": "string", "nullable": True},
    # listType=map with its key; the key field is required in the item.
    "beds": {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "plants": {"type": "integer", "minimum": 1}},
        },
    },
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "labels": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
    # A type's XValidation goes where the type is used, with its message.
    "climate": {
        "type": "object",
        "required": ["high", "low"],
        "properties": {"high": {"type": "integer"}, "low": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.low <= self.high", "message": "low must not exceed high"}],
    },
    # structType=atomic on the type: the object is replaced whole (x-kubernetes-map-type: atomic).
    "roof": {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "required": ["height", "width"],
        "properties": {"height": {"type": "integer"}, "width": {"type": "integer"}},
    },
    # EmbeddedResource on a RawExtension: an object, embedded, unknown fields kept (its own apiVersion/kind).
    "wateringJob": {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    },
    # PreserveUnknownFields on an untyped value: nothing but the extension (as for apiextensions' JSON).
    "notes": {"x-kubernetes-preserve-unknown-fields": True},
    # Schemaless drops the generated schema; the markers after it say what is left.
    "extras": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}


@pytest.mark.parametrize("field", sorted(GREENHOUSE_FIELDS))
def test_a_field_gets_what_its_markers_say(crds: dict[str, dict[str, Any]], field: str) -> None:
    spec = spec_of(_greenhouse(crds))
    assert _without_descriptions(spec["properties"][field]) == GREENHOUSE_FIELDS[field]


def test_only_fields_without_a_default_or_optional_marker_are_required(crds: dict[str, dict[str, Any]]) -> None:
    spec = spec_of(_greenhouse(crds))
    assert spec["required"] == ["crop"]
    assert sorted(spec["properties"]) == sorted(GREENHOUSE_FIELDS)


def test_doc_comments_become_descriptions(crds: dict[str, dict[str, Any]]) -> None:
    schema = version_schema(_greenhouse(crds))
    assert schema["description"] == "Greenhouse is a glass house and what grows in it."
    assert schema["properties"]["spec"]["properties"]["crop"]["description"] == "crop is what grows here."
    bed = schema["properties"]["spec"]["properties"]["beds"]["items"]
    assert bed["properties"]["name"]["description"] == "name identifies the bed within its greenhouse."


def test_the_kind_markers_make_the_version_entry(crds: dict[str, dict[str, Any]]) -> None:
    crd = _greenhouse(crds)
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"] == {
        "kind": "Greenhouse",
        "listKind": "GreenhouseList",
        "plural": "greenhouses",
        "singular": "greenhouse",
        "shortNames": ["gh"],
    }
    [version] = crd["spec"]["versions"]
    assert {key: value for key, value in version.items() if key != "schema"} == {
        "name": "v1",
        "served": True,
        "storage": True,
        "additionalPrinterColumns": [
            {"name": "Crop", "type": "string", "jsonPath": ".spec.crop"},
            {"name": "Rows", "type": "integer", "jsonPath": ".spec.rows", "priority": 1},
        ],
        "selectableFields": [{"jsonPath": ".spec.crop"}],
        "subresources": {
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.rows",
                "statusReplicasPath": ".status.readyRows",
                "labelSelectorPath": ".status.selector",
            },
        },
    }


SPRINKLER_FIELDS: dict[str, dict[str, Any]] = {
    # the CronJob tutorial's shapes: an int64 with a lower bound, an enum alias, a time
    "startingDeadlineSeconds": {"type": "integer", "format": "int64", "minimum": 0},
    "concurrencyPolicy": {"type": "string", "enum": ["Allow", "Forbid", "Replace"]},
    "lastRun": {"type": "string", "format": "date-time"},
    # XIntOrString: both types under anyOf, and the extension; a pattern applies to the string form
    "flow": {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
        "pattern": "^[0-9]+%?$",
    },
    # items: markers go to the items; UniqueItems=false writes nothing (false is the default)
    "nozzles": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string", "maxLength": 16}},
    "pressure": {"type": "integer", "minimum": 0, "exclusiveMinimum": True, "multipleOf": 5},
    "zones": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": "integer", "format": "int32"},
    },
    # a reason is kept, an empty fieldPath is not written
    "pipe": {
        "type": "string",
        "x-kubernetes-validations": [
            {"rule": "self == oldSelf", "message": "the pipe cannot be changed", "reason": "FieldValueForbidden"}
        ],
    },
}


@pytest.mark.parametrize("field", sorted(SPRINKLER_FIELDS))
def test_the_tutorials_shapes(crds: dict[str, dict[str, Any]], field: str) -> None:
    spec = spec_of(_sprinkler(crds))
    assert _without_descriptions(spec["properties"][field]) == SPRINKLER_FIELDS[field]


def test_a_kinds_xvalidation_is_on_the_root_schema_and_a_kind_without_status_has_no_subresource(
    crds: dict[str, dict[str, Any]],
) -> None:
    crd = _sprinkler(crds)
    root = version_schema(crd)
    assert root["x-kubernetes-validations"] == [
        {"rule": "self.metadata.name.startsWith('sp-')", "message": "names start with sp-"}
    ]
    assert crd["spec"]["scope"] == "Namespaced"
    assert "subresources" not in crd["spec"]["versions"][0]
    assert "required" not in root  # spec has a default: not required
