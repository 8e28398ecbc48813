"""APIService objects (apiregistration.k8s.io/v1) as the aggregator reads them: spec, ordering, the Available condition.

An APIService names one group/version and where it is served: ``spec.service`` (namespace, name, port, 443 when
unset) for an aggregated server, none for a group/version the API server serves itself ("Local"). Discovery orders
groups by ``groupPriorityMinimum`` (highest first, then by name) and a group's versions by ``versionPriority``
(highest first, then Kubernetes version order: GA, beta, alpha); the first version is the preferred one
(kube-aggregator's ``SortedByGroupAndVersion``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Final

from pyop.apiserver.registry.resources import version_priority

GROUP: Final = "apiregistration.k8s.io"
STORAGE_KEY: Final = f"apiservices.{GROUP}"
AVAILABLE: Final = "Available"
DEFAULT_PORT: Final = 443


@dataclass(frozen=True, slots=True)
class ServiceReference:
    namespace: str
    name: str
    port: int

    @property
    def server_name(self) -> str:
        """The TLS server name kube-aggregator verifies the backend's certificate for: ``<name>.<namespace>.svc``."""
        return f"{self.name}.{self.namespace}.svc"


@dataclass(frozen=True, slots=True)
class APIServiceSpec:
    """What the proxy, the availability check and discovery need of one APIService."""

    name: str
    group: str
    version: str
    service: ServiceReference | None
    ca_bundle: bytes
    insecure_skip_tls_verify: bool
    group_priority_minimum: int
    version_priority: int
    available: bool

    @classmethod
    def of(cls, obj: dict[str, Any]) -> APIServiceSpec:
        spec = obj.get("spec") or {}
        service = spec.get("service")
        reference = None
        if isinstance(service, dict):
            reference = ServiceReference(
                service.get("namespace", ""), service.get("name", ""), int(service.get("port") or DEFAULT_PORT)
            )
        raw_bundle = spec.get("caBundle") or ""
        return cls(
            name=obj["metadata"]["name"],
            group=spec.get("group", ""),
            version=spec.get("version", ""),
            service=reference,
            ca_bundle=decode_ca_bundle(raw_bundle),
            insecure_skip_tls_verify=bool(spec.get("insecureSkipTLSVerify")),
            group_priority_minimum=int(spec.get("groupPriorityMinimum") or 0),
            version_priority=int(spec.get("versionPriority") or 0),
            available=is_available(obj),
        )

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def decode_ca_bundle(value: str) -> bytes:
    """``caBundle`` is bytes in Go, base64 on the wire; a bundle that does not decode is no bundle."""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def is_available(obj: dict[str, Any]) -> bool:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == AVAILABLE:
            return bool(condition.get("status") == "True")
    return False


def sorted_by_group_and_version(specs: list[APIServiceSpec]) -> list[list[APIServiceSpec]]:
    """The APIServices grouped by group, groups and each group's versions in discovery order."""
    by_group: dict[str, list[APIServiceSpec]] = {}
    for spec in specs:
        by_group.setdefault(spec.group, []).append(spec)
    groups = [
        sorted(members, key=lambda spec: (-spec.version_priority, version_priority(spec.version)))
        for members in by_group.values()
    ]
    return sorted(groups, key=lambda members: (-max(s.group_priority_minimum for s in members), members[0].group))


def with_condition(status: dict[str, Any], condition: dict[str, Any]) -> dict[str, Any]:
    """``status`` with ``condition`` set as kube's SetAPIServiceCondition sets it: replacing the condition of its
    type, keeping the old lastTransitionTime when the status did not change."""
    conditions = [dict(existing) for existing in status.get("conditions") or []]
    for index, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            if existing.get("status") == condition["status"]:
                condition = {**condition, "lastTransitionTime": existing.get("lastTransitionTime")}
            conditions[index] = condition
            break
    else:
        conditions.append(condition)
    return {**status, "conditions": conditions}
