"""kube-apiserver's registry defaulters (`pkg/apis/<group>/v1/defaults.go`) of the cluster-facing kinds: scheduling,
storage, networking, RBAC, discovery, flow control and nodes.

The workload and core defaulters are in `defaulting.py`, which merges these into its table. Like those, each
function mutates a copy of the decoded object before validation, so a client reads back what a cluster stores: a
PriorityClass's `preemptionPolicy`, a StorageClass's reclaim and binding modes, a NetworkPolicy's `policyTypes`, a
binding subject's `apiGroup` (an operator comparing desired and stored objects would otherwise update forever).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

Obj = dict[str, Any]
RBAC_GROUP: Final = "rbac.authorization.k8s.io"


def priority_class(obj: Obj) -> None:
    """scheduling/v1 SetDefaults_PriorityClass."""
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def storage_class(obj: Obj) -> None:
    """storage/v1 SetDefaults_StorageClass."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def csi_driver(obj: Obj) -> None:
    """storage/v1 SetDefaults_CSIDriver (SELinuxMountReadWriteOncePod is on by default: `seLinuxMount` too)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("attachRequired", True)
    spec.setdefault("podInfoOnMount", False)
    spec.setdefault("storageCapacity", False)
    spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    spec.setdefault("requiresRepublish", False)
    spec.setdefault("seLinuxMount", False)


def network_policy(obj: Obj) -> None:
    """networking/v1 SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort: ports are TCP; a policy without
    policyTypes is an Ingress policy, and an Egress one too when it has egress rules."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in (rule.get("ports") or []) if isinstance(rule, dict) else []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def ingress_class(obj: Obj) -> None:
    """networking/v1 SetDefaults_IngressClass: parameters without a scope are cluster-scoped."""
    parameters = (obj.get("spec") or {}).get("parameters")
    if isinstance(parameters, dict) and parameters.get("scope") is None:  # *string, no omitempty: null when unset
        parameters["scope"] = "Cluster"


def _subjects_and_role(obj: Obj) -> None:
    """rbac/v1 SetDefaults_Subject and the bindings' roleRef group: Users and Groups are RBAC's; a ServiceAccount's
    group is core's "", which `omitempty` leaves off the wire."""
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = RBAC_GROUP
    role = obj.get("roleRef")
    if isinstance(role, dict) and not role.get("apiGroup"):
        role["apiGroup"] = RBAC_GROUP


def endpoint_slice(obj: Obj) -> None:
    """discovery/v1 SetDefaults_EndpointPort: a port has a name ("" when unnamed) and a protocol (TCP)."""
    for port in obj.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")


def flow_schema(obj: Obj) -> None:
    """flowcontrol/v1 SetDefaults_FlowSchemaSpec: matchingPrecedence 1000 when unset or 0."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def node(obj: Obj) -> None:
    """core/v1 SetDefaults_NodeStatus: allocatable is the capacity until the kubelet says otherwise."""
    status = obj.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])


CLUSTER_DEFAULTERS: Final[dict[tuple[str, str], Callable[[Obj], None]]] = {
    ("scheduling.k8s.io", "PriorityClass"): priority_class,
    ("storage.k8s.io", "StorageClass"): storage_class,
    ("storage.k8s.io", "CSIDriver"): csi_driver,
    ("networking.k8s.io", "NetworkPolicy"): network_policy,
    ("networking.k8s.io", "IngressClass"): ingress_class,
    (RBAC_GROUP, "RoleBinding"): _subjects_and_role,
    (RBAC_GROUP, "ClusterRoleBinding"): _subjects_and_role,
    ("discovery.k8s.io", "EndpointSlice"): endpoint_slice,
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): flow_schema,
    ("", "Node"): node,
}
