"""kube-apiserver's validation of what it stores: object metadata for every kind, and the rules of the built-in
workload and configuration kinds that operators trip over, with kube-apiserver's field paths and messages.

Metadata (apimachinery's ValidateObjectMeta, for custom resources too): label keys and values, annotation keys
and their total size, owner references (apiVersion, kind, name and uid must be set; one controller at most).
Kinds (pkg/apis/*/validation): a Deployment, ReplicaSet, StatefulSet or DaemonSet needs a non-empty selector
that matches its pod template's labels, and the selector cannot change; its pod template needs containers, with
unique names; a ConfigMap or Secret marked `immutable: true` keeps its data and the mark; the addresses of
Endpoints and EndpointSlices are IPs that are not loopback, link-local or unspecified (ValidateNonSpecialIP: an
operator writing `127.0.0.1` there is refused on every cluster); Events (`validation_events`). Each problem is one
`StatusCause`; the operation answers them together as one 422, as kube-apiserver does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pyop.api.selectors import labels_match, parse_label_selector, selector_from_label_selector
from pyop.api.status import StatusCause
from pyop.api.validation import dns1123_label_problems, ip_problems, non_special_ip_problems, parse_ip
from pyop.apiserver.registry.object_meta import TOTAL_ANNOTATION_SIZE_LIMIT as TOTAL_ANNOTATION_SIZE_LIMIT
from pyop.apiserver.registry.object_meta import validate_object_meta
from pyop.apiserver.registry.resources import ResourceType
from pyop.testing.aggregator.validation import validate_api_service
from pyop.testing.builtins.validation_events import validate_event

__all__ = ["validate_object"]

_WORKLOADS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("apps", "DaemonSet")}
_IMMUTABLE_DATA = {("", "ConfigMap"): ("data", "binaryData"), ("", "Secret"): ("data",)}
_IMMUTABLE_MESSAGE = "field is immutable when `immutable` is set"


def validate_object(
    resource_type: ResourceType, obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[StatusCause]:
    """Every problem kube-apiserver's validation finds in `obj` (an update of `old` when given)."""
    causes = list(_metadata(obj.get("metadata") or {}))
    if not resource_type.custom:
        key = (resource_type.group, resource_type.kind)
        if key in _WORKLOADS:
            causes.extend(_workload(resource_type.kind, obj, old))
        if key in _IMMUTABLE_DATA and old is not None:
            causes.extend(_immutable_data(_IMMUTABLE_DATA[key], obj, old))
        if key == ("apiregistration.k8s.io", "APIService"):
            causes.extend(validate_api_service(obj))
        if key == ("", "Endpoints"):
            causes.extend(_endpoints_addresses(obj))
        if key == ("discovery.k8s.io", "EndpointSlice"):
            causes.extend(_endpoint_slice_addresses(obj))
        if resource_type.kind == "Event" and resource_type.group in ("", "events.k8s.io"):
            causes.extend(validate_event(resource_type.group, obj, old))
    return causes


# --- metadata --------------------------------------------------------------------------------------


def _metadata(metadata: Mapping[str, Any]) -> Iterator[StatusCause]:
    return validate_object_meta(metadata)  # the generic registry's rules (pyop.apiserver.registry.object_meta)


# --- kinds -----------------------------------------------------------------------------------------


