"""HorizontalPodAutoscaler in autoscaling/v1 and v2 (issue 12): a 1.37 kube-apiserver serves both (v2 preferred,
storage v2), so `kubectl autoscale` (kubectl 1.32 posts autoscaling/v1) works and one object reads in either.

Expected values are kube's conversion and defaulting (pkg/apis/autoscaling/v1/conversion.go and defaults.go, v2
defaults.go): targetCPUUtilizationPercentage <-> the cpu Resource metric with an Utilization target; other metrics
in the `autoscaling.alpha.kubernetes.io/metrics` annotation in v1's MetricSpec form; `behavior` in
`autoscaling.alpha.kubernetes.io/behavior`; minReplicas 1; cpu 80% when no metric is given; a given behavior's
missing rules from GenerateHPAScaleUpRules/ScaleDownRules; discovery priorities autoscaling/v2 30, v1 15.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pyop.client import DynamicClient, Transport
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, deployment

V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


async def test_both_versions_are_discovered_v2_preferred(api: Api) -> None:
    status, group = await api.get("/apis/autoscaling")
    assert status == 200
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"] == {"groupVersion": "autoscaling/v2", "version": "v2"}
    status, resources = await api.get("/apis/autoscaling/v1")
    assert status == 200
    names = {entry["name"] for entry in resources["resources"]}
    assert {"horizontalpodautoscalers", "horizontalpodautoscalers/status"} <= names


async def test_a_v1_object_reads_in_v2_and_back(api: Api) -> None:
    body = {"metadata": {"name": "web"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 5}}
    created = await api.create_ok(V1, body)
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"] == {
        "scaleTargetRef": TARGET,
        "minReplicas": 1,
        "maxReplicas": 5,
        "targetCPUUtilizationPercentage": 80,
    }
    status, in_v2 = await api.get(f"{V2}/web")
    assert status == 200 and in_v2["apiVersion"] == "autoscaling/v2"
    assert in_v2["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}
    ]
    assert "targetCPUUtilizationPercentage" not in in_v2["spec"]
    assert in_v2["metadata"]["uid"] == created["metadata"]["uid"]


async def test_v2_metrics_and_behavior_travel_in_v1_annotations(api: Api) -> None:
    metrics = [
        {
            "type": "Resource",
            "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}},
        },
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
    ]
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    body = {
        "metadata": {"name": "mixed"},
        "spec": {"scaleTargetRef": TARGET, "maxReplicas": 3, "metrics": metrics, "behavior": behavior},
    }
    created = await api.create_ok(V2, body)
    # v2 defaulting completes the given behavior.
    assert created["spec"]["behavior"] == {
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        },
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        },
    }
    status, in_v1 = await api.get(f"{V1}/mixed")
    assert status == 200
    assert in_v1["spec"]["targetCPUUtilizationPercentage"] == 60 and "metrics" not in in_v1["spec"]
    annotations = in_v1["metadata"]["annotations"]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "500Mi"}}
    ]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"]) == created["spec"]["behavior"]
    # An update through v1 keeps what only v2 can say.
    in_v1["spec"]["maxReplicas"] = 4
    status, updated = await api.put(f"{V1}/mixed", in_v1)
    assert status == 200, updated
    status, back = await api.get(f"{V2}/mixed")
    assert back["spec"]["maxReplicas"] == 4
    assert back["spec"]["metrics"] == metrics and back["spec"]["behavior"] == created["spec"]["behavior"]
    assert "annotations" not in back["metadata"]


async def test_pyop_client_reads_either_version(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(V1, {"metadata": {"name": "web"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 2}})
    async with Transport(server.client_config()) as transport:
        client = DynamicClient(transport)
        v2 = await client.get(await client.resource("autoscaling/v2", "HorizontalPodAutoscaler"), "web", "default")
        v1 = await client.get(await client.resource("autoscaling/v1", "HorizontalPodAutoscaler"), "web", "default")
    assert v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 80


async def test_kubectl_autoscale(server: TestAPIServer, api: Api, tmp_path: Path) -> None:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH")
    from testing_server.kubectl.helpers import Kubectl

    await api.create_ok("/apis/apps/v1/namespaces/default/deployments", deployment("web"))
    kubectl = Kubectl(binary, server, tmp_path)
    done = await kubectl("autoscale", "deployment", "web", "--min=2", "--max=7", "--cpu-percent=65")
    assert done.stdout.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    status, hpa = await api.get(f"{V2}/web")
    assert status == 200
    spec: dict[str, Any] = hpa["spec"]
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 7)
    assert spec["scaleTargetRef"] == TARGET
    assert spec["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 65}}}
    ]
    shown = await kubectl("get", "hpa", "web", "-o", "jsonpath={.apiVersion} {.spec.maxReplicas}")
    assert shown.stdout == "autoscaling/v2 7"
