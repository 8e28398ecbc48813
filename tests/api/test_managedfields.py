"""pyop.api.managedfields on its own: FieldsV1 set algebra, the schema view of built-in kinds, and the
Apply/Update bookkeeping without a server (the server's behaviour is in tests/testing_server)."""

from __future__ import annotations

from typing import Any

import pytest

from pyop.api import managedfields as mf
from pyop.api.managedfields.fieldpath import difference, intersection, union
from pyop.api.managedfields.schema import LIST, MAP, SCALAR

DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"


def test_set_algebra_tells_members_from_paths_below_them() -> None:
    labels_owned: mf.FieldSet = {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}
    one_label: mf.FieldSet = {"f:metadata": {"f:labels": {"f:a": {}}}}
    assert difference(labels_owned, one_label) == {"f:metadata": {"f:labels": {}}}  # the map itself stays owned
    assert difference(one_label, labels_owned) == {}
    assert intersection(labels_owned, one_label) == one_label
    assert union(one_label, {"f:metadata": {"f:labels": {"f:b": {}}}}) == {
        "f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}
    }
    assert union(one_label, {}) is one_label  # nothing added: the same set, not a copy


def test_paths_print_as_kube_apiserver_prints_them() -> None:
    fields = {
        "f:spec": {
            "f:containers": {'k:{"name":"app"}': {".": {}, "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {}}}},
            "f:finalizers": {'v:"a"': {}},
        }
    }
    assert [mf.path_string(path) for path in mf.paths(fields)] == [
        '.spec.containers[name="app"]',
        '.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]',
        '.spec.finalizers[="a"]',
    ]


def test_the_schema_of_a_built_in_kind_comes_from_its_openapi_markers() -> None:
    deployment = mf.builtin_type(DEPLOYMENT)
    spec = deployment.child("spec")
    pod = spec.child("template").child("spec")
    containers = pod.child("containers")
    assert (containers.kind, containers.keys, containers.atomic) == (LIST, ("name",), False)
    ports = containers.element.child("ports") if containers.element else None
    assert ports is not None and ports.keys == ("containerPort", "protocol")
    assert ports.key_defaults == {"protocol": "TCP"}
    args = containers.element.child("args") if containers.element else None
    assert args is not None and args.atomic
    selector = spec.child("selector")
    assert (selector.kind, selector.atomic) == (MAP, True)  # x-kubernetes-map-type: atomic
    labels = deployment.child("metadata").child("labels")
    assert (labels.kind, labels.atomic, labels.child("any").kind) == (MAP, False, SCALAR)
    finalizers = deployment.child("metadata").child("finalizers")
    assert (finalizers.kind, finalizers.keys, finalizers.atomic) == (LIST, (), False)  # a set


def test_a_custom_resource_schema_defaults_lists_to_atomic_and_keeps_object_meta() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "plain": {"type": "array", "items": {"type": "string"}},
                    "keyed": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["id"],
                        "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                    },
                },
            }
        },
    }
    widget = mf.custom_resource_type(schema)
    assert widget.child("spec").child("plain").atomic
    assert widget.child("spec").child("keyed").keys == ("id",)
    assert widget.child("metadata").child("ownerReferences").keys == ("uid",)


def test_apply_removes_what_the_manager_stopped_applying_and_conflicts_on_others_fields() -> None:
    t = mf.builtin_type("io.k8s.api.core.v1.ConfigMap")
    alice = mf.Manager("alice", mf.APPLY, "v1", {}, time="t1")
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    first = {**live, "data": {"a": "1", "b": "1"}}
    obj, managers = mf.apply(live, first, t, {}, alice, force=False)
    assert managers[alice.identity].fields == {"f:data": {"f:a": {}, "f:b": {}}}
    obj, managers = mf.apply(obj, {**live, "data": {"a": "1"}}, t, managers, alice, force=False)
    assert obj["data"] == {"a": "1"}
    bob = mf.Manager("bob", mf.APPLY, "v1", {}, time="t2")
    with pytest.raises(mf.ApplyConflict) as raised:
        mf.apply(obj, {**live, "data": {"a": "2"}}, t, managers, bob, force=False)
    assert raised.value.summary() == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    obj, managers = mf.apply(obj, {**live, "data": {"a": "2"}}, t, managers, bob, force=True)
    assert alice.identity not in managers and managers[bob.identity].fields == {"f:data": {"f:a": {}}}


def test_update_managers_are_told_apart_by_api_version_and_subresource() -> None:
    t = mf.builtin_type(DEPLOYMENT)
    old = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}}
    new = {**old, "spec": {"replicas": 2}}
    writer = mf.Manager("ctrl", mf.UPDATE, "apps/v1", {}, time="t")
    managers = mf.update(old, new, t, {}, writer)
    status_writer = mf.Manager("ctrl", mf.UPDATE, "apps/v1", {}, "status", "t")
    managers = mf.update(new, {**new, "status": {"replicas": 2}}, t, managers, status_writer)
    assert sorted(managers) == [("ctrl", "Update", "apps/v1", ""), ("ctrl", "Update", "apps/v1", "status")]
    entries = mf.encode(managers)
    assert [e.get("subresource", "") for e in entries] == ["", "status"]
    assert mf.decode(entries) == managers


def test_decode_refuses_entries_kube_apiserver_refuses() -> None:
    with pytest.raises(mf.InvalidManagedFields, match="operation must be `Apply` or `Update`"):
        mf.decode([{"manager": "x", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}])
    with pytest.raises(mf.InvalidManagedFields, match="missing fieldsType"):
        mf.decode([{"manager": "x", "operation": "Update", "apiVersion": "v1"}])
    assert mf.is_reset([{}]) and not mf.is_reset([])


def test_more_than_ten_update_managers_merge_the_oldest_into_ancient_changes() -> None:
    t = mf.builtin_type("io.k8s.api.core.v1.ConfigMap")
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    managers: mf.Managers = {}
    for n in range(12):
        new = {**obj, "data": {**obj["data"], f"k{n}": "v"}}
        writer = mf.Manager(f"m{n:02d}", mf.UPDATE, "v1", {}, time=f"2026-01-01T00:00:{n:02d}Z")
        managers = mf.update(obj, new, t, managers, writer)
        obj = new
    names = sorted(m.manager for m in managers.values())
    assert len(names) == 10 and "ancient-changes" in names and "m00" not in names and "m02" not in names
    ancient = next(m for m in managers.values() if m.manager == "ancient-changes")
    assert ancient.fields == {"f:data": {"f:k0": {}, "f:k1": {}, "f:k2": {}}}
    assert ancient.time == "2026-01-01T00:00:02Z"


@pytest.mark.parametrize("builtin", [True, False])
def test_create_owns_what_a_comparison_with_the_empty_object_finds(builtin: bool) -> None:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "d"}, "finalizers": ["a", "b"]},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}], "args": []}]}},
        },
        "status": {},
    }
    t = mf.builtin_type(DEPLOYMENT) if builtin else mf.custom_resource_type(None)
    skeleton: dict[str, Any] = {"metadata": {}, "spec": {}, "status": {}} if builtin else {}
    writer = mf.Manager("w", mf.UPDATE, "apps/v1", {}, time="t")
    created = mf.create(obj, t, {}, writer, existing=frozenset(skeleton))
    assert created == mf.update(skeleton, obj, t, {}, writer)
    fields = created[writer.identity].fields
    assert ("." in fields["f:spec"]) is not builtin  # a custom resource's spec is new as a whole
