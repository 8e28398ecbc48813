"""`pods/<name>/resize` as kube-apiserver serves it from 1.33 (issue 12: built-in subresources): only the
containers' resources and resizePolicy are taken from the request (podResizeStrategy), then ValidatePodResize's
rules with kube's paths and messages; the pod's spec reads back with the new resources.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, api_for, official_client

PODS = "/api/v1/namespaces/default/pods"
STRATEGIC = "application/strategic-merge-patch+json"


async def make_pod(api: Api, resources: dict[str, Any], **container: Any) -> dict[str, Any]:
    spec = {"containers": [{"name": "app", "image": "nginx", "resources": resources, **container}]}
    return await api.create_ok(PODS, {"metadata": {"name": "web-1"}, "spec": spec})


async def resize(api: Api, resources: dict[str, Any], **container: Any) -> tuple[int, Any]:
    patch = {"spec": {"containers": [{"name": "app", "resources": resources, **container}]}}
    return await api.patch(f"{PODS}/web-1/resize", patch, STRATEGIC)


def causes(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in answer["details"]["causes"]]


BURSTABLE = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}


async def test_cpu_and_memory_change_in_place_and_read_back(api: Api) -> None:
    await make_pod(api, BURSTABLE)
    bigger = {"requests": {"cpu": "200m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}}
    containers = [{"name": "app", "resources": bigger, "image": "x"}]
    patch = {"metadata": {"labels": {"x": "y"}}, "spec": {"containers": containers}}
    status, resized = await api.patch(f"{PODS}/web-1/resize", patch, STRATEGIC)
    assert status == 200, resized
    container = resized["spec"]["containers"][0]
    assert container["resources"] == bigger
    assert container["image"] == "nginx"  # everything but resources is reset from the stored pod
    assert "labels" not in resized["metadata"]
    status, read = await api.get(f"{PODS}/web-1")
    assert read["spec"]["containers"][0]["resources"] == bigger
    entry = next(e for e in read["metadata"]["managedFields"] if e.get("subresource") == "resize")
    assert entry["operation"] == "Update"


async def test_the_qos_class_cannot_change(api: Api) -> None:
    await make_pod(api, BURSTABLE)
    guaranteed = {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}
    status, answer = await resize(api, guaranteed)
    assert status == 422, answer
    assert causes(answer) == [
        ("spec", 'Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing')
    ]


async def test_memory_limits_cannot_go_down_without_restart_container(api: Api) -> None:
    await make_pod(api, BURSTABLE)
    lower = {"requests": BURSTABLE["requests"], "limits": {"cpu": "500m", "memory": "128Mi"}}
    status, answer = await resize(api, lower)
    assert status == 422, answer
    assert causes(answer) == [
        (
            "spec.containers[0].resources.limits[memory]",
            "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer",
        )
    ]


async def test_memory_limits_go_down_with_restart_container(api: Api) -> None:
    policy = [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]
    await make_pod(api, BURSTABLE, resizePolicy=policy)
    lower = {"requests": BURSTABLE["requests"], "limits": {"cpu": "500m", "memory": "128Mi"}}
    status, answer = await resize(api, lower)
    assert status == 200, answer
    assert answer["spec"]["containers"][0]["resources"]["limits"]["memory"] == "128Mi"


async def test_requests_cannot_be_removed_and_only_cpu_memory_change(api: Api) -> None:
    with_storage = {
        "requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"},
        "limits": BURSTABLE["limits"],
    }
    await make_pod(api, with_storage)
    status, answer = await resize(
        api, {"requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "2Gi"}, "limits": BURSTABLE["limits"]}
    )
    assert status == 422, answer
    assert causes(answer) == [("spec", "Forbidden: only cpu and memory resources are mutable")]
    status, answer = await api.put(
        f"{PODS}/web-1/resize",
        {
            "metadata": {"name": "web-1"},
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {"limits": BURSTABLE["limits"]}}]},
        },
    )
    assert status == 422, answer
    assert ("spec.containers[0].resources.requests", "Forbidden: resource requests cannot be removed") in causes(answer)


async def test_discovery_lists_resize_from_1_33_only() -> None:
    for version, listed in (("1.32", False), ("1.33", True)):
        async with TestAPIServer(kubernetes_version=version) as server, api_for(server) as api:
            status, document = await api.get("/api/v1")
            names = {r["name"] for r in document["resources"]}
            assert ("pods/resize" in names) is listed, version
            assert "pods/ephemeralcontainers" in names
            if not listed:
                status, _ = await api.patch(f"{PODS}/x/resize", {}, STRATEGIC)
                assert status == 404


@pytest.mark.parametrize("kubernetes_version", ["1.33"])
async def test_resize_on_1_33(api: Api) -> None:
    await make_pod(api, BURSTABLE)
    status, answer = await resize(api, {**BURSTABLE, "limits": {"cpu": "2", "memory": "256Mi"}})
    assert status == 200, answer


async def test_the_official_client_resizes_a_pod(server: TestAPIServer, api: Api) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    await make_pod(api, BURSTABLE)
    core = kubernetes.client.CoreV1Api(official_client(server))
    patch = {"spec": {"containers": [{"name": "app", "resources": {**BURSTABLE, "requests": {"cpu": "300m"}}}]}}
    resized = await asyncio.to_thread(core.patch_namespaced_pod_resize, "web-1", "default", patch)
    assert resized.spec.containers[0].resources.requests == {"cpu": "300m", "memory": "64Mi"}
    read = await asyncio.to_thread(core.read_namespaced_pod_resize, "web-1", "default")
    assert read.spec.containers[0].resources.requests["cpu"] == "300m"
