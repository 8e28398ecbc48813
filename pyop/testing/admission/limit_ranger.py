"""The LimitRanger admission plugin (plugin/pkg/admission/limitranger), mutating and validating.

With LimitRanges in the namespace (kube reads every one, in no set order; here by name):
- **Pod creates, mutating**: a container or init container that sets no request (limit) for a resource gets the
  `defaultRequest` (`default`) of each `Container` item, and the pod is annotated with what was set,
  `kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request for container app; cpu limit for
  container app`. (The LimitRange's own defaulting already made `default` from `max` and `defaultRequest` from
  `default` or `min`.)
- **Pod creates, validating**: each `Container` item's `min`, `max` and `maxLimitRequestRatio` against every
  container and init container, a `Pod` item's against the pod's effective requests and limits (containers and
  sidecars summed, the largest init container when more);
- **PersistentVolumeClaim creates and updates**: a `PersistentVolumeClaim` item's `min` and `max` against
  `spec.resources.requests`.
A violation is 403 with kube's words: `pods "x" is forbidden: maximum cpu usage per Container is 2, but limit is
3` (several are bracketed and comma-separated, as apimachinery's aggregate error prints them). Pod updates and
subresources are not looked at (containers' resources cannot change), nor objects being deleted.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from pyop.apiserver.admission.plugins import CREATE, UPDATE, Attributes
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission import quota_usage as q
from pyop.testing.admission.forbidden import admission_forbidden

STORAGE_KEY: Final = "limitranges"
ANNOTATION: Final = "kubernetes.io/limit-ranger"
_KINDS: Final = frozenset({"pods", "persistentvolumeclaims"})
_MAX_MILLI_VALUE: Final = (2**63 - 1) // 1000  # resource.MaxMilliValue


def _supports_request(operation: str, resource_type: ResourceType, subresource: str) -> bool:
    """SupportsAttributes without the object: pod creates and claim creates and updates, no subresources."""
    if resource_type.group or resource_type.plural not in _KINDS or subresource:
        return False
    if resource_type.plural == "pods" and operation != CREATE:
        return False
    return operation in (CREATE, UPDATE)


def _supports(attributes: Attributes) -> bool:
    """SupportsAttributes: pods (not their updates) and claims, no subresources, nothing being deleted."""
    if not _supports_request(attributes.operation, attributes.resource_type, attributes.subresource):
        return False
    old = attributes.old
    return not (old and (old.get("metadata") or {}).get("deletionTimestamp"))


def _limit_ranges(store: Store, namespace: str) -> list[dict[str, Any]]:
    return sorted(store.objects(STORAGE_KEY, namespace), key=lambda item: item["metadata"]["name"])


def _items(limit_range: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(((limit_range.get("spec") or {}).get("limits")) or [])


class LimitRangerMutation:
    name = "LimitRanger"

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return _supports_request(operation, resource_type, subresource) and resource_type.plural == "pods"

    def handles(self, attributes: Attributes) -> bool:
        return _supports(attributes) and attributes.resource_type.plural == "pods"

    def admit(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        for limit_range in _limit_ranges(store, attributes.namespace):
            requests: dict[str, Any] = {}
            limits: dict[str, Any] = {}
            for item in _items(limit_range):
                if item.get("type") == "Container":
                    requests.update(item.get("defaultRequest") or {})
                    limits.update(item.get("default") or {})
            _merge_defaults(obj, requests, limits)


def _merge_defaults(pod: dict[str, Any], requests: Mapping[str, Any], limits: Mapping[str, Any]) -> None:
    """mergePodResourceRequirements: what a container lacks, and the annotation naming it (only when set)."""
    notes: list[str] = []
    spec = pod.setdefault("spec", {})
    for field, kind in (("containers", "container"), ("initContainers", "init container")):
        for container in spec.get(field) or []:
            resources = container.setdefault("resources", {})
            own_limits = resources.setdefault("limits", {})
            own_requests = resources.setdefault("requests", {})
            set_limits = sorted(name for name in limits if name not in own_limits)
            set_requests = sorted(name for name in requests if name not in own_requests)
            for name in set_limits:
                own_limits[name] = limits[name]
            for name in set_requests:
                own_requests[name] = requests[name]
            if not own_limits:
                resources.pop("limits")
            if not own_requests:
                resources.pop("requests")
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {kind} {container.get('name', '')}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {kind} {container.get('name', '')}")
    if notes:
        annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


class LimitRangerValidation:
    name = "LimitRanger"
    last = False

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return _supports_request(operation, resource_type, subresource)

    def handles(self, attributes: Attributes) -> bool:
        return _supports(attributes)

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        for limit_range in _limit_ranges(store, attributes.namespace):
            if attributes.resource_type.plural == "pods":
                errors = _pod_errors(limit_range, obj)
            else:
                errors = _claim_errors(limit_range, obj)
            if errors:
                raise admission_forbidden(attributes, obj, _aggregate(errors))


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate's text: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _comparable(*quantities: q.Quantity | None) -> list[Decimal]:
    """requestLimitEnforcedValues: milli-units when none overflows, else whole units (rounded up)."""
    values = [quantity.value if quantity is not None else Decimal(0) for quantity in quantities]
    wholes = [value.to_integral_value(rounding="ROUND_CEILING") for value in values]
    if all(whole <= _MAX_MILLI_VALUE for whole in wholes):
        return [(value * 1000).to_integral_value(rounding="ROUND_CEILING") for value in values]
    return wholes


def _min(kind: str, name: str, enforced: q.Quantity, requests: q.ResourceList, limits: q.ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    observed_request, observed_limit, value = _comparable(request, limit, enforced)
    shown = enforced.canonical()
    if request is None:
        return f"minimum {name} usage per {kind} is {shown}.  No request is specified"
    if observed_request < value:
        return f"minimum {name} usage per {kind} is {shown}, but request is {request.canonical()}"
    if limit is not None and observed_limit < value:
        return f"minimum {name} usage per {kind} is {shown}, but limit is {limit.canonical()}"
    return None


def _max(kind: str, name: str, enforced: q.Quantity, requests: q.ResourceList, limits: q.ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    observed_request, observed_limit, value = _comparable(request, limit, enforced)
    shown = enforced.canonical()
    if limit is None:
        return f"maximum {name} usage per {kind} is {shown}.  No limit is specified"
    if observed_limit > value:
        return f"maximum {name} usage per {kind} is {shown}, but limit is {limit.canonical()}"
    if request is not None and observed_request > value:
        return f"maximum {name} usage per {kind} is {shown}, but request is {request.canonical()}"
    return None


def _max_request(kind: str, name: str, enforced: q.Quantity, requests: q.ResourceList) -> str | None:
    request = requests.get(name)
    observed_request, _, value = _comparable(request, None, enforced)
    shown = enforced.canonical()
    if request is None:
        return f"maximum {name} usage per {kind} is {shown}.  No request is specified"
    if observed_request > value:
        return f"maximum {name} usage per {kind} is {shown}, but request is {request.canonical()}"
    return None


def _ratio(kind: str, name: str, enforced: q.Quantity, requests: q.ResourceList, limits: q.ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    observed_request, observed_limit, _ = _comparable(request, limit, enforced)
    shown = enforced.canonical()
    if request is None or observed_request == 0:
        return f"{name} max limit to request ratio per {kind} is {shown}, but no request is specified or request is 0"
    if limit is None or observed_limit == 0:
        return f"{name} max limit to request ratio per {kind} is {shown}, but no limit is specified or limit is 0"
    observed = observed_limit / observed_request
    if observed > enforced.value:
        return f"{name} max limit to request ratio per {kind} is {shown}, but provided ratio is {float(observed):f}"
    return None


def _check(kind: str, item: Mapping[str, Any], requests: q.ResourceList, limits: q.ResourceList) -> list[str]:
    errors = []
    for field, rule in (("min", _min), ("max", _max), ("maxLimitRequestRatio", _ratio)):
        for name, value in sorted((item.get(field) or {}).items()):
            error = rule(kind, name, q.quantity_of(value), requests, limits)
            if error:
                errors.append(error)
    return errors


def _pod_errors(limit_range: Mapping[str, Any], pod: Mapping[str, Any]) -> list[str]:
    spec = pod.get("spec") or {}
    errors: list[str] = []
    for item in _items(limit_range):
        if item.get("type") == "Container":
            for container in itertools.chain(spec.get("containers") or (), spec.get("initContainers") or ()):
                resources = container.get("resources") or {}
                requests, limits = q.resource_list(resources.get("requests")), q.resource_list(resources.get("limits"))
                errors.extend(_check("Container", item, requests, limits))
        elif item.get("type") == "Pod":
            errors.extend(
                _check(
                    "Pod",
                    item,
                    q.pod_totals(spec, "requests", overhead=False),
                    q.pod_totals(spec, "limits", overhead=False),
                )
            )
    return errors


def _claim_errors(limit_range: Mapping[str, Any], claim: Mapping[str, Any]) -> list[str]:
    requests = q.resource_list((((claim.get("spec") or {}).get("resources")) or {}).get("requests"))
    errors: list[str] = []
    for item in _items(limit_range):
        if item.get("type") != "PersistentVolumeClaim":
            continue
        for name, value in sorted((item.get("min") or {}).items()):
            error = _min("PersistentVolumeClaim", name, q.quantity_of(value), requests, {})
            if error:
                errors.append(error)
        for name, value in sorted((item.get("max") or {}).items()):
            error = _max_request("PersistentVolumeClaim", name, q.quantity_of(value), requests)
            if error:
                errors.append(error)
    return errors


__all__ = ["ANNOTATION", "LimitRangerMutation", "LimitRangerValidation"]
