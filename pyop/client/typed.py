"""The typed client: the dynamic client's verbs with pydantic models in and out.

Objects go out as `model_dump(by_alias=True, exclude_none=True, mode="json")` (Go's omitempty) and come back
through `pyop.api.trusted.from_server`: `model_validate`'s models, each field validated when it is first read (a
KubeModel's; any other model is validated at once), so a controller pays for the fields it reads, not for
managedFields it never looks at. Fields a KubeModel does not declare ride along both ways unchanged; the resource
comes from the model class (`pyop.client.resources.resource_for_model`). Nothing else happens here, so typed and
dynamic calls behave identically.
"""

from __future__ import annotations

import typing
import warnings
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field

from pyop.api.model import wire_dump
from pyop.api.trusted import from_server, list_from_server
from pyop.client.config import ClientConfig
from pyop.client.discovery import RESTMapper
from pyop.client.dynamic import (
    DynamicClient,
    EventType,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    WatchEvent,
)
from pyop.client.resources import APIResource, resource_for_model
from pyop.client.selectors import LabelSelectorInput
from pyop.client.transport import Transport

M = TypeVar("M", bound=BaseModel)


# Scale's models are built when a scale subresource is first used (`defer_build`), not in every operator's
# start-up: building the three costs ~5 ms and most operators never scale anything.
_DEFERRED = ConfigDict(defer_build=True)


class ScaleSpec(BaseModel):
    model_config = _DEFERRED

    replicas: int | None = None


class ScaleStatus(BaseModel):
    model_config = _DEFERRED

    replicas: int = 0
    selector: str | None = None


class Scale(BaseModel):
    """`autoscaling/v1` Scale: what `kubectl scale` and the HorizontalPodAutoscaler read and write."""

    model_config = _DEFERRED

    apiVersion: str = "autoscaling/v1"  # noqa: N815 - wire name, the model has no alias generator
    kind: str = "Scale"
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: ScaleSpec = Field(default_factory=ScaleSpec)
    status: ScaleStatus = Field(default_factory=ScaleStatus)


class DataLossWarning(UserWarning):
    """A whole-object write of a model class that drops fields it does not declare (pydantic's default
    `extra="ignore"`): the API server would lose them. Base the model on `pyop.api.KubeModel` (which keeps them),
    set `extra="allow"`, or write with `create_or_patch`/`patch`, which send only what changed."""


_CHECKED: weakref.WeakKeyDictionary[type[BaseModel], bool] = weakref.WeakKeyDictionary()


def _drops_unknown_fields(model: type[BaseModel]) -> bool:
    """Whether `model` or a model nested in its fields ignores undeclared fields; answered once per class."""
    answer = _CHECKED.get(model)
    if answer is None:
        answer = _CHECKED[model] = any(m.model_config.get("extra") != "allow" for m in _models_in(model, set()))
    return answer


