"""Which kinds have `metadata.generation`, and which changes bump it: kube-apiserver's registry strategies.

Generation is not a generic field: each kind's strategy sets it to 1 in PrepareForCreate and increments it in
PrepareForUpdate when the part of the object that describes desired state changed (its spec; for a Deployment its
annotations too, which it copies to its ReplicaSets). Kinds whose strategies never touch it (ConfigMap, Secret,
Namespace, ServiceAccount, Service, Event, Lease, Endpoints, RBAC, ...) have no generation at all. Custom resources
always have one. Status and metadata-only writes never bump it.

One table: `(group, kind) -> Generation`. Read from pkg/registry/*/strategy.go of Kubernetes v1.32 (v1.33 for Pods).
"""

from __future__ import annotations

from typing import Final

from pyop.apiserver.registry.strategy import Generation

TRACKED: Final[dict[tuple[str, str], Generation]] = {
    ("apps", "Deployment"): Generation(metadata_fields=("annotations",)),
    ("apps", "DaemonSet"): Generation(),
    ("apps", "StatefulSet"): Generation(),
    ("apps", "ReplicaSet"): Generation(),
    ("", "ReplicationController"): Generation(),
    ("", "Pod"): Generation(since=(1, 33)),  # KEP-5067: pods have a generation from v1.33, whatever the gate
    ("batch", "Job"): Generation(),
    ("batch", "CronJob"): Generation(),
    ("networking.k8s.io", "Ingress"): Generation(),
    ("networking.k8s.io", "IngressClass"): Generation(),
    ("networking.k8s.io", "NetworkPolicy"): Generation(),
    ("policy", "PodDisruptionBudget"): Generation(),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): Generation(),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): Generation(),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): Generation(),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): Generation(),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Generation(),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): Generation(),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): Generation(),
    ("resource.k8s.io", "DeviceClass"): Generation(),
    ("apiregistration.k8s.io", "APIService"): Generation(),
}
_CUSTOM: Final = Generation()


def rule_for(group: str, kind: str, *, custom: bool, kubernetes_version: tuple[int, int]) -> Generation | None:
    """The kind's generation rule, or None when objects of the kind have no generation."""
    if custom:
        return _CUSTOM
    rule = TRACKED.get((group, kind))
    if rule is None or kubernetes_version < rule.since:
        return None
    return rule
