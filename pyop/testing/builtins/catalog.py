"""The built-in resources one Kubernetes version serves, from its OpenAPI definitions and the generated endpoints.

A resource is served when the version's definitions define its kind (a root kind: apiVersion, kind and metadata)
in a GA version (`v1`, `v2`): kube-apiserver enables no alpha API, and no beta API introduced since 1.24, unless
told to (KEP-3136), so a default cluster serves GA versions only. Where it lives and what it answers (plural,
scope, verbs, subresources) comes from `_endpoints` (generated from the full OpenAPI paths); short names,
categories and field selectors, which no OpenAPI document carries, from `names`.

Subresources are listed (in discovery) and routed only where the server implements them faithfully: `status`
(every kind with one), `scale` (apps' Deployments, ReplicaSets and StatefulSets, whose selector is a LabelSelector,
and the ReplicationController, whose selector is a map of labels), the Namespace `finalize`, the ServiceAccount
`token` (pyop.testing.authorization.tokens), pods' `log`, `eviction`, `binding` (pod_subresources), `exec`,
`attach`, `portforward` (pod_streaming), `ephemeralcontainers` and, from 1.33, `resize` (pod_update_subresources),
and the CertificateSigningRequest `approval` (csr_approval): the last three are registry updates with the kind's
own subresource strategy (`_UPDATE_SUBRESOURCES`), and pods', services' and nodes' `proxy` (resource_proxy, to
the tests' port handlers). The `Binding` kind (POST pods' bindings, the scheduler's write) is not served:
it needs a scheduler's semantics.

A resource served in two GA versions is served in the newest only (the server converts between versions of one
resource by apiVersion alone), except the HorizontalPodAutoscaler: autoscaling/v1 and v2 are both served, as on a
cluster (`kubectl autoscale` posts v1), stored in v2 and converted by kube's rules (`hpa_versions`). And one resource
is served through two groups: events.k8s.io/v1 Events are the core Events, stored as core/v1 (`event_versions`).
"""

from __future__ import annotations

import functools
import re
from typing import Final

from pyop.api.definitions import load_definitions, normalise_version
from pyop.apiserver.registry.conversion import Converter
from pyop.apiserver.registry.resources import ResourceType, ScaleSpec, SpecialSubresource
from pyop.testing.builtins._endpoints import ENDPOINTS
from pyop.testing.builtins.event_versions import EventConversion
from pyop.testing.builtins.hpa_versions import HPAConversion
from pyop.testing.builtins.names import CATEGORIES, FIELD_LABELS, SHORT_NAMES

_GA: Final = re.compile(r"^v\d+$")
_STRUCT_SCALE: Final = ScaleSpec(".spec.replicas", ".status.replicas", ".spec.selector", selector_is_struct=True)
_MAP_SCALE: Final = ScaleSpec(".spec.replicas", ".status.replicas", ".spec.selector", selector_is_map=True)
SCALED: Final = frozenset({("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets")})
# The ReplicationController's Scale: its selector is a map of labels (scaleFromRC).
_SCALES: Final = {key: _STRUCT_SCALE for key in SCALED} | {("", "replicationcontrollers"): _MAP_SCALE}
_NOT_SERVED: Final = frozenset({("", "bindings")})
# Resources served in every GA version, each with the converter between them (stored in the newest).
_EVENTS: Final = EventConversion()
# Resources converted between the versions (or groups) they are served in: those served in every GA version
# (stored in the newest), and the owner of a storage another group shares (both ways, as HPA's).
_CONVERTED: Final[dict[tuple[str, str], Converter]] = {
    ("autoscaling", "horizontalpodautoscalers"): HPAConversion(),
    ("", "events"): _EVENTS,
}
# Resources that are another group's resource served through their own API: (group, plural) -> (the group whose
# storage they share, its storage version, the converter). events.k8s.io's Events are core Events (event_versions).
_SHARED: Final = {("events.k8s.io", "events"): ("", "v1", _EVENTS)}
_SERVED_SUBRESOURCES: Final = frozenset({"status", "scale", "finalize", "token"})
# Subresources written through the registry with the kind's own subresource strategy (pod_update_subresources),
# each with the first minor release that serves it by default (resize: InPlacePodVerticalScaling, beta in 1.33).
_UPDATE_SUBRESOURCES: Final = {
    ("", "pods"): (("ephemeralcontainers", (1, 0)), ("resize", (1, 33))),
    ("certificates.k8s.io", "certificatesigningrequests"): (("approval", (1, 0)),),
}
# Subresources the test server answers with handlers of their own (pod_subresources, pod_streaming, resource_proxy).
_PROXY_VERBS: Final = ("create", "delete", "get", "patch", "update")
_SPECIAL_SUBRESOURCES: Final = {
    ("", "pods"): (
        SpecialSubresource("attach", "PodAttachOptions", ("create", "get")),
        SpecialSubresource("binding", "Binding", ("create",)),
        SpecialSubresource("eviction", "Eviction", ("create",), group="policy", version="v1"),
        SpecialSubresource("exec", "PodExecOptions", ("create", "get")),
        SpecialSubresource("log", "Pod", ("get",)),
        SpecialSubresource("portforward", "PodPortForwardOptions", ("create", "get")),
        SpecialSubresource("proxy", "PodProxyOptions", _PROXY_VERBS),
    ),
    ("", "services"): (SpecialSubresource("proxy", "ServiceProxyOptions", _PROXY_VERBS),),
    ("", "nodes"): (SpecialSubresource("proxy", "NodeProxyOptions", _PROXY_VERBS),),
}