def _workload(kind: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> Iterator[StatusCause]:
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    template = spec.get("template") or {}
    template_labels = (template.get("metadata") or {}).get("labels") or {}
    if not isinstance(selector, Mapping):
        yield StatusCause("FieldValueRequired", "Required value", "spec.selector")
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        yield _invalid("spec.selector", _go_selector(selector), f"empty selector is invalid for {kind.lower()}")
    else:
        requirements = parse_label_selector(selector_from_label_selector(selector))
        if not labels_match(requirements, {"metadata": {"labels": template_labels}}):
            yield _invalid(
                "spec.template.metadata.labels",
                _go_string_map(template_labels),
                "`selector` does not match template `labels`",
            )
    if old is not None:
        old_selector = (old.get("spec") or {}).get("selector")
        if _canonical(old_selector) != _canonical(selector):
            shown = _go_selector(selector) if isinstance(selector, Mapping) else "null"
            yield _invalid("spec.selector", shown, "field is immutable")
    pod_spec = template.get("spec") or {}
    containers = pod_spec.get("containers")
    if not containers:
        yield StatusCause("FieldValueRequired", "Required value", "spec.template.spec.containers")
    elif isinstance(containers, list):
        seen: set[str] = set()
        for index, container in enumerate(c for c in containers if isinstance(c, Mapping)):
            name = str(container.get("name") or "")
            where = f"spec.template.spec.containers[{index}].name"
            if not name:
                yield StatusCause("FieldValueRequired", "Required value", where)
                continue
            for problem in dns1123_label_problems(name):
                yield _invalid(where, name, problem)
            if name in seen:
                yield StatusCause("FieldValueDuplicate", f"Duplicate value: {json.dumps(name)}", where)
            seen.add(name)


def _immutable_data(fields: tuple[str, ...], obj: Mapping[str, Any], old: Mapping[str, Any]) -> Iterator[StatusCause]:
    if old.get("immutable") is not True:
        return
    if obj.get("immutable") is not True:
        yield StatusCause("FieldValueForbidden", f"Forbidden: {_IMMUTABLE_MESSAGE}", "immutable")
    for field in fields:
        if _canonical(obj.get(field) or None) != _canonical(old.get(field) or None):
            yield StatusCause("FieldValueForbidden", f"Forbidden: {_IMMUTABLE_MESSAGE}", field)


def _endpoints_addresses(obj: Mapping[str, Any]) -> Iterator[StatusCause]:
    """validateEndpointAddress: each ``ip`` of a subset's ready and not-ready addresses."""
    for index, subset in _items(obj.get("subsets")):
        for field in ("addresses", "notReadyAddresses"):
            for position, address in _items(subset.get(field)):
                ip = str(address.get("ip") or "")
                where = f"subsets[{index}].{field}[{position}].ip"
                problems = ip_problems(ip)
                for problem in problems or non_special_ip_problems(ip):
                    yield _invalid(where, ip, problem)


_SLICE_FAMILIES = {"IPv4": (4, "must be a valid IPv4 address"), "IPv6": (6, "must be a valid IPv6 address")}


def _endpoint_slice_addresses(obj: Mapping[str, Any]) -> Iterator[StatusCause]:
    """The discovery API's validateEndpoints: an IPv4 or IPv6 slice holds addresses of its family, not special ones
    (an FQDN slice's names are not checked here)."""
    family = _SLICE_FAMILIES.get(str(obj.get("addressType") or ""))
    if family is None:
        return
    version, message = family
    for index, endpoint in _items(obj.get("endpoints")):
        for position, address in enumerate(endpoint.get("addresses") or []):
            where = f"endpoints[{index}].addresses[{position}]"
            text = str(address)
            if _ip_version(text) != version:
                yield _invalid(where, text, message)
                continue
            for problem in non_special_ip_problems(text):
                yield _invalid(where, text, problem)


def _ip_version(text: str) -> int | None:
    ip = parse_ip(text)  # as Go parses it: an IPv4-mapped IPv6 address is IPv4
    return None if ip is None else ip.version


def _items(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The objects of a list field, with their indices (anything else in it is the decoder's business)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, Mapping):
                yield index, item


# --- Go's rendering of invalid values (field.Invalid prints strings with %q, other values with %#v) ------


def _invalid(path: str, value: Any, detail: str) -> StatusCause:
    shown = value if isinstance(value, _GoText) else json.dumps(str(value), ensure_ascii=False)
    return StatusCause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


class _GoText(str):
    """A value already rendered the way Go's %#v prints it."""


def _go_string_map(value: Mapping[str, Any]) -> _GoText:
    if not value:
        return _GoText("map[string]string(nil)")
    items = ", ".join(f"{json.dumps(str(k))}:{json.dumps(str(v))}" for k, v in sorted(value.items()))
    return _GoText(f"map[string]string{{{items}}}")


def _go_selector(selector: Mapping[str, Any]) -> _GoText:
    expressions = [e for e in selector.get("matchExpressions") or [] if isinstance(e, Mapping)]
    if expressions:
        parts = []
        for expression in expressions:
            values = expression.get("values")
            shown = "[]string{" + ", ".join(json.dumps(str(v)) for v in values) + "}" if values else "[]string(nil)"
            parts.append(
                f"v1.LabelSelectorRequirement{{Key:{json.dumps(str(expression.get('key', '')))}, "
                f"Operator:{json.dumps(str(expression.get('operator', '')))}, Values:{shown}}}"
            )
        rendered = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    else:
        rendered = "[]v1.LabelSelectorRequirement(nil)"
    labels = _go_string_map(selector.get("matchLabels") or {})
    return _GoText(f"v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{rendered}}}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
