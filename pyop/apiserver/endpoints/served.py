"""Every endpoint the server serves right now, read through the registry's public discovery API.

OpenAPI, aggregated discovery and Table output describe what the registry serves; reading it through the same
calls the discovery handlers make (the group list, then each group-version's resource list) keeps them in step
with the registry whatever it holds (built-in kinds from the definitions, CRDs as they come and go) and needs no
access to its internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyop.apiserver.registry.resources import ResourceRegistry, ResourceType


@dataclass(frozen=True)
class GroupVersion:
    """One served group-version, its discovery document and the resource types behind it."""

    group: str
    version: str
    resource_list: dict[str, Any]
    types: tuple[ResourceType, ...]

    @property
    def path(self) -> str:
        """``api/v1`` or ``apis/<group>/<version>`` (the /openapi/v3 index key)."""
        return f"apis/{self.group}/{self.version}" if self.group else f"api/{self.version}"


def group_versions(resources: ResourceRegistry) -> list[GroupVersion]:
    """Core first (when served: an aggregated API server has no core group), then the groups in discovery order
    (each group's versions by priority)."""
    pairs = [("", "v1")] if resources.has_group_version("", "v1") else []
    for group in resources.api_group_list()["groups"]:
        pairs.extend((group["name"], entry["version"]) for entry in group["versions"])
    served = []
    for group, version in pairs:
        document = resources.resource_list(group, version)
        types = tuple(
            resources.lookup(group, version, entry["name"])
            for entry in document["resources"]
            if "/" not in entry["name"]
        )
        served.append(GroupVersion(group, version, document, types))
    return served


def snapshot(served: list[GroupVersion]) -> tuple[ResourceType, ...]:
    """The served types in order: a cache key compared by identity (a CRD change makes new ResourceTypes)."""
    return tuple(resource_type for gv in served for resource_type in gv.types)


def same_snapshot(a: tuple[ResourceType, ...], b: tuple[ResourceType, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
