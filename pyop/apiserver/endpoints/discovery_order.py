"""The order of groups and versions in discovery: kube-aggregator's, by APIService priority.

kube-apiserver registers a Local APIService for each built-in group/version with the priorities of its
`apiVersionPriorities` table (cmd/kube-apiserver/app/aggregator.go merged with controlplane's
DefaultGenericAPIServicePriorities), one for each CRD group/version at `groupPriorityMinimum: 1000, versionPriority:
100` (crdregistration), and an aggregated server's APIService carries its own. Discovery then lists (aggregated
discovery's ResourceManager, and the legacy `/apis` handler alike):
- groups by their highest `groupPriorityMinimum`, highest first, equal ones by name; `apiregistration.k8s.io`, the
  aggregator's own group, first;
- a group's versions by `versionPriority`, highest first, equal ones by kube's version order (v1 > v1beta1 >
  v1alpha1), the first being the preferred version.
So a CRD or aggregated group never outranks `apps` unless its APIService says so, and kubectl resolves a resource
name that two groups share (`deployments`) to the group listed first, as on a cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from pyop.api.versions import version_priority

Priority = tuple[int, int]  # (groupPriorityMinimum, versionPriority)
PriorityOf = Callable[[str, str], Priority | None]

AGGREGATOR_GROUP: Final = "apiregistration.k8s.io"
CRD_PRIORITY: Final = (1000, 100)
KUBE_PRIORITIES: Final[dict[tuple[str, str], Priority]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("events.k8s.io", "v1beta1"): (17750, 5),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authentication.k8s.io", "v1beta1"): (17700, 9),
    ("authentication.k8s.io", "v1alpha1"): (17700, 1),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v2beta1"): (17500, 9),
    ("autoscaling", "v2beta2"): (17500, 1),
    ("batch", "v1"): (17400, 15),
    ("batch", "v1beta1"): (17400, 9),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("certificates.k8s.io", "v1beta1"): (17300, 9),
    ("certificates.k8s.io", "v1alpha1"): (17300, 1),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("networking.k8s.io", "v1beta1"): (17200, 9),
    ("policy", "v1"): (17100, 15),
    ("policy", "v1beta1"): (17100, 9),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("storage.k8s.io", "v1beta1"): (16800, 9),
    ("storage.k8s.io", "v1alpha1"): (16800, 1),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1beta1"): (16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1"): (16700, 9),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("coordination.k8s.io", "v1beta1"): (16500, 13),
    ("coordination.k8s.io", "v1alpha2"): (16500, 12),
    ("node.k8s.io", "v1"): (16300, 15),
    ("node.k8s.io", "v1beta1"): (16300, 9),
    ("node.k8s.io", "v1alpha1"): (16300, 1),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("discovery.k8s.io", "v1beta1"): (16200, 12),
    ("resource.k8s.io", "v1beta2"): (16200, 15),
    ("resource.k8s.io", "v1beta1"): (16200, 9),
    ("resource.k8s.io", "v1alpha3"): (16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): (16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"): (16100, 12),
    ("internal.apiserver.k8s.io", "v1alpha1"): (16000, 9),
    ("storagemigration.k8s.io", "v1beta1"): (15800, 9),
}
_GROUP_PRIORITIES: Final = {group: priority for (group, _), (priority, _) in KUBE_PRIORITIES.items()}


def kube_priority(group: str, version: str) -> Priority:
    """A built-in group/version's priorities; a version the table does not list (newer than the table read:
    `resource.k8s.io/v1`, `storagemigration.k8s.io/v1`) takes its group's priority, above the group's listed
    versions when it is GA; any other group is a CRD's (1000, 100)."""
    known = KUBE_PRIORITIES.get((group, version))
    if known is not None:
        return known
    if group in _GROUP_PRIORITIES:
        listed = [v for (g, _), (_, v) in KUBE_PRIORITIES.items() if g == group]
        return _GROUP_PRIORITIES[group], (max(listed) + 6 if version_priority(version)[0] == 0 else 0)
    return CRD_PRIORITY


def _group_key(name: str, versions: list[str], priority: PriorityOf) -> tuple[int, int, str]:
    priorities = [p[0] for v in versions if (p := priority(name, v)) is not None]
    return (0 if name == AGGREGATOR_GROUP else 1, -max(priorities, default=0), name)


def _version_key(group: str, version: str, priority: PriorityOf) -> tuple[int, Any]:
    found = priority(group, version)
    return (-(found[1] if found is not None else 0), version_priority(version))


def order_discovery_items(items: list[dict[str, Any]], priority: PriorityOf = kube_priority) -> list[dict[str, Any]]:
    """An APIGroupDiscoveryList's items (and each item's versions) in kube's order."""
    ordered = []
    for item in items:
        name = (item.get("metadata") or {}).get("name", "")
        versions = sorted(item.get("versions") or [], key=lambda v: _version_key(name, v.get("version", ""), priority))
        ordered.append({**item, "versions": versions})
    return sorted(
        ordered,
        key=lambda item: _group_key(
            (item.get("metadata") or {}).get("name", ""), [v.get("version", "") for v in item["versions"]], priority
        ),
    )


def order_group_list(groups: list[dict[str, Any]], priority: PriorityOf = kube_priority) -> list[dict[str, Any]]:
    """A legacy APIGroupList's groups (and each group's versions, the first preferred) in kube's order."""
    ordered = []
    for group in groups:
        name = group.get("name", "")
        versions = sorted(group.get("versions") or [], key=lambda v: _version_key(name, v.get("version", ""), priority))
        ordered.append({**group, "versions": versions, "preferredVersion": versions[0] if versions else {}})
    return sorted(
        ordered,
        key=lambda group: _group_key(
            group.get("name", ""), [v.get("version", "") for v in group["versions"]], priority
        ),
    )


__all__ = ["CRD_PRIORITY", "KUBE_PRIORITIES", "kube_priority", "order_discovery_items", "order_group_list"]
