"""CustomResourceDefinitions: serving, versions, subresources, selectable fields, schema admission."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, eventually

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
MERGE = "application/merge-patch+json"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "replicas": {"type": "integer", "default": 1},
                "selector": {"type": "string"},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}, "replicas": {"type": "integer"}}},
    },
}


def widget_crd(versions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    default_version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMA)},
        "subresources": {
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".spec.selector",
            },
        },
        "selectableFields": [{"jsonPath": ".spec.color"}],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": versions or [default_version],
        },
    }


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1, **spec}}


async def _install(api: Api, crd: dict[str, Any] | None = None) -> dict[str, Any]:
    return await api.create_ok(CRD_PATH, crd or widget_crd())


async def test_crd_created_over_http_is_served_with_its_subresources(api: Api) -> None:
    status, _ = await api.get(WIDGETS)
    assert status == 404
    crd = await _install(api)
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["storedVersions"] == ["v1"]
    status, resources = await api.get("/apis/example.com/v1")
    by_name = {entry["name"]: entry for entry in resources["resources"]}
    assert by_name["widgets"]["kind"] == "Widget" and by_name["widgets"]["shortNames"] == ["wd"]
    assert "widgets/status" in by_name and "widgets/scale" in by_name
    status, groups = await api.get("/apis")
    assert "example.com" in {group["name"] for group in groups["groups"]}
    created = await api.create_ok(WIDGETS, widget("w"))
    assert created["kind"] == "Widget" and created["metadata"]["generation"] == 1


async def test_custom_resource_status_and_generation(api: Api) -> None:
    await _install(api)
    await api.create_ok(WIDGETS, widget("w"))
    status, with_status = await api.patch(f"{WIDGETS}/w/status", {"status": {"ready": True}}, MERGE)
    assert status == 200 and with_status["status"] == {"ready": True}
    assert with_status["metadata"]["generation"] == 1
    status, changed = await api.patch(f"{WIDGETS}/w", {"spec": {"size": 3}, "status": {"ready": False}}, MERGE)
    assert changed["metadata"]["generation"] == 2 and changed["status"] == {"ready": True}


async def test_custom_resource_put_requires_resource_version(api: Api) -> None:
    await _install(api)
    await api.create_ok(WIDGETS, widget("w"))
    status, error = await api.put(f"{WIDGETS}/w", widget("w", size=2))
    assert status == 422
    assert error["details"]["causes"][0]["field"] == "metadata.resourceVersion"


async def test_custom_resource_scale_subresource(api: Api) -> None:
    await _install(api)
    await api.create_ok(WIDGETS, widget("w", replicas=2, selector="app=w"))
    status, scale = await api.get(f"{WIDGETS}/w/scale")
    assert scale["spec"]["replicas"] == 2 and scale["status"]["selector"] == "app=w"
    status, _ = await api.put(f"{WIDGETS}/w/scale", {**scale, "spec": {"replicas": 4}})
    status, stored = await api.get(f"{WIDGETS}/w")
    assert stored["spec"]["replicas"] == 4


async def test_selectable_fields_filter_custom_resources(api: Api) -> None:
    await _install(api)
    await api.create_ok(WIDGETS, widget("r", color="red"))
    await api.create_ok(WIDGETS, widget("b", color="blue"))
    status, listed = await api.get(WIDGETS, fieldSelector="spec.color=blue")
    assert status == 200 and [item["metadata"]["name"] for item in listed["items"]] == ["b"]
    status, error = await api.get(WIDGETS, fieldSelector="spec.size=1")
    assert status == 400


async def test_invalid_custom_resource_gets_422_with_causes(api: Api) -> None:
    await _install(api)
    status, error = await api.post(WIDGETS, widget("w", size=0, color="green"))
    assert status == 422
    assert error["reason"] == "Invalid" and error["details"]["kind"] == "Widget"
    causes = {cause["field"]: cause for cause in error["details"]["causes"]}
    assert causes["spec.size"]["reason"] == "FieldValueInvalid"
    assert causes["spec.size"]["message"] == "Invalid value: 0: spec.size in body should be greater than or equal to 1"
    assert causes["spec.color"]["reason"] == "FieldValueNotSupported"
    assert error["message"].startswith('Widget.example.com "w" is invalid: [')
    missing = widget("m")
    del missing["spec"]["size"]
    status, error = await api.post(WIDGETS, missing)
    assert status == 422 and error["details"]["causes"][0]["reason"] == "FieldValueRequired"


async def test_custom_resource_defaults_applied_and_unknown_fields_pruned(api: Api) -> None:
    await _install(api)
    created = await api.create_ok(WIDGETS, widget("w", unknown="dropped"))
    assert created["spec"] == {"size": 1, "color": "red", "replicas": 1}
    status, error = await api.post(WIDGETS, widget("strict", unknown="x"), fieldValidation="Strict")
    assert status == 400 and 'unknown field "spec.unknown"' in error["message"]


async def test_invalid_update_is_rejected_and_leaves_the_object(api: Api) -> None:
    await _install(api)
    await api.create_ok(WIDGETS, widget("w"))
    status, error = await api.patch(f"{WIDGETS}/w", {"spec": {"size": -1}}, MERGE)
    assert status == 422
    status, stored = await api.get(f"{WIDGETS}/w")
    assert stored["spec"]["size"] == 1


async def test_all_served_versions_share_storage(api: Api) -> None:
    schema = {"openAPIV3Schema": copy.deepcopy(SCHEMA)}
    versions = [
        {"name": "v1alpha1", "served": True, "storage": False, "schema": schema},
        {"name": "v1", "served": True, "storage": True, "schema": schema},
        {"name": "v0", "served": False, "storage": False, "schema": schema},
    ]
    await _install(api, widget_crd(versions))
    await api.create_ok(
        "/apis/example.com/v1alpha1/namespaces/default/widgets", {**widget("w"), "apiVersion": "example.com/v1alpha1"}
    )
    status, as_v1 = await api.get(f"{WIDGETS}/w")
    assert status == 200 and as_v1["apiVersion"] == "example.com/v1"
    status, group = await api.get("/apis/example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha1"]
    status, _ = await api.get("/apis/example.com/v0/namespaces/default/widgets")
    assert status == 404


async def test_deleting_a_crd_stops_serving_and_removes_its_objects(api: Api) -> None:
    await _install(api)
    await api.create_ok(WIDGETS, widget("w"))
    watch = await api.watch(WIDGETS, resourceVersion="0")
    assert (await watch.next_of("ADDED"))["object"]["metadata"]["name"] == "w"
    status, _ = await api.delete(f"{CRD_PATH}/widgets.example.com")
    assert status == 200
    assert (await watch.next_of("DELETED"))["object"]["metadata"]["name"] == "w"
    watch.close()

    async def unserved() -> bool:
        status, _ = await api.get(WIDGETS)
        return status == 404

    await eventually(unserved, "the CRD's endpoint removed once its objects are gone")


async def test_a_crd_waits_for_its_custom_resources_finalizers(api: Api) -> None:
    await _install(api)
    held = widget("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(WIDGETS, held)
    status, crd = await api.delete(f"{CRD_PATH}/widgets.example.com")
    assert status == 200 and crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    terminating = [c for c in crd["status"]["conditions"] if c["type"] == "Terminating"]
    assert terminating and terminating[0]["status"] == "True"

    async def held_terminating() -> bool:
        status, obj = await api.get(f"{WIDGETS}/held")
        return status == 200 and bool(obj["metadata"].get("deletionTimestamp"))

    await eventually(held_terminating, "the custom resource marked for deletion")
    status, refused = await api.post(WIDGETS, widget("late"))
    assert status == 405 and refused["reason"] == "MethodNotAllowed"
    assert refused["message"] == "create not allowed while custom resource definition is terminating"
    status, still = await api.get(f"{CRD_PATH}/widgets.example.com")
    assert status == 200  # held while its objects are
    await api.patch(f"{WIDGETS}/held", {"metadata": {"finalizers": None}}, "application/merge-patch+json")

    async def crd_gone() -> bool:
        status, _ = await api.get(f"{CRD_PATH}/widgets.example.com")
        return status == 404

    await eventually(crd_gone, "the CRD deleted after its last object")


async def test_load_crds_from_a_folder(tmp_path: Path, server: TestAPIServer, api: Api) -> None:
    bases = tmp_path / "config" / "crd" / "bases"
    bases.mkdir(parents=True)
    (bases / "example.com_widgets.yaml").write_text(yaml.safe_dump(widget_crd()))
    gadget = widget_crd()
    gadget["metadata"]["name"] = "gadgets.example.com"
    gadget["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    gadget["spec"]["scope"] = "Cluster"
    (bases / "example.com_gadgets.yaml").write_text("---\n" + yaml.safe_dump(gadget) + "---\nkind: Kustomization\n")
    assert sorted(server.load_crds(tmp_path / "config" / "crd")) == ["gadgets.example.com", "widgets.example.com"]
    await api.create_ok(WIDGETS, widget("w"))
    await api.create_ok("/apis/example.com/v1/gadgets", {**widget("g"), "kind": "Gadget"})
    status, crds = await api.get(CRD_PATH)
    assert len(crds["items"]) == 2


async def test_invalid_crd_is_rejected(api: Api) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.example.com"
    status, error = await api.post(CRD_PATH, crd)
    assert status == 422 and error["details"]["causes"][0]["field"] == "metadata.name"
