"""pyop.testing.schema_objects: the strategies draw objects the API server accepts, covering the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.testing.crds.validation import admit
from pyop.testing.schema_objects import _value, crd_version_schema, objects

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["size", "mode"],
            "properties": {
                "size": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 5},
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 6},
                "since": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["port"],
                        "properties": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}},
                    },
                },
                "amount": {"x-kubernetes-int-or-string": True},
            },
            "x-kubernetes-validations": [{"rule": "self.size != 3", "message": "not three"}],
        },
    },
}


@settings(max_examples=60, deadline=None)
@given(objects(SCHEMA, api_version="x.pyop.dev/v1", kind="Thing"))
def test_every_object_is_accepted_as_it_is(obj: dict[str, Any]) -> None:
    stored, causes = admit(obj, SCHEMA)
    assert causes == [] and stored == obj  # already pruned and defaulted: the stored form
    assert obj["apiVersion"] == "x.pyop.dev/v1" and obj["metadata"]["namespace"] == "default"
    assert obj["spec"]["mode"] in ("Fast", "Slow") and obj["spec"]["size"] != 3  # the CEL rule held


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_values_meet_the_schema_before_any_filtering(data: st.DataObject) -> None:
    """Only CEL rules are left to the filter: everything OpenAPI says is drawn right in the first place."""
    spec_schema = {**SCHEMA["properties"]["spec"]}
    spec_schema.pop("x-kubernetes-validations")
    spec = data.draw(_value(st, spec_schema))
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    _, causes = admit({"apiVersion": "v", "kind": "K", "metadata": {"name": "n"}, "spec": spec}, schema)
    assert causes == []


def test_optional_fields_are_drawn_too() -> None:
    seen: set[str] = set()

    @settings(max_examples=80, deadline=None)
    @given(objects(SCHEMA, api_version="x.pyop.dev/v1", kind="Thing", namespace=None))
    def collect(obj: dict[str, Any]) -> None:
        assert "namespace" not in obj["metadata"]
        seen.update(obj["spec"])

    collect()
    assert {"name", "since", "tags", "labels", "ports", "amount"} <= seen


def test_the_schema_of_a_version_is_read_from_the_crd_files(tmp_path: Path) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.x.pyop.dev"},
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": SCHEMA}}]},
    }
    (tmp_path / "x.pyop.dev_things.yaml").write_text(yaml.safe_dump(crd))
    assert crd_version_schema(tmp_path, "things.x.pyop.dev", "v1") == SCHEMA
    with pytest.raises(LookupError, match="has no version 'v2'"):
        crd_version_schema(tmp_path, "things.x.pyop.dev", "v2")
    with pytest.raises(LookupError, match="run `make manifests` first"):
        crd_version_schema(tmp_path, "others.x.pyop.dev", "v1")
