"""`pods/<name>/ephemeralcontainers` as kube-apiserver serves it (issue 12: built-in subresources): only
`spec.ephemeralContainers` changes (podEphemeralContainersStrategy), validated as ValidatePodEphemeralContainersUpdate
validates it, with kube's field paths; discovery lists it, RBAC authorizes it as `pods/ephemeralcontainers`,
managedFields records the subresource, a watch sees the change. Driven over HTTP and with the official client
(`patch_namespaced_pod_ephemeralcontainers`, what `kubectl debug` sends).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

kubernetes = pytest.importorskip("kubernetes", reason="the official kubernetes client drives some of these tests")
client = kubernetes.client
T = TypeVar("T")

PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
DEBUGGER = {"name": "debugger", "image": "busybox", "stdin": True, "tty": True, "targetContainerName": "app"}


async def make_pod(api: Api, name: str = "web-1") -> dict[str, Any]:
    spec = {"containers": [{"name": "app", "image": "nginx"}]}
    body = {"metadata": {"name": name, "labels": {"app": "web"}}, "spec": spec}
    return await api.create_ok(PODS, body)


async def add_debugger(api: Api, **extra: Any) -> tuple[int, Any]:
    patch = {"spec": {"ephemeralContainers": [{**DEBUGGER, **extra}]}}
    return await api.patch(f"{PODS}/web-1/ephemeralcontainers", patch, STRATEGIC)


def causes(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in answer["details"]["causes"]]


async def test_discovery_lists_ephemeralcontainers_with_the_pod_kind(api: Api) -> None:
    status, document = await api.get("/api/v1")
    entry = next(r for r in document["resources"] if r["name"] == "pods/ephemeralcontainers")
    assert entry["kind"] == "Pod" and entry["verbs"] == ["get", "patch", "update"]


async def test_a_patch_adds_a_defaulted_ephemeral_container_and_nothing_else(api: Api) -> None:
    created = await make_pod(api)
    patch = {
        "metadata": {"labels": {"sneaky": "yes"}},
        "spec": {"ephemeralContainers": [DEBUGGER], "activeDeadlineSeconds": 5},
        "status": {"phase": "Running"},
    }
    status, patched = await api.patch(f"{PODS}/web-1/ephemeralcontainers", patch, STRATEGIC)
    assert status == 200, patched
    [debugger] = patched["spec"]["ephemeralContainers"]
    assert debugger["imagePullPolicy"] == "Always"  # kube's default for an untagged (latest) image
    assert debugger["terminationMessagePath"] == "/dev/termination-log"
    assert debugger["terminationMessagePolicy"] == "File"
    assert patched["metadata"]["labels"] == {"app": "web"}  # reset from the stored pod
    assert "activeDeadlineSeconds" not in patched["spec"]
    assert patched["status"]["phase"] == "Pending"
    assert patched["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    entry = next(e for e in patched["metadata"]["managedFields"] if e.get("subresource") == "ephemeralcontainers")
    assert "f:ephemeralContainers" in json.dumps(entry["fieldsV1"])
    status, read = await api.get(f"{PODS}/web-1/ephemeralcontainers")
    assert status == 200 and read["kind"] == "Pod"
    assert read["spec"]["ephemeralContainers"] == [debugger]


async def test_a_plain_pod_update_cannot_touch_the_subresource_of_others(api: Api) -> None:
    """A PUT of the subresource with a changed image keeps the pod's containers as stored."""
    await make_pod(api)
    status, pod = await api.get(f"{PODS}/web-1")
    pod["spec"]["containers"][0]["image"] = "nginx:2"
    pod["spec"]["ephemeralContainers"] = [DEBUGGER]
    status, updated = await api.put(f"{PODS}/web-1/ephemeralcontainers", pod)
    assert status == 200, updated
    assert updated["spec"]["containers"][0]["image"] == "nginx"
    assert updated["spec"]["ephemeralContainers"][0]["name"] == "debugger"


async def test_existing_ephemeral_containers_cannot_be_changed_or_removed(api: Api) -> None:
    await make_pod(api)
    status, first = await add_debugger(api)
    assert status == 200, first
    changed = {**first["spec"]["ephemeralContainers"][0], "image": "alpine"}
    status, answer = await api.put(
        f"{PODS}/web-1/ephemeralcontainers", {**first, "spec": {**first["spec"], "ephemeralContainers": [changed]}}
    )
    assert status == 422, answer
    assert causes(answer) == [
        ("spec.ephemeralContainers", 'Forbidden: existing ephemeral containers "debugger" may not be changed\n')
    ]
    assert answer["message"].startswith('Pod "web-1" is invalid: spec.ephemeralContainers: Forbidden: existing')
    status, answer = await api.put(
        f"{PODS}/web-1/ephemeralcontainers", {**first, "spec": {**first["spec"], "ephemeralContainers": []}}
    )
    assert status == 422, answer
    assert causes(answer) == [
        ("spec.ephemeralContainers", 'Forbidden: existing ephemeral containers "debugger" may not be removed\n')
    ]


