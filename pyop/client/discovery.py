"""REST mapping through discovery: group/version/kind -> plural and scope, cached, refreshed on a miss.

The dynamic client addresses objects by `apiVersion` and `kind` (that is what a manifest says); the URL needs
the plural and whether the kind is namespaced. Discovery (`/api/v1`, `/apis/<group>/<version>`) answers that
per group-version. We fetch only the group-versions asked for, cache them, and fetch a group-version again
when a kind is missing from the cached copy (a CRD installed after the first lookup), like client-go's
deferred mapper.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pyop.api.paths import path_segment_problems
from pyop.client.errors import NoKindMatchError, NotFoundError
from pyop.client.resources import BUILTIN, APIResource, split_api_version
from pyop.client.transport import Transport


class RESTMapper:
    """Maps kinds to resources with discovery documents; shareable, one fetch per group-version at a time."""

    def __init__(self, transport: Transport, *, use_builtin_table: bool = True) -> None:
        self._transport = transport
        self._by_group_version: dict[str, dict[str, APIResource]] = {}
        self._subresources: dict[str, set[str]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._use_builtin_table = use_builtin_table
        self.fetch_count = 0

    async def resource_for(self, api_version: str, kind: str) -> APIResource:
        """The resource serving `kind` in `api_version`; raises `NoKindMatchError` if the server has none."""
        cached = self._by_group_version.get(api_version, {}).get(kind)
        if cached is not None:
            return cached
        if self._use_builtin_table and api_version not in self._by_group_version:
            builtin = BUILTIN.get(f"{api_version}/{kind}")
            if builtin is not None:
                return builtin
        resources = await self._fetch(api_version, force=api_version in self._by_group_version)
        found = resources.get(kind)
        if found is None:
            raise NoKindMatchError(f"no resource for kind {kind!r} in {api_version!r}")
        return found

    async def resource_for_object(self, obj: dict[str, Any]) -> APIResource:
        return await self.resource_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    async def resources(self, api_version: str) -> list[APIResource]:
        """Every top-level resource of a group-version (fetched if not cached)."""
        return list((await self._fetch(api_version, force=False)).values())

    def has_subresource(self, resource: APIResource, subresource: str) -> bool | None:
        """Whether discovery listed `<plural>/<subresource>`; None when discovery was not consulted."""
        names = self._subresources.get(resource.api_version)
        if names is None:
            return None
        return f"{resource.plural}/{subresource}" in names

    def invalidate(self, api_version: str | None = None) -> None:
        if api_version is None:
            self._by_group_version.clear()
            self._subresources.clear()
        else:
            self._by_group_version.pop(api_version, None)
            self._subresources.pop(api_version, None)

    async def _fetch(self, api_version: str, *, force: bool) -> dict[str, APIResource]:
        lock = self._locks.setdefault(api_version, asyncio.Lock())
        async with lock:
            if not force and api_version in self._by_group_version:
                return self._by_group_version[api_version]
            group, version = split_api_version(api_version)
            if not version or path_segment_problems(version) or (group and path_segment_problems(group)):
                # `a/../../x/v1` would otherwise address another path: refused before any request.
                raise NoKindMatchError(f"malformed apiVersion {api_version!r}")
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            self.fetch_count += 1
            try:
                document = await self._transport.request("GET", path)
            except NotFoundError as error:
                raise NoKindMatchError(f"the server does not serve {api_version!r}") from error
            resources: dict[str, APIResource] = {}
            subresources: set[str] = set()
            for entry in (document or {}).get("resources") or []:
                name = str(entry.get("name", ""))
                if "/" in name:
                    subresources.add(name)
                    continue
                resources[str(entry["kind"])] = APIResource(
                    group=str(entry.get("group") or group),
                    version=str(entry.get("version") or version),
                    kind=str(entry["kind"]),
                    plural=name,
                    namespaced=bool(entry.get("namespaced", False)),
                )
            self._by_group_version[api_version] = resources
            self._subresources[api_version] = subresources
            return resources
