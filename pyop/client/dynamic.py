"""The dynamic client: every verb on any resource, objects as plain dicts (client-go's unstructured client).

This is the one place that knows the REST API's verbs, query parameters and bodies; the typed client
(`pyop.client.typed`) is a thin layer that converts pydantic models to and from the dicts used here.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pyop.client.discovery import RESTMapper
from pyop.client.errors import GoneError, error_from_status
from pyop.client.jsoncodec import decode_json, encode_json
from pyop.client.resources import APIResource
from pyop.client.selectors import LabelSelectorInput, format_field_selector, format_label_selector
from pyop.client.transport import Transport

T = TypeVar("T")
PropagationPolicy = Literal["Foreground", "Background", "Orphan"]


class PatchType(enum.StrEnum):
    """Patch flavours and their content types."""

    MERGE = "application/merge-patch+json"
    JSON = "application/json-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"


class EventType(enum.StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


@dataclass(slots=True)
class WatchEvent(Generic[T]):
    """One watch event; `object` is the object after the change (its final state for DELETED)."""

    type: EventType
    object: T
    resource_version: str


@dataclass
class ObjectList(Generic[T]):
    """One list answer (or all pages merged): items plus where to continue and what to watch from."""

    items: list[T]
    resource_version: str = ""
    continue_token: str | None = None
    remaining_item_count: int | None = None
    raw_metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Preconditions:
    """Delete only if the object still has this uid / resourceVersion (else 409 Conflict)."""

    uid: str | None = None
    resource_version: str | None = None

    def to_dict(self) -> dict[str, str]:
        result: dict[str, str] = {}
        if self.uid is not None:
            result["uid"] = self.uid
        if self.resource_version is not None:
            result["resourceVersion"] = self.resource_version
        return result


def object_namespace(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata") or {}
    return metadata.get("namespace") or None


def object_name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    name = metadata.get("name")
    if not name:
        raise ValueError("object has no metadata.name")
    return str(name)


class DynamicClient:
    """Verbs on resources addressed by `APIResource` (from a model, the built-in table or `resource()`)."""

    def __init__(self, transport: Transport, mapper: RESTMapper | None = None) -> None:
        self.transport = transport
        self.mapper = mapper or RESTMapper(transport)

    async def resource(self, api_version: str, kind: str) -> APIResource:
        """Map apiVersion/kind to a resource through discovery (cached)."""
        return await self.mapper.resource_for(api_version, kind)

    async def resource_for_object(self, obj: Mapping[str, Any]) -> APIResource:
        return await self.mapper.resource_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    async def get(
        self,
        resource: APIResource,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        result: dict[str, Any] = await self.transport.request("GET", resource.path(namespace, name, subresource))
        return result

    async def list(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> ObjectList[dict[str, Any]]:
        """One page (or everything if `limit` is None). Continue with `continue_token` from the answer."""
        params = {
            "labelSelector": format_label_selector(label_selector),
            "fieldSelector": format_field_selector(field_selector),
            "limit": limit,
            "continue": continue_token,
            "resourceVersion": resource_version,
            "resourceVersionMatch": resource_version_match,
        }
        body = await self.transport.request("GET", resource.path(namespace), params=params)
        metadata = body.get("metadata") or {}
        return ObjectList(
            items=_with_type_meta(body.get("items") or [], resource),
            resource_version=str(metadata.get("resourceVersion") or ""),
            continue_token=metadata.get("continue") or None,
            remaining_item_count=metadata.get("remainingItemCount"),
            raw_metadata=metadata,
        )

    async def iter_pages(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int = 500,
        resource_version: str | None = None,
    ) -> AsyncIterator[ObjectList[dict[str, Any]]]:
        """Every page of a list, following continue tokens, fetched as the caller consumes them.

        A continue token that expires mid-way (410) is raised as `GoneError`: pages already handed out cannot
        be taken back. Callers that need one consistent snapshot use `list_all`, which falls back to a full
        list.
        """
        token: str | None = None
        while True:
            page = await self.list(
                resource,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_token=token,
                resource_version=resource_version if token is None else None,
            )
            yield page
            token = page.continue_token
            if not token:
                return

    async def list_all(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int = 500,
        resource_version: str | None = None,
    ) -> ObjectList[dict[str, Any]]:
        """All items as one consistent snapshot, read in pages of `limit`.

        When a continue token expires (410 between pages), the list is read again in one unpaginated request,
        as client-go's pager does (`FullListIfExpired`): a snapshot stitched from two points in time would
        be wrong, and a second paged attempt could expire again.
        """
        items: list[dict[str, Any]] = []
        first: ObjectList[dict[str, Any]] | None = None
        try:
            async for page in self.iter_pages(
                resource,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                resource_version=resource_version,
            ):
                first = first or page
                items.extend(page.items)
        except GoneError:
            if first is None:
                raise
            return await self.list(resource, namespace, label_selector=label_selector, field_selector=field_selector)
        assert first is not None
        return ObjectList(items=items, resource_version=first.resource_version, raw_metadata=first.raw_metadata)

    async def iterate(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int = 500,
    ) -> AsyncIterator[dict[str, Any]]:
        """Each item of each page, fetched page by page as the caller consumes them."""
        async for page in self.iter_pages(
            resource, namespace, label_selector=label_selector, field_selector=field_selector, limit=limit
        ):
            for item in page.items:
                yield item

    async def create(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        namespace = _namespace_for(resource, obj, namespace)
        result: dict[str, Any] = await self.transport.request(
            "POST",
            resource.path(namespace),
            params=_write_params(dry_run, field_manager),
            body=_with_own_type_meta(obj, resource),
        )
        return result

    async def update(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """PUT the whole object; fails with `ConflictError` if `metadata.resourceVersion` is stale."""
        namespace = _namespace_for(resource, obj, namespace)
        result: dict[str, Any] = await self.transport.request(
            "PUT",
            resource.path(namespace, object_name(obj), subresource),
            params=_write_params(dry_run, field_manager),
            body=_with_own_type_meta(obj, resource) if subresource is None else dict(obj),
        )
        return result

    async def patch(
        self,
        resource: APIResource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Patch with a merge patch (dict), JSON patch (list of operations) or strategic merge patch (dict).

        Strategic merge patch is understood by the server for built-in kinds only; custom resources answer
        415.
        """
        params = _write_params(dry_run, field_manager)
        if force is not None:
            params["force"] = force
        result: dict[str, Any] = await self.transport.request(
            "PATCH",
            resource.path(namespace, name, subresource),
            params=params,
            body=patch if isinstance(patch, str | bytes) else encode_json(patch),
            content_type=str(patch_type),
        )
        return result

    async def apply(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply: the server merges `obj` as the intent of `field_manager`.

        `force=True` takes ownership of fields another manager owns instead of failing with `ConflictError`.
        """
        if not field_manager:
            raise ValueError("server-side apply needs a field manager")
        namespace = _namespace_for(resource, obj, namespace)
        return await self.patch(
            resource,
            object_name(obj),
            _with_own_type_meta(obj, resource),
            namespace,
            patch_type=PatchType.APPLY,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
        )

    async def delete(
        self,
        resource: APIResource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any] | None:
        """Delete; returns the object as the server reported it, or None when it answered with a Status.

        The API server answers with the last state of a deleted object, or with the terminating object when
        finalizers hold it (then `metadata.deletionTimestamp` is set).
        """
        options = _delete_options(propagation_policy, preconditions, grace_period_seconds, dry_run)
        result = await self.transport.request(
            "DELETE", resource.path(namespace, name), body=options if options else None
        )
        if isinstance(result, dict) and result.get("kind") == "Status":
            return None
        return result if isinstance(result, dict) else None

    async def delete_collection(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        propagation_policy: PropagationPolicy | None = None,
    ) -> None:
        params = {
            "labelSelector": format_label_selector(label_selector),
            "fieldSelector": format_field_selector(field_selector),
        }
        options = _delete_options(propagation_policy, None, None, False)
        await self.transport.request("DELETE", resource.path(namespace), params=params, body=options or None)

    async def get_status(self, resource: APIResource, name: str, namespace: str | None = None) -> dict[str, Any]:
        return await self.get(resource, name, namespace, subresource="status")

    async def update_status(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """PUT the status subresource: only `.status` changes, guarded by `metadata.resourceVersion`."""
        return await self.update(resource, obj, namespace, subresource="status", dry_run=dry_run)

    async def patch_status(
        self,
        resource: APIResource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> dict[str, Any]:
        return await self.patch(
            resource,
            name,
            patch,
            namespace,
            patch_type=patch_type,
            subresource="status",
            field_manager=field_manager,
            force=force,
        )

    async def apply_status(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str,
        force: bool = False,
    ) -> dict[str, Any]:
        return await self.apply(
            resource, obj, namespace, field_manager=field_manager, force=force, subresource="status"
        )

    async def get_scale(self, resource: APIResource, name: str, namespace: str | None = None) -> dict[str, Any]:
        """The `autoscaling/v1` Scale of an object (spec.replicas, status.replicas, status.selector)."""
        return await self.get(resource, name, namespace, subresource="scale")

    async def update_scale(
        self, resource: APIResource, name: str, replicas: int, namespace: str | None = None
    ) -> dict[str, Any]:
        scale = await self.get_scale(resource, name, namespace)
        scale.setdefault("spec", {})["replicas"] = replicas
        result: dict[str, Any] = await self.transport.request(
            "PUT", resource.path(namespace, name, "scale"), body=scale
        )
        return result

    async def patch_scale(
        self, resource: APIResource, name: str, replicas: int, namespace: str | None = None
    ) -> dict[str, Any]:
        return await self.patch(resource, name, {"spec": {"replicas": replicas}}, namespace, subresource="scale")

    async def watch(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent[dict[str, Any]]]:
        """Stream changes after `resource_version` (from a list) until the server ends the stream.

        BOOKMARK events carry only a newer resourceVersion to resume from. An ERROR event is raised as the
        matching `ApiError`: `GoneError` when the resourceVersion is too old (list again, then watch).
        """
        params = {
            "watch": True,
            "resourceVersion": resource_version,
            "allowWatchBookmarks": allow_bookmarks or None,
            "timeoutSeconds": timeout_seconds,
            "labelSelector": format_label_selector(label_selector),
            "fieldSelector": format_field_selector(field_selector),
        }
        async with self.transport.stream(resource.path(namespace), params=params) as lines:
            async for line in lines:
                yield decode_watch_event(line, resource)


def decode_watch_event(line: bytes, resource: APIResource | None = None) -> WatchEvent[dict[str, Any]]:
    """Parse one watch line; raise the mapped `ApiError` for ERROR events."""
    event = decode_json(line)
    kind = _EVENT_TYPES.get(event["type"]) or EventType(event["type"])
    obj = event.get("object") or {}
    if kind is EventType.ERROR:
        raise error_from_status(int(obj.get("code") or 500), obj)
    if resource is not None and "kind" not in obj:
        obj["apiVersion"] = resource.api_version
        obj["kind"] = resource.kind
    metadata = obj.get("metadata") or {}
    return WatchEvent(kind, obj, str(metadata.get("resourceVersion") or ""))


_EVENT_TYPES: dict[str, EventType] = {member.value: member for member in EventType}


def _with_type_meta(items: list[dict[str, Any]], resource: APIResource) -> list[dict[str, Any]]:
    """List items come without apiVersion/kind from kube-apiserver; fill them so items stand alone."""
    for item in items:
        if "kind" not in item:
            item["apiVersion"] = resource.api_version
            item["kind"] = resource.kind
    return items


def _with_own_type_meta(obj: Mapping[str, Any], resource: APIResource) -> dict[str, Any]:
    body = dict(obj)
    body.setdefault("apiVersion", resource.api_version)
    body.setdefault("kind", resource.kind)
    return body


def _namespace_for(resource: APIResource, obj: Mapping[str, Any], namespace: str | None) -> str | None:
    if not resource.namespaced:
        return None
    own = object_namespace(obj)
    if namespace and own and namespace != own:
        raise ValueError(f"namespace argument {namespace!r} differs from the object's namespace {own!r}")
    chosen = namespace or own
    if not chosen:
        raise ValueError(f"{resource.kind} is namespaced: give the object a metadata.namespace")
    return chosen


def _write_params(dry_run: bool, field_manager: str | None) -> dict[str, str | int | bool | None]:
    return {"dryRun": "All" if dry_run else None, "fieldManager": field_manager}


def _delete_options(
    propagation_policy: PropagationPolicy | None,
    preconditions: Preconditions | None,
    grace_period_seconds: int | None,
    dry_run: bool,
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if propagation_policy is not None:
        options["propagationPolicy"] = propagation_policy
    if preconditions is not None and preconditions.to_dict():
        options["preconditions"] = preconditions.to_dict()
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        options["dryRun"] = ["All"]
    if options:
        options = {"kind": "DeleteOptions", "apiVersion": "v1", **options}
    return options
