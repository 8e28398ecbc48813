"""Aggregated discovery (apidiscovery.k8s.io/v2): every group, version and resource in one answer to /api or /apis.

kubectl (1.30 and later) and client-go ask ``/api`` and ``/apis`` with
``Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`` first; given one, they make two
requests where the unaggregated form costs one per group-version (27 here). The documents are built from the
same per-group-version resource lists the unaggregated endpoints serve, so both forms always agree. The answer's
Content-Type names the aggregated type: client-go reads it, not the body, to know which form it was given.
Groups and versions come in kube-aggregator's priority order (`discovery_order`), not by name.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from pyop.apiserver.endpoints.discovery_order import order_discovery_items
from pyop.apiserver.endpoints.served import GroupVersion, group_versions
from pyop.apiserver.endpoints.wire import dumps
from pyop.apiserver.registry.resources import ResourceRegistry

AGGREGATED_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether an Accept header asks for apidiscovery.k8s.io/v2 (kube-apiserver 1.30+ serves v2 only)."""
    for media_range in accept.split(","):
        parts = [part.strip() for part in media_range.split(";")]
        parameters = dict(part.split("=", 1) for part in parts[1:] if "=" in part)
        if (
            parts[0] == "application/json"
            and parameters.get("g") == "apidiscovery.k8s.io"
            and parameters.get("as") == "APIGroupDiscoveryList"
            and parameters.get("v") == "v2"
        ):
            return True
    return False


def _kind(entry: dict[str, Any], gv: GroupVersion) -> dict[str, str]:
    return {
        "group": entry.get("group", gv.group),
        "version": entry.get("version", gv.version),
        "kind": entry.get("kind", ""),
    }


def version_discovery(gv: GroupVersion) -> dict[str, Any]:
    """One group-version's APIVersionDiscovery (resources by name, subresources under their resource)."""
    resources: dict[str, dict[str, Any]] = {}
    entries = gv.resource_list["resources"]
    for entry in entries:
        if "/" in entry["name"]:
            continue
        resource: dict[str, Any] = {
            "resource": entry["name"],
            "responseKind": _kind(entry, gv),
            "scope": "Namespaced" if entry.get("namespaced") else "Cluster",
            "singularResource": entry.get("singularName", ""),
            "verbs": list(entry.get("verbs") or []),
        }
        for field in ("shortNames", "categories"):
            if entry.get(field):
                resource[field] = list(entry[field])
        resources[entry["name"]] = resource
    for entry in entries:
        if "/" not in entry["name"]:
            continue
        parent, subresource = entry["name"].split("/", 1)
        if parent in resources:
            resources[parent].setdefault("subresources", []).append(
                {"subresource": subresource, "responseKind": _kind(entry, gv), "verbs": list(entry.get("verbs") or [])}
            )
    return {"version": gv.version, "resources": list(resources.values()), "freshness": "Current"}


def aggregated_discovery(resources: ResourceRegistry, *, legacy: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList of ``/api`` (``legacy``: the core group) or ``/apis`` (every named group)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for gv in group_versions(resources):
        if (gv.group == "") == legacy:
            groups.setdefault(gv.group, []).append(version_discovery(gv))
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": order_discovery_items(
            [{"metadata": {"name": group}, "versions": versions} for group, versions in groups.items()]
        ),
    }


def aggregated_response(resources: ResourceRegistry, *, legacy: bool) -> web.Response:
    response = web.Response(body=dumps(aggregated_discovery(resources, legacy=legacy)))
    response.headers["Content-Type"] = AGGREGATED_TYPE
    return response
