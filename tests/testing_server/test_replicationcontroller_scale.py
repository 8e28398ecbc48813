"""`replicationcontrollers/<name>/scale` as kube-apiserver serves it (issue 12: built-in subresources): an
autoscaling/v1 Scale whose `status.selector` is the controller's map of labels as `labels.SelectorFromSet(...)`
prints it (sorted `key=value` pairs), replicas written through it (pkg/registry/core/replicationcontroller/storage).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

RCS = "/api/v1/namespaces/default/replicationcontrollers"
MERGE = "application/merge-patch+json"


def controller(name: str = "web") -> dict[str, Any]:
    labels = {"tier": "front", "app": "web"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    return {"metadata": {"name": name}, "spec": {"replicas": 1, "selector": labels, "template": template}}


async def test_discovery_lists_the_scale_as_autoscaling_v1(api: Api) -> None:
    status, document = await api.get("/api/v1")
    entry = next(r for r in document["resources"] if r["name"] == "replicationcontrollers/scale")
    assert (entry["group"], entry["version"], entry["kind"]) == ("autoscaling", "v1", "Scale")


async def test_the_scale_shows_the_map_selector_and_writes_replicas(api: Api) -> None:
    created = await api.create_ok(RCS, controller())
    status, scale = await api.get(f"{RCS}/web/scale")
    assert status == 200, scale
    assert scale["apiVersion"] == "autoscaling/v1" and scale["kind"] == "Scale"
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 0, "selector": "app=web,tier=front"}
    assert scale["metadata"]["uid"] == created["metadata"]["uid"]
    watch = await api.watch(RCS, resourceVersion=created["metadata"]["resourceVersion"])
    try:
        status, patched = await api.patch(f"{RCS}/web/scale", {"spec": {"replicas": 3}}, MERGE)
        assert status == 200, patched
        assert patched["spec"] == {"replicas": 3}
        event = await watch.next_of("MODIFIED")
        assert event["object"]["spec"]["replicas"] == 3
    finally:
        watch.close()
    status, stored = await api.get(f"{RCS}/web")
    assert stored["spec"]["replicas"] == 3
    entry = next(e for e in stored["metadata"]["managedFields"] if e.get("subresource") == "scale")
    assert entry["operation"] == "Update"
    status, answer = await api.put(f"{RCS}/web/scale", {**scale, "spec": {"replicas": -1}})
    assert status == 422, answer
    assert answer["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: must be greater than or equal to 0",
            "field": "spec.replicas",
        }
    ]


async def test_the_official_client_scales_a_replication_controller(server: TestAPIServer, api: Api) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    await api.create_ok(RCS, controller())
    core = kubernetes.client.CoreV1Api(official_client(server))
    scaled = await asyncio.to_thread(
        core.patch_namespaced_replication_controller_scale, "web", "default", {"spec": {"replicas": 2}}
    )
    assert scaled.spec.replicas == 2
    assert scaled.status.selector == "app=web,tier=front"
