"""Objects the API server sent, validated field by field when read (pyop.api.trusted.from_server), are exactly what
`model_validate` makes: the same values, the same dump byte for byte, the same fields set, the same unknown fields,
whatever was read first; a model from_server cannot stand in for is validated at once."""

from __future__ import annotations

import copy
import json
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from k8s_objects import object_of
from pydantic import BaseModel, TypeAdapter, ValidationError, field_validator
from test_k8s_roundtrip import MODELLED, model_of

from pyop.api import GroupVersion, KubeModel, ObjectMeta, Resource, Time
from pyop.api.model import PENDING, wire_dump
from pyop.api.trusted import from_server


class WidgetSpec(KubeModel):
    replicas: int = 1
    color: str = ""
    tags: list[str] | None = None
    started: Time | None = None


class WidgetStatus(KubeModel):
    ready_replicas: int | None = None
    conditions: list[dict[str, Any]] = []


class Widget(Resource, group_version=GroupVersion("test.pyop.dev", "v1")):
    spec: WidgetSpec = WidgetSpec()
    status: WidgetStatus | None = None


def sent() -> dict[str, Any]:
    return {
        "apiVersion": "test.pyop.dev/v1",
        "kind": "Widget",
        "metadata": {
            "name": "a",
            "namespace": "default",
            "uid": "u-1",
            "resourceVersion": "7",
            "creationTimestamp": "2026-05-01T10:20:30Z",
            "labels": {"app": "x"},
            "managedFields": [
                {
                    "manager": "m",
                    "operation": "Update",
                    "time": "2026-05-01T10:20:30Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}},
                }
            ],
            "futureMetaField": {"x": [1, 2]},
        },
        "spec": {"replicas": 3, "color": "blue", "tags": ["a"], "started": "2026-05-01T10:20:30Z", "unknown": 1},
        "status": {"readyReplicas": 2},
        "topLevelUnknown": "kept",
    }


def unread(obj: BaseModel) -> bool:
    return PENDING in BaseModel.__dict__["__dict__"].__get__(obj)


def test_reading_a_field_validates_only_that_field_and_gives_model_validates_value() -> None:
    obj = from_server(Widget, sent())
    validated = Widget.model_validate(sent())
    assert obj.spec.replicas == 3 and isinstance(obj.spec, WidgetSpec)
    assert unread(obj.metadata)  # metadata read now, its own fields still as sent
    assert obj.metadata.name == "a"
    assert obj.metadata.creation_timestamp == datetime(2026, 5, 1, 10, 20, 30, tzinfo=UTC)
    assert obj.spec.started == validated.spec.started
    assert obj.metadata.managed_fields == validated.metadata.managed_fields
    assert obj.status is not None and obj.status.ready_replicas == 2
    assert obj.status.conditions == [] and "conditions" not in obj.status.model_fields_set
    assert from_server(Widget, sent()).topLevelUnknown == "kept"  # an unknown field read by its wire name
    assert from_server(Widget, sent()).model_fields_set == validated.model_fields_set
    assert obj.model_extra == validated.model_extra == {"topLevelUnknown": "kept"}
    assert obj.spec.model_extra == {"unknown": 1}


def test_whole_object_operations_see_every_field_exactly_as_model_validate_makes_them() -> None:
    validated = Widget.model_validate(sent())
    for operation in (
        lambda o: o.model_dump_json(by_alias=True, exclude_none=True),
        lambda o: json.dumps(wire_dump(o)),
        lambda o: o.model_dump(),
        lambda o: repr(o),
        lambda o: o.model_dump(exclude_unset=True),
        lambda o: TypeAdapter(list[Widget]).dump_json([o]),  # a dump that does not start at this model
        lambda o: copy.deepcopy(o).model_dump(),
        lambda o: copy.copy(o).model_dump(),
        lambda o: pickle.loads(pickle.dumps(o)).model_dump(),
    ):
        assert operation(from_server(Widget, sent())) == operation(validated)
        half_read = from_server(Widget, sent())
        assert half_read.spec.color == "blue" and half_read.metadata.uid == "u-1"
        assert operation(half_read) == operation(validated)
    assert from_server(Widget, sent()) == validated
    assert vars(from_server(Widget, sent())) == vars(validated)


def test_a_read_modify_write_round_trips_what_it_did_not_change_byte_for_byte() -> None:
    obj = from_server(Widget, sent())
    obj.spec.replicas = 5
    obj.metadata.labels = {"app": "y"}
    expected = sent()
    expected["spec"]["replicas"] = 5
    expected["metadata"]["labels"] = {"app": "y"}
    assert json.dumps(wire_dump(obj)) == json.dumps(wire_dump(Widget.model_validate(expected)))
    assert wire_dump(obj) == expected
    assert "replicas" in obj.spec.model_fields_set


def test_fields_not_sent_get_defaults_and_type_meta_is_filled_as_model_validate_fills_it() -> None:
    data = {"metadata": {"name": "a"}}
    obj, validated = from_server(Widget, data), Widget.model_validate(data)
    assert obj.api_version == "test.pyop.dev/v1" and obj.kind == "Widget"
    assert obj.spec == WidgetSpec() and obj.spec is not Widget.model_fields["spec"].default
    assert obj.model_fields_set == validated.model_fields_set
    assert obj == validated


def test_a_malformed_field_fails_where_it_is_read_with_the_whole_objects_error() -> None:
    data = sent()
    data["spec"]["replicas"] = "many"
    obj = from_server(Widget, data)
    assert obj.metadata.name == "a"
    with pytest.raises(ValidationError) as raised:
        obj.spec.replicas  # noqa: B018
    assert raised.value.errors()[0]["loc"] == ("replicas",)
    with pytest.raises(ValidationError) as dumped:
        from_server(Widget, data).model_dump()
    assert dumped.value.errors()[0]["loc"] == ("spec", "replicas")


def test_a_model_with_validators_of_its_own_is_validated_at_once() -> None:
    seen: list[str] = []

    class Checked(KubeModel):
        name: str

        @field_validator("name")
        @classmethod
        def _lower(cls, value: str) -> str:
            seen.append(value)
            return value.lower()

    obj = from_server(Checked, {"name": "ABC"})
    assert seen == ["ABC"] and obj.name == "abc" and not unread(obj)
    with pytest.raises(ValidationError):
        from_server(Checked, {})
    plain = from_server(ObjectMeta, {"name": "x", "generate_name": "python-name-"})  # a Python name: validated
    assert plain.generate_name == "python-name-" and not unread(plain)


def test_required_fields_missing_fail_at_once() -> None:
    class Needs(KubeModel):
        name: str

    with pytest.raises(ValidationError):
        from_server(Needs, {"other": 1})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_every_definition_reads_and_dumps_as_model_validate_does(data: st.DataObject) -> None:
    definition = data.draw(st.sampled_from(MODELLED), label="definition")
    model = model_of(definition)
    wire = data.draw(object_of(definition), label="object")
    validated = model.model_validate(wire)
    lazy = from_server(model, copy.deepcopy(wire))
    names = list(model.model_fields)
    for name in data.draw(st.lists(st.sampled_from(names), max_size=3), label="read first") if names else []:
        assert getattr(lazy, name) == getattr(validated, name)
    assert lazy.model_fields_set == validated.model_fields_set
    assert lazy.model_dump_json(by_alias=True, exclude_none=True) == validated.model_dump_json(
        by_alias=True, exclude_none=True
    )
    assert lazy == validated
