"""kube-aggregator's validation of APIService objects (ValidateAPIService), with its field paths and messages.

The name must be ``<version>.<group>`` (the aggregator routes by it); the group a DNS subdomain (empty only for the
legacy ``v1``), the version a DNS-1035 label; ``groupPriorityMinimum`` in 1..20000 and ``versionPriority`` in
1..1000; a Local APIService (no service) has neither ``caBundle`` nor ``insecureSkipTLSVerify``; a service needs a
namespace and a name; ``insecureSkipTLSVerify`` and a ``caBundle`` exclude each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pyop.api.status import StatusCause
from pyop.api.validation import dns1035_label_problems, dns1123_subdomain_problems


def _invalid(path: str, value: Any, detail: str) -> StatusCause:
    shown = json.dumps(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else value
    return StatusCause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


def _required(path: str, detail: str = "") -> StatusCause:
    return StatusCause("FieldValueRequired", f"Required value: {detail}" if detail else "Required value", path)


def validate_api_service(obj: Mapping[str, Any]) -> list[StatusCause]:
    return list(_problems(obj))


def _problems(obj: Mapping[str, Any]) -> Iterator[StatusCause]:
    spec = obj.get("spec") or {}
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    required_name = f"{version}.{group}"
    if name and name != required_name:
        yield _invalid("metadata.name", name, f'must be `spec.version+"."+spec.group`: {json.dumps(required_name)}')
    if not group and version != "v1":
        yield _required("spec.group", "only v1 may have an empty group and it better be legacy kube")
    if group:
        for problem in dns1123_subdomain_problems(group):
            yield _invalid("spec.group", group, problem)
    for problem in dns1035_label_problems(version):
        yield _invalid("spec.version", version, problem)
    group_priority = spec.get("groupPriorityMinimum") or 0
    if not isinstance(group_priority, int) or not 0 < group_priority <= 20000:
        yield _invalid("spec.groupPriorityMinimum", group_priority, "must be positive and less than 20000")
    version_priority = spec.get("versionPriority") or 0
    if not isinstance(version_priority, int) or not 0 < version_priority <= 1000:
        yield _invalid("spec.versionPriority", version_priority, "must be positive and less than 1000")
    service = spec.get("service")
    ca_bundle = str(spec.get("caBundle") or "")
    insecure = bool(spec.get("insecureSkipTLSVerify"))
    if not isinstance(service, Mapping):
        if ca_bundle:
            size = len(ca_bundle) * 3 // 4 - ca_bundle.count("=")  # the decoded length, as Go counts []byte
            yield _invalid("spec.caBundle", f"{size} bytes", "local APIServices may not have a caBundle")
        if insecure:
            yield _invalid("spec.insecureSkipTLSVerify", True, "local APIServices may not have insecureSkipTLSVerify")
        return
    if not service.get("namespace"):
        yield _required("spec.service.namespace")
    if not service.get("name"):
        yield _required("spec.service.name")
    if insecure and ca_bundle:
        yield _invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present")
