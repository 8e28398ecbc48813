"""kube-apiserver's registry defaulters of the cluster-facing kinds (pyop.testing.builtins.defaulting_cluster),
read back as a cluster stores them: each expectation is the kind's `SetDefaults_*` in `pkg/apis/<group>/v1`."""

from __future__ import annotations

from typing import Any

import pytest

from testing_server.helpers import Api

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 5},
        {"preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "/apis/storage.k8s.io/v1/storageclasses",
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p"},
        {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
    ),
    (
        "/apis/storage.k8s.io/v1/csidrivers",
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d.example.com"}, "spec": {}},
        {
            "spec": {
                "attachRequired": True,
                "podInfoOnMount": False,
                "storageCapacity": False,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": False,
                "seLinuxMount": False,
            }
        },
    ),
    (
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "n"},
            "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]},
        },
        {
            "spec": {
                "podSelector": {},
                "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}],
                "policyTypes": ["Ingress", "Egress"],
            }
        },
    ),
    (
        "/apis/networking.k8s.io/v1/ingressclasses",
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": {"name": "ic"},
            "spec": {"controller": "example.com/c", "parameters": {"kind": "K", "name": "n"}},
        },
        {"spec": {"controller": "example.com/c", "parameters": {"kind": "K", "name": "n", "scope": "Cluster"}}},
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "u"},
                {"kind": "Group", "name": "g"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "default"},
            ],
        },
        {
            "subjects": [
                {"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "Group", "name": "g", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "default"},  # "" is omitted
            ]
        },
    ),
    (
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "e"},
            "addressType": "IPv4",
            "ports": [{"port": 80}],
            "endpoints": [{"addresses": ["10.0.0.1"]}],
        },
        {"ports": [{"port": 80, "name": "", "protocol": "TCP"}]},
    ),
    (
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema",
            "metadata": {"name": "f"},
            "spec": {"priorityLevelConfiguration": {"name": "global-default"}},
        },
        {"spec": {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 1000}},
    ),
]


@pytest.mark.parametrize(("path", "body", "expected"), CASES, ids=[case[1]["kind"] for case in CASES])
async def test_cluster_kinds_read_back_with_their_registry_defaults(
    api: Api, path: str, body: dict[str, Any], expected: dict[str, Any]
) -> None:
    stored = await api.create_ok(path, body)
    for field, value in expected.items():
        assert stored[field] == value, field
    status, again = await api.get(f"{path}/{body['metadata']['name']}")
    assert status == 200 and {field: again[field] for field in expected} == expected


async def test_the_system_priority_classes_carry_their_preemption_policy(api: Api) -> None:
    status, listed = await api.get("/apis/scheduling.k8s.io/v1/priorityclasses")
    assert status == 200
    policies = {item["metadata"]["name"]: item.get("preemptionPolicy") for item in listed["items"]}
    assert policies == {
        "system-cluster-critical": "PreemptLowerPriority",
        "system-node-critical": "PreemptLowerPriority",
    }


async def test_a_nodes_allocatable_defaults_to_its_capacity(api: Api) -> None:
    await api.create_ok("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    status, node = await api.patch(
        "/api/v1/nodes/n1/status", {"status": {"capacity": capacity}}, "application/merge-patch+json"
    )
    assert status == 200 and node["status"]["allocatable"] == capacity