def root_kinds(kubernetes_version: str) -> frozenset[tuple[str, str, str]]:
    """(group, version, kind) of every kind with an apiVersion and metadata in one version's definitions."""
    return _root_kinds(normalise_version(kubernetes_version))


@functools.cache
def _root_kinds(minor: str) -> frozenset[tuple[str, str, str]]:
    kinds = set()
    for schema in load_definitions(minor).values():
        gvks = schema.get("x-kubernetes-group-version-kind") or []
        if len(gvks) != 1:
            continue
        group, version, kind = gvks[0]["group"], gvks[0]["version"], gvks[0]["kind"]
        if not kind.endswith("List") and "metadata" in (schema.get("properties") or {}):
            kinds.add((group, version, kind))
    return frozenset(kinds)


def builtin_types(kubernetes_version: str) -> tuple[ResourceType, ...]:
    """Every built-in resource a default kube-apiserver of that version serves (shared, immutable)."""
    return _builtin_types(normalise_version(kubernetes_version))


@functools.cache
def _builtin_types(minor: str) -> tuple[ResourceType, ...]:
    defined = _root_kinds(minor)
    rows = [
        row
        for row in ENDPOINTS
        if (row[0], row[1], row[2]) in defined and _GA.match(row[1]) and (row[0], row[3]) not in _NOT_SERVED
    ]
    newest: dict[tuple[str, str], str] = {}
    for group, version, _, plural, *_rest in rows:
        if int(version[1:]) > int(newest.get((group, plural), "v0")[1:]):
            newest[(group, plural)] = version
    types = []
    for group, version, kind, plural, namespaced, verbs, subresources in rows:
        key = (group, plural)
        if newest[key] != version and key not in _CONVERTED:
            continue  # one GA version per resource: see the module's docstring
        served = {name: sub_verbs for name, sub_verbs in subresources if name in _SERVED_SUBRESOURCES}
        shared = _SHARED.get(key)
        storage_group, storage_version, conversion = shared or (None, newest[key], _CONVERTED.get(key))
        types.append(
            ResourceType(
                group,
                version,
                plural,
                kind,
                namespaced,
                short_names=SHORT_NAMES.get(key, ()),
                categories=CATEGORIES.get(key, ()),
                verbs=verbs,
                has_status="status" in served,
                scale=_SCALES.get(key) if "scale" in served else None,
                storage_version=storage_version,
                storage_group=storage_group,
                field_labels=FIELD_LABELS.get(key, {}),
                finalize="finalize" in served,
                token="token" in served,
                special_subresources=_SPECIAL_SUBRESOURCES.get(key, ()),
                update_subresources=tuple(
                    name for name, since in _UPDATE_SUBRESOURCES.get(key, ()) if _minor_tuple(minor) >= since
                ),
                conversion=conversion,
            )
        )
    return tuple(types)


def _minor_tuple(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)
