"""The control-plane reactions RBAC and ServiceAccount tokens rely on, called from `controllers.control_plane`.

- kube-controller-manager's clusterrole-aggregation controller: a ClusterRole with an `aggregationRule` gets the
  rules of the ClusterRoles its selectors match (in name order, each rule once) written into `rules`, so
  `kubectl get clusterrole edit -o yaml` shows a CRD's `aggregate-to-edit` rules as on a cluster (the authorizer
  aggregates on every decision anyway, so nothing waits for this).
- ServiceAccount token validation: a token of a deleted ServiceAccount no longer authenticates (401), as the
  API server's token authenticator checks the account still exists with the same uid.
"""

from __future__ import annotations

from typing import Any

from pyop.apiserver.authentication.user import UserInfo
from pyop.testing.authorization.rbac import CLUSTER_ROLES, RBAC, SERVICE_ACCOUNT_PREFIX

_AGGREGATOR = "clusterrole-aggregation-controller"


def aggregate_cluster_roles(operations: Any) -> None:
    """Write the aggregated rules of every ClusterRole with an aggregationRule whose stored rules differ."""
    rbac = RBAC(operations.store)
    for role in list(operations.store.objects(CLUSTER_ROLES)):
        if not role.get("aggregationRule"):
            continue
        name = role["metadata"]["name"]
        rules = rbac.cluster_role_rules(name)
        if rules is None or rules == list(role.get("rules") or []):
            continue

        def write(obj: dict[str, Any], rules: list[Any] = rules) -> None:
            obj["rules"] = [dict(rule) for rule in rules]

        operations.mutate(CLUSTER_ROLES, "", name, write, manager=_AGGREGATOR)


def revoke_service_account_tokens(users: dict[str, UserInfo], account: dict[str, Any]) -> None:
    """Forget the tokens of a deleted ServiceAccount (by name and uid)."""
    metadata = account.get("metadata") or {}
    username = f"{SERVICE_ACCOUNT_PREFIX}{metadata.get('namespace', '')}:{metadata.get('name', '')}"
    uid = metadata.get("uid", "")
    for token in [token for token, user in users.items() if user.username == username and user.uid == uid]:
        del users[token]
