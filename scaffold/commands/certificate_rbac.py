"""The RBAC of a process that makes and rotates its own serving certificate (``--certificates=pyop``).

`pyop.webhook.certificates`' Rotator keeps the pair in one Secret of its namespace and injects the CA into the
objects that must trust it: the manager into its webhook configurations and converting CRDs
(webhook_certificates.py), an aggregated API server into its APIServices (apiserver_config.py). Both get the same
four documents, everything by name where RBAC allows it: a Role for the Secret (get/update by name; create cannot
be limited by name), a ClusterRole for what it injects into, and a binding of each to its ServiceAccount. pyop
rewrites the file as kinds are added (``GENERATED`` headers), so it is data built here, not a template.
"""

from __future__ import annotations

from typing import Any

import yaml

RBAC_GROUP = "rbac.authorization.k8s.io"


def rotator_rbac(
    *,
    role: str,
    binding: str,
    secret: str,
    service_account: str,
    cluster_rules: list[dict[str, Any]],
    labels: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Role and ClusterRole ``role``, both bound (``binding``) to ServiceAccount ``service_account`` in the
    kustomize namespace ``system``: the Role's rules are ``secret``'s, the ClusterRole's ``cluster_rules``."""

    def metadata(name: str, namespaced: bool) -> dict[str, Any]:
        meta: dict[str, Any] = {} if labels is None else {"labels": dict(labels)}
        meta["name"] = name
        if namespaced:
            meta["namespace"] = "system"
        return meta

    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": "system"}
    secret_rules = [
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [secret], "verbs": ["get", "update"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
    ]
    documents: list[dict[str, Any]] = []
    for kind, namespaced, rules in (("Role", True, secret_rules), ("ClusterRole", False, cluster_rules)):
        documents.append(
            {"apiVersion": f"{RBAC_GROUP}/v1", "kind": kind, "metadata": metadata(role, namespaced), "rules": rules}
        )
        documents.append(
            {
                "apiVersion": f"{RBAC_GROUP}/v1",
                "kind": f"{kind}Binding",
                "metadata": metadata(binding, namespaced),
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": kind, "name": role},
                "subjects": [dict(subject)],
            }
        )
    return documents


def dump_documents(header: str, documents: list[dict[str, Any]]) -> bytes:
    """``documents`` as one YAML stream (keys in the order built) under the ``header`` comment."""
    return (header + "---\n".join(yaml.safe_dump(document, sort_keys=False) for document in documents)).encode()


__all__ = ["dump_documents", "rotator_rbac"]
