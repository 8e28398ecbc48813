"""metadata.generation per kind, as kube-apiserver's registry strategies set it (v1.32)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer
from testing_server.helpers import Api


@pytest.fixture
def kubernetes_version() -> str:
    """Kubernetes 1.32: the expectations here come from kube-apiserver v1.32's source, and some are
    version-specific (embedded templates' `creationTimestamp: null` until 1.33, Pods' generation from 1.33)."""
    return "1.32"

MERGE = "application/merge-patch+json"
NS = "/api/v1/namespaces/default"
POD_TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
SELECTOR = {"matchLabels": {"app": "x"}}

WITHOUT_GENERATION: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (f"{NS}/configmaps", {"data": {"k": "v"}}, {"data": {"k": "w"}}),
    (f"{NS}/secrets", {"stringData": {"k": "v"}}, {"data": {"k": "dw=="}}),
    (f"{NS}/serviceaccounts", {}, {"automountServiceAccountToken": False}),
    (f"{NS}/services", {"spec": {"ports": [{"port": 80}]}}, {"spec": {"ports": [{"port": 81}]}}),
    (f"{NS}/endpoints", {"subsets": []}, {"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}),
    (f"{NS}/pods", {"spec": {"containers": [{"name": "c", "image": "x:1"}]}}, {"spec": {"activeDeadlineSeconds": 5}}),
    ("/apis/coordination.k8s.io/v1/namespaces/default/leases", {"spec": {}}, {"spec": {"holderIdentity": "me"}}),
    (f"{NS}/events", {"involvedObject": {"name": "x"}, "reason": "A"}, {"reason": "B"}),
]


@pytest.mark.parametrize(
    ("path", "body", "change"), WITHOUT_GENERATION, ids=[p.rsplit("/", 1)[1] for p, _, _ in WITHOUT_GENERATION]
)
async def test_kinds_whose_strategies_never_set_generation(
    api: Api, path: str, body: dict[str, Any], change: dict[str, Any]
) -> None:
    created = await api.create_ok(path, {"metadata": {"name": "o", "generation": 7}, **body})
    assert "generation" not in created["metadata"]
    status, changed = await api.patch(f"{path}/o", change, MERGE)
    assert status == 200, changed
    assert changed["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert "generation" not in changed["metadata"]


WITH_GENERATION: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "/apis/apps/v1/namespaces/default/deployments",
        {"spec": {"selector": SELECTOR, "template": POD_TEMPLATE}},
        {"spec": {"replicas": 3}},
    ),
    (
        "/apis/apps/v1/namespaces/default/statefulsets",
        {"spec": {"selector": SELECTOR, "template": POD_TEMPLATE}},
        {"spec": {"replicas": 3}},
    ),
    (
        "/apis/apps/v1/namespaces/default/daemonsets",
        {"spec": {"selector": SELECTOR, "template": POD_TEMPLATE}},
        {"spec": {"minReadySeconds": 3}},
    ),
    (
        "/apis/apps/v1/namespaces/default/replicasets",
        {"spec": {"selector": SELECTOR, "template": POD_TEMPLATE}},
        {"spec": {"replicas": 3}},
    ),
    (
        "/apis/batch/v1/namespaces/default/jobs",
        {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x:1"}]}}}},
        {"spec": {"suspend": True}},
    ),
    (
        "/apis/batch/v1/namespaces/default/cronjobs",
        {"spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": POD_TEMPLATE}}}},
        {"spec": {"schedule": "@hourly"}},
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "change"), WITH_GENERATION, ids=[p.rsplit("/", 1)[1] for p, _, _ in WITH_GENERATION]
)
async def test_workloads_bump_generation_on_spec_changes_only(
    api: Api, path: str, body: dict[str, Any], change: dict[str, Any]
) -> None:
    created = await api.create_ok(path, {"metadata": {"name": "o", "generation": 7}, **body})
    assert created["metadata"]["generation"] == 1
    status, labelled = await api.patch(f"{path}/o", {"metadata": {"labels": {"extra": "1"}}}, MERGE)
    assert status == 200 and labelled["metadata"]["generation"] == 1
    status, with_status = await api.patch(f"{path}/o/status", {"status": {"observedGeneration": 1}}, MERGE)
    assert status == 200 and with_status["metadata"]["generation"] == 1
    status, changed = await api.patch(f"{path}/o", change, MERGE)
    assert status == 200 and changed["metadata"]["generation"] == 2
    status, forged = await api.patch(f"{path}/o", {"metadata": {"generation": 40}}, MERGE)
    assert status == 200 and forged["metadata"]["generation"] == 2


async def test_deployment_annotations_bump_generation_but_labels_do_not(api: Api) -> None:
    """The deployment strategy bumps on annotation changes too: they are copied to the ReplicaSets."""
    path = "/apis/apps/v1/namespaces/default/deployments"
    await api.create_ok(path, {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": POD_TEMPLATE}})
    status, annotated = await api.patch(f"{path}/d", {"metadata": {"annotations": {"a": "1"}}}, MERGE)
    assert status == 200 and annotated["metadata"]["generation"] == 2
    status, labelled = await api.patch(f"{path}/d", {"metadata": {"labels": {"a": "1"}}}, MERGE)
    assert status == 200 and labelled["metadata"]["generation"] == 2
    status, scaled = await api.patch(f"{path}/d/scale", {"spec": {"replicas": 4}}, MERGE)
    assert status == 200
    status, read = await api.get(f"{path}/d")
    assert read["metadata"]["generation"] == 3


async def test_deletion_with_finalizers_bumps_generation_only_of_kinds_that_have_one(api: Api) -> None:
    finalizers = {"finalizers": ["example.com/hold"]}
    await api.create_ok(f"{NS}/configmaps", {"metadata": {"name": "c", **finalizers}})
    status, marked = await api.delete(f"{NS}/configmaps/c")
    assert status == 200 and "generation" not in marked["metadata"]
    path = "/apis/apps/v1/namespaces/default/deployments"
    body = {"metadata": {"name": "d", **finalizers}, "spec": {"selector": SELECTOR, "template": POD_TEMPLATE}}
    await api.create_ok(path, body)
    status, marked = await api.delete(f"{path}/d")
    assert status == 200 and marked["metadata"]["generation"] == 2


async def test_webhook_configurations_and_crds_have_a_generation(api: Api) -> None:
    path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    created = await api.create_ok(path, {"metadata": {"name": "w"}, "webhooks": []})
    assert created["metadata"]["generation"] == 1


async def test_pods_have_a_generation_from_kubernetes_1_33() -> None:
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
    for version, expected in (("1.32", None), ("1.33", 1)):
        async with TestAPIServer(kubernetes_version=version) as server:
            pods = server.resources.lookup("", "v1", "pods")
            created = server.operations.create(pods, "default", copy.deepcopy(body), WriteOptions(field_manager="t"))
            assert created["metadata"].get("generation") == expected, version
