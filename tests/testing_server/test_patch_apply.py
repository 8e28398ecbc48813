"""Merge patch, JSON patch, strategic merge patch and server-side apply."""

from __future__ import annotations

from typing import Any

from testing_server.helpers import CM, DEPLOY, Api, configmap, deployment

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]


async def test_merge_patch_merges_maps_replaces_lists_and_deletes_nulls(api: Api) -> None:
    await api.create_ok(CM, configmap("a", labels={"keep": "1", "drop": "1"}, data={"x": "1", "y": "2"}))
    patch = {"metadata": {"labels": {"drop": None, "new": "1"}}, "data": {"y": None, "z": "3"}}
    status, patched = await api.patch(f"{CM}/a", patch, MERGE)
    assert status == 200
    assert patched["metadata"]["labels"] == {"keep": "1", "new": "1"}
    assert patched["data"] == {"x": "1", "z": "3"}
    await api.create_ok(DEPLOY, deployment("d", containers=[{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]))
    status, patched = await api.patch(
        f"{DEPLOY}/d", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "2"}]}}}}, MERGE
    )
    assert _containers(patched) == [  # merge patch replaces the list; the new container is defaulted again
        {
            "name": "c",
            "image": "2",
            "resources": {},
            "imagePullPolicy": "Always",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
    ]


async def test_json_patch_applies_operations_and_fails_on_test(api: Api) -> None:
    await api.create_ok(CM, configmap("a", data={"x": "1"}))
    operations = [
        {"op": "test", "path": "/data/x", "value": "1"},
        {"op": "add", "path": "/data/y", "value": "2"},
        {"op": "replace", "path": "/data/x", "value": "10"},
        {"op": "add", "path": "/metadata/labels", "value": {"a/b": "c"}},
    ]
    status, patched = await api.patch(f"{CM}/a", operations, JSON_PATCH)
    assert status == 200
    assert patched["data"] == {"x": "10", "y": "2"} and patched["metadata"]["labels"] == {"a/b": "c"}
    status, error = await api.patch(f"{CM}/a", [{"op": "test", "path": "/data/x", "value": "1"}], JSON_PATCH)
    assert status == 422 and error["kind"] == "Status"


async def test_strategic_merge_merges_containers_env_and_ports_by_key(api: Api) -> None:
    containers: list[dict[str, Any]] = [
        {
            "name": "app",
            "image": "app:1",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            "ports": [{"containerPort": 80, "name": "http"}],
        },
        {"name": "sidecar", "image": "side:1"},
    ]
    await api.create_ok(DEPLOY, deployment("d", containers=containers))
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:2",
                            "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
                            "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}],
                        }
                    ]
                }
            }
        }
    }
    status, patched = await api.patch(f"{DEPLOY}/d", patch, STRATEGIC)
    assert status == 200
    app, sidecar = _containers(patched)
    assert {key: sidecar[key] for key in ("name", "image")} == {"name": "sidecar", "image": "side:1"}
    assert app["image"] == "app:2"
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}]
    assert app["ports"] == [  # protocol: the ContainerPort default
        {"containerPort": 80, "name": "http", "protocol": "TCP"},
        {"containerPort": 443, "protocol": "TCP"},
    ]


async def test_strategic_merge_patch_delete_directive_and_conditions_by_type(api: Api) -> None:
    containers = [{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "side:1"}]
    await api.create_ok(DEPLOY, deployment("d", containers=containers))
    delete = {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}}
    status, patched = await api.patch(f"{DEPLOY}/d", delete, STRATEGIC)
    assert [c["name"] for c in _containers(patched)] == ["app"]
    conditions = {
        "status": {"conditions": [{"type": "Available", "status": "False"}, {"type": "Progressing", "status": "True"}]}
    }
    await api.patch(f"{DEPLOY}/d/status", conditions, STRATEGIC)
    status, patched = await api.patch(
        f"{DEPLOY}/d/status", {"status": {"conditions": [{"type": "Available", "status": "True"}]}}, STRATEGIC
    )
    unset_times = {"lastUpdateTime": None, "lastTransitionTime": None}  # metav1.Time values: Go writes null
    assert patched["status"]["conditions"] == [
        {"type": "Available", "status": "True", **unset_times},
        {"type": "Progressing", "status": "True", **unset_times},
    ]


async def test_strategic_merge_unions_finalizers(api: Api) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["one"]
    await api.create_ok(CM, body)
    status, patched = await api.patch(f"{CM}/a", {"metadata": {"finalizers": ["two"]}}, STRATEGIC)
    assert patched["metadata"]["finalizers"] == ["one", "two"]
    status, patched = await api.patch(
        f"{CM}/a", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["one", "two"]}}, STRATEGIC
    )
    assert patched["metadata"].get("finalizers") in (None, [])


async def test_unknown_patch_content_type_gets_415(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    status, error = await api.patch(f"{CM}/a", {"data": {}}, "text/plain")
    assert status == 415 and error["reason"] == "UnsupportedMediaType"


async def test_apply_creates_then_merges_and_records_the_field_manager(api: Api) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"app": "x"}},
        "data": {"k": "1"},
    }
    status, created = await api.patch(f"{CM}/a", config, APPLY, fieldManager="my-operator")
    assert status == 201
    entry = next(e for e in created["metadata"]["managedFields"] if e["manager"] == "my-operator")
    assert entry["operation"] == "Apply"
    assert entry["fieldsV1"] == {"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
    await api.patch(f"{CM}/a", {"data": {"other": "by-hand"}}, MERGE, fieldManager="kubectl-edit")
    yaml_config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: '2'\n"
    status, applied = await api.patch(f"{CM}/a", yaml_config, APPLY, fieldManager="my-operator")
    assert status == 200
    assert applied["data"] == {"k": "2", "other": "by-hand"}
    managers = {(e["manager"], e["operation"]) for e in applied["metadata"]["managedFields"]}
    assert {("my-operator", "Apply"), ("kubectl-edit", "Update")} <= managers
    mine = next(e for e in applied["metadata"]["managedFields"] if e["manager"] == "my-operator")
    assert mine["fieldsV1"] == {"f:data": {"f:k": {}}}


async def test_apply_requires_a_field_manager(api: Api) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    status, error = await api.patch(f"{CM}/a", config, APPLY)
    assert status == 422 and "fieldManager: Required value: is required for apply patch" in error["message"]


async def test_apply_to_status_subresource(api: Api) -> None:
    await api.create_ok(DEPLOY, deployment("d"))
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "status": {"readyReplicas": 1}}
    status, applied = await api.patch(f"{DEPLOY}/d/status", config, APPLY, fieldManager="ctrl")
    assert status == 200 and applied["status"]["readyReplicas"] == 1
    entry = next(e for e in applied["metadata"]["managedFields"] if e["manager"] == "ctrl")
    assert entry["subresource"] == "status"
