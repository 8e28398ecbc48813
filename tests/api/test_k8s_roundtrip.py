"""No data loss: any object the API server could send validates and dumps back to exactly itself.

The objects are random instances of the OpenAPI definitions the models were generated from (tests/api/k8s_objects.py),
with undeclared fields at every level. The documented normalisations do not arise in them: nulls (dropped, as Go's
omitempty drops them), key order (JSON objects are unordered), times in other offsets or precisions (written back in
UTC with the API server's precision), missing apiVersion/kind/metadata on a root kind (filled in).
"""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from k8s_objects import DEFINITIONS, SPECIAL, object_of
from pydantic import BaseModel

from pyop.api.k8s import KUBERNETES_VERSION
from pyop_scaffold.codegen.k8s_models import ALIASES, REUSED, Generator

_GENERATOR = Generator(KUBERNETES_VERSION)


def model_of(definition: str) -> type[BaseModel]:
    if definition in REUSED:
        module, name = REUSED[definition]
    else:
        ref = _GENERATOR.refs[definition]
        module, name = ref.module_package, ref.name
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return model


MODELLED = sorted(d for d in DEFINITIONS if d not in ALIASES and d not in SPECIAL)


def round_trip(model: type[BaseModel], wire: dict[str, Any]) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_validate(wire).model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_every_definition_round_trips(data: st.DataObject) -> None:
    definition = data.draw(st.sampled_from(MODELLED), label="definition")
    wire = data.draw(object_of(definition), label="object")
    assert round_trip(model_of(definition), wire) == wire


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(object_of("io.k8s.api.apps.v1.Deployment"))
def test_deployments_round_trip(wire: dict[str, Any]) -> None:
    from pyop.api.k8s.apps.v1 import Deployment

    assert round_trip(Deployment, wire) == wire


def test_every_definition_has_a_model() -> None:
    for definition in MODELLED:
        model = model_of(definition)
        if definition not in REUSED:
            assert model.__k8s_definition__ == definition  # type: ignore[attr-defined]
