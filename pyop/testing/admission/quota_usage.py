"""What a ResourceQuota counts: kube's quota evaluators (k8s.io/kubernetes pkg/quota/v1/evaluator/core and
k8s.io/apiserver pkg/quota/v1/generic), shared by the ResourceQuota admission plugin and the quota controller.

An evaluator knows, for one group-resource, which quota resource names it tracks (`MatchingResources`), what one
object uses (`Usage`), whether an object falls in a quota's scopes, and which writes can change usage (`Handles`):
- pods: `count/pods` (every stored pod), and while the pod is not terminal `pods`, `cpu`/`requests.cpu`,
  `memory`/`requests.memory`, `limits.cpu`, `limits.memory`, ephemeral storage, hugepages and `requests.<extended>`
  from the pod's effective requests and limits (the sum of its containers and sidecars, or its largest init
  container when that is more, plus `spec.overhead`); scopes Terminating, NotTerminating, BestEffort,
  NotBestEffort, PriorityClass and CrossNamespacePodAffinity; creates only.
- services: `count/services`, `services`, `services.nodeports` (a NodePort or LoadBalancer service's ports) and
  `services.loadbalancers`; creates and updates (the type can change).
- persistentvolumeclaims: `count/persistentvolumeclaims`, `persistentvolumeclaims`, `requests.storage` and the
  same per storage class (`<class>.storageclass.storage.k8s.io/requests.storage`); creates and updates (expansion).
- anything else: the object count `count/<resource>[.<group>]`, and the legacy names `configmaps`, `secrets`,
  `resourcequotas` and `replicationcontrollers`; creates only. A quota with scopes matches none of these.

Quantities are pyop's (`pyop.api.quantity`); a sum keeps the suffix family of its first non-zero term, as
apimachinery's `Quantity.Add` does, so `128Mi + 128Mi` reads `256Mi` and `500m + 1` reads `1500m`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from pyop.api.quantity import Quantity, QuantityError, parse_quantity
from pyop.apiserver.admission.plugins import CREATE, UPDATE, Attributes
from pyop.testing.builtins.defaulting import qos_class

ResourceList = dict[str, Quantity]

ZERO: Final = Quantity(Decimal(0), "DecimalSI")
IGNORED: Final = frozenset({("", "events"), ("events.k8s.io", "events")})  # quota's DefaultIgnoredResources
LEGACY_COUNT_NAMES: Final = {
    "configmaps": "configmaps",
    "secrets": "secrets",
    "resourcequotas": "resourcequotas",
    "replicationcontrollers": "replicationcontrollers",
}
_POD_RESOURCES: Final = frozenset(
    {
        "count/pods",
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
    }
)
_NATIVE_REQUEST_NAMES: Final = frozenset({"requests.cpu", "requests.memory", "requests.ephemeral-storage"})
_STORAGE_CLASS_SUFFIX: Final = ".storageclass.storage.k8s.io/"
_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"


# --- resource lists -----------------------------------------------------------------------------------


def quantity_of(value: Any) -> Quantity:
    """A stored quantity (already canonical on a stored object); anything unreadable counts as zero."""
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError):
        return ZERO


def resource_list(values: Mapping[str, Any] | None) -> ResourceList:
    return {name: quantity_of(value) for name, value in (values or {}).items()}


def plus(a: Quantity, b: Quantity) -> Quantity:
    """`Quantity.Add`: the result keeps a's suffix family unless a is zero."""
    return Quantity(a.value + b.value, b.format if a.value == 0 else a.format)


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    result = dict(a)
    for name, quantity in b.items():
        result[name] = plus(result[name], quantity) if name in result else quantity
    return result


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    """quota.SubtractWithNonNegativeResult: a - b per name, never below zero; b's other names are zero."""
    result = {}
    for name, quantity in a.items():
        value = quantity.value - b[name].value if name in b else quantity.value
        result[name] = Quantity(value, quantity.format) if value > 0 else ZERO
    for name in b:
        result.setdefault(name, ZERO)
    return result


def mask(values: ResourceList, names: Iterable[str]) -> ResourceList:
    wanted = set(names)
    return {name: quantity for name, quantity in values.items() if name in wanted}


def pretty(values: ResourceList) -> str:
    """prettyPrint: `name=value` by name, joined by commas."""
    return ",".join(f"{name}={values[name].canonical()}" for name in sorted(values))


def encode(values: ResourceList) -> dict[str, str]:
    return {name: values[name].canonical() for name in sorted(values)}


def _max_into(target: ResourceList, values: ResourceList) -> None:
    for name, quantity in values.items():
        if name not in target or quantity.value > target[name].value:
            target[name] = quantity


# --- pods ---------------------------------------------------------------------------------------------


