"""The ResourceQuota admission plugin (k8s.io/apiserver plugin/resourcequota), the last validating plugin.

A write that adds usage in a namespace with quotas is checked against each quota that tracks what it uses
(`status.hard`, set by the quota controller) and whose scopes the object is in:
- a pod that a quota on cpu or memory covers must set that resource in every container: otherwise 403
  `pods "x" is forbidden: failed quota: <quota>: must specify limits.cpu for: app`;
- a quota whose `status.used` lacks a tracked resource (not yet counted): 403 `status unknown for quota: <quota>,
  resources: <names>`;
- usage that would pass a limit: 403 `exceeded quota: <quota>, requested: pods=1, used: pods=2, limited: pods=2`
  (only the resources that would be exceeded, by name).
An update is charged only what it adds (a Service turned LoadBalancer, a claim grown); creates of other kinds
count one object. Dry runs are checked and never charged; subresources, cluster-scoped objects and Events are
not looked at.

kube-apiserver's plugin adds the charge to `status.used` itself before the object is stored; here the quota
controller (`pyop.testing.controllers.resource_quota`) recounts the namespace right after each commit, so
`status.used` is current by the time the write returns and a write that failed later charges nothing.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.apiserver.admission.plugins import UPDATE, Attributes
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission import quota_usage as q
from pyop.testing.admission.forbidden import admission_forbidden

STORAGE_KEY: Final = "resourcequotas"


class ResourceQuotaAdmission:
    name = "ResourceQuota"
    last = True  # after ValidatingAdmissionWebhook, as in kube-apiserver's plugin order
    consults = STORAGE_KEY  # without a quota in the namespace, `validate` returns at once (the registry skips it)

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return not subresource and resource_type.namespaced

    def handles(self, attributes: Attributes) -> bool:
        return not attributes.subresource and bool(attributes.namespace) and attributes.resource_type.namespaced

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        quotas = list(store.objects(STORAGE_KEY, attributes.namespace))
        if not quotas:  # the common case, checked first: a write in a namespace without quotas costs a lookup
            return
        resource_type = attributes.resource_type
        evaluator = q.evaluator_for(resource_type.group, resource_type.plural)
        if evaluator is None or not evaluator.handles(attributes):
            return
        interesting = []
        for quota in sorted(quotas, key=lambda item: item["metadata"]["name"]):
            if not evaluator.matches(quota, obj):
                continue
            status = quota.get("status") or {}
            hard = status.get("hard") or {}
            restricted = evaluator.matching_resources(hard)
            quota_name = quota["metadata"]["name"]
            problem = evaluator.constraints(restricted, obj)
            if problem:
                raise admission_forbidden(attributes, obj, f"failed quota: {quota_name}: {problem}")
            used = status.get("used") or {}
            if any(name not in used for name in restricted):
                raise admission_forbidden(
                    attributes,
                    obj,
                    f"status unknown for quota: {quota_name}, resources: {','.join(sorted(restricted))}",
                )
            interesting.append(quota)
        delta = evaluator.usage(obj)
        negative = sorted(name for name, quantity in delta.items() if quantity.value < 0)
        if negative:
            raise admission_forbidden(attributes, obj, f"quota usage is negative for resource(s): {','.join(negative)}")
        old = attributes.old
        if attributes.operation == UPDATE and old is not None and (old.get("metadata") or {}).get("resourceVersion"):
            delta = q.subtract_non_negative(delta, evaluator.usage(old))
        if all(quantity.value == 0 for quantity in delta.values()):
            return
        for quota in interesting:
            _check(attributes, obj, quota, delta)


def _check(attributes: Attributes, obj: dict[str, Any], quota: dict[str, Any], delta: q.ResourceList) -> None:
    status = quota.get("status") or {}
    hard = q.resource_list(status.get("hard"))
    used = q.resource_list(status.get("used"))
    requested = q.mask(delta, hard)
    new_usage = q.add(used, requested)
    exceeded = [name for name in requested if name in hard and new_usage[name].value > hard[name].value]
    if exceeded:
        raise admission_forbidden(
            attributes,
            obj,
            f"exceeded quota: {quota['metadata']['name']}, requested: {q.pretty(q.mask(requested, exceeded))}, "
            f"used: {q.pretty(q.mask(used, exceeded))}, limited: {q.pretty(q.mask(hard, exceeded))}",
        )


__all__ = ["ResourceQuotaAdmission"]
