"""The default ClusterRoles and ClusterRoleBindings kube-apiserver creates at start (its RBAC bootstrap policy).

From plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, the roles a test meets: cluster-admin (bound to
system:masters), system:discovery, system:basic-user and system:public-info-viewer (bound to every authenticated
user), and the user-facing admin/edit/view, which aggregate the `system:aggregate-to-*` roles (and each other:
view flows into edit, edit into admin) by their `rbac.authorization.k8s.io/aggregate-to-*` labels, so a CRD's
ClusterRole labelled `aggregate-to-edit` extends `edit` as on a cluster. The aggregate-to-* rules are abridged to
the core, apps, batch, autoscaling, policy, networking and discovery groups (the deprecated `extensions` group and
the controller roles are left out). Node, controller and kubelet roles are not created.
"""

from __future__ import annotations

from typing import Any, Final

_READ: Final = ["get", "list", "watch"]
_WRITE: Final = ["create", "delete", "deletecollection", "patch", "update"]
_ALL_VERBS: Final = [*sorted(_WRITE + _READ)]
BOOTSTRAP_LABELS: Final = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTOUPDATE: Final = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
AGGREGATE_TO: Final = "rbac.authorization.k8s.io/aggregate-to-"
RBAC_GROUP: Final = "rbac.authorization.k8s.io"


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def _paths(paths: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"nonResourceURLs": paths, "verbs": verbs}


def _cluster_role(
    name: str, rules: list[dict[str, Any]], labels: dict[str, str] | None = None, aggregate: str = ""
) -> dict[str, Any]:
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {**BOOTSTRAP_LABELS, **(labels or {})}, "annotations": dict(_AUTOUPDATE)},
        "rules": rules,
    }
    if aggregate:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate: "true"}}]}
    return role


def _binding(name: str, role: str, groups: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS), "annotations": dict(_AUTOUPDATE)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group} for group in groups],
    }


_VIEWABLE: Final = [
    _rule(
        [""],
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
        ],
        _READ,
    ),
    _rule(
        [""],
        [
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ],
        _READ,
    ),
    _rule([""], ["namespaces"], _READ),
    _rule(["discovery.k8s.io"], ["endpointslices"], _READ),
    _rule(
        ["apps"],
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
        _READ,
    ),
    _rule(["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], _READ),
    _rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], _READ),
    _rule(["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], _READ),
    _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], _READ),
]
_EDITABLE: Final = [
    _rule([""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"], _READ),
    _rule([""], ["serviceaccounts"], ["impersonate"]),
    _rule([""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], _WRITE),
    _rule([""], ["pods/eviction"], ["create"]),
    _rule(
        [""],
        [
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ],
        _WRITE,
    ),
    _rule([""], ["serviceaccounts/token"], ["create"]),
    _rule(
        ["apps"],
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
        _WRITE,
    ),
    _rule(["autoscaling"], ["horizontalpodautoscalers"], _WRITE),
    _rule(["batch"], ["cronjobs", "jobs"], _WRITE),
    _rule(["policy"], ["poddisruptionbudgets"], _WRITE),
    _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], _WRITE),
    _rule(["coordination.k8s.io"], ["leases"], [*_ALL_VERBS]),
]
_ADMINISTRABLE: Final = [
    _rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
    _rule(["rbac.authorization.k8s.io"], ["rolebindings", "roles"], [*_ALL_VERBS]),
]
_DISCOVERY_PATHS: Final = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_PUBLIC_PATHS: Final = ["/healthz", "/livez", "/readyz", "/version", "/version/"]


def default_cluster_roles() -> list[dict[str, Any]]:
    return [
        _cluster_role("cluster-admin", [_rule(["*"], ["*"], ["*"]), _paths(["*"], ["*"])]),
        _cluster_role("system:discovery", [_paths(_DISCOVERY_PATHS, ["get"])]),
        _cluster_role(
            "system:basic-user",
            [
                _rule(["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
                _rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]),
            ],
        ),
        _cluster_role("system:public-info-viewer", [_paths(_PUBLIC_PATHS, ["get"])]),
        # Stored with the rules the aggregation controller writes; the authorizer re-aggregates on every question.
        _cluster_role("admin", _EDITABLE + _VIEWABLE + _ADMINISTRABLE, aggregate="admin"),
        _cluster_role("edit", _EDITABLE + _VIEWABLE, {AGGREGATE_TO + "admin": "true"}, aggregate="edit"),
        _cluster_role("view", list(_VIEWABLE), {AGGREGATE_TO + "edit": "true"}, aggregate="view"),
        _cluster_role("system:aggregate-to-admin", _ADMINISTRABLE, {AGGREGATE_TO + "admin": "true"}),
        _cluster_role("system:aggregate-to-edit", _EDITABLE, {AGGREGATE_TO + "edit": "true"}),
        _cluster_role("system:aggregate-to-view", _VIEWABLE, {AGGREGATE_TO + "view": "true"}),
    ]


def default_cluster_role_bindings() -> list[dict[str, Any]]:
    return [
        _binding("cluster-admin", "cluster-admin", ["system:masters"]),
        _binding("system:discovery", "system:discovery", ["system:authenticated"]),
        _binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        _binding(
            "system:public-info-viewer", "system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]
        ),
    ]
