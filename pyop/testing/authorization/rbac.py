"""RBAC's decision over the Roles, ClusterRoles and bindings in the store: plugin/pkg/auth/authorizer/rbac.

ClusterRoleBindings are visited first, then the RoleBindings of the request's namespace; the first rule that
allows wins ("RBAC: allowed by ClusterRoleBinding ..."). A binding whose role does not exist contributes the
error kube-apiserver reports as the deny reason (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`).
A ClusterRole with an `aggregationRule` holds the rules of the ClusterRoles its selectors match, as
kube-controller-manager's clusterrole-aggregation controller writes them, here computed when asked (no delay).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pyop.api.selectors import labels_match, parse_label_selector, selector_from_label_selector
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.storage.store import Store

RBAC_GROUP: Final = "rbac.authorization.k8s.io"
ROLES: Final = f"roles.{RBAC_GROUP}"
CLUSTER_ROLES: Final = f"clusterroles.{RBAC_GROUP}"
ROLE_BINDINGS: Final = f"rolebindings.{RBAC_GROUP}"
CLUSTER_ROLE_BINDINGS: Final = f"clusterrolebindings.{RBAC_GROUP}"
SERVICE_ACCOUNT_PREFIX: Final = "system:serviceaccount:"

Rule = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str = ""


def rule_allows(attributes: Attributes, rule: Rule) -> bool:
    """rbacv1helpers' RuleAllows: verb, then group/resource/name or non-resource URL."""
    verbs = rule.get("verbs") or ()
    if "*" not in verbs and attributes.verb not in verbs:
        return False
    if not attributes.resource_request:
        return any(
            pattern == "*"
            or pattern == attributes.path
            or (pattern.endswith("*") and attributes.path.startswith(pattern[:-1]))
            for pattern in rule.get("nonResourceURLs") or ()
        )
    groups = rule.get("apiGroups") or ()
    if "*" not in groups and attributes.api_group not in groups:
        return False
    combined, subresource = attributes.combined_resource, attributes.subresource
    if not any(
        resource in ("*", combined) or (subresource and resource == f"*/{subresource}")
        for resource in rule.get("resources") or ()
    ):
        return False
    names = rule.get("resourceNames") or ()
    return not names or attributes.name in names


def applies_to(subject: Mapping[str, Any], user: UserInfo, binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return user.username == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and user.username == f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"
    return False


def describe_subject(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


class RBAC:
    """Reads the RBAC objects of one store on every question (tests change them between requests)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def cluster_role_rules(self, name: str, seen: frozenset[str] = frozenset()) -> list[Rule] | None:
        role = self.store.get(CLUSTER_ROLES, "", name)
        if role is None:
            return None
        aggregation = role.get("aggregationRule")
        if not aggregation or name in seen:
            return list(role.get("rules") or [])
        rules: list[Rule] = []
        selectors = [
            parse_label_selector(selector_from_label_selector(selector))
            for selector in aggregation.get("clusterRoleSelectors") or []
            if selector  # a nil selector matches nothing
        ]
        for other in sorted(self.store.objects(CLUSTER_ROLES), key=lambda obj: obj["metadata"]["name"]):
            other_name = other["metadata"]["name"]
            if other_name != name and any(labels_match(selector, other) for selector in selectors):
                for rule in self.cluster_role_rules(other_name, seen | {name}) or []:
                    if rule not in rules:
                        rules.append(rule)
        return rules

    def _role_rules(self, ref: Mapping[str, Any], binding_namespace: str) -> tuple[list[Rule] | None, str]:
        name = ref.get("name", "")
        if ref.get("kind") == "ClusterRole":
            return self.cluster_role_rules(name), f'clusterrole.{RBAC_GROUP} "{name}" not found'
        role = self.store.get(ROLES, binding_namespace, name)
        return (list(role.get("rules") or []) if role else None), f'role.{RBAC_GROUP} "{name}" not found'

    def _bindings(self, namespace: str) -> Iterator[tuple[dict[str, Any], str]]:
        """In the store's order (creation order, as deterministic as an informer cache's and cheaper than sorting
        per decision; the order only decides which allowing binding the reason names)."""
        for binding in self.store.objects(CLUSTER_ROLE_BINDINGS):
            yield binding, ""
        if namespace:
            for binding in self.store.objects(ROLE_BINDINGS, namespace):
                yield binding, namespace

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule bound to the user in a namespace ("" = cluster-wide only), and the lookup errors."""
        rules: list[Rule] = []
        errors: list[str] = []
        for binding, binding_namespace in self._bindings(namespace):
            if not any(applies_to(s, user, binding_namespace) for s in binding.get("subjects") or []):
                continue
            found, error = self._role_rules(binding.get("roleRef") or {}, binding_namespace)
            if found is None:
                errors.append(error)
            else:
                rules.extend(found)
        return rules, errors

    def authorize(self, attributes: Attributes) -> Decision:
        errors: list[str] = []
        for binding, binding_namespace in self._bindings(attributes.namespace):
            subject = next(
                (s for s in binding.get("subjects") or [] if applies_to(s, attributes.user, binding_namespace)), None
            )
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            rules, error = self._role_rules(ref, binding_namespace)
            if rules is None:
                errors.append(error)
                continue
            if any(rule_allows(attributes, rule) for rule in rules):
                name = binding["metadata"]["name"]
                source = (
                    f'RoleBinding "{name}/{binding_namespace}"' if binding_namespace else f'ClusterRoleBinding "{name}"'
                )
                who = describe_subject(subject, binding_namespace)
                return Decision(True, f'RBAC: allowed by {source} of {ref.get("kind")} "{ref.get("name")}" to {who}')
        if not errors:
            return Decision(False)
        joined = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return Decision(False, f"RBAC: {joined}")
