"""Which switch of values.yaml each rendered object belongs to, from its kind and name alone.

Parts follow Kubebuilder's helm plugin (`crd`, `rbacHelpers`, `metrics`, `prometheus`, `certManager`, `webhook`,
`networkPolicy`) plus `rbac` for the manager's own roles. An object pyop does not recognise (one a user added to
config/default, or one a certificate mode renders) is in no part: it is always installed, exactly as kustomize
renders it. The Namespace is left to Helm (`helm install --namespace N --create-namespace`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RBAC_KINDS = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
WEBHOOK_KINDS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
HELPER_SUFFIXES = ("-admin-role", "-editor-role", "-viewer-role")


@dataclass(frozen=True)
class Part:
    """A group of objects installed together; `switch` is its values.yaml section (None: always installed)."""

    folder: str
    switch: str | None

    def condition(self, extra: tuple[str, ...] = ()) -> str | None:
        switches = [s for s in (self.switch, *extra) if s]
        if not switches:
            return None
        flags = [f".Values.{s}.enable" for s in dict.fromkeys(switches)]
        return flags[0] if len(flags) == 1 else f"and {' '.join(flags)}"


CRD = Part("crd", "crd")
RBAC = Part("rbac", "rbac")
RBAC_HELPERS = Part("rbac", "rbacHelpers")
METRICS = Part("metrics", "metrics")
PROMETHEUS = Part("prometheus", "prometheus")
CERT_MANAGER = Part("cert-manager", "certManager")
WEBHOOK = Part("webhook", "webhook")
NETWORK_POLICY = Part("network-policy", "networkPolicy")
MANAGER = Part("manager", None)
OTHER = Part("other", None)


def part_of(obj: dict[str, Any]) -> Part | None:
    """The part of one rendered object; None for objects the chart leaves out (the Namespace)."""
    kind = str(obj.get("kind", ""))
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    name = str((obj.get("metadata") or {}).get("name", ""))
    if kind == "Namespace" and group == "":
        return None
    if kind == "CustomResourceDefinition":
        return CRD
    if group == "cert-manager.io":
        return CERT_MANAGER
    if kind == "ServiceMonitor":
        return PROMETHEUS
    if kind in WEBHOOK_KINDS or (kind == "Service" and name.endswith("webhook-service")):
        return WEBHOOK
    if kind == "NetworkPolicy":
        return NETWORK_POLICY
    if kind in RBAC_KINDS:
        if "metrics" in name:
            return METRICS
        if name.endswith(HELPER_SUFFIXES):
            return RBAC_HELPERS
        return RBAC
    if kind == "Service" and name.endswith("metrics-service"):
        return METRICS
    if kind in ("Deployment", "ServiceAccount"):
        return MANAGER
    return OTHER


def extra_switches(obj: dict[str, Any], present: set[str]) -> tuple[str, ...]:
    """Further switches an object needs: a network policy for webhook traffic is off with the webhooks, one for
    metrics traffic with the metrics, a certificate with what it serves, roles for webhooks with the webhooks."""
    name = str((obj.get("metadata") or {}).get("name", ""))
    if obj.get("kind") == "Certificate":  # named by what it serves: the webhook Service or the metrics Service
        name = " ".join(str(d) for d in (obj.get("spec") or {}).get("dnsNames") or ())
    extra: list[str] = []
    if obj.get("kind") in ("NetworkPolicy", "Certificate"):
        if "webhook" in name and "webhook" in present:
            extra.append("webhook")
        if "metrics" in name and "metrics" in present:
            extra.append("metrics")
    if obj.get("kind") in RBAC_KINDS and "webhook" in name and "webhook" in present:
        extra.append("webhook")  # the roles of self-managed webhook certificates (`--certificates=pyop`)
    if obj.get("kind") == "ServiceMonitor" and "metrics" in present:
        extra.append("metrics")
    return tuple(extra)
