"""Create-or-update and create-or-patch: converge one owned object on what `mutate` says it should be.

controller-runtime's `controllerutil.CreateOrUpdate` / `CreateOrPatch`. The object is read from the API server
(not the cache: a stale cached copy would make the write fail or, worse, look unnecessary), `mutate` edits it,
and a write is sent only when the edit changed something, so a steady-state reconcile costs one GET.

    def desired(config_map: ConfigMap) -> None:
        config_map.data = {"greeting": captain.spec.greeting}
        set_controller_reference(captain, config_map)

    config_map, result = await create_or_update(client, ConfigMap(metadata=ObjectMeta(name=..., namespace=...)),
                                                desired)
"""

from __future__ import annotations

import copy
import enum
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from pyop.client.errors import NotFoundError
from pyop.client.resources import resource_for_model
from pyop.client.typed import Client, dump

__all__ = ["OperationResult", "apply_merge_patch", "create_or_patch", "create_or_update", "merge_patch_between"]

M = TypeVar("M", bound=BaseModel)
Mutate = Callable[[M], None | Awaitable[None]]


class OperationResult(enum.StrEnum):
    """What a create-or-update did (controller-runtime's values, for logs and metrics)."""

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


def _identity(obj: BaseModel) -> tuple[str | None, str | None]:
    metadata = getattr(obj, "metadata", None)
    if metadata is None:
        raise TypeError(f"{type(obj).__name__} has no metadata")
    return getattr(metadata, "namespace", None), getattr(metadata, "name", None)


async def _run(mutate: Mutate[M], obj: M) -> None:
    outcome = mutate(obj)
    if inspect.isawaitable(outcome):
        await outcome


def _check_identity(obj: BaseModel, expected: tuple[str | None, str | None]) -> None:
    if _identity(obj) != expected:
        raise ValueError(f"mutate must not change the object's namespace/name: {expected} became {_identity(obj)}")


async def create_or_update(client: Client, obj: M, mutate: Mutate[M]) -> tuple[M, OperationResult]:
    """Get the object named like `obj`; create it from `mutate(obj)` if missing, else update it if `mutate`
    changed it. `mutate` may be a plain or an async function. Returns the object as stored and what happened.

    The update sends the object as the server stored it with only `mutate`'s changes applied (the merge patch
    between the model before and after `mutate`, applied to the stored JSON), so fields the model class does not
    declare, or drops, are written back unchanged: a partial `Deployment` model keeps `spec.strategy`. The stored
    resourceVersion goes with it, so a concurrent writer makes the update fail with a conflict, as in Go.
    """
    existing, stored, identity = await _get_or_create(client, obj, mutate, "create_or_update")
    if stored is None:
        return existing, OperationResult.CREATED
    before = dump(existing)
    await _run(mutate, existing)
    _check_identity(existing, identity)
    changes = merge_patch_between(before, dump(existing))
    if not changes:
        return existing, OperationResult.UNCHANGED
    body = apply_merge_patch(stored, changes)
    data = await client.dynamic.update(resource_for_model(type(existing)), body)
    return type(existing).model_validate(data), OperationResult.UPDATED


async def create_or_patch(client: Client, obj: M, mutate: Mutate[M]) -> tuple[M, OperationResult]:
    """Like `create_or_update`, but sends JSON merge patches of what `mutate` changed: one for the object,
    one for its status subresource. No resourceVersion is sent, so concurrent writers of other fields never
    cause a conflict.
    """
    existing, stored, identity = await _get_or_create(client, obj, mutate, "create_or_patch")
    if stored is None:
        return existing, OperationResult.CREATED
    model = type(obj)
    namespace, name = identity
    before = dump(existing)
    await _run(mutate, existing)
    _check_identity(existing, identity)
    after = dump(existing)
    before_status, after_status = before.pop("status", None), after.pop("status", None)
    object_patch = merge_patch_between(before, after)
    status_patch = merge_patch_between({"status": before_status}, {"status": after_status})
    result: M = existing
    if object_patch:
        result = await client.patch(model, name, object_patch, namespace)
    if status_patch:
        result = await client.patch_status(model, name, status_patch, namespace)
    if object_patch and status_patch:
        return result, OperationResult.UPDATED_STATUS
    if object_patch:
        return result, OperationResult.UPDATED
    if status_patch:
        return result, OperationResult.UPDATED_STATUS_ONLY
    return result, OperationResult.UNCHANGED


async def _get_or_create(
    client: Client, obj: M, mutate: Mutate[M], caller: str
) -> tuple[M, dict[str, Any] | None, tuple[str | None, str]]:
    """The stored object named like `obj` and its JSON as read, or `obj` after `mutate`, created, and None; and
    the object's identity."""
    namespace, name = _identity(obj)
    if not name:
        raise ValueError(f"{caller} needs metadata.name")
    identity = (namespace, name)
    model = type(obj)
    try:
        stored = await client.dynamic.get(resource_for_model(model), name, namespace)
    except NotFoundError:
        await _run(mutate, obj)
        _check_identity(obj, identity)
        return await client.create(obj), None, identity
    return model.model_validate(stored), stored, identity


_MISSING = object()


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: `target` with the JSON merge `patch` applied (a new value; `target` is not changed)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def merge_patch_between(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The RFC 7386 JSON merge patch that turns `before` into `after` (empty when they are equal).

    Removed keys become `null`; nested objects are diffed key by key; any other changed value, lists
    included, is sent whole (merge patches cannot address list items).
    """
    patch: dict[str, Any] = {}
    for key in before:
        if key not in after:
            patch[key] = None
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old == value:
            continue
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            nested = merge_patch_between(old, value)
            if nested:
                patch[key] = nested
        else:
            patch[key] = value
    return patch