def _container_resources(container: Mapping[str, Any], field: str) -> ResourceList:
    return resource_list(((container.get("resources") or {}).get(field)) or {})


def _restartable(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def pod_totals(spec: Mapping[str, Any], field: str, *, overhead: bool = True) -> ResourceList:
    """resourcehelper.PodRequests / PodLimits: containers and sidecars add up, a plain init container counts
    alone (with the sidecars started before it), the larger wins; the pod's overhead is added (quota counts it,
    LimitRanger's own copy of the sum does not)."""
    total: ResourceList = {}
    for container in spec.get("containers") or ():
        total = add(total, _container_resources(container, field))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in spec.get("initContainers") or ():
        own = _container_resources(container, field)
        if _restartable(container):
            total = add(total, own)
            sidecars = add(sidecars, own)
            _max_into(init_peak, sidecars)
        else:
            _max_into(init_peak, add(own, sidecars))
    _max_into(total, init_peak)
    if not overhead:
        return total
    extra = resource_list(spec.get("overhead"))
    # Overhead adds to every request, and only to the limits that are set.
    return add(total, extra if field == "requests" else mask(extra, total))


def compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper."""
    result: ResourceList = {"pods": Quantity(Decimal(1), "DecimalSI")}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = requests[name]
            result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, quantity in requests.items():
        if name.startswith("hugepages-"):
            result[name] = quantity
            result[f"requests.{name}"] = quantity
        elif _is_extended(name):
            result[f"requests.{name}"] = quantity
    return result


def _is_extended(name: str) -> bool:
    """helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io that is not a quota name."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def pod_is_charged(pod: Mapping[str, Any]) -> bool:
    """QuotaV1Pod: terminal pods (and pods past their deletion grace) use no compute quota."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed")


def pod_usage(pod: Mapping[str, Any]) -> ResourceList:
    result: ResourceList = {"count/pods": Quantity(Decimal(1), "DecimalSI")}
    if not pod_is_charged(pod):
        return result
    spec = pod.get("spec") or {}
    return add(result, compute_usage(pod_totals(spec, "requests"), pod_totals(spec, "limits")))


def _pod_matches_scope(selector: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    scope = selector.get("scopeName")
    if scope == "Terminating":
        return _terminating(spec)
    if scope == "NotTerminating":
        return not _terminating(spec)
    if scope == "BestEffort":
        return qos_class(spec) == "BestEffort"
    if scope == "NotBestEffort":
        return qos_class(spec) != "BestEffort"
    if scope == "PriorityClass":
        class_name = spec.get("priorityClassName") or ""
        operator, values = selector.get("operator"), selector.get("values") or []
        if operator == "Exists":
            return bool(class_name)
        if operator == "DoesNotExist":
            return not class_name
        if operator == "In":
            return bool(class_name) and class_name in values
        if operator == "NotIn":
            return not class_name or class_name not in values
        return False
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(spec)
    return False


def _terminating(spec: Mapping[str, Any]) -> bool:
    deadline = spec.get("activeDeadlineSeconds")
    return isinstance(deadline, int) and deadline >= 0


def _cross_namespace_affinity(spec: Mapping[str, Any]) -> bool:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        required = terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        preferred = [
            t.get("podAffinityTerm") or {} for t in terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        if any(term.get("namespaces") or term.get("namespaceSelector") is not None for term in [*required, *preferred]):
            return True
    return False


# --- services and claims --------------------------------------------------------------------------------


def service_usage(service: Mapping[str, Any]) -> ResourceList:
    spec = service.get("spec") or {}
    one = Quantity(Decimal(1), "DecimalSI")
    ports = spec.get("ports") or []
    node_ports, balancers = ZERO, ZERO
    if spec.get("type") == "NodePort":
        node_ports = Quantity(Decimal(len(ports)), "DecimalSI")
    elif spec.get("type") == "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is False:
            node_ports = Quantity(Decimal(sum(1 for p in ports if p.get("nodePort"))), "DecimalSI")
        else:
            node_ports = Quantity(Decimal(len(ports)), "DecimalSI")
        balancers = one
    return {
        "count/services": one,
        "services": one,
        "services.nodeports": node_ports,
        "services.loadbalancers": balancers,
    }


def storage_class_of(claim: Mapping[str, Any]) -> str:
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    return annotations.get(_STORAGE_CLASS_ANNOTATION) or (claim.get("spec") or {}).get("storageClassName") or ""


def claim_usage(claim: Mapping[str, Any]) -> ResourceList:
    one = Quantity(Decimal(1), "DecimalSI")
    result: ResourceList = {"count/persistentvolumeclaims": one, "persistentvolumeclaims": one}
    storage_class = storage_class_of(claim)
    if storage_class:
        result[f"{storage_class}{_STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = one
    requests = resource_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    if "storage" in requests:
        result["requests.storage"] = requests["storage"]
        if storage_class:
            result[f"{storage_class}{_STORAGE_CLASS_SUFFIX}requests.storage"] = requests["storage"]
    return result


# --- evaluators -----------------------------------------------------------------------------------------


def count_name(group: str, plural: str) -> str:
    """generic.ObjectCountQuotaResourceNameFor: `count/pods`, `count/deployments.apps`."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


@dataclass(frozen=True)
class Evaluator:
    group: str
    plural: str

    @property
    def storage_key(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        if (self.group, self.plural) == ("", "pods"):
            return [
                n
                for n in names
                if n in _POD_RESOURCES
                or n.startswith(("hugepages-", "requests.hugepages-"))
                or (n.startswith("requests.") and n not in _NATIVE_REQUEST_NAMES and _is_extended(n[9:]))
            ]
        if (self.group, self.plural) == ("", "services"):
            return [
                n for n in names if n in ("count/services", "services", "services.nodeports", "services.loadbalancers")
            ]
        if (self.group, self.plural) == ("", "persistentvolumeclaims"):
            return [
                n
                for n in names
                if n in ("count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage")
                or (_STORAGE_CLASS_SUFFIX in n and n.endswith(("/requests.storage", "/persistentvolumeclaims")))
            ]
        own = {count_name(self.group, self.plural)}
        if not self.group and self.plural in LEGACY_COUNT_NAMES:
            own.add(LEGACY_COUNT_NAMES[self.plural])
        return [n for n in names if n in own]

    def handles(self, attributes: Attributes) -> bool:
        if attributes.subresource:
            return False
        if (self.group, self.plural) in (("", "services"), ("", "persistentvolumeclaims")):
            return attributes.operation in (CREATE, UPDATE)
        return attributes.operation == CREATE

    def usage(self, obj: Mapping[str, Any]) -> ResourceList:
        if (self.group, self.plural) == ("", "pods"):
            return pod_usage(obj)
        if (self.group, self.plural) == ("", "services"):
            return service_usage(obj)
        if (self.group, self.plural) == ("", "persistentvolumeclaims"):
            return claim_usage(obj)
        one = Quantity(Decimal(1), "DecimalSI")
        result = {count_name(self.group, self.plural): one}
        if not self.group and self.plural in LEGACY_COUNT_NAMES:
            result[LEGACY_COUNT_NAMES[self.plural]] = one
        return result

    def matches_scope(self, selector: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
        if (self.group, self.plural) == ("", "pods"):
            return _pod_matches_scope(selector, obj)
        return False  # generic.MatchesNoScopeFunc (claims' VolumeAttributesClass scope is not modelled)

    def matches(self, quota: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
        """generic.Matches: the quota tracks one of this evaluator's resources and every scope holds."""
        hard = ((quota.get("status") or {}).get("hard")) or {}
        return bool(self.matching_resources(hard)) and all(
            self.matches_scope(selector, obj) for selector in scope_selectors(quota)
        )

    def constraints(self, required: Iterable[str], obj: Mapping[str, Any]) -> str | None:
        """The pod evaluator's backward-compatible rule: a quota on cpu or memory needs every container to set
        it (`must specify limits.cpu for: app; requests.memory for: app,init`)."""
        if (self.group, self.plural) != ("", "pods"):
            return None
        required_set = set(required) & {
            "cpu",
            "memory",
            "requests.cpu",
            "requests.memory",
            "limits.cpu",
            "limits.memory",
        }
        if not required_set:
            return None
        spec = obj.get("spec") or {}
        missing: dict[str, set[str]] = {}
        for container in itertools.chain(spec.get("containers") or (), spec.get("initContainers") or ()):
            usage = compute_usage(
                _container_resources(container, "requests"), _container_resources(container, "limits")
            )
            for name in required_set - set(usage):
                missing.setdefault(name, set()).add(container.get("name", ""))
        if not missing:
            return None
        return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def scope_selectors(quota: Mapping[str, Any]) -> list[dict[str, Any]]:
    """getScopeSelectorsFromQuota: `spec.scopes` as Exists requirements, then `spec.scopeSelector`'s."""
    spec = quota.get("spec") or {}
    selectors = [{"scopeName": scope, "operator": "Exists"} for scope in spec.get("scopes") or []]
    selectors.extend((spec.get("scopeSelector") or {}).get("matchExpressions") or [])
    return selectors


def evaluator_for(group: str, plural: str) -> Evaluator | None:
    if (group, plural) in IGNORED:
        return None
    return Evaluator(group, plural)


__all__ = [
    "Evaluator",
    "ResourceList",
    "add",
    "count_name",
    "encode",
    "evaluator_for",
    "mask",
    "pretty",
    "resource_list",
    "scope_selectors",
    "subtract_non_negative",
]