def _models_in(annotation: Any, seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation not in seen:
            seen.add(annotation)
            for info in annotation.model_fields.values():
                _models_in(info.annotation, seen)
        return seen
    for argument in typing.get_args(annotation):
        _models_in(argument, seen)
    return seen


def _warn_if_lossy(obj: BaseModel, verb: str) -> None:
    model = type(obj)
    if _drops_unknown_fields(model):
        warnings.warn(
            f"{verb} of a {model.__name__}: {model.__name__} (or a model in its fields) ignores fields it does not "
            "declare, and this whole-object write drops them on the server (see DataLossWarning)",
            DataLossWarning,
            stacklevel=3,
        )


def dump(obj: BaseModel) -> dict[str, Any]:
    """A model as the API server expects it (pyop.api.model.wire_dump: Go's omitempty)."""
    return wire_dump(obj)


def dump_for_apply(obj: BaseModel) -> dict[str, Any]:
    """A model as a server-side apply intent: only fields the caller set.

    With apply, every field sent becomes owned by the field manager, so defaults the caller never chose must
    not be sent (a default `replicas: 1` would fight an autoscaler). apiVersion/kind/metadata always go.
    """
    result: dict[str, Any] = obj.model_dump(by_alias=True, exclude_none=True, exclude_unset=True, mode="json")
    full = dump(obj)
    for key in ("apiVersion", "kind", "metadata"):
        if key in full:
            result.setdefault(key, full[key])
    return result


class Client:
    """Typed access to the API server; `client.dynamic` is the dict-level client over the same connection."""

    def __init__(self, transport: Transport | ClientConfig, mapper: RESTMapper | None = None) -> None:
        self.transport = transport if isinstance(transport, Transport) else Transport(transport)
        self.dynamic = DynamicClient(self.transport, mapper)

    @property
    def config(self) -> ClientConfig:
        return self.transport.config

    async def close(self) -> None:
        await self.transport.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def get(self, model: type[M], name: str, namespace: str | None = None) -> M:
        return from_server(model, await self.dynamic.get(resource_for_model(model), name, namespace))

    async def list(
        self,
        model: type[M],
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> ObjectList[M]:
        """One page (everything when `limit` is None); the answer's `continue_token` fetches the next."""
        page = await self.dynamic.list(
            resource_for_model(model),
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_token=continue_token,
            resource_version=resource_version,
        )
        return _typed_list(model, page)

    async def list_all(
        self,
        model: type[M],
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int = 500,
    ) -> ObjectList[M]:
        """Every item, read in pages of `limit`, as one consistent snapshot."""
        page = await self.dynamic.list_all(
            resource_for_model(model),
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
        )
        return _typed_list(model, page)

    async def iterate(
        self,
        model: type[M],
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int = 500,
    ) -> AsyncIterator[M]:
        """Each item of every page, fetching the next page only when the caller gets there."""
        async for item in self.dynamic.iterate(
            resource_for_model(model),
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
        ):
            yield from_server(model, item)

    async def create(self, obj: M, *, dry_run: bool = False, field_manager: str | None = None) -> M:
        data = await self.dynamic.create(_resource_of(obj), dump(obj), dry_run=dry_run, field_manager=field_manager)
        return from_server(type(obj), data)

    async def update(self, obj: M, *, dry_run: bool = False, field_manager: str | None = None) -> M:
        """PUT the whole object. Fields the model keeps without declaring them (KubeModel's) are written back as
        read; a model class that drops them gets a `DataLossWarning`."""
        _warn_if_lossy(obj, "update")
        data = await self.dynamic.update(_resource_of(obj), dump(obj), dry_run=dry_run, field_manager=field_manager)
        return from_server(type(obj), data)

    async def patch(
        self,
        model: type[M],
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> M:
        """Merge patch (dict), JSON patch (list of ops) or strategic merge patch (dict, built-in kinds)."""
        data = await self.dynamic.patch(
            resource_for_model(model),
            name,
            _plain(patch),
            namespace,
            patch_type=patch_type,
            field_manager=field_manager,
            dry_run=dry_run,
        )
        return from_server(model, data)

    async def apply(self, obj: M, *, field_manager: str, force: bool = False, dry_run: bool = False) -> M:
        """Server-side apply of the fields set on `obj` (see `dump_for_apply`)."""
        data = await self.dynamic.apply(
            _resource_of(obj), dump_for_apply(obj), field_manager=field_manager, force=force, dry_run=dry_run
        )
        return from_server(type(obj), data)

    async def delete(
        self,
        model: type[M],
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> M | None:
        """Delete; returns the object the server reported (terminating when finalizers hold it) or None."""
        data = await self.dynamic.delete(
            resource_for_model(model),
            name,
            namespace,
            propagation_policy=propagation_policy,
            preconditions=preconditions,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        return None if data is None else from_server(model, data)

    async def get_status(self, model: type[M], name: str, namespace: str | None = None) -> M:
        return from_server(model, await self.dynamic.get_status(resource_for_model(model), name, namespace))

    @overload
    async def update_status(self, obj: M, *, dry_run: bool = False, validate: Literal[True] = True) -> M: ...

    @overload
    async def update_status(self, obj: M, *, dry_run: bool = False, validate: Literal[False]) -> None: ...

    async def update_status(self, obj: M, *, dry_run: bool = False, validate: bool = True) -> M | None:
        """Write `obj.status` (the server ignores spec changes here), guarded by resourceVersion;
        `validate=False` returns None instead of the answer as a model."""
        _warn_if_lossy(obj, "update_status")
        data = await self.dynamic.update_status(_resource_of(obj), dump(obj), dry_run=dry_run)
        return from_server(type(obj), data) if validate else None

    @overload
    async def patch_status(
        self,
        model: type[M],
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        validate: Literal[True] = True,
    ) -> M: ...

    @overload
    async def patch_status(
        self,
        model: type[M],
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        validate: Literal[False],
    ) -> None: ...

    async def patch_status(
        self,
        model: type[M],
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        validate: bool = True,
    ) -> M | None:
        """Patch the status subresource. `validate=False` skips building the answer into a model (None is
        returned): a controller that reports status and reads nothing back saves the validation."""
        data = await self.dynamic.patch_status(
            resource_for_model(model), name, _plain(patch), namespace, patch_type=patch_type
        )
        return from_server(model, data) if validate else None

    @overload
    async def apply_status(
        self, obj: M, *, field_manager: str, force: bool = False, validate: Literal[True] = True
    ) -> M: ...

    @overload
    async def apply_status(
        self, obj: M, *, field_manager: str, force: bool = False, validate: Literal[False]
    ) -> None: ...

    async def apply_status(self, obj: M, *, field_manager: str, force: bool = False, validate: bool = True) -> M | None:
        """Server-side apply of the status; `validate=False` returns None instead of the answer as a model."""
        data = await self.dynamic.apply_status(
            _resource_of(obj), dump_for_apply(obj), field_manager=field_manager, force=force
        )
        return from_server(type(obj), data) if validate else None

    async def get_scale(self, model: type[BaseModel], name: str, namespace: str | None = None) -> Scale:
        return Scale.model_validate(await self.dynamic.get_scale(resource_for_model(model), name, namespace))

    async def update_scale(
        self, model: type[BaseModel], name: str, replicas: int, namespace: str | None = None
    ) -> Scale:
        data = await self.dynamic.update_scale(resource_for_model(model), name, replicas, namespace)
        return Scale.model_validate(data)

    async def patch_scale(
        self, model: type[BaseModel], name: str, replicas: int, namespace: str | None = None
    ) -> Scale:
        data = await self.dynamic.patch_scale(resource_for_model(model), name, replicas, namespace)
        return Scale.model_validate(data)

    async def watch(
        self,
        model: type[M],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent[M | None]]:
        """Typed watch events; BOOKMARK events have `object=None` and only a `resource_version`.

        For long-lived, self-healing watches use an informer (`pyop.informers`), not this raw stream.
        """
        async for event in self.dynamic.watch(
            resource_for_model(model),
            namespace,
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks,
        ):
            obj = None if event.type is EventType.BOOKMARK else from_server(model, event.object)
            yield WatchEvent(event.type, obj, event.resource_version)


def _resource_of(obj: BaseModel) -> APIResource:
    return resource_for_model(type(obj))


def _typed_list(model: type[M], page: ObjectList[dict[str, Any]]) -> ObjectList[M]:
    """The page with its items as models (`from_server`: each field validated when first read)."""
    return ObjectList(
        items=list_from_server(model, page.items),
        resource_version=page.resource_version,
        continue_token=page.continue_token,
        remaining_item_count=page.remaining_item_count,
        raw_metadata=page.raw_metadata,
    )


def _plain(patch: Any) -> Any:
    """Patches may be given as models (partial objects); send them like objects."""
    if isinstance(patch, BaseModel):
        return patch.model_dump(by_alias=True, exclude_unset=True, exclude_none=True, mode="json")
    return patch
