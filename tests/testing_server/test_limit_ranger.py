"""LimitRanger admission (issue 12): container defaults from a namespace's LimitRanges, and their min/max/ratio
checks for Containers, Pods and PersistentVolumeClaims.

Expected texts are plugin/pkg/admission/limitranger/admission.go's: the annotation `kubernetes.io/limit-ranger:
LimitRanger plugin set: <names> request for container <c>; <names> limit for container <c>` (names sorted,
init containers as `init container <c>`), `minimum %s usage per %s is %s, but request is %s`, `maximum %s usage
per %s is %s, but limit is %s`, `%s max limit to request ratio per %s is %s, but provided ratio is %f`, `maximum %s
usage per %s is %s.  No limit is specified` (two spaces), several errors as apimachinery's aggregate `[a, b]`,
under admission.NewForbidden's `pods "x" is forbidden: ` (403 Forbidden). The LimitRange's own defaulting
(SetDefaults_LimitRangeItem: default from max, defaultRequest from default or min) is what the defaults build on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyop.client import DynamicClient, ForbiddenError, Transport
from pyop.testing import TestAPIServer
from testing_server.helpers import Api

NS = "/api/v1/namespaces/default"
LIMITS = f"{NS}/limitranges"
PODS = f"{NS}/pods"


def limit_range(name: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(items)}}


def container(name: str, **resources: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "resources": resources}


def pod(name: str, *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": list(containers), **spec},
    }


async def test_containers_get_the_defaults_and_the_pod_the_annotation(api: Api) -> None:
    await api.create_ok(
        LIMITS,
        limit_range(
            "defaults",
            {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}},
        ),
    )
    created = await api.create_ok(
        PODS,
        pod("web", container("app"), container("side", requests={"cpu": "50m"}), initContainers=[container("init")]),
    )
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; "
        "memory request for container side; cpu, memory limit for container side; "
        "cpu, memory request for init container init; cpu, memory limit for init container init"
    )
    app, side = created["spec"]["containers"]
    # defaultRequest.memory came from default.memory (the LimitRange's own defaulting).
    assert app["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert side["resources"]["requests"] == {"cpu": "50m", "memory": "256Mi"}
    assert created["status"]["qosClass"] == "Burstable"  # the defaults count for the pod's QoS
    # A pod that sets everything is left alone: no annotation.
    full = container("app", requests={"cpu": "100m", "memory": "1Mi"}, limits={"cpu": "100m", "memory": "1Mi"})
    untouched = await api.create_ok(PODS, pod("full", full))
    assert "kubernetes.io/limit-ranger" not in (untouched["metadata"].get("annotations") or {})


async def test_container_min_max_and_ratio_are_enforced_in_kubes_words(api: Api) -> None:
    item = {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}, "maxLimitRequestRatio": {"cpu": "4"}}
    await api.create_ok(LIMITS, limit_range("bounds", item))
    code, body = await api.post(PODS, pod("big", container("app", limits={"cpu": "3", "memory": "128Mi"})))
    assert code == 403 and body["reason"] == "Forbidden"
    assert body["message"] == 'pods "big" is forbidden: maximum cpu usage per Container is 2, but limit is 3'
    assert body["details"] == {"name": "big", "kind": "pods"}
    code, body = await api.post(
        PODS,
        pod(
            "ratio",
            container("app", requests={"cpu": "100m", "memory": "32Mi"}, limits={"cpu": "1", "memory": "128Mi"}),
        ),
    )
    assert code == 403
    assert body["message"] == (
        'pods "ratio" is forbidden: [minimum memory usage per Container is 64Mi, but request is 32Mi, '
        "cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000]"
    )
    code, _ = await api.post(
        PODS, pod("fits", container("app", requests={"cpu": "500m", "memory": "64Mi"}, limits={"cpu": "2"}))
    )
    assert code == 201


async def test_pod_and_claim_items(api: Api) -> None:
    await api.create_ok(
        LIMITS,
        limit_range(
            "totals",
            {"type": "Pod", "max": {"memory": "1Gi"}},
            {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "5Gi"}},
        ),
    )
    two = [container(n, limits={"memory": "600Mi"}) for n in ("a", "b")]
    code, body = await api.post(PODS, pod("pair", *two))
    assert code == 403
    assert body["message"] == 'pods "pair" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi'
    claims = f"{NS}/persistentvolumeclaims"

    def claim(name: str, size: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
        }

    code, body = await api.post(claims, claim("small", "500Mi"))
    assert code == 403
    assert body["message"] == (
        'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, '
        "but request is 500Mi"
    )
    await api.create_ok(claims, claim("ok", "2Gi"))
    grow = {"spec": {"resources": {"requests": {"storage": "6Gi"}}}}
    code, body = await api.patch(f"{claims}/ok", grow, "application/merge-patch+json")
    assert code == 403 and body["message"].endswith(
        "maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 6Gi"
    )


async def test_dry_run_shows_the_defaults_and_pyop_client_the_refusal(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(
        LIMITS, limit_range("d", {"type": "Container", "defaultRequest": {"cpu": "250m"}, "max": {"memory": "1Gi"}})
    )
    code, dry = await api.post(PODS, pod("dry", container("app")), dryRun="All")
    assert code == 201 and dry["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "250m"
    async with Transport(server.client_config()) as transport:
        client = DynamicClient(transport)
        pods = await client.resource("v1", "Pod")
        with pytest.raises(ForbiddenError) as raised:
            await client.create(pods, pod("huge", container("app", limits={"memory": "2Gi"})), "default")
    assert "maximum memory usage per Container is 1Gi, but limit is 2Gi" in str(raised.value)


async def test_kubectl_sees_the_annotation(server: TestAPIServer, api: Api, tmp_path: Any) -> None:
    import shutil

    from testing_server.kubectl.helpers import Kubectl

    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH")
    kubectl = Kubectl(binary, server, tmp_path)
    await api.create_ok(LIMITS, limit_range("d", {"type": "Container", "default": {"cpu": "1"}, "max": {"cpu": "1"}}))
    manifest = json.dumps(pod("k", container("app")))
    await kubectl("create", "-f", "-", stdin=manifest)
    shown = await kubectl("get", "pod", "k", "-o", "jsonpath={.metadata.annotations.kubernetes\\.io/limit-ranger}")
    assert shown.stdout == "LimitRanger plugin set: cpu request for container app; cpu limit for container app"
    refused = await kubectl(
        "create", "-f", "-", stdin=json.dumps(pod("k2", container("app", limits={"cpu": "2"}))), check=False
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": pods "k2" is forbidden: '
        "maximum cpu usage per Container is 1, but limit is 2"
    )
