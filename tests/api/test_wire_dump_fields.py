"""wire_dump's omitempty pass reads each model class's fields once (`_wire_fields`) and steps over leaf values; it
must drop exactly what the per-field walk as of b8c9b2a drops (kept here as the reference): unset fields whose
default is an empty list or map and whose dump is empty, at any depth, in models, lists and maps of models."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from k8s_objects import object_of
from pydantic import BaseModel, Field
from test_k8s_roundtrip import MODELLED, model_of

from pyop.api import Condition, GroupVersion, KubeModel, ObjectMeta, Resource
from pyop.api.model import _WIRE_FIELDS, _omit_unset_empty, wire_dump
from pyop.api.trusted import from_server


def _reference_empty_default(info: Any) -> bool:
    factory = info.default_factory
    if factory in (list, dict):
        return True
    return factory is None and info.default in ([], {})


def _reference_omit(obj: BaseModel, data: dict[str, Any]) -> None:
    """The walk as of b8c9b2a: every field's alias and default looked up at every dump."""
    fields_set = obj.model_fields_set
    for name, info in type(obj).model_fields.items():
        key = info.serialization_alias or info.alias or name
        if key not in data:
            continue
        value = getattr(obj, name, None)
        if name not in fields_set and data[key] in ([], {}) and _reference_empty_default(info):
            del data[key]
        elif isinstance(value, BaseModel) and isinstance(data[key], dict):
            _reference_omit(value, data[key])
        elif isinstance(value, list) and isinstance(data[key], list):
            for item, dumped in zip(value, data[key], strict=False):
                if isinstance(item, BaseModel) and isinstance(dumped, dict):
                    _reference_omit(item, dumped)
        elif isinstance(value, dict) and isinstance(data[key], dict):
            for item_key, item in value.items():
                dumped = data[key].get(item_key)
                if isinstance(item, BaseModel) and isinstance(dumped, dict):
                    _reference_omit(item, dumped)


def _both(obj: BaseModel) -> tuple[dict[str, Any], dict[str, Any]]:
    dumped = obj.model_dump(by_alias=True, exclude_none=True, mode="json")
    expected = copy.deepcopy(dumped)
    _reference_omit(obj, expected)
    _omit_unset_empty(obj, dumped)
    return dumped, expected


class Port(KubeModel):
    name: str = ""
    tags: list[str] = Field(default_factory=list)
    labels: dict[str, str] = {}


class Part(KubeModel):
    ports: list[Port] = []
    by_name: dict[str, Port] = Field(default_factory=dict)
    note: str | None = None
    when: datetime | None = None
    extra_list: list[Any] | None = None


class ThingSpec(KubeModel):
    parts: list[Part] = Field(default_factory=list)
    main: Part = Field(default_factory=Part)
    size: int = 0
    options: dict[str, Any] = Field(default_factory=dict)


class ThingStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)


class Thing(Resource, group_version=GroupVersion("example.pyop.dev", "v1")):
    spec: ThingSpec = Field(default_factory=ThingSpec)
    status: ThingStatus | None = None


ports = st.builds(
    Port,
    name=st.text(max_size=3),
    tags=st.lists(st.text(max_size=2), max_size=2),
    labels=st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2),
)
# Fields left out entirely (unset defaults) or given, possibly as empty lists and maps.
parts = st.fixed_dictionaries(
    {},
    optional={
        "ports": st.lists(ports | st.just(Port()), max_size=2),
        "by_name": st.dictionaries(st.text(max_size=2), ports | st.just(Port()), max_size=2),
        "note": st.none() | st.text(max_size=2),
        "when": st.datetimes(timezones=st.just(UTC)),
        "extra_list": st.lists(st.integers() | st.just(Port()), max_size=2),
    },
).map(Part.model_validate)
specs = st.fixed_dictionaries(
    {},
    optional={
        "parts": st.lists(parts, max_size=2),
        "main": parts,
        "size": st.integers(0, 3),
        "options": st.dictionaries(st.text(max_size=2), st.integers() | st.just(Port()) | st.just([]), max_size=2),
    },
).map(ThingSpec.model_validate)


@settings(max_examples=300, deadline=None)
@given(specs, st.booleans())
def test_built_models_lose_the_same_unset_empty_fields(spec: ThingSpec, with_status: bool) -> None:
    thing = Thing(metadata=ObjectMeta(name="t"), spec=spec, status=ThingStatus() if with_status else None)
    dumped, expected = _both(thing)
    assert dumped == expected
    assert wire_dump(thing) == expected


@settings(max_examples=300, deadline=None)
@given(specs)
def test_objects_from_the_server_lose_the_same_fields(spec: ThingSpec) -> None:
    wire = Thing(metadata=ObjectMeta(name="t"), spec=spec).model_dump(by_alias=True, exclude_none=True, mode="json")
    dumped, expected = _both(from_server(Thing, copy.deepcopy(wire)))
    assert dumped == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_every_kubernetes_kind_loses_the_same_fields(data: st.DataObject) -> None:
    definition = data.draw(st.sampled_from(MODELLED), label="definition")
    model = model_of(definition)
    obj = model.model_validate(data.draw(object_of(definition), label="object"))
    dumped, expected = _both(obj)
    assert dumped == expected


def test_the_known_cases() -> None:
    thing = Thing(
        metadata=ObjectMeta(name="t"), spec=ThingSpec(main=Part(ports=[Port(name="a")])), status=ThingStatus()
    )
    assert wire_dump(thing)["spec"] == {"main": {"ports": [{"name": "a"}]}, "size": 0}
    assert wire_dump(thing)["status"] == {}
    set_empty = Thing(metadata=ObjectMeta(name="t"), spec=ThingSpec(parts=[], options={}))
    assert wire_dump(set_empty)["spec"]["parts"] == [] and wire_dump(set_empty)["spec"]["options"] == {}


def test_a_model_completed_by_a_rebuild_dumps_as_the_reference() -> None:
    class Later(KubeModel):
        items: list[str] = Field(default_factory=list)
        tail: Tail | None = None

    class Tail(KubeModel):
        values: dict[str, str] = {}

    Later.model_rebuild(_types_namespace={"Tail": Tail})
    for obj in (Later(tail=Tail()), Later(tail=Tail(), items=[])):
        dumped, expected = _both(obj)
        assert dumped == expected
    assert wire_dump(Later(tail=Tail())) == {"tail": {}}
    Later.model_rebuild(force=True, _types_namespace={"Tail": Tail})
    assert wire_dump(Later(tail=Tail(), items=[])) == {"items": [], "tail": {}}
    assert _WIRE_FIELDS[Later][0] is Later.__pydantic_fields__  # the plan is tied to the current field table


class SharedKey(KubeModel):
    """Two fields that dump under one wire key (pydantic allows it): walked in field order, as by the reference."""

    first: list[Port] = Field(default_factory=list, alias="x")
    x: list[Port] = Field(default_factory=list)


@given(
    st.fixed_dictionaries({}, optional={"first": st.lists(ports, max_size=2), "x": st.lists(ports, max_size=2)}).map(
        SharedKey.model_validate
    )
)
def test_fields_sharing_a_wire_key_lose_the_same_fields(obj: SharedKey) -> None:
    dumped, expected = _both(obj)
    assert dumped == expected
