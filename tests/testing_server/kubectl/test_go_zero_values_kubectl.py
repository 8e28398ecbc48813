"""kubectl reads back the fields Go's encoder always writes, whichever wire format created the object: `kubectl
create deployment` sends a protobuf body, and the Deployment it made shows `resources: {}` as on a cluster."""

from __future__ import annotations

import json

from testing_server.kubectl.helpers import Kubectl


async def test_a_deployment_kubectl_created_reads_back_empty_container_resources(kubectl: Kubectl) -> None:
    await kubectl("create", "deployment", "web", "--image=nginx:1", "-n", "default")
    shown = json.loads((await kubectl("get", "deployment", "web", "-n", "default", "-o", "json")).stdout)
    container = shown["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {} and container["image"] == "nginx:1"


async def test_a_service_kubectl_created_reads_back_an_empty_load_balancer_status(kubectl: Kubectl) -> None:
    await kubectl("create", "service", "clusterip", "web", "--tcp=80:8080", "-n", "default")
    shown = json.loads((await kubectl("get", "service", "web", "-n", "default", "-o", "json")).stdout)
    assert shown["status"] == {"loadBalancer": {}}
