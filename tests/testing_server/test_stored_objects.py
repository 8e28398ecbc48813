"""Versions of an object share unchanged parts in the store; no write may change an earlier version.

Earlier versions are what watch history replays and what list snapshots and clients already hold, so a write
that modified them in place would rewrite the past.
"""

from __future__ import annotations

import copy
from typing import Any

from pyop.testing import TestAPIServer
from testing_server.helpers import Api

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = "/apis/example.com/v1/namespaces/default/gadgets"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"


def gadget_crd(spec_properties: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": spec_properties},
            "status": {
                "type": "object",
                "properties": {"phase": {"type": "string", "default": "New"}, "count": {"type": "integer"}},
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


SPEC_PROPERTIES: dict[str, Any] = {
    "size": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "options": {"type": "object", "properties": {"mode": {"type": "string", "default": "fast"}}},
    "legacy": {"type": "string"},
}


def stored(server: TestAPIServer, name: str) -> dict[str, Any]:
    obj = server.store.get("gadgets.example.com", "default", name)
    assert obj is not None
    return obj


async def test_no_kind_of_write_changes_an_earlier_version(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(CRD_PATH, gadget_crd(SPEC_PROPERTIES))
    body = {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "labels": {"a": "1"}},
        "spec": {"size": 1, "tags": ["x"], "options": {}},
    }
    await api.create_ok(GADGETS, body)
    versions: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def remember() -> None:
        current = stored(server, "g")
        versions.append((current, copy.deepcopy(current)))

    writes = [
        ("PATCH", "/g", {"spec": {"size": 2}}, MERGE),
        ("PATCH", "/g/status", {"status": {"count": 1}}, MERGE),
        ("PATCH", "/g", {"metadata": {"labels": {"b": "2"}}, "spec": {"options": {"mode": "slow"}}}, MERGE),
        ("PATCH", "/g", [{"op": "add", "path": "/spec/tags/-", "value": "y"}], JSON_PATCH),
        ("PATCH", "/g/status", {"status": {"count": None, "phase": "Done"}}, MERGE),
        ("PATCH", "/g", {"metadata": {"finalizers": ["example.com/keep"]}}, MERGE),
    ]
    for method, suffix, patch, content_type in writes:
        remember()
        status, answer = await api.call(method, GADGETS + suffix, patch, content_type=content_type)
        assert status == 200, answer
    remember()
    status, answer = await api.patch(
        GADGETS + "/g",
        {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 7}},
        APPLY,
        fieldManager="tester",
        force="true",  # spec.size belongs to the Update manager of the patches above: a plain apply conflicts
    )
    assert status == 200, answer
    remember()
    current = stored(server, "g")
    status, answer = await api.put(GADGETS + "/g", {**current, "spec": {**current["spec"], "size": 8}})
    assert status == 200, answer
    remember()
    status, answer = await api.delete(GADGETS + "/g")
    assert status == 200, answer  # held by finalizers: still 200 with the object, as kube-apiserver answers

    resource_versions = [obj["metadata"]["resourceVersion"] for obj, _ in versions]
    assert len(set(resource_versions)) == len(versions), "every write above made a new version"
    for obj, snapshot in versions:
        assert obj == snapshot
    assert versions[0][1]["spec"] == {"size": 1, "tags": ["x"], "options": {"mode": "fast"}}
    assert versions[-1][1]["spec"] == {"size": 8, "tags": ["x", "y"], "options": {"mode": "slow"}}
    assert versions[-1][1]["status"] == {"phase": "Done"}


async def test_a_schema_change_prunes_new_versions_only(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(CRD_PATH, gadget_crd(SPEC_PROPERTIES))
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    created = await api.create_ok(GADGETS, {**body, "spec": {"size": 1, "legacy": "old"}})
    first = stored(server, "g")
    snapshot = copy.deepcopy(first)
    assert first["spec"] == {"size": 1, "legacy": "old"}

    without_legacy = {name: schema for name, schema in SPEC_PROPERTIES.items() if name != "legacy"}
    server.add_crd(gadget_crd(without_legacy))
    watch = await api.watch(GADGETS, resourceVersion=created["metadata"]["resourceVersion"])
    try:
        # A write that leaves spec alone: the stored spec is carried over, and pruned on the way.
        status, patched = await api.patch(GADGETS + "/g", {"metadata": {"labels": {"touched": "yes"}}}, MERGE)
        assert status == 200, patched
        assert patched["spec"] == {"size": 1}  # the field the schema no longer has is pruned on write
        event = await watch.next_of("MODIFIED")
        assert event["object"]["spec"] == {"size": 1}
    finally:
        watch.close()
    assert first == snapshot  # the earlier version keeps it
    assert server.store.history[-1].prev is first


async def test_update_entries_accumulate_per_manager_and_repeats_are_no_ops(api: Api) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k1": "1"}}
    await api.create_ok(path, body, fieldManager="a")
    status, first = await api.patch(path + "/c", {"data": {"k2": "2"}}, MERGE, fieldManager="a")
    assert status == 200, first
    status, again = await api.patch(path + "/c", {"data": {"k2": "2"}}, MERGE, fieldManager="a")
    assert status == 200 and again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    status, other = await api.patch(path + "/c", {"data": {"k3": "3"}}, MERGE, fieldManager="b")
    assert status == 200, other
    entries = {entry["manager"]: entry for entry in other["metadata"]["managedFields"]}
    assert set(entries) == {"a", "b"}
    # data was absent before the create: the creator owns the map itself too ("."), as on kube-apiserver
    assert entries["a"]["fieldsV1"]["f:data"] == {".": {}, "f:k1": {}, "f:k2": {}}
    assert entries["b"]["fieldsV1"]["f:data"] == {"f:k3": {}}
    assert entries["a"] == next(e for e in first["metadata"]["managedFields"] if e["manager"] == "a")
