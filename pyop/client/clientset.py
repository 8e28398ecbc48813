"""The runtime of generated clientsets (`pyop make clients`): the verbs the generated per-kind classes expose.

client-gen's typed clients call a REST client; pyop's generated ones call a `Backend`, which is either the
dynamic client (a real API server) or an `ObjectTracker` (the typed fakes of unit tests), so a fake clientset is
the very same generated classes over another backend and type-checks exactly like the real one. The verbs live
here as protected methods of `ResourceClient`; a generated class exposes only those its kind's `+genclient`
tags allow, each with a plain typed signature, so a verb a tag removed is not an attribute at all (a mypy error).

Answers become models as the typed client makes them (`pyop.client.typed`): the same wire forms both ways.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from pyop.api.trusted import from_server
from pyop.client.dynamic import (
    DynamicClient,
    EventType,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    WatchEvent,
)
from pyop.client.resources import APIResource
from pyop.client.selectors import LabelSelectorInput
from pyop.client.typed import Client, _plain, _typed_list, _warn_if_lossy, dump, dump_for_apply

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


class Backend(Protocol):
    """What a generated clientset needs of its backend: the dynamic client's verbs on dict objects."""

    async def get(
        self, resource: APIResource, name: str, namespace: str | None = None, *, subresource: str | None = None
    ) -> dict[str, Any]: ...

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
    ) -> ObjectList[dict[str, Any]]: ...

    def watch(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent[dict[str, Any]]]: ...

    async def create(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]: ...

    async def update(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]: ...

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
    ) -> dict[str, Any]: ...

    async def apply(
        self,
        resource: APIResource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        subresource: str | None = None,
    ) -> dict[str, Any]: ...

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
    ) -> dict[str, Any] | None: ...

    async def delete_collection(
        self,
        resource: APIResource,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        propagation_policy: PropagationPolicy | None = None,
    ) -> None: ...


def backend_of(client: Client | DynamicClient | Backend) -> Backend:
    """The dict-level backend of a typed client, a dynamic client or a tracker."""
    return client.dynamic if isinstance(client, Client) else client


