"""The server's authorizer chain: the privileged group system:masters, then RBAC (kube-apiserver's default
`--authorization-mode=Node,RBAC` minus Node, which only answers kubelets), and the users tokens resolve to."""

from __future__ import annotations

import secrets
from typing import Any, Final

from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.attributes import (
    Attributes,
    forbidden,
    path_attributes,
    resource_attributes,
)
from pyop.apiserver.endpoints.routing import Target
from pyop.apiserver.storage.store import Store
from pyop.testing.authorization import bootstrap
from pyop.testing.authorization.decisions import Decisions
from pyop.testing.authorization.rbac import RBAC, SERVICE_ACCOUNT_PREFIX, Decision, rule_allows

PRIVILEGED_GROUP: Final = "system:masters"
_ALL_RESOURCES: Final = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
_ALL_PATHS: Final = {"verbs": ["*"], "nonResourceURLs": ["*"]}


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The user a ServiceAccount token authenticates as (k8s.io/apiserver/pkg/authentication/serviceaccount)."""
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    return UserInfo(f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}", groups, uid)


class Authorization:
    """Decides every request and review; installs the default RBAC policy into the store it reads."""

    def __init__(self, store: Store, users: dict[str, UserInfo]) -> None:
        self.store = store
        self.users = users
        self.rbac = RBAC(store)
        # RBAC's decisions, remembered until a Role, ClusterRole or binding changes (decisions.py: why)
        self.rbac_decision = Decisions(store, self.rbac.authorize)

    def install_defaults(self, operations: Any) -> None:
        """The bootstrap ClusterRoles and ClusterRoleBindings, as kube-apiserver's post-start hook creates them."""
        from pyop.apiserver.registry.operations import WriteOptions  # operations imports this package

        resources = operations.resources
        for plural, objects in (
            ("clusterroles", bootstrap.default_cluster_roles()),
            ("clusterrolebindings", bootstrap.default_cluster_role_bindings()),
        ):
            resource_type = resources.lookup(bootstrap.RBAC_GROUP, "v1", plural)
            for obj in objects:
                operations.create(resource_type, "", obj, WriteOptions(field_manager="kube-apiserver"))

    def decide(self, attributes: Attributes) -> Decision:
        if PRIVILEGED_GROUP in attributes.user.groups:
            return Decision(True)
        return self.rbac_decision(attributes)

    def authorize(self, user: UserInfo, method: str, path: str, target: Any, verb: str, query: Any) -> None:
        """The request path's check: nothing when allowed, the 403 kube-apiserver writes when not."""
        if PRIVILEGED_GROUP in user.groups:
            return  # the fast path every admin-token request takes
        if isinstance(target, Target):
            attributes = resource_attributes(user, target, verb, query)
        else:
            attributes = path_attributes(user, method, path)
        decision = self.rbac_decision(attributes)
        if not decision.allowed:
            raise forbidden(attributes, decision.reason)

    def authorize_request(self, user: UserInfo, request: Any, target: Any, verb: str) -> None:
        """`authorize` for an HTTP request (``request``: aiohttp's): a system:masters user is allowed before the
        request's path and query are read (parsing the query is most of the cost of the check otherwise)."""
        if PRIVILEGED_GROUP in user.groups:
            return
        self.authorize(user, request.method, request.path, target, verb, request.query)

    def rules_review(self, user: UserInfo, namespace: str) -> dict[str, Any]:
        """SelfSubjectRulesReview's status: the rules bound to the user there (RBAC's RulesFor)."""
        if PRIVILEGED_GROUP in user.groups:
            return {
                "resourceRules": [dict(_ALL_RESOURCES)],
                "nonResourceRules": [dict(_ALL_PATHS)],
                "incomplete": False,
            }
        rules, errors = self.rbac.rules_for(user, namespace)
        resource_rules, non_resource_rules = [], []
        for rule in rules:
            if rule.get("nonResourceURLs"):
                non_resource_rules.append({key: list(rule[key]) for key in ("verbs", "nonResourceURLs")})
            else:
                keys = ("verbs", "apiGroups", "resources", "resourceNames")
                resource_rules.append({key: list(rule[key]) for key in keys if rule.get(key)})
        status: dict[str, Any] = {
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": bool(errors),
        }
        if errors:
            status["evaluationError"] = ", ".join(errors)
        return status

    def token_for_service_account(self, namespace: str, name: str) -> str:
        """A bearer token that authenticates as the ServiceAccount (which must exist, as a cluster checks)."""
        account = self.store.get("serviceaccounts", namespace, name)
        if account is None:
            raise LookupError(
                f'serviceaccount "{name}" not found in namespace "{namespace}": create it before asking for its token'
            )
        token = secrets.token_urlsafe(24)
        self.users[token] = service_account_user(namespace, name, account["metadata"].get("uid", ""))
        return token


__all__ = ["Authorization", "rule_allows", "service_account_user"]
