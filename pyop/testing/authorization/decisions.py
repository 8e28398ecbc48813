"""RBAC decisions remembered until the RBAC objects change: `Decisions`.

Why: RBAC decides by visiting every ClusterRoleBinding and the namespace's RoleBindings and the rules of each
matching role (bench/bench_authorization.py: ~90-130 µs per decision for a ServiceAccount against the bootstrap
policy), and a client asks the same few questions again and again (an operator under test running as its
ServiceAccount: get, list, watch, patch of the same kinds in the same namespaces). A decision depends only on the
question (user name and groups, verb, group, version, resource, subresource, namespace, name, or a non-resource
path) and on the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in the store, so it is remembered per
question until any of those four resources changes: the store hands every committed change of them (its own
writes, another writer's through the backend's watch, a resync's reload) to `deliver`, as it hands events to a
watch, and the first change forgets every remembered decision. The answer is the same `Decision` (allowed, and
the reason naming the binding or the missing roles) that `RBAC.authorize` gives for the current objects
(tests/testing_server/test_rbac_decisions.py: Hypothesis compares both across random policy changes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.storage.store import Store, StoredEvent
from pyop.testing.authorization.rbac import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, Decision

RBAC_RESOURCES: Final = (ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS)
LIMIT: Final = 4096  # remembered questions; past it the table starts again (a test asks a few dozen)

Question = tuple[str, tuple[str, ...], str, bool, str, str, str, str, str, str, str]


def question(attributes: Attributes) -> Question:
    """Everything of the attributes RBAC may read (the user's uid is not: bindings name users and groups)."""
    user = attributes.user
    return (
        user.username,
        tuple(user.groups),
        attributes.verb,
        attributes.resource_request,
        attributes.api_group,
        attributes.api_version,
        attributes.resource,
        attributes.subresource,
        attributes.namespace,
        attributes.name,
        attributes.path,
    )


class Decisions:
    """The decisions of ``decide`` (RBAC's, over ``store``), remembered until an RBAC object changes."""

    def __init__(self, store: Store, decide: Callable[[Attributes], Decision]) -> None:
        self.decide = decide
        self.known: dict[Question, Decision] = {}
        self.changes = 0  # RBAC objects changed since start: what forgot the remembered decisions
        for storage_key in RBAC_RESOURCES:
            store.subscribe(storage_key, self)

    def deliver(self, event: StoredEvent) -> None:
        """A Role, ClusterRole or binding was written or deleted: every remembered decision may be wrong now."""
        self.changes += 1
        self.known.clear()

    def __call__(self, attributes: Attributes) -> Decision:
        key = question(attributes)
        decision = self.known.get(key)
        if decision is None:
            decision = self.decide(attributes)
            if len(self.known) >= LIMIT:
                self.known.clear()
            self.known[key] = decision
        return decision


__all__ = ["RBAC_RESOURCES", "Decisions", "question"]
