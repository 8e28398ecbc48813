"""ResourceQuota admission and kube-controller-manager's quota controller (issue 12: the test server must refuse what
a cluster's quota refuses).

Expected texts are kube's: `exceeded quota: %s, requested: %s, used: %s, limited: %s` with `name=value` lists sorted
by name (k8s.io/apiserver plugin/resourcequota/controller.go, CheckRequest and prettyPrint), `failed quota: %s: must
specify %s for: %s` (pkg/quota/v1/evaluator/core/pods.go, Constraints), wrapped by admission.NewForbidden as
`<resource> "<name>" is forbidden: ...` (403, reason Forbidden, details name/kind); usage names and what counts
from the evaluators (pods, services, persistentvolumeclaims, object counts).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.client import DynamicClient, ForbiddenError, Transport
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, deployment, official_client

NS = "/api/v1/namespaces/default"
QUOTAS = f"{NS}/resourcequotas"
PODS = f"{NS}/pods"


def quota(name: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard, **spec}}


def pod(
    name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    container = {"name": "app", "image": "busybox:1.36", "resources": resources}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


async def status_of(api: Api, name: str) -> dict[str, Any]:
    code, body = await api.get(f"{QUOTAS}/{name}")
    assert code == 200, body
    return body["status"]


def assert_forbidden(code: int, body: dict[str, Any], message: str, name: str, kind: str) -> None:
    assert code == 403, body
    assert body["reason"] == "Forbidden" and body["message"] == message
    assert body["details"]["name"] == name and body["details"]["kind"] == kind


async def test_the_controller_keeps_hard_and_used_current(api: Api) -> None:
    await api.create_ok(QUOTAS, quota("compute", {"pods": "4", "requests.cpu": "2000m", "limits.memory": "1024Mi"}))
    assert await status_of(api, "compute") == {
        "hard": {"limits.memory": "1Gi", "pods": "4", "requests.cpu": "2"},
        "used": {"limits.memory": "0", "pods": "0", "requests.cpu": "0"},
    }
    await api.create_ok(PODS, pod("a", {"cpu": "500m"}, {"cpu": "1", "memory": "128Mi"}))
    await api.create_ok(PODS, pod("b", {"cpu": "250m"}, {"cpu": "1", "memory": "128Mi"}))
    assert (await status_of(api, "compute"))["used"] == {"limits.memory": "256Mi", "pods": "2", "requests.cpu": "750m"}
    # A pod that has finished uses no compute quota; a deleted one nothing at all.
    code, _ = await api.patch(f"{PODS}/a/status", {"status": {"phase": "Succeeded"}}, "application/merge-patch+json")
    assert code == 200
    assert (await status_of(api, "compute"))["used"] == {"limits.memory": "128Mi", "pods": "1", "requests.cpu": "250m"}
    code, _ = await api.delete(f"{PODS}/b")
    assert code == 200
    assert (await status_of(api, "compute"))["used"] == {"limits.memory": "0", "pods": "0", "requests.cpu": "0"}


async def test_a_create_past_the_limit_is_forbidden_naming_only_what_it_exceeds(api: Api) -> None:
    await api.create_ok(QUOTAS, quota("compute", {"pods": "2", "requests.cpu": "1", "requests.memory": "1Gi"}))
    await api.create_ok(PODS, pod("a", {"cpu": "400m", "memory": "256Mi"}))
    await api.create_ok(PODS, pod("b", {"cpu": "400m", "memory": "256Mi"}))
    code, body = await api.post(PODS, pod("c", {"cpu": "100m", "memory": "100Mi"}))
    assert_forbidden(
        code,
        body,
        'pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
        "c",
        "pods",
    )
    await api.delete(f"{PODS}/b")
    code, body = await api.post(PODS, pod("c", {"cpu": "700m", "memory": "900Mi"}))
    assert_forbidden(
        code,
        body,
        'pods "c" is forbidden: exceeded quota: compute, requested: requests.cpu=700m,requests.memory=900Mi, '
        "used: requests.cpu=400m,requests.memory=256Mi, limited: requests.cpu=1,requests.memory=1Gi",
        "c",
        "pods",
    )
    code, _ = await api.get(f"{PODS}/c")
    assert code == 404  # nothing stored


async def test_a_quota_on_cpu_or_memory_needs_every_container_to_set_it(api: Api) -> None:
    await api.create_ok(QUOTAS, quota("compute", {"limits.cpu": "4", "requests.memory": "4Gi"}))
    body = pod("p", {"memory": "64Mi"})
    body["spec"]["initContainers"] = [{"name": "init", "image": "busybox:1.36"}]
    code, answer = await api.post(PODS, body)
    assert_forbidden(
        code,
        answer,
        'pods "p" is forbidden: failed quota: compute: '
        "must specify limits.cpu for: app,init; requests.memory for: init",
        "p",
        "pods",
    )


async def test_object_counts_and_their_legacy_names(api: Api) -> None:
    await api.create_ok(
        QUOTAS, quota("objects", {"count/configmaps": "1", "secrets": "1", "count/deployments.apps": "1"})
    )
    await api.create_ok(f"{NS}/configmaps", {"metadata": {"name": "one"}, "data": {}})
    code, body = await api.post(f"{NS}/configmaps", {"metadata": {"name": "two"}, "data": {}})
    assert_forbidden(
        code,
        body,
        'configmaps "two" is forbidden: exceeded quota: objects, requested: count/configmaps=1, '
        "used: count/configmaps=1, limited: count/configmaps=1",
        "two",
        "configmaps",
    )
    await api.create_ok(f"{NS}/secrets", {"metadata": {"name": "s1"}})
    code, body = await api.post(f"{NS}/secrets", {"metadata": {"name": "s2"}})
    assert code == 403 and "requested: secrets=1, used: secrets=1, limited: secrets=1" in body["message"]
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    await api.create_ok(deployments, deployment("d1"))
    code, body = await api.post(deployments, deployment("d2"))
    assert_forbidden(
        code,
        body,
        'deployments.apps "d2" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, '
        "used: count/deployments.apps=1, limited: count/deployments.apps=1",
        "d2",
        "deployments",
    )
    assert (await status_of(api, "objects"))["used"] == {
        "count/configmaps": "1",
        "count/deployments.apps": "1",
        "secrets": "1",
    }
    # Updates of counted kinds are not charged again.
    code, _ = await api.patch(f"{NS}/configmaps/one", {"data": {"k": "v"}}, "application/merge-patch+json")
    assert code == 200


async def test_an_update_is_charged_what_it_adds(api: Api) -> None:
    await api.create_ok(QUOTAS, quota("net", {"services": "5", "services.loadbalancers": "0"}))
    service = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    await api.create_ok(f"{NS}/services", service)
    code, body = await api.patch(
        f"{NS}/services/web", {"spec": {"type": "LoadBalancer"}}, "application/merge-patch+json"
    )
    assert_forbidden(
        code,
        body,
        'services "web" is forbidden: exceeded quota: net, requested: services.loadbalancers=1, '
        "used: services.loadbalancers=0, limited: services.loadbalancers=0",
        "web",
        "services",
    )
    await api.create_ok(QUOTAS, quota("storage", {"requests.storage": "10Gi", "persistentvolumeclaims": "2"}))
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "8Gi"}}},
    }
    await api.create_ok(f"{NS}/persistentvolumeclaims", claim)
    assert (await status_of(api, "storage"))["used"] == {"persistentvolumeclaims": "1", "requests.storage": "8Gi"}
    grow = {"spec": {"resources": {"requests": {"storage": "12Gi"}}}}
    code, body = await api.patch(f"{NS}/persistentvolumeclaims/data", grow, "application/merge-patch+json")
    assert code == 403
    assert body["message"] == (
        'persistentvolumeclaims "data" is forbidden: exceeded quota: storage, requested: requests.storage=4Gi, '
        "used: requests.storage=8Gi, limited: requests.storage=10Gi"
    )


async def test_dry_runs_are_checked_and_never_charged(api: Api) -> None:
    await api.create_ok(QUOTAS, quota("one", {"pods": "1"}))
    code, _ = await api.post(PODS, pod("a"), dryRun="All")
    assert code == 201
    assert (await status_of(api, "one"))["used"] == {"pods": "0"}
    await api.create_ok(PODS, pod("a"))
    code, body = await api.post(PODS, pod("b"), dryRun="All")
    assert code == 403 and "exceeded quota: one" in body["message"]


async def test_scopes_pick_the_pods_a_quota_counts(api: Api) -> None:
    await api.create_ok(QUOTAS, quota("best-effort", {"pods": "1"}, scopes=["BestEffort"]))
    await api.create_ok(QUOTAS, quota("terminating", {"pods": "1"}, scopes=["Terminating"]))
    await api.create_ok(
        QUOTAS,
        quota(
            "high",
            {"pods": "0"},
            scopeSelector={"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]},
        ),
    )
    await api.create_ok(PODS, pod("be"))  # BestEffort, not terminating
    await api.create_ok(PODS, pod("burstable", {"cpu": "100m"}))  # in no scope
    code, body = await api.post(PODS, pod("be2"))
    assert code == 403 and "exceeded quota: best-effort, requested: pods=1" in body["message"]
    await api.create_ok(PODS, pod("job", {"cpu": "100m"}, activeDeadlineSeconds=60))
    code, body = await api.post(PODS, pod("job2", {"cpu": "100m"}, activeDeadlineSeconds=60))
    assert code == 403 and "exceeded quota: terminating" in body["message"]
    assert (await status_of(api, "best-effort"))["used"] == {"pods": "1"}
    assert (await status_of(api, "terminating"))["used"] == {"pods": "1"}
    class_body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 10,
    }
    await api.create_ok("/apis/scheduling.k8s.io/v1/priorityclasses", class_body)
    code, body = await api.post(PODS, pod("vip", {"cpu": "100m"}, priorityClassName="high"))
    assert code == 403 and "exceeded quota: high, requested: pods=1, used: pods=0, limited: pods=0" in body["message"]


# --- clients nobody here wrote ---------------------------------------------------------------------------


async def test_pyop_client_sees_a_forbidden_error(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(QUOTAS, quota("cm", {"configmaps": "0"}))
    async with Transport(server.client_config()) as transport:
        client = DynamicClient(transport)
        configmaps = await client.resource("v1", "ConfigMap")
        with pytest.raises(ForbiddenError) as raised:
            await client.create(
                configmaps, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "default"
            )
    expected = "exceeded quota: cm, requested: configmaps=1, used: configmaps=0, limited: configmaps=0"
    assert expected in str(raised.value)


async def test_official_client_reads_the_refusal_and_the_status(server: TestAPIServer) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    core = kubernetes.client.CoreV1Api(official_client(server))

    def run() -> tuple[Any, Any]:
        core.create_namespaced_resource_quota("default", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "0"}}})
        try:
            core.create_namespaced_pod("default", pod("p"))
        except kubernetes.client.ApiException as error:
            refused = error
        else:
            raise AssertionError("the pod was admitted")
        return refused, core.read_namespaced_resource_quota("q", "default")

    refused, read = await asyncio.to_thread(run)
    assert (
        refused.status == 403 and "exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0" in refused.body
    )
    assert read.status.hard == {"pods": "0"} and read.status.used == {"pods": "0"}


async def test_custom_resources_are_counted_as_count_resource_group(api: Api) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.pyop.dev"},
        "spec": {
            "group": "example.pyop.dev",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    await api.create_ok("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    await api.create_ok(QUOTAS, quota("crs", {"count/widgets.example.pyop.dev": "1"}))
    widgets = "/apis/example.pyop.dev/v1/namespaces/default/widgets"
    widget = {"apiVersion": "example.pyop.dev/v1", "kind": "Widget"}
    await api.create_ok(widgets, {**widget, "metadata": {"name": "a"}})
    assert (await status_of(api, "crs"))["used"] == {"count/widgets.example.pyop.dev": "1"}
    code, body = await api.post(widgets, {**widget, "metadata": {"name": "b"}})
    assert_forbidden(
        code,
        body,
        'widgets.example.pyop.dev "b" is forbidden: exceeded quota: crs, requested: count/widgets.example.pyop.dev=1, '
        "used: count/widgets.example.pyop.dev=1, limited: count/widgets.example.pyop.dev=1",
        "b",
        "widgets",
    )