async def test_names_targets_and_the_fields_an_ephemeral_container_may_not_set(api: Api) -> None:
    await make_pod(api)
    status, answer = await add_debugger(
        api,
        name="app",
        targetContainerName="nope",
        ports=[{"containerPort": 80}],
        resources={"limits": {"cpu": "1"}},
        readinessProbe={"exec": {"command": ["true"]}},
        lifecycle={"preStop": {"exec": {"command": ["true"]}}},
    )
    assert status == 422, answer
    path = "spec.ephemeralContainers[0]"
    assert causes(answer) == [
        (f"{path}.name", 'Duplicate value: "app"'),
        (f"{path}.targetContainerName", 'Not found: "nope"'),
        (f"{path}.ports", "Forbidden: cannot be set for an Ephemeral Container"),
        (f"{path}.resources", "Forbidden: cannot be set for an Ephemeral Container"),
        (f"{path}.readinessProbe", "Forbidden: cannot be set for an Ephemeral Container"),
        (f"{path}.lifecycle", "Forbidden: cannot be set for an Ephemeral Container"),
    ]
    status, pod = await api.get(f"{PODS}/web-1")
    assert "ephemeralContainers" not in pod["spec"]


async def test_rbac_authorizes_the_subresource(server: TestAPIServer, api: Api) -> None:
    await make_pod(api)
    server.add_user("alice-token", "alice")
    role = {"metadata": {"name": "debug"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}]}
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)
    binding = {
        "metadata": {"name": "debug"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "debug"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)
    patch = json.dumps({"spec": {"ephemeralContainers": [DEBUGGER]}})
    headers = {"Authorization": "Bearer alice-token", "Content-Type": STRATEGIC}
    async with api.session.patch(f"{PODS}/web-1/ephemeralcontainers", data=patch, headers=headers) as response:
        assert response.status == 403
        assert (await response.json())["message"] == (
            'pods "web-1" is forbidden: User "alice" cannot patch resource "pods/ephemeralcontainers" in API group '
            '"" in the namespace "default"'
        )
    role["rules"].append({"apiGroups": [""], "resources": ["pods/ephemeralcontainers"], "verbs": ["patch"]})
    status, _ = await api.put("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/debug", role)
    assert status == 200
    async with api.session.patch(f"{PODS}/web-1/ephemeralcontainers", data=patch, headers=headers) as response:
        assert response.status == 200, await response.text()


async def test_a_watch_sees_the_added_container(api: Api) -> None:
    created = await make_pod(api)
    watch = await api.watch(PODS, resourceVersion=created["metadata"]["resourceVersion"])
    try:
        status, _ = await add_debugger(api)
        assert status == 200
        event = await watch.next_of("MODIFIED")
        assert event["object"]["spec"]["ephemeralContainers"][0]["name"] == "debugger"
    finally:
        watch.close()


async def _call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(function, *args, **kwargs)


async def test_the_official_client_patches_and_reads_ephemeral_containers(server: TestAPIServer, api: Api) -> None:
    await make_pod(api)
    core = client.CoreV1Api(official_client(server))
    patched = await _call(
        core.patch_namespaced_pod_ephemeralcontainers,
        "web-1",
        "default",
        {"spec": {"ephemeralContainers": [DEBUGGER]}},
    )
    assert [c.name for c in patched.spec.ephemeral_containers] == ["debugger"]
    read = await _call(core.read_namespaced_pod_ephemeralcontainers, "web-1", "default")
    assert read.spec.ephemeral_containers[0].target_container_name == "app"
    second = {"name": "second", "image": "busybox", "ports": [{"containerPort": 1}]}
    with pytest.raises(client.exceptions.ApiException) as refused:
        body = {"spec": {"ephemeralContainers": [second]}}
        await _call(core.patch_namespaced_pod_ephemeralcontainers, "web-1", "default", body)
    assert refused.value.status == 422
    assert "spec.ephemeralContainers[1].ports: Forbidden" in json.loads(refused.value.body)["message"]
