"""kube-controller-manager's resourcequota controller: each ResourceQuota's `status.hard` and `status.used`.

`status.hard` is `spec.hard`; `status.used` has one entry per hard resource: what the namespace's objects in the
quota's scopes use, by the same evaluators the ResourceQuota admission plugin charges with
(`pyop.testing.admission.quota_usage`), `0` where nothing is used. Admission reads `status.hard` to know what a
quota tracks, so a quota enforces nothing until it has been counted once.

kube's controller recounts on quota changes, on deletions (and pods turning terminal) of what quotas track, and
every five minutes; kube's admission adds each charge to `status.used` as it admits. Here a quota is counted
again right after any commit that can change it (the quota's own spec, or an object of a resource it tracks in
its namespace), in the same step, so `status.used` is exact whenever a client reads it and the next write is
checked against it.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from pyop.api.quantity import canonical_quantity
from pyop.api.status import ApiError
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceType
from pyop.testing.admission import quota_usage as q

MANAGER: Final = "kube-controller-manager"
STORAGE_KEY: Final = "resourcequotas"
_SPECIAL: Final = (("", "pods"), ("", "services"), ("", "persistentvolumeclaims"))


def _evaluators(hard: dict[str, Any]) -> list[q.Evaluator]:
    """The evaluators a quota with these hard resources needs (kube's registry, with generic object counts)."""
    evaluators = [q.Evaluator(group, plural) for group, plural in _SPECIAL]
    seen = set(_SPECIAL)
    for name in hard:
        if name.startswith("count/"):
            plural, _, group = name[len("count/") :].partition(".")
            key = (group, plural)
        elif name in q.LEGACY_COUNT_NAMES:
            key = ("", name)
        else:
            continue
        if key not in seen and key not in q.IGNORED:
            seen.add(key)
            evaluators.append(q.Evaluator(key[0], key[1]))
    return evaluators


def quota_status(quota: dict[str, Any], objects: Any) -> dict[str, Any]:
    """The status the controller writes; ``objects(storage_key)`` lists the quota's namespace."""
    hard = {name: canonical_quantity(value) for name, value in (((quota.get("spec") or {}).get("hard")) or {}).items()}
    used: q.ResourceList = {}
    selectors = q.scope_selectors(quota)
    for evaluator in _evaluators(hard):
        names = evaluator.matching_resources(hard)
        if not names:
            continue
        total: q.ResourceList = {name: q.ZERO for name in names}
        for obj in objects(evaluator.storage_key):
            if all(evaluator.matches_scope(selector, obj) for selector in selectors):
                total = q.add(total, q.mask(evaluator.usage(obj), names))
        used.update(total)
    return {"hard": dict(sorted(hard.items())), "used": q.encode(q.mask(used, hard))}


class ResourceQuotaController:
    def __init__(self, operations: Operations) -> None:
        self.operations = operations

    def committed(self, resource_type: ResourceType, event_type: str, obj: dict[str, Any]) -> None:
        """Count again what this commit can change."""
        namespace = obj["metadata"].get("namespace", "")
        if not namespace:
            return
        if resource_type.storage_key == STORAGE_KEY:
            if event_type != "DELETED":
                self._sync(obj)
            return
        store = self.operations.store
        quotas = list(store.objects(STORAGE_KEY, namespace))
        if not quotas:
            return
        evaluator = q.evaluator_for(resource_type.group, resource_type.plural)
        if evaluator is None:
            return
        for quota in quotas:
            if evaluator.matching_resources(((quota.get("spec") or {}).get("hard")) or {}):
                self._sync(quota)

    def _sync(self, quota: dict[str, Any]) -> None:
        metadata = quota["metadata"]
        namespace, name = metadata.get("namespace", ""), metadata["name"]
        store = self.operations.store
        status = quota_status(quota, lambda key: store.objects(key, namespace))
        if quota.get("status") == status:
            return
        quota_type = self.operations.resources.lookup("", "v1", STORAGE_KEY)
        body = copy.deepcopy(quota)
        body["status"] = status
        try:
            self.operations.update(
                quota_type, namespace, name, body, WriteOptions(field_manager=MANAGER), subresource="status"
            )
        except ApiError as error:
            if error.code not in (404, 409):  # gone, or changed meanwhile (its own commit counts it again)
                raise


__all__ = ["ResourceQuotaController", "quota_status"]
