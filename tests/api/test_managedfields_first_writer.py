"""managedFields of a create that nobody else owns anything of: ``ownership.create``'s shortcut (the changed paths
built without the stripped fields: apiVersion, kind, metadata's name, uid, ...) gives what the general path gives
(every path, then the stripped ones taken away), for generated objects of a custom resource and of a built-in kind.

The general path is reached by the same call with a second manager that owns nothing (it is dropped from the
result), as in test_managedfields_sole_writer."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.api import managedfields as mf
from pyop.api.managedfields import ownership
from pyop.api.managedfields.ownership import UPDATE, Manager

WRITER = Manager("writer", UPDATE, "example.com/v1", {}, "", "2026-01-01T00:00:02Z")
IDLE = Manager("idle", UPDATE, "example.com/v1", {}, "", "2026-01-01T00:00:00Z")

CR_TYPE = mf.custom_resource_type(
    {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                },
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
)
CONFIGMAP_TYPE = mf.builtin_type("io.k8s.api.core.v1.ConfigMap")

SCALARS = st.one_of(st.text(max_size=3), st.integers(-2, 2), st.booleans(), st.none())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["a", "b", "name"]), inner, max_size=2)
    ),
    max_leaves=6,
)
META_NAMES = st.sampled_from(
    [
        "name",
        "namespace",
        "uid",
        "generation",
        "managedFields",
        "resourceVersion",
        "labels",
        "annotations",
        "finalizers",
    ]
)
METADATA = st.one_of(st.dictionaries(META_NAMES, VALUES, max_size=5), VALUES)
PORTS = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["http", "grpc"])}), max_size=2, unique_by=str)


def _objects() -> st.SearchStrategy[dict[str, Any]]:
    spec = st.one_of(st.fixed_dictionaries({"ports": PORTS}, optional={"tags": st.lists(st.text(max_size=2))}), VALUES)
    return st.fixed_dictionaries(
        {},
        optional={
            "apiVersion": VALUES,
            "kind": VALUES,
            "metadata": METADATA,
            "spec": spec,
            "status": VALUES,
            "data": st.dictionaries(st.sampled_from(["k", "l"]), st.text(max_size=2), max_size=2),
        },
    )


def _shape(managers: dict[Any, Manager]) -> dict[Any, tuple[Any, str | None]]:
    return {identity: (manager.fields, manager.time) for identity, manager in managers.items()}


def _both(obj: dict[str, Any], t: mf.Type, scope: mf.Scope, existing: frozenset[str]) -> tuple[Any, Any]:
    try:
        fast: Any = _shape(ownership.create(obj, t, {}, WRITER, scope, existing=existing))
    except mf.SchemaError as error:
        fast = str(error)
    try:
        general_result = dict(ownership.create(obj, t, {IDLE.identity: IDLE}, WRITER, scope, existing=existing))
        general_result.pop(IDLE.identity, None)
        general: Any = _shape(general_result)
    except mf.SchemaError as error:
        general = str(error)
    return fast, general


@settings(max_examples=400, deadline=None)
@given(_objects(), st.sampled_from([mf.Scope(), mf.Scope(drop=frozenset({"f:status"}))]))
def test_a_custom_resources_first_writer_owns_what_the_general_path_gives(obj: dict[str, Any], scope: mf.Scope) -> None:
    fast, general = _both(obj, CR_TYPE, scope, frozenset())
    assert fast == general


@settings(max_examples=300, deadline=None)
@given(_objects())
def test_a_builtins_first_writer_owns_what_the_general_path_gives(obj: dict[str, Any]) -> None:
    fast, general = _both(obj, CONFIGMAP_TYPE, mf.Scope(), frozenset({"metadata"}))
    assert fast == general


def test_the_stripped_fields_are_not_owned() -> None:
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n", "uid": "u", "labels": {"app": "x"}},
        "spec": {"ports": [{"name": "http"}]},
    }
    (fields, time), *_ = _shape(ownership.create(obj, CR_TYPE, {}, WRITER)).values()
    assert time == WRITER.time
    assert fields == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {".": {}, "f:ports": {".": {}, 'k:{"name":"http"}': {".": {}, "f:name": {}}}},
    }