class ResourceClient(Generic[M]):
    """The verbs of one kind, in one namespace (None: all namespaces, or a cluster-scoped kind)."""

    def __init__(self, backend: Backend, resource: APIResource, model: type[M], namespace: str | None) -> None:
        self._backend = backend
        self._resource = resource
        self._model = model
        self.namespace = namespace or None  # client-go's "" is every namespace

    async def _get(self, name: str) -> M:
        return from_server(self._model, await self._backend.get(self._resource, name, self.namespace))

    async def _list(
        self,
        label_selector: LabelSelectorInput,
        field_selector: str | Mapping[str, str] | None,
        limit: int | None,
        continue_token: str | None,
        resource_version: str | None,
    ) -> ObjectList[M]:
        page = await self._backend.list(
            self._resource,
            self.namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_token=continue_token,
            resource_version=resource_version,
        )
        return _typed_list(self._model, page)

    async def _watch(
        self,
        resource_version: str | None,
        label_selector: LabelSelectorInput,
        field_selector: str | Mapping[str, str] | None,
        timeout_seconds: int | None,
    ) -> AsyncIterator[WatchEvent[M | None]]:
        async for event in self._backend.watch(
            self._resource,
            self.namespace,
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
            timeout_seconds=timeout_seconds,
        ):
            obj = None if event.type is EventType.BOOKMARK else from_server(self._model, event.object)
            yield WatchEvent(event.type, obj, event.resource_version)

    async def _create(self, obj: M, dry_run: bool, field_manager: str | None) -> M:
        data = await self._backend.create(
            self._resource, dump(obj), self.namespace, dry_run=dry_run, field_manager=field_manager
        )
        return from_server(self._model, data)

    async def _update(self, obj: M, dry_run: bool, field_manager: str | None) -> M:
        _warn_if_lossy(obj, "update")
        data = await self._backend.update(
            self._resource, dump(obj), self.namespace, dry_run=dry_run, field_manager=field_manager
        )
        return from_server(self._model, data)

    async def _update_status(self, obj: M, dry_run: bool, field_manager: str | None) -> M:
        _warn_if_lossy(obj, "update_status")
        data = await self._backend.update(
            self._resource,
            dump(obj),
            self.namespace,
            subresource="status",
            dry_run=dry_run,
            field_manager=field_manager,
        )
        return from_server(self._model, data)

    async def _patch(self, name: str, patch: Any, patch_type: PatchType, field_manager: str | None, dry_run: bool) -> M:
        data = await self._backend.patch(
            self._resource,
            name,
            _plain(patch),
            self.namespace,
            patch_type=patch_type,
            field_manager=field_manager,
            dry_run=dry_run,
        )
        return from_server(self._model, data)

    async def _apply(self, obj: M, field_manager: str, force: bool, dry_run: bool, subresource: str | None) -> M:
        data = await self._backend.apply(
            self._resource,
            dump_for_apply(obj),
            self.namespace,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
            subresource=subresource,
        )
        return from_server(self._model, data)

    async def _delete(
        self,
        name: str,
        propagation_policy: PropagationPolicy | None,
        preconditions: Preconditions | None,
        grace_period_seconds: int | None,
        dry_run: bool,
    ) -> M | None:
        data = await self._backend.delete(
            self._resource,
            name,
            self.namespace,
            propagation_policy=propagation_policy,
            preconditions=preconditions,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        return None if data is None else from_server(self._model, data)

    async def _delete_collection(
        self,
        label_selector: LabelSelectorInput,
        field_selector: str | Mapping[str, str] | None,
        propagation_policy: PropagationPolicy | None,
    ) -> None:
        await self._backend.delete_collection(
            self._resource,
            self.namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            propagation_policy=propagation_policy,
        )

    # `+genclient:method=` extras: a verb on the kind or one of its subresources, with its own input and result.

    async def _extra_get(self, result: type[R], name: str, subresource: str | None) -> R:
        return from_server(
            result, await self._backend.get(self._resource, name, self.namespace, subresource=subresource)
        )

    async def _extra_list(self, result: type[R]) -> ObjectList[R]:
        return _typed_list(result, await self._backend.list(self._resource, self.namespace))

    async def _extra_create(self, result: type[R], name: str | None, subresource: str | None, obj: BaseModel) -> R:
        if subresource is None:
            data = await self._backend.create(self._resource, dump(obj), self.namespace)
        else:
            assert name is not None
            data = await _post_subresource(self._backend, self._resource, name, self.namespace, subresource, dump(obj))
        return from_server(result, data)

    async def _extra_update(self, result: type[R], subresource: str | None, obj: BaseModel) -> R:
        data = await self._backend.update(self._resource, dump(obj), self.namespace, subresource=subresource)
        return from_server(result, data)

    async def _extra_patch(
        self, result: type[R], name: str, subresource: str | None, patch: Any, patch_type: PatchType
    ) -> R:
        data = await self._backend.patch(
            self._resource, name, _plain(patch), self.namespace, patch_type=patch_type, subresource=subresource
        )
        return from_server(result, data)

    async def _extra_apply(
        self, result: type[R], subresource: str | None, obj: BaseModel, field_manager: str, force: bool
    ) -> R:
        data = await self._backend.apply(
            self._resource,
            dump_for_apply(obj),
            self.namespace,
            field_manager=field_manager,
            force=force,
            subresource=subresource,
        )
        return from_server(result, data)

    async def _extra_delete(self, name: str) -> None:
        await self._backend.delete(self._resource, name, self.namespace)


async def _post_subresource(
    backend: Backend, resource: APIResource, name: str, namespace: str | None, subresource: str, body: dict[str, Any]
) -> dict[str, Any]:
    """POST to a subresource (pods/eviction, serviceaccounts/token): the dynamic client's transport, or the
    tracker's own `create_subresource`."""
    if isinstance(backend, DynamicClient):
        result: dict[str, Any] = await backend.transport.request(
            "POST", resource.path(namespace, name, subresource), body=body
        )
        return result
    create = getattr(backend, "create_subresource", None)
    if create is None:
        raise NotImplementedError(f"{type(backend).__name__} cannot POST to {resource.plural}/{subresource}")
    created: dict[str, Any] = await create(resource, name, namespace, subresource, body)
    return created
