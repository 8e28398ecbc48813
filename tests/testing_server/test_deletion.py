"""Garbage collection through ownerReferences, propagation policies and namespace deletion."""

from __future__ import annotations

from typing import Any

from testing_server.helpers import CM, DEPLOY, Api, configmap, deployment, eventually

MERGE = "application/merge-patch+json"


def owned_by(body: dict[str, Any], *owners: dict[str, Any]) -> dict[str, Any]:
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"], "uid": o["metadata"]["uid"]}
        for o in owners
    ]
    return body


async def _gone(api: Api, path: str) -> bool:
    status, _ = await api.get(path)
    return status == 404


async def test_background_deletion_collects_dependents(api: Api) -> None:
    owner = await api.create_ok(DEPLOY, deployment("owner"))
    await api.create_ok(CM, owned_by(configmap("child"), owner))
    await api.create_ok(CM, configmap("bystander"))
    status, _ = await api.delete(f"{DEPLOY}/owner")
    assert status == 200
    await eventually(lambda: _gone(api, f"{CM}/child"), "dependent collected")
    status, _ = await api.get(f"{CM}/bystander")
    assert status == 200


async def test_dependent_with_another_live_owner_only_loses_the_reference(api: Api) -> None:
    first = await api.create_ok(CM, configmap("first-owner"))
    second = await api.create_ok(CM, configmap("second-owner"))
    await api.create_ok(CM, owned_by(configmap("shared"), first, second))
    await api.delete(f"{CM}/first-owner")

    async def reference_dropped() -> bool:
        status, shared = await api.get(f"{CM}/shared")
        refs = shared["metadata"].get("ownerReferences") or []
        return [ref["name"] for ref in refs] == ["second-owner"]

    await eventually(reference_dropped, "dangling owner reference removed")


async def test_orphan_propagation_keeps_dependents_without_the_reference(api: Api) -> None:
    owner = await api.create_ok(CM, configmap("owner"))
    await api.create_ok(CM, owned_by(configmap("child"), owner))
    status, _ = await api.delete(f"{CM}/owner", {"propagationPolicy": "Orphan"})
    assert status == 200
    status, child = await api.get(f"{CM}/child")
    assert status == 200 and not child["metadata"].get("ownerReferences")


async def test_foreground_deletion_waits_for_dependents(api: Api) -> None:
    owner = await api.create_ok(CM, configmap("owner"))
    child = owned_by(configmap("child"), owner)
    child["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = True  # only these hold the owner
    child["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(CM, child)
    status, marked = await api.delete(f"{CM}/owner", propagationPolicy="Foreground")
    assert status == 200
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]

    async def child_marked() -> bool:
        status, obj = await api.get(f"{CM}/child")
        return bool(obj["metadata"].get("deletionTimestamp"))

    await eventually(child_marked, "dependent marked for deletion")
    status, still_owner = await api.get(f"{CM}/owner")
    assert status == 200 and still_owner["metadata"]["deletionTimestamp"]
    await api.patch(f"{CM}/child", {"metadata": {"finalizers": None}}, MERGE)
    await eventually(lambda: _gone(api, f"{CM}/owner"), "owner deleted after its dependents")


async def test_foreground_deletion_does_not_wait_for_dependents_that_do_not_block(api: Api) -> None:
    owner = await api.create_ok(CM, configmap("owner"))
    child = owned_by(configmap("child"), owner)
    child["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(CM, child)
    status, _ = await api.delete(f"{CM}/owner", propagationPolicy="Foreground")
    assert status == 200
    await eventually(lambda: _gone(api, f"{CM}/owner"), "owner deleted without waiting")
    status, obj = await api.get(f"{CM}/child")
    assert status == 200 and obj["metadata"].get("deletionTimestamp")  # deleted too, held by its own finalizer


async def test_a_dependent_whose_owner_never_existed_is_collected(api: Api) -> None:
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ghost", "uid": "0000-never"}}
    await api.create_ok(CM, owned_by(configmap("orphan"), ghost))
    await eventually(lambda: _gone(api, f"{CM}/orphan"), "dependent of an absent owner deleted")


async def test_a_dangling_reference_beside_a_solid_one_is_dropped(api: Api) -> None:
    owner = await api.create_ok(CM, configmap("alive"))
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ghost", "uid": "0000-never"}}
    await api.create_ok(CM, owned_by(configmap("kept"), owner, ghost))

    async def only_solid() -> bool:
        _, kept = await api.get(f"{CM}/kept")
        return [r["name"] for r in kept["metadata"].get("ownerReferences") or []] == ["alive"]

    await eventually(only_solid, "dangling reference removed")


async def test_an_owner_in_another_namespace_is_absent_with_a_warning_event(api: Api) -> None:
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "elsewhere"}})
    owner = await api.create_ok("/api/v1/namespaces/elsewhere/configmaps", configmap("owner"))
    await api.create_ok(CM, owned_by(configmap("crossed"), owner))
    await eventually(lambda: _gone(api, f"{CM}/crossed"), "cross-namespace dependent deleted")
    _, events = await api.get("/api/v1/namespaces/default/events")
    warnings = [e for e in events["items"] if e["reason"] == "OwnerRefInvalidNamespace"]
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert warnings[0]["involvedObject"]["name"] == "crossed"
    assert warnings[0]["message"].startswith("ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: ")
    assert warnings[0]["message"].endswith('] does not exist in namespace "default"')


