"""Server-side apply with field ownership, against kube-apiserver's documented behaviour
(https://kubernetes.io/docs/reference/using-api/server-side-apply/): conflicts and force, removal of fields a
manager stops applying, merging of map lists by key and of sets, atomic maps and lists, shared ownership, Update
managers, managedFields edits and resets, apply on create, on /status and with dryRun; for built-in kinds (their
OpenAPI markers) and custom resources (their schema's markers). Driven over HTTP, with pyop's client and with the
official `kubernetes` client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pyop.client import ConflictError, DynamicClient, Transport
from pyop.testing import TestAPIServer
from testing_server.helpers import CM, DEPLOY, Api, official_client

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
GROUP = "ssa.example.com"
WIDGETS = f"/apis/{GROUP}/v1/namespaces/default/widgets"


def cm(name: str = "c", **data: str) -> dict[str, Any]:
    """A ConfigMap configuration; without data it applies no `data` at all (`data: {}` would own the map)."""
    config: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    if data:
        config["data"] = data
    return config


def deploy(name: str = "d", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def full_deploy(name: str = "d", replicas: int = 1, containers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return deploy(
        name,
        replicas=replicas,
        selector={"matchLabels": {"app": name}},
        template={
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": containers or [{"name": "app", "image": "app:1"}]},
        },
    )


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


def entries(obj: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """managedFields by (manager, operation, subresource)."""
    return {
        (e["manager"], e["operation"], e.get("subresource", "")): e for e in obj["metadata"].get("managedFields") or []
    }


def fields(obj: dict[str, Any], manager: str, operation: str = "Apply", subresource: str = "") -> dict[str, Any]:
    return entries(obj)[(manager, operation, subresource)]["fieldsV1"]  # type: ignore[no-any-return]


async def apply(api: Api, path: str, config: dict[str, Any], manager: str, **params: Any) -> tuple[int, Any]:
    return await api.patch(path, config, APPLY, fieldManager=manager, **params)


async def apply_ok(api: Api, path: str, config: dict[str, Any], manager: str, **params: Any) -> dict[str, Any]:
    status, obj = await apply(api, path, config, manager, **params)
    assert status in (200, 201), obj
    return obj  # type: ignore[no-any-return]


# --- conflicts and force ------------------------------------------------------------------------------------


async def test_a_second_applier_of_a_field_gets_a_conflict_naming_the_owner(api: Api) -> None:
    await apply_ok(api, f"{DEPLOY}/d", full_deploy(replicas=2), "alice")
    status, error = await apply(api, f"{DEPLOY}/d", deploy(replicas=3), "bob")
    assert status == 409 and error["reason"] == "Conflict"
    assert error["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas'
    assert error["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.replicas"}
    ]
    _, stored = await api.get(f"{DEPLOY}/d")
    assert stored["spec"]["replicas"] == 2 and ("bob", "Apply", "") not in entries(stored)


async def test_conflicts_with_an_update_manager_name_its_api_version_and_list_every_field(api: Api) -> None:
    await api.create_ok(CM, cm(a="1", b="1"), fieldManager="creator")
    status, error = await apply(api, f"{CM}/c", cm(a="2", b="2"), "ssa")
    assert status == 409
    assert error["message"] == (
        'Apply failed with 2 conflicts: conflicts with "creator" using v1:\n- .data.a\n- .data.b'
    )
    assert [(c["field"], c["message"]) for c in error["details"]["causes"]] == [
        (".data.a", 'conflict with "creator" using v1'),
        (".data.b", 'conflict with "creator" using v1'),
    ]


async def test_force_takes_ownership_from_the_other_managers(api: Api) -> None:
    await apply_ok(api, f"{DEPLOY}/d", full_deploy(replicas=2), "alice")
    forced = await apply_ok(api, f"{DEPLOY}/d", deploy(replicas=3), "bob", force="true")
    assert forced["spec"]["replicas"] == 3
    assert fields(forced, "bob") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields(forced, "alice")["f:spec"]
    # alice no longer owns replicas: applying without it removes nothing, applying it conflicts with bob now
    status, error = await apply(api, f"{DEPLOY}/d", full_deploy(replicas=2), "alice")
    assert status == 409 and error["details"]["causes"][0]["message"] == 'conflict with "bob"'


async def test_applying_the_value_another_manager_set_shares_the_field(api: Api) -> None:
    await apply_ok(api, f"{CM}/c", cm(k="1"), "alice")
    shared = await apply_ok(api, f"{CM}/c", cm(k="1"), "bob")  # same value: no conflict
    assert fields(shared, "alice") == fields(shared, "bob") == {"f:data": {"f:k": {}}}
    kept = await apply_ok(api, f"{CM}/c", cm(), "alice")  # alice lets go; bob still owns it
    assert kept["data"] == {"k": "1"}
    assert ("alice", "Apply", "") not in entries(kept)
    gone = await apply_ok(api, f"{CM}/c", cm(), "bob")
    assert "k" not in (gone.get("data") or {})


# --- removal of fields a manager no longer applies ----------------------------------------------------------


async def test_fields_an_applier_drops_are_removed_unless_another_manager_owns_them(api: Api) -> None:
    config = cm(a="1", b="1")
    config["metadata"]["labels"] = {"x": "1", "y": "1"}
    await apply_ok(api, f"{CM}/c", config, "alice")
    status, _ = await api.patch(f"{CM}/c", {"metadata": {"labels": {"z": "1"}}, "data": {"c": "1"}}, MERGE)
    assert status == 200
    smaller = cm(a="1")
    smaller["metadata"]["labels"] = {"x": "1"}
    applied = await apply_ok(api, f"{CM}/c", smaller, "alice")
    assert applied["data"] == {"a": "1", "c": "1"}
    assert applied["metadata"]["labels"] == {"x": "1", "z": "1"}
    assert fields(applied, "alice") == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}


async def test_an_item_of_a_map_list_dropped_by_its_applier_is_removed(api: Api) -> None:
    two = [{"name": "app", "image": "app:1"}, {"name": "side", "image": "side:1"}]
    await apply_ok(api, f"{DEPLOY}/d", full_deploy(containers=two), "alice")
    applied = await apply_ok(api, f"{DEPLOY}/d", full_deploy(containers=two[:1]), "alice")
    assert [c["name"] for c in containers(applied)] == ["app"]


# --- merge by schema: map lists, sets, atomic values --------------------------------------------------------


async def test_containers_merge_by_name_and_each_applier_owns_its_own(api: Api) -> None:
    await apply_ok(api, f"{DEPLOY}/d", full_deploy(), "alice")
    side = deploy(template={"spec": {"containers": [{"name": "side", "image": "side:1"}]}})
    merged = await apply_ok(api, f"{DEPLOY}/d", side, "bob")
    assert [(c["name"], c["image"]) for c in containers(merged)] == [("app", "app:1"), ("side", "side:1")]
    assert fields(merged, "bob") == {
        "f:spec": {
            "f:template": {"f:spec": {"f:containers": {'k:{"name":"side"}': {".": {}, "f:name": {}, "f:image": {}}}}}
        }
    }
    app_containers = fields(merged, "alice")["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert set(app_containers) == {'k:{"name":"app"}'}
    # changing another applier's container image conflicts on that item's field
    status, error = await apply(
        api, f"{DEPLOY}/d", deploy(template={"spec": {"containers": [{"name": "app", "image": "app:2"}]}}), "bob"
    )
    assert status == 409
    assert error["details"]["causes"][0]["field"] == '.spec.template.spec.containers[name="app"].image'


async def test_container_ports_are_keyed_by_container_port_and_protocol(api: Api) -> None:
    tcp = [{"name": "app", "image": "app:1", "ports": [{"containerPort": 53}]}]
    await apply_ok(api, f"{DEPLOY}/d", full_deploy(containers=tcp), "alice")
    udp = [{"name": "app", "ports": [{"containerPort": 53, "protocol": "UDP"}]}]
    merged = await apply_ok(api, f"{DEPLOY}/d", deploy(template={"spec": {"containers": udp}}), "bob")
    ports = containers(merged)[0]["ports"]
    assert sorted((p["containerPort"], p["protocol"]) for p in ports) == [(53, "TCP"), (53, "UDP")]
    alice_ports = fields(merged, "alice")["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert set(alice_ports["f:ports"]) == {'k:{"containerPort":53,"protocol":"TCP"}'}


async def test_finalizers_are_a_set_merged_by_value(api: Api) -> None:
    first = cm()
    first["metadata"]["finalizers"] = ["example.com/a"]
    await apply_ok(api, f"{CM}/c", first, "alice")
    second = cm()
    second["metadata"]["finalizers"] = ["example.com/b"]
    merged = await apply_ok(api, f"{CM}/c", second, "bob")
    assert merged["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    assert fields(merged, "bob") == {"f:metadata": {"f:finalizers": {'v:"example.com/b"': {}}}}
    dropped = await apply_ok(api, f"{CM}/c", cm(), "alice")
    assert dropped["metadata"]["finalizers"] == ["example.com/b"]


async def test_atomic_lists_and_maps_are_owned_and_replaced_whole(api: Api) -> None:
    with_args = [{"name": "app", "image": "app:1", "args": ["--a", "--b"]}]
    created = await apply_ok(api, f"{DEPLOY}/d", full_deploy(containers=with_args), "alice")
    alice = fields(created, "alice")["f:spec"]
    assert alice["f:selector"] == {}  # LabelSelector is x-kubernetes-map-type: atomic
    assert alice["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']["f:args"] == {}
    other_args = deploy(template={"spec": {"containers": [{"name": "app", "args": ["--c"]}]}})
    status, error = await apply(api, f"{DEPLOY}/d", other_args, "bob")
    assert status == 409
    assert error["details"]["causes"][0]["field"] == '.spec.template.spec.containers[name="app"].args'
    forced = await apply_ok(api, f"{DEPLOY}/d", other_args, "bob", force="true")
    assert containers(forced)[0]["args"] == ["--c"]  # replaced, not merged
    status, error = await apply(api, f"{DEPLOY}/d", deploy(selector={"matchLabels": {"extra": "1"}}), "bob")
    assert status == 409 and error["details"]["causes"][0]["field"] == ".spec.selector"


# --- Update managers ---------------------------------------------------------------------------------------


async def test_updates_record_one_entry_per_manager_api_version_and_subresource(api: Api) -> None:
    await api.create_ok(DEPLOY, full_deploy(), fieldManager="ctrl")
    await api.patch(f"{DEPLOY}/d", {"spec": {"paused": True}}, MERGE, fieldManager="ctrl")
    status, patched = await api.patch(f"{DEPLOY}/d", {"spec": {"minReadySeconds": 5}}, MERGE, fieldManager="ctrl")
    assert status == 200
    updates = [e for e in patched["metadata"]["managedFields"] if e["manager"] == "ctrl"]
    assert len(updates) == 1  # (manager, operation, apiVersion, subresource) identical: merged into one entry
    entry = updates[0]
    assert entry["operation"] == "Update" and entry["apiVersion"] == "apps/v1" and entry["time"].endswith("Z")
    spec = entry["fieldsV1"]["f:spec"]
    assert {"f:paused", "f:minReadySeconds", "f:replicas", "f:template"} <= set(spec)
    assert "." not in spec  # a built-in's struct fields exist in the empty object: not owned as a whole
    status, updated = await api.patch(
        f"{DEPLOY}/d/status", {"status": {"observedGeneration": 3}}, MERGE, fieldManager="ctrl"
    )
    assert status == 200
    status_entry = entries(updated)[("ctrl", "Update", "status")]
    assert status_entry["fieldsV1"] == {"f:status": {"f:observedGeneration": {}}}
    assert "f:status" not in fields(updated, "ctrl", "Update")


async def test_a_scale_write_owns_the_replicas_under_the_scale_subresource(api: Api) -> None:
    await apply_ok(api, f"{DEPLOY}/d", full_deploy(replicas=2), "alice")
    status, _ = await api.patch(f"{DEPLOY}/d/scale", {"spec": {"replicas": 4}}, MERGE, fieldManager="autoscaler")
    assert status == 200
    _, stored = await api.get(f"{DEPLOY}/d")
    assert fields(stored, "autoscaler", "Update", "scale") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields(stored, "alice")["f:spec"]


async def test_an_update_takes_fields_from_their_applier(api: Api) -> None:
    await apply_ok(api, f"{CM}/c", cm(a="1", b="1"), "alice")
    status, _ = await api.patch(f"{CM}/c", {"data": {"a": "edited"}}, MERGE, fieldManager="editor")
    assert status == 200
    reapplied = await apply_ok(api, f"{CM}/c", cm(b="1"), "alice")  # alice no longer owned a: it stays
    assert reapplied["data"] == {"a": "edited", "b": "1"}
    assert fields(reapplied, "editor", "Update") == {"f:data": {"f:a": {}}}


async def test_update_then_apply_of_the_same_value_shares_and_of_another_conflicts(api: Api) -> None:
    await api.create_ok(CM, cm(k="1"), fieldManager="creator")
    shared = await apply_ok(api, f"{CM}/c", cm(k="1"), "ssa")
    assert fields(shared, "ssa") == {"f:data": {"f:k": {}}}
    assert fields(shared, "creator", "Update") == {"f:data": {".": {}, "f:k": {}}}
    assert list(fields(shared, "creator", "Update")["f:data"]) == [".", "f:k"]  # "." first, as kube writes it
    status, error = await apply(api, f"{CM}/c", cm(k="2"), "ssa")
    assert status == 409 and error["details"]["causes"][0]["message"] == 'conflict with "creator" using v1'


async def test_managed_fields_sent_in_an_update_replace_them_and_an_empty_entry_resets_them(api: Api) -> None:
    await apply_ok(api, f"{CM}/c", cm(k="1"), "alice")
    _, stored = await api.get(f"{CM}/c")
    stored["metadata"]["managedFields"] = [
        {**e, "manager": "renamed"} for e in stored["metadata"]["managedFields"] if e["manager"] == "alice"
    ]
    status, replaced = await api.put(f"{CM}/c", stored)
    assert status == 200 and [e["manager"] for e in replaced["metadata"]["managedFields"]] == ["renamed"]
    status, kept = await api.patch(f"{CM}/c", {"metadata": {"managedFields": []}}, MERGE)
    assert status == 200 and [e["manager"] for e in kept["metadata"]["managedFields"]] == ["renamed"]
    status, reset = await api.patch(f"{CM}/c", {"metadata": {"managedFields": [{}]}}, MERGE)
    assert status == 200 and "managedFields" not in reset["metadata"]
    _, read = await api.get(f"{CM}/c")
    assert "managedFields" not in read["metadata"]


async def test_after_a_reset_the_existing_fields_belong_to_before_first_apply(api: Api) -> None:
    await apply_ok(api, f"{CM}/c", cm(k="1"), "alice")
    status, reset = await api.patch(f"{CM}/c", {"metadata": {"managedFields": [{}]}}, MERGE)
    assert status == 200 and "managedFields" not in reset["metadata"]
    status, error = await apply(api, f"{CM}/c", cm(k="2"), "alice")
    assert status == 409
    assert error["details"]["causes"][0]["message"] == 'conflict with "before-first-apply" using v1'
    forced = await apply_ok(api, f"{CM}/c", cm(k="2"), "alice", force="true")
    assert fields(forced, "alice") == {"f:data": {"f:k": {}}}
    assert ("before-first-apply", "Update", "") in entries(forced)  # still owns the map itself


# --- apply on create, on /status, dry run and bad requests -------------------------------------------------


async def test_apply_creates_an_object_owning_exactly_its_configuration(api: Api) -> None:
    status, created = await apply(api, f"{DEPLOY}/d", full_deploy(), "alice")
    assert status == 201
    (entry,) = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("alice", "Apply", "apps/v1")
    assert entry["fieldsV1"] == {
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:name": {}, "f:image": {}}}},
            },
        }
    }
    assert containers(created)[0]["imagePullPolicy"] == "IfNotPresent"  # defaulted, owned by nobody


async def test_apply_on_status_is_owned_separately_and_main_resource_apply_ignores_status(api: Api) -> None:
    config = full_deploy()
    config["status"] = {"replicas": 7}
    created = await apply_ok(api, f"{DEPLOY}/d", config, "alice")
    assert "f:status" not in fields(created, "alice") and created.get("status", {}).get("replicas") != 7
    status_config = deploy()
    del status_config["spec"]
    status_config["status"] = {"readyReplicas": 1}
    applied = await apply_ok(api, f"{DEPLOY}/d/status", status_config, "ctrl")
    assert applied["status"]["readyReplicas"] == 1
    assert fields(applied, "ctrl", "Apply", "status") == {"f:status": {"f:readyReplicas": {}}}
    status_config["status"] = {"readyReplicas": 2}
    status, error = await apply(api, f"{DEPLOY}/d/status", status_config, "other")
    assert status == 409
    assert error["details"]["causes"][0]["message"] == 'conflict with "ctrl" with subresource "status"'


async def test_dry_run_apply_answers_the_result_and_stores_nothing(api: Api) -> None:
    await apply_ok(api, f"{CM}/c", cm(k="1"), "alice")
    _, before = await api.get(f"{CM}/c")
    status, answer = await apply(api, f"{CM}/c", cm(k="2"), "alice", dryRun="All")
    assert status == 200 and answer["data"] == {"k": "2"}
    _, after = await api.get(f"{CM}/c")
    assert after == before
    status, created = await apply(api, f"{CM}/new", cm("new", k="1"), "alice", dryRun="All")
    assert status == 201 and created["metadata"]["managedFields"][0]["manager"] == "alice"
    assert (await api.get(f"{CM}/new"))[0] == 404


async def test_apply_requires_a_field_manager_as_patch_options_validation(api: Api) -> None:
    status, error = await api.patch(f"{CM}/c", cm(k="1"), APPLY)
    assert status == 422 and error["reason"] == "Invalid"
    assert error["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    assert error["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: is required for apply patch",
            "field": "fieldManager",
        }
    ]


async def test_apply_rejects_managed_fields_a_wrong_version_and_items_without_keys(api: Api) -> None:
    with_managed = cm(k="1")
    with_managed["metadata"]["managedFields"] = [{"manager": "x"}]
    status, error = await apply(api, f"{CM}/c", with_managed, "alice")
    assert status == 400 and error["message"] == "metadata.managedFields must be nil"
    status, error = await apply(api, f"{DEPLOY}/d", {**full_deploy(), "apiVersion": "apps/v1beta1"}, "alice")
    assert status == 400
    assert error["message"] == (
        "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1"
    )
    status, error = await apply(api, f"{DEPLOY}/d", full_deploy(containers=[{"image": "x"}]), "alice")
    assert status == 500
    assert 'associative list with keys has an element that omits key field "name"' in error["message"]
    assert (await api.get(f"{DEPLOY}/d"))[0] == 404


# --- a custom resource with list and map markers ----------------------------------------------------------

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer"},
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["port", "protocol"],
                                        "items": {
                                            "type": "object",
                                            "required": ["port"],
                                            "properties": {
                                                "port": {"type": "integer"},
                                                "protocol": {"type": "string", "default": "TCP"},
                                                "name": {"type": "string"},
                                            },
                                        },
                                    },
                                    "tags": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"},
                                    },
                                    "plain": {"type": "array", "items": {"type": "string"}},
                                    "selector": {
                                        "type": "object",
                                        "x-kubernetes-map-type": "atomic",
                                        "additionalProperties": {"type": "string"},
                                    },
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            },
                            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                        },
                    }
                },
            }
        ],
    },
}


def widget(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


@pytest.fixture
def widgets(server: TestAPIServer) -> str:
    server.add_crd(WIDGET_CRD)
    return WIDGETS


async def test_custom_resource_lists_and_maps_follow_their_schema_markers(api: Api, widgets: str) -> None:
    created = await apply_ok(
        api,
        f"{widgets}/w",
        widget(size=1, ports=[{"port": 80}], tags=["a"], plain=["x"], selector={"k": "1"}, extra={"deep": {"n": 1}}),
        "alice",
    )
    assert fields(created, "alice") == {
        "f:spec": {  # an applied configuration owns what it sets, not the maps around it
            "f:size": {},
            "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
            "f:tags": {'v:"a"': {}},
            "f:plain": {},
            "f:selector": {},
            "f:extra": {"f:deep": {".": {}, "f:n": {}}},  # untyped below: every map is owned as a whole too
        }
    }
    merged = await apply_ok(
        api, f"{widgets}/w", widget(ports=[{"port": 80, "protocol": "UDP", "name": "dns"}], tags=["b"]), "bob"
    )
    spec = merged["spec"]
    assert [(p["port"], p["protocol"]) for p in spec["ports"]] == [(80, "TCP"), (80, "UDP")]
    assert spec["tags"] == ["a", "b"]
    for field_name, value in (("plain", ["y"]), ("selector", {"other": "2"})):
        status, error = await apply(api, f"{widgets}/w", widget(**{field_name: value}), "bob")
        assert status == 409, field_name
        assert error["details"]["causes"] == [
            {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": f".spec.{field_name}"}
        ]
    bobs = {"ports": [{"port": 80, "protocol": "UDP", "name": "dns"}], "tags": ["b"]}
    forced = await apply_ok(api, f"{widgets}/w", widget(selector={"other": "2"}, **bobs), "bob", force="true")
    assert forced["spec"]["selector"] == {"other": "2"}
    dropped = await apply_ok(api, f"{widgets}/w", widget(size=1), "alice")
    assert dropped["spec"]["ports"] == [{"port": 80, "protocol": "UDP", "name": "dns"}]
    assert dropped["spec"]["tags"] == ["b"] and "plain" not in dropped["spec"] and "extra" not in dropped["spec"]


# --- clients nobody here wrote -----------------------------------------------------------------------------


async def test_pyop_client_apply_conflict_and_force(server: TestAPIServer) -> None:
    async with Transport(server.client_config()) as transport:
        client = DynamicClient(transport)
        deployments = await client.resource("apps/v1", "Deployment")
        await client.apply(deployments, full_deploy(replicas=2), "default", field_manager="alice")
        with pytest.raises(ConflictError) as raised:
            await client.apply(deployments, deploy(replicas=5), "default", field_manager="bob")
        assert [(c.reason, c.field) for c in raised.value.causes] == [("FieldManagerConflict", ".spec.replicas")]
        forced = await client.apply(deployments, deploy(replicas=5), "default", field_manager="bob", force=True)
        assert forced["spec"]["replicas"] == 5


async def test_official_kubernetes_client_apply_conflict_and_force(server: TestAPIServer) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    apps = kubernetes.client.AppsV1Api(official_client(server))

    def run() -> tuple[Any, Any, Any]:
        apps.patch_namespaced_deployment(
            "d",
            "default",
            full_deploy(replicas=2),
            field_manager="alice",
            _content_type="application/apply-patch+yaml",
        )
        try:
            apps.patch_namespaced_deployment(
                "d", "default", deploy(replicas=4), field_manager="bob", _content_type="application/apply-patch+yaml"
            )
        except kubernetes.client.ApiException as error:
            conflict = error
        else:
            raise AssertionError("no conflict")
        forced = apps.patch_namespaced_deployment(
            "d",
            "default",
            deploy(replicas=4),
            field_manager="bob",
            force=True,
            _content_type="application/apply-patch+yaml",
        )
        return conflict, forced, apps.read_namespaced_deployment("d", "default")

    conflict, forced, read = await asyncio.to_thread(run)
    assert conflict.status == 409
    body = json.loads(conflict.body)
    assert body["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    assert forced.spec.replicas == 4 and read.spec.replicas == 4
    managers = {(e.manager, e.operation) for e in read.metadata.managed_fields}
    assert managers == {("alice", "Apply"), ("bob", "Apply")}
