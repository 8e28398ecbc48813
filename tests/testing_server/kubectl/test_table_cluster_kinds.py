"""`kubectl get` of the cluster-facing built-in kinds prints kube-apiserver's columns (printers_cluster.py).

Each object is created through the API (status written through its status subresource where the row reads it) and
read back with the real kubectl, so the header is the server's column definitions and each cell the server's
printer; the expected rows are what `pkg/printers/internalversion` prints for the same object.
"""

from __future__ import annotations

from typing import Any

from pyop.testing.builtins.printers_cluster import access_modes, csr_condition, hpa_targets
from testing_server.helpers import Api
from testing_server.kubectl.helpers import Kubectl, table


def without_age(rows: list[list[str]], age_column: int) -> list[list[str]]:
    return [row[:age_column] + row[age_column + 1 :] for row in rows]


async def test_hpa_pdb_and_priority_class_rows(kubectl: Kubectl, api: Api) -> None:
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 5,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
                }
            ],
        },
    }
    await api.create_ok("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", hpa)
    rows = table((await kubectl("get", "hpa", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows[1][:6] == ["web", "Deployment/web", "cpu: <unknown>/80%", "2", "5", "0"]

    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    await api.create_ok("/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb)
    rows = table((await kubectl("get", "pdb", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"]
    assert rows[1][:4] == ["web", "1", "N/A", "0"]

    rows = table((await kubectl("get", "priorityclass", "system-cluster-critical")).stdout)
    assert rows[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert without_age(rows[1:], 3) == [["system-cluster-critical", "2000000000", "false", "PreemptLowerPriority"]]


async def test_ingress_network_policy_endpoints_and_slices_rows(kubectl: Kubectl, api: Api) -> None:
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web"},
        "spec": {
            "ingressClassName": "nginx",
            "tls": [{"hosts": ["a.example.com"]}],
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
        },
    }
    await api.create_ok("/apis/networking.k8s.io/v1/namespaces/default/ingresses", ingress)
    rows = table((await kubectl("get", "ingress", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    # The Address cell is empty (no load balancer yet): kubectl's blank column joins the spaces around it.
    assert rows[1][:4] == ["web", "nginx", "a.example.com,b.example.com", "80, 443"]

    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny"},
        "spec": {"podSelector": {"matchLabels": {"app": "web"}}},
    }
    await api.create_ok("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies", policy)
    rows = table((await kubectl("get", "networkpolicy", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "POD-SELECTOR", "AGE"] and rows[1][:2] == ["deny", "app=web"]

    addresses = [{"ip": f"10.0.0.{i}"} for i in range(1, 5)]
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web"},
        "subsets": [{"addresses": addresses, "ports": [{"port": 8080}]}],
    }
    await api.create_ok("/api/v1/namespaces/default/endpoints", endpoints)
    rows = table((await kubectl("get", "endpoints", "web", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "ENDPOINTS", "AGE"]
    assert rows[1][:2] == ["web", "10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 1 more..."]

    endpoint_slice = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}],
    }
    await api.create_ok("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", endpoint_slice)
    rows = table((await kubectl("get", "endpointslices", "web-abc", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert rows[1][:4] == ["web-abc", "IPv4", "8080", "10.0.0.1,10.0.0.2"]


async def test_node_volume_claim_and_storage_class_rows(kubectl: Kubectl, api: Api) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-1", "labels": {"node-role.kubernetes.io/worker": ""}},
        "spec": {"unschedulable": True},
    }
    await api.create_ok("/api/v1/nodes", node)
    status = {
        "conditions": [{"type": "Ready", "status": "True"}],
        "nodeInfo": {"kubeletVersion": "v1.37.0", "osImage": "Debian", "kernelVersion": "6.1",
                     "containerRuntimeVersion": "containerd://2.0", "machineID": "", "systemUUID": "", "bootID": "",
                     "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"},
        "addresses": [{"type": "InternalIP", "address": "192.168.0.10"}],
    }  # fmt: skip
    code, _ = await api.patch("/api/v1/nodes/worker-1/status", {"status": status}, "application/merge-patch+json")
    assert code == 200
    rows = table((await kubectl("get", "nodes", "-o", "wide")).stdout)
    assert rows[0] == [
        "NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ]  # fmt: skip
    assert without_age(rows[1:], 3) == [
        ["worker-1", "Ready,SchedulingDisabled", "worker", "v1.37.0", "192.168.0.10", "<none>", "Debian", "6.1",
         "containerd://2.0"]
    ]  # fmt: skip

    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "csi.example.com",
    }
    await api.create_ok("/apis/storage.k8s.io/v1/storageclasses", storage_class)
    rows = table((await kubectl("get", "storageclass")).stdout)
    assert rows[0] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
    assert rows[1][:5] == ["fast (default)", "csi.example.com", "Delete", "Immediate", "false"]

    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "fast",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    await api.create_ok("/api/v1/namespaces/default/persistentvolumeclaims", claim)
    rows = table((await kubectl("get", "pvc", "-n", "default")).stdout)
    assert rows[0] == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS",
                       "AGE"]  # fmt: skip
    # An unbound claim prints empty Volume, Capacity and Access Modes cells (kubectl shows them blank).
    assert rows[1][0] == "data" and "fast" in rows[1] and "<unset>" in rows[1]


def test_hpa_targets_follow_format_hpa_metrics() -> None:
    def metric(kind: str, source: str, target: dict[str, Any], name: str = "cpu") -> dict[str, Any]:
        body: dict[str, Any] = {"target": target}
        if kind in ("Resource", "ContainerResource"):
            body["name"] = name
        return {"type": kind, source: body}

    hpa = {
        "spec": {
            "metrics": [
                metric("Resource", "resource", {"averageUtilization": 80}),
                metric("Resource", "resource", {"averageValue": "100Mi"}, name="memory"),
                metric("External", "external", {"averageValue": "30"}),
            ]
        },
        "status": {
            "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 12}}},
                {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "50Mi"}}},
            ]
        },
    }
    assert hpa_targets(hpa) == "cpu: 12%/80%, memory: 50Mi/100Mi + 1 more..."
    assert hpa_targets({"spec": {}}) == "<none>"
    assert hpa_targets({"spec": {"metrics": [metric("Pods", "pods", {"averageValue": "1k"})]}}) == "<unknown>/1k"


def test_access_modes_and_csr_conditions_in_kubes_words() -> None:
    assert access_modes(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"]) == "RWO,RWX,RWOP"
    assert csr_condition({"status": {}}) == "Pending"
    approved = {"status": {"conditions": [{"type": "Approved"}], "certificate": "Y2VydA=="}}
    assert csr_condition(approved) == "Approved,Issued"
    assert csr_condition(
        {"status": {"conditions": [{"type": "Approved"}, {"type": "Denied"}, {"type": "Failed"}]}}
    ) == ("Denied,Failed")