async def test_a_cluster_scoped_dependent_of_a_namespaced_owner_is_never_collected(api: Api) -> None:
    owner = await api.create_ok(CM, configmap("owner"))
    namespace = owned_by({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "owned"}}, owner)
    await api.create_ok("/api/v1/namespaces", namespace)

    async def warned() -> bool:
        _, events = await api.get("/api/v1/namespaces/default/events")
        return any(e["reason"] == "OwnerRefInvalidNamespace" for e in events["items"])

    await eventually(warned, "OwnerRefInvalidNamespace event")
    status, _ = await api.get("/api/v1/namespaces/owned")
    assert status == 200


async def test_namespace_deletion_removes_its_objects_then_itself(api: Api) -> None:
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "doomed"}})
    base = "/api/v1/namespaces/doomed/configmaps"
    await api.create_ok(base, configmap("plain"))
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(base, held)
    status, namespace = await api.delete("/api/v1/namespaces/doomed")
    assert status == 200 and namespace["status"]["phase"] == "Terminating"
    await eventually(lambda: _gone(api, f"{base}/plain"), "namespace contents deleted")
    status, error = await api.post(base, configmap("late"))
    assert status == 403 and error["reason"] == "Forbidden"
    assert error["message"] == (
        'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being '
        "terminated"
    )
    assert error["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace doomed is being terminated",
            "field": "metadata.namespace",
        }
    ]
    status, _ = await api.get("/api/v1/namespaces/doomed")
    assert status == 200
    await api.patch(f"{base}/held", {"metadata": {"finalizers": None}}, MERGE)
    await eventually(lambda: _gone(api, "/api/v1/namespaces/doomed"), "namespace removed once empty")


async def test_delete_collection_with_label_selector(api: Api) -> None:
    await api.create_ok(CM, configmap("a", labels={"batch": "1"}))
    await api.create_ok(CM, configmap("b", labels={"batch": "1"}))
    await api.create_ok(CM, configmap("c", labels={"batch": "2"}))
    status, deleted = await api.delete(CM, labelSelector="batch=1")
    assert status == 200 and len(deleted["items"]) == 2
    status, remaining = await api.get(CM)
    assert [item["metadata"]["name"] for item in remaining["items"]] == ["c"]


async def test_delete_status_codes_are_kube_apiservers(api: Api) -> None:
    """200 with the object, gone or held by finalizers; 202 only for orphanDependents=false on a held object."""
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(CM, held)
    status, body = await api.delete(f"{CM}/held")
    assert status == 200 and body["metadata"]["deletionTimestamp"]
    again = configmap("again")
    again["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(CM, again)
    status, body = await api.delete(f"{CM}/again", {"orphanDependents": False})
    assert status == 202 and body["metadata"]["deletionTimestamp"]
    await api.create_ok(CM, configmap("plain"))
    status, _ = await api.delete(f"{CM}/plain", {"orphanDependents": False})
    assert status == 200  # gone at once
