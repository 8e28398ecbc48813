"""``kube-system/extension-apiserver-authentication``: how an aggregated server authenticates the aggregator.

kube-apiserver's cluster-authentication-trust controller publishes its ``--requestheader-*`` settings in this
ConfigMap, each list as a JSON-encoded string (``'["X-Remote-User"]'``), with the request-header CA bundle; an
aggregated server built on k8s.io/apiserver reads it at start (``--authentication-kubeconfig``) to trust proxied
requests. ``client-ca-file`` is written only when the server authenticates client certificates itself, which the test
server does not (its users present bearer tokens), so it is absent, as on a kube-apiserver without
``--client-ca-file``.

The RBAC bootstrap objects an aggregated server's own RBAC refers to are created alongside: the Role
``extension-apiserver-authentication-reader`` in kube-system (read this ConfigMap) and the ClusterRole
``system:auth-delegator`` (create TokenReviews and SubjectAccessReviews), as kube-apiserver's bootstrap policy
creates them.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceRegistry

NAMESPACE: Final = "kube-system"
NAME: Final = "extension-apiserver-authentication"
READER_ROLE: Final = "extension-apiserver-authentication-reader"
AUTH_DELEGATOR: Final = "system:auth-delegator"
USERNAME_HEADERS: Final = ("X-Remote-User",)
UID_HEADERS: Final = ("X-Remote-Uid",)
GROUP_HEADERS: Final = ("X-Remote-Group",)
EXTRA_HEADER_PREFIXES: Final = ("X-Remote-Extra-",)
_MANAGER: Final = "kube-apiserver"
_BOOTSTRAP_LABELS: Final = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTOUPDATE: Final = {"rbac.authorization.kubernetes.io/autoupdate": "true"}


def configmap_data(request_header_ca: bytes, allowed_names: tuple[str, ...]) -> dict[str, str]:
    """The ConfigMap's data as kube-apiserver writes it (lists JSON-encoded, the CA as PEM text)."""
    return {
        "requestheader-username-headers": json.dumps(list(USERNAME_HEADERS)),
        "requestheader-uid-headers": json.dumps(list(UID_HEADERS)),
        "requestheader-group-headers": json.dumps(list(GROUP_HEADERS)),
        "requestheader-extra-headers-prefix": json.dumps(list(EXTRA_HEADER_PREFIXES)),
        "requestheader-client-ca-file": request_header_ca.decode("ascii"),
        "requestheader-allowed-names": json.dumps(list(allowed_names)),
    }


def _reader_role() -> dict[str, Any]:
    return {
        "metadata": {
            "name": READER_ROLE,
            "namespace": NAMESPACE,
            "labels": dict(_BOOTSTRAP_LABELS),
            "annotations": dict(_AUTOUPDATE),
        },
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [NAME], "verbs": ["get", "list", "watch"]}
        ],
    }


def _auth_delegator() -> dict[str, Any]:
    return {
        "metadata": {"name": AUTH_DELEGATOR, "labels": dict(_BOOTSTRAP_LABELS), "annotations": dict(_AUTOUPDATE)},
        "rules": [
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
        ],
    }


def publish(
    operations: Operations, resources: ResourceRegistry, request_header_ca: bytes, allowed_names: tuple[str, ...]
) -> None:
    """Create (or bring up to date) the ConfigMap and the two bootstrap roles; objects present already are kept
    apart from the ConfigMap's data, which is the server's to own."""
    options = WriteOptions(field_manager=_MANAGER)
    configmaps = resources.lookup("", "v1", "configmaps")
    data = configmap_data(request_header_ca, allowed_names)
    current = operations.store.get(configmaps.storage_key, NAMESPACE, NAME)
    if current is None:
        operations.create(
            configmaps, NAMESPACE, {"metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data}, options
        )
    elif current.get("data") != data:
        operations.update(configmaps, NAMESPACE, NAME, {**current, "data": data}, options)
    for resource, namespace, body in (
        (resources.lookup("rbac.authorization.k8s.io", "v1", "roles"), NAMESPACE, _reader_role()),
        (resources.lookup("rbac.authorization.k8s.io", "v1", "clusterroles"), "", _auth_delegator()),
    ):
        if operations.store.get(resource.storage_key, namespace, body["metadata"]["name"]) is None:
            operations.create(resource, namespace, body, options)
