"""Object semantics: resourceVersion, uid, generation, finalizers, concurrency, status isolation."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import aiohttp

from pyop.testing import TestAPIServer
from testing_server.helpers import CM, DEPLOY, Api, configmap, connector, deployment

MERGE = "application/merge-patch+json"


async def test_resource_version_is_one_increasing_counter_across_kinds(api: Api) -> None:
    first = await api.create_ok(CM, configmap("a"))
    second = await api.create_ok(DEPLOY, deployment("d"))
    status, third = await api.patch(f"{CM}/a", {"data": {"k": "changed"}}, MERGE)
    assert status == 200
    versions = [int(obj["metadata"]["resourceVersion"]) for obj in (first, second, third)]
    assert versions == sorted(versions) and len(set(versions)) == 3
    status, listed = await api.get(CM)
    assert int(listed["metadata"]["resourceVersion"]) >= versions[-1]


async def test_uid_and_creation_timestamp_are_set_once_and_stable(api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    uid = created["metadata"]["uid"]
    assert uid and created["metadata"]["creationTimestamp"].endswith("Z")
    sent = {**created, "data": {"k": "new"}}
    sent["metadata"] = {**created["metadata"], "creationTimestamp": "2000-01-01T00:00:00Z"}  # a uid is a precondition
    status, updated = await api.put(f"{CM}/a", sent)
    assert status == 200
    assert updated["metadata"]["uid"] == uid
    assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]


async def test_generation_bumps_on_spec_changes_only(api: Api) -> None:
    created = await api.create_ok(DEPLOY, deployment("d"))
    assert created["metadata"]["generation"] == 1
    status, labelled = await api.patch(f"{DEPLOY}/d", {"metadata": {"labels": {"x": "y"}}}, MERGE)
    assert labelled["metadata"]["generation"] == 1
    status, with_status = await api.patch(f"{DEPLOY}/d/status", {"status": {"replicas": 3}}, MERGE)
    assert status == 200 and with_status["metadata"]["generation"] == 1
    status, scaled = await api.patch(f"{DEPLOY}/d", {"spec": {"replicas": 5}}, MERGE)
    assert scaled["metadata"]["generation"] == 2


async def test_configmaps_have_no_generation_as_on_a_cluster(api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    assert "generation" not in created["metadata"]
    status, changed = await api.patch(f"{CM}/a", {"data": {"k": "other"}}, MERGE)
    assert status == 200 and "generation" not in changed["metadata"]


async def test_no_op_update_keeps_resource_version(api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    status, same = await api.put(f"{CM}/a", created)
    assert status == 200
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_finalizers_make_delete_mark_the_object_until_the_last_one_is_removed(api: Api) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/one", "example.com/two"]
    await api.create_ok(CM, body)
    status, marked = await api.delete(f"{CM}/a")
    assert status == 200  # kube-apiserver: 200 with the object held by finalizers
    assert marked["metadata"]["deletionTimestamp"]
    status, still_there = await api.get(f"{CM}/a")
    assert status == 200 and still_there["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    status, one_left = await api.patch(
        f"{CM}/a", [{"op": "remove", "path": "/metadata/finalizers/0"}], "application/json-patch+json"
    )
    assert status == 200 and one_left["metadata"]["finalizers"] == ["example.com/two"]
    status, gone = await api.patch(f"{CM}/a", {"metadata": {"finalizers": None}}, MERGE)
    assert status == 200
    status, _ = await api.get(f"{CM}/a")
    assert status == 404


async def test_no_finalizer_can_be_added_to_an_object_being_deleted(api: Api) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/one"]
    await api.create_ok(CM, body)
    await api.delete(f"{CM}/a")
    status, error = await api.patch(
        f"{CM}/a", {"metadata": {"finalizers": ["example.com/one", "example.com/new"]}}, MERGE
    )
    assert status == 422
    assert error["details"]["causes"][0]["field"] == "metadata.finalizers"


async def test_update_with_stale_resource_version_gets_409_conflict(api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    status, _ = await api.put(f"{CM}/a", {**created, "data": {"k": "first"}})
    assert status == 200
    status, error = await api.put(f"{CM}/a", {**created, "data": {"k": "second"}})
    assert status == 409
    assert error["reason"] == "Conflict"
    assert "the object has been modified" in error["message"]
    status, error = await api.patch(
        f"{CM}/a", {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}}, MERGE
    )
    assert status == 409


async def test_update_without_resource_version_is_unconditional_for_built_in_kinds(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    await api.patch(f"{CM}/a", {"data": {"k": "moved on"}}, MERGE)
    status, updated = await api.put(f"{CM}/a", configmap("a", data={"k": "blind write"}))
    assert status == 200 and updated["data"] == {"k": "blind write"}


async def test_main_resource_writes_ignore_status(api: Api) -> None:
    await api.create_ok(DEPLOY, deployment("d"))
    status, with_status = await api.patch(f"{DEPLOY}/d/status", {"status": {"readyReplicas": 1}}, MERGE)
    sent = {**with_status, "spec": {**with_status["spec"], "replicas": 4}, "status": {"readyReplicas": 99}}
    status, updated = await api.put(f"{DEPLOY}/d", sent)
    assert status == 200
    assert updated["spec"]["replicas"] == 4
    assert updated["status"] == {"readyReplicas": 1}


async def test_status_writes_ignore_everything_but_status(api: Api) -> None:
    created = await api.create_ok(DEPLOY, deployment("d"))
    sent = {
        **created,
        "metadata": {**created["metadata"], "labels": {"sneaky": "yes"}},
        "spec": {**created["spec"], "replicas": 9},
        "status": {"replicas": 1},
    }
    status, updated = await api.put(f"{DEPLOY}/d/status", sent)
    assert status == 200
    assert updated["status"] == {"replicas": 1}
    assert updated["spec"]["replicas"] == 1
    assert "sneaky" not in (updated["metadata"].get("labels") or {})


async def test_status_on_create_is_reset_for_status_subresource_kinds(api: Api) -> None:
    body = deployment("d")
    body["status"] = {"replicas": 7}
    created = await api.create_ok(DEPLOY, body)
    assert created["status"].get("replicas") is None


async def test_create_rejects_duplicates_and_missing_namespaces(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    status, error = await api.post(CM, configmap("a"))
    assert status == 409 and error["reason"] == "AlreadyExists"
    status, error = await api.post("/api/v1/namespaces/nowhere/configmaps", configmap("a"))
    assert status == 404 and error["details"]["kind"] == "namespaces"
    status, error = await api.post(CM, configmap("Not_Valid"))
    assert status == 422 and error["details"]["causes"][0]["field"] == "metadata.name"


async def test_generate_name_gets_a_random_suffix(api: Api) -> None:
    created = await api.create_ok(CM, {"metadata": {"generateName": "job-"}, "data": {}})
    assert created["metadata"]["name"].startswith("job-") and len(created["metadata"]["name"]) == 9


async def test_delete_preconditions_on_uid_and_resource_version(api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    status, error = await api.delete(f"{CM}/a", {"preconditions": {"uid": "someone-else"}})
    assert status == 409 and "Precondition failed: UID" in error["message"]
    status, error = await api.delete(f"{CM}/a", {"preconditions": {"resourceVersion": "1"}})
    assert status == 409 and "Precondition failed: ResourceVersion" in error["message"]
    preconditions = {"uid": created["metadata"]["uid"], "resourceVersion": created["metadata"]["resourceVersion"]}
    status, _ = await api.delete(f"{CM}/a", {"preconditions": preconditions})
    assert status == 200


async def test_dry_run_changes_nothing(api: Api) -> None:
    status, created = await api.post(CM, configmap("a"), dryRun="All")
    assert status == 201 and created["metadata"]["name"] == "a"
    status, _ = await api.get(f"{CM}/a")
    assert status == 404
    real = await api.create_ok(CM, configmap("b"))
    status, _ = await api.patch(f"{CM}/b", {"data": {"k": "dry"}}, MERGE, dryRun="All")
    status, _ = await api.delete(f"{CM}/b", dryRun="All")
    status, stored = await api.get(f"{CM}/b")
    assert stored == real


async def test_scale_subresource_reads_and_writes_replicas(api: Api) -> None:
    await api.create_ok(DEPLOY, deployment("d", replicas=2))
    status, scale = await api.get(f"{DEPLOY}/d/scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2
    assert scale["status"]["selector"] == "app=d"
    status, scaled = await api.patch(f"{DEPLOY}/d/scale", {"spec": {"replicas": 5}}, MERGE)
    assert status == 200 and scaled["spec"]["replicas"] == 5
    status, stored = await api.get(f"{DEPLOY}/d")
    assert stored["spec"]["replicas"] == 5 and stored["metadata"]["generation"] == 2


async def test_secret_string_data_is_folded_into_data(api: Api) -> None:
    created = await api.create_ok(
        "/api/v1/namespaces/default/secrets", {"metadata": {"name": "s"}, "stringData": {"password": "hunter2"}}
    )
    assert created["data"] == {"password": "aHVudGVyMg=="}
    assert "stringData" not in created


async def test_token_review_authenticates_the_server_token_only(server: TestAPIServer, api: Api) -> None:
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    status, review = await api.post(path, {"spec": {"token": server.token}})
    assert status == 201
    assert review["status"]["authenticated"] is True
    assert "system:masters" in review["status"]["user"]["groups"]
    status, review = await api.post(path, {"spec": {"token": "forged"}})
    assert review["status"]["authenticated"] is False
    status, error = await api.get(path)
    assert status == 405 and error["reason"] == "MethodNotAllowed"


async def test_subject_access_review_allows_the_server_user(server: TestAPIServer, api: Api) -> None:
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    status, review = await api.post(path, {"spec": {"token": server.token}})
    user = review["status"]["user"]
    sar = {
        "spec": {
            "user": user["username"],
            "groups": user["groups"],
            "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
        }
    }
    status, allowed = await api.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    assert status == 201 and allowed["status"]["allowed"] is True
    sar["spec"] = {"user": "system:anonymous", "groups": [], "nonResourceAttributes": {"path": "/metrics"}}
    status, denied = await api.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    assert denied["status"]["allowed"] is False


async def test_timestamps_come_from_the_injected_clock() -> None:
    # One moment per timestamp the server takes (its own objects at start-up too: accounts, classes, CA maps).
    moments = (datetime(2030, 1, 1, tzinfo=UTC) + timedelta(seconds=second) for second in itertools.count())
    async with TestAPIServer(clock=lambda: next(moments)) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
            api = Api(session)
            body = configmap("a")
            body["metadata"]["finalizers"] = ["example.com/hold"]
            created = await api.create_ok(CM, body)
            status, marked = await api.delete(f"{CM}/a")
    assert created["metadata"]["creationTimestamp"].startswith("2030-01-01T0")
    assert marked["metadata"]["deletionTimestamp"] > created["metadata"]["creationTimestamp"]
