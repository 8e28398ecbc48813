"""Discovery of aggregated group/versions, merged into the test server's own.

kube-aggregator serves ``/apis`` and ``/apis/<group>`` from the APIService objects alone, whether or not their
servers answer (``/apis/<group>/<version>`` is proxied like any other request). Aggregated discovery
(apidiscovery.k8s.io/v2, what kubectl asks first) needs each server's resources: the aggregator fetches them, asking
the server's ``/apis`` for its aggregated document and falling back to the unaggregated ``/apis/<group>/<version>``
when the server has none (404 or 406), and lists a group/version it could not fetch with no resources and
``freshness: Stale`` (which client-go reports as a failed group, as kubectl's "stale GroupVersion discovery").
All groups, the server's own and the aggregated ones, are ordered by priority as kube-aggregator orders them
(`pyop.apiserver.endpoints.discovery_order`): built-in groups by kube's table (16000 and above), CRD groups at 1000,
an APIService's group at its ``groupPriorityMinimum``, so an aggregated group can come before the built-in ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyop.apiserver.endpoints.discovery_aggregated import AGGREGATED_TYPE, version_discovery
from pyop.apiserver.endpoints.discovery_order import Priority, kube_priority, order_discovery_items, order_group_list
from pyop.apiserver.endpoints.served import GroupVersion
from pyop.testing.aggregator.apiservice import APIServiceSpec, sorted_by_group_and_version

STALE = "Stale"


def _version_entry(spec: APIServiceSpec) -> dict[str, str]:
    return {"groupVersion": spec.group_version, "version": spec.version}


def api_group(specs: list[APIServiceSpec]) -> dict[str, Any]:
    """One group's APIGroup (kube-aggregator's convertToDiscoveryAPIGroup): versions in priority order, the first
    preferred. ``specs`` are one group's, sorted."""
    versions = [_version_entry(spec) for spec in specs]
    return {"name": specs[0].group, "versions": versions, "preferredVersion": versions[0]}


def _priorities(specs: list[APIServiceSpec]) -> Callable[[str, str], Priority | None]:
    """Each group/version's (groupPriorityMinimum, versionPriority): its APIService's, else kube's."""
    by_version = {(spec.group, spec.version): (spec.group_priority_minimum, spec.version_priority) for spec in specs}
    return lambda group, version: by_version.get((group, version)) or kube_priority(group, version)


def merged_group_list(local: dict[str, Any], specs: list[APIServiceSpec]) -> dict[str, Any]:
    """``/apis``: the server's groups, then the aggregated ones; an aggregated version of a group the server also
    serves joins that group's entry."""
    groups = [dict(group) for group in local.get("groups") or []]
    by_name = {group["name"]: group for group in groups}
    for members in sorted_by_group_and_version([spec for spec in specs if spec.group]):
        existing = by_name.get(members[0].group)
        if existing is None:
            groups.append(api_group(members))
            continue
        known = {entry["version"] for entry in existing["versions"]}
        existing["versions"] = [*existing["versions"], *(_version_entry(s) for s in members if s.version not in known)]
    return {**local, "groups": order_group_list(groups, _priorities(specs))}


def group_document(group: str, specs: list[APIServiceSpec]) -> dict[str, Any] | None:
    """``/apis/<group>`` when APIServices name the group (None: the server's own answer stands)."""
    members = [spec for spec in specs if spec.group == group]
    if not members:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **api_group(sorted_by_group_and_version(members)[0])}


def version_from_aggregated(document: dict[str, Any], group: str, version: str) -> dict[str, Any] | None:
    """The APIVersionDiscovery of one group/version in a server's APIGroupDiscoveryList."""
    for item in document.get("items") or []:
        if (item.get("metadata") or {}).get("name", "") != group:
            continue
        for entry in item.get("versions") or []:
            if entry.get("version") == version:
                return dict(entry)
    return None


def version_from_resource_list(resource_list: dict[str, Any], group: str, version: str) -> dict[str, Any]:
    """An unaggregated APIResourceList converted to APIVersionDiscovery (kube's ConvertGroupVersionIntoToDiscovery),
    with the conversion the server uses for its own groups."""
    return version_discovery(GroupVersion(group, version, resource_list, ()))


def stale_version(version: str) -> dict[str, Any]:
    return {"version": version, "resources": [], "freshness": STALE}


def parse_discovery_response(content_type: str, body: bytes) -> dict[str, Any] | None:
    """The aggregated document of a server's ``/apis`` answer, or None when it answered the unaggregated form."""
    media = content_type.replace(" ", "")
    if "as=APIGroupDiscoveryList" not in media or "g=apidiscovery.k8s.io" not in media:
        return None
    decoded = json.loads(body)
    return decoded if isinstance(decoded, dict) else None


def merge_aggregated(
    local: dict[str, Any], specs: list[APIServiceSpec], versions: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The server's APIGroupDiscoveryList of ``/apis`` with the aggregated group/versions (``versions``: the fetched
    APIVersionDiscovery by APIService name) added, in priority order."""
    items = [dict(item) for item in local.get("items") or []]
    by_name = {(item.get("metadata") or {}).get("name", ""): item for item in items}
    for members in sorted_by_group_and_version([spec for spec in specs if spec.group]):
        entries = [versions.get(spec.name) or stale_version(spec.version) for spec in members]
        existing = by_name.get(members[0].group)
        if existing is None:
            items.append({"metadata": {"name": members[0].group}, "versions": entries})
            continue
        known = {entry.get("version") for entry in existing.get("versions") or []}
        existing["versions"] = [*existing.get("versions", []), *(e for e in entries if e["version"] not in known)]
    return {**local, "items": order_discovery_items(items, _priorities(specs))}


__all__ = [
    "AGGREGATED_TYPE",
    "group_document",
    "merge_aggregated",
    "merged_group_list",
    "parse_discovery_response",
    "version_from_aggregated",
    "version_from_resource_list",
]
