"""Reconciler helpers: finalizers, owner references, status conditions, create-or-update/patch, events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio
from ctrl_helpers import ConfigMap, Widget, WidgetStatus, widget

from pyop.api import Condition, ObjectMeta
from pyop.client import Client, ConflictError, NotFoundError
from pyop.controller import (
    AlreadyOwnedError,
    EventBroadcaster,
    OperationResult,
    OwnerReferenceError,
    add_finalizer,
    contains_finalizer,
    create_or_patch,
    create_or_update,
    find_status_condition,
    get_controller_of,
    is_controlled_by,
    is_status_condition_false,
    is_status_condition_true,
    merge_patch_between,
    remove_finalizer,
    remove_owner_reference,
    remove_status_condition,
    set_controller_reference,
    set_owner_reference,
    set_status_condition,
)
from pyop.testing import TestAPIServer

FINALIZER = "ctrl.pyop.dev/cleanup"


@pytest_asyncio.fixture
async def client(server: TestAPIServer) -> AsyncIterator[Client]:
    async with Client(server.client_config()) as client:
        yield client


def stored_widget(name: str = "owner", namespace: str | None = "default") -> Widget:
    w = widget(name, namespace or "")
    w.metadata.namespace = namespace
    w.metadata.uid = f"uid-{name}"
    return w


# finalizers


@pytest.mark.parametrize("make", [lambda: widget("w"), lambda: {"metadata": {"name": "w"}}], ids=["model", "dict"])
def test_finalizers_are_added_once_and_removed_entirely(make: Any) -> None:
    obj = make()
    assert not contains_finalizer(obj, FINALIZER)
    assert add_finalizer(obj, FINALIZER) is True
    assert add_finalizer(obj, FINALIZER) is False  # already there: nothing to write
    assert add_finalizer(obj, "other") is True
    assert contains_finalizer(obj, FINALIZER)
    assert remove_finalizer(obj, FINALIZER) is True
    assert remove_finalizer(obj, FINALIZER) is False
    assert not contains_finalizer(obj, FINALIZER) and contains_finalizer(obj, "other")


async def test_finalizer_holds_deletion_until_removed(client: Client) -> None:
    created = await client.create(widget("guarded"))
    assert add_finalizer(created, FINALIZER)
    updated = await client.update(created)
    await client.delete(Widget, "guarded", "default")
    terminating = await client.get(Widget, "guarded", "default")
    assert terminating.metadata.deletion_timestamp is not None
    assert remove_finalizer(terminating, FINALIZER)
    await client.update(terminating)
    with pytest.raises(NotFoundError):
        await client.get(Widget, "guarded", "default")
    assert updated.metadata.finalizers == [FINALIZER]


# owner references


def test_controller_reference_is_set_once_and_refreshed_in_place() -> None:
    owner, child = stored_widget(), ConfigMap(metadata=ObjectMeta(name="cm", namespace="default"))
    set_controller_reference(owner, child)
    set_controller_reference(owner, child)  # same owner again: updated, not duplicated
    references = child.metadata.owner_references or []
    assert len(references) == 1
    assert references[0].model_dump(by_alias=True) == {
        "apiVersion": "ctrl.pyop.dev/v1",
        "kind": "Widget",
        "name": "owner",
        "uid": "uid-owner",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert is_controlled_by(child, owner)


def test_a_second_controller_is_refused() -> None:
    child: dict[str, Any] = {"metadata": {"name": "cm", "namespace": "default"}}
    set_controller_reference(stored_widget("first"), child)
    with pytest.raises(AlreadyOwnedError, match="already owned by another Widget controller first"):
        set_controller_reference(stored_widget("second"), child)
    assert get_controller_of(child) == child["metadata"]["ownerReferences"][0]
    # Plain owner references may be many, and adding one keeps the controller as it is.
    set_owner_reference(stored_widget("second"), child)
    set_owner_reference(stored_widget("first"), child)
    names = [(r["name"], r.get("controller", False)) for r in child["metadata"]["ownerReferences"]]
    assert names == [("first", True), ("second", False)]
    assert remove_owner_reference(stored_widget("second"), child) is True
    assert remove_owner_reference(stored_widget("second"), child) is False


def test_owner_scope_rules() -> None:
    with pytest.raises(OwnerReferenceError, match="cross-namespace"):
        set_controller_reference(stored_widget(), {"metadata": {"name": "x", "namespace": "elsewhere"}})
    with pytest.raises(OwnerReferenceError, match="cluster-scoped resource must not have a namespace-scoped owner"):
        set_owner_reference(stored_widget(), {"metadata": {"name": "x"}})
    cluster_owner = stored_widget("cluster", namespace=None)
    child: dict[str, Any] = {"metadata": {"name": "x", "namespace": "anywhere"}}
    set_controller_reference(cluster_owner, child)  # a cluster-scoped owner may own namespaced objects
    with pytest.raises(OwnerReferenceError, match="uid"):
        set_controller_reference(widget("never-stored"), child)


async def test_owned_objects_are_garbage_collected_with_their_owner(client: Client, server: TestAPIServer) -> None:
    owner = await client.create(widget("parent"))
    child = ConfigMap(metadata=ObjectMeta(name="child", namespace="default"), data={"a": "b"})
    set_controller_reference(owner, child)
    await client.create(child)
    await client.delete(Widget, "parent", "default")
    for _ in range(200):
        try:
            await client.get(ConfigMap, "child", "default")
        except NotFoundError:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the owned ConfigMap outlived its owner")


# conditions

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_conditions_keep_transition_time_unless_status_changes() -> None:
    conditions: list[Condition] = []
    now = [T0]

    def clock() -> datetime:
        return now[0]

    assert set_status_condition(conditions, type="Ready", status="False", reason="Creating", clock=clock)
    assert conditions[0].last_transition_time == T0
    assert conditions[0].to_dict()["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    now[0] = T0 + timedelta(minutes=5)
    # Same status, new reason and generation: updated, but the transition time stays.
    assert set_status_condition(
        conditions, type="Ready", status=False, reason="Waiting", message="m", observed_generation=2, clock=clock
    )
    assert conditions[0].reason == "Waiting" and conditions[0].observed_generation == 2
    assert conditions[0].last_transition_time == T0
    # Nothing new: no change reported, so the reconciler writes nothing.
    assert not set_status_condition(
        conditions, type="Ready", status="False", reason="Waiting", message="m", observed_generation=2, clock=clock
    )
    now[0] = T0 + timedelta(minutes=9)
    assert set_status_condition(
        conditions, type="Ready", status=True, reason="Done", observed_generation=2, clock=clock
    )
    assert conditions[0].last_transition_time == T0 + timedelta(minutes=9)
    assert is_status_condition_true(conditions, "Ready") and not is_status_condition_false(conditions, "Ready")
    assert set_status_condition(conditions, type="Degraded", status="Unknown", reason="Checking", clock=clock)
    assert [c.type for c in conditions] == ["Ready", "Degraded"]
    assert remove_status_condition(conditions, "Ready") and not remove_status_condition(conditions, "Ready")
    assert find_status_condition(conditions, "Ready") is None
    with pytest.raises(ValueError, match="True, False or Unknown"):
        set_status_condition(conditions, type="X", status="yes", reason="R")  # type: ignore[arg-type]


async def test_status_update_with_stale_cache_conflicts(client: Client) -> None:
    created = await client.create(widget("w"))
    stale = created.model_copy(deep=True)
    await client.patch(Widget, "w", {"spec": {"size": 9}}, "default")
    stale.status = WidgetStatus()
    set_status_condition(stale.status.conditions, type="Ready", status=True, reason="R")
    with pytest.raises(ConflictError):
        await client.update_status(stale)


# create or update / patch


async def test_create_or_update(client: Client) -> None:
    owner = await client.create(widget("owner"))

    def desired(size: str) -> Any:
        def mutate(config_map: ConfigMap) -> None:
            config_map.data = {"size": size}
            set_controller_reference(owner, config_map)

        return mutate

    def blank() -> ConfigMap:
        return ConfigMap(metadata=ObjectMeta(name="owned", namespace="default"))

    created, result = await create_or_update(client, blank(), desired("1"))
    assert result is OperationResult.CREATED and created.data == {"size": "1"}
    same, result = await create_or_update(client, blank(), desired("1"))
    assert result is OperationResult.UNCHANGED
    assert same.metadata.resource_version == created.metadata.resource_version
    updated, result = await create_or_update(client, blank(), desired("2"))
    assert result is OperationResult.UPDATED and updated.data == {"size": "2"}
    assert (await client.get(ConfigMap, "owned", "default")).data == {"size": "2"}

    async def rename(config_map: ConfigMap) -> None:
        config_map.metadata.name = "other"

    with pytest.raises(ValueError, match="must not change"):
        await create_or_update(client, blank(), rename)


async def test_create_or_patch_patches_object_and_status_separately(client: Client, server: TestAPIServer) -> None:
    def blank() -> Widget:
        return widget("patched")

    def set_size(size: int, ready: bool | None = None) -> Any:
        def mutate(w: Widget) -> None:
            w.spec.size = size
            if ready is not None:
                w.status = w.status or WidgetStatus()
                set_status_condition(w.status.conditions, type="Ready", status=ready, reason="R")

        return mutate

    _, result = await create_or_patch(client, blank(), set_size(1))
    assert result is OperationResult.CREATED
    server.reset_requests()
    _, result = await create_or_patch(client, blank(), set_size(1))
    assert result is OperationResult.UNCHANGED
    assert [r.verb for r in server.requests] == ["get"]
    _, result = await create_or_patch(client, blank(), set_size(1, ready=True))
    assert result is OperationResult.UPDATED_STATUS_ONLY
    both, result = await create_or_patch(client, blank(), set_size(3, ready=False))
    assert result is OperationResult.UPDATED_STATUS
    assert (
        both.spec.size == 3 and both.status is not None and is_status_condition_false(both.status.conditions, "Ready")
    )
    _, result = await create_or_patch(client, blank(), set_size(4))
    assert result is OperationResult.UPDATED
    patches = [r for r in server.requests if r.verb == "patch"]
    assert [r.subresource for r in patches] == ["status", "", "status", ""]


def test_merge_patch_between() -> None:
    before = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2], "gone": True}
    after = {"a": 1, "b": {"c": 2, "d": 4, "new": 5}, "e": [1]}
    assert merge_patch_between(before, after) == {"gone": None, "b": {"d": 4, "new": 5}, "e": [1]}
    assert merge_patch_between(after, after) == {}


# events


async def test_event_recorder_writes_and_folds_repeats(client: Client, server: TestAPIServer) -> None:
    now = [T0]
    broadcaster = EventBroadcaster(client.dynamic, clock=lambda: now[0], host="node-1")
    recorder = broadcaster.recorder("widget-controller")
    target = await client.create(widget("noisy"))
    recorder.normal(target, "Created", "created ConfigMap noisy")  # recorded before start: buffered
    broadcaster.start()
    assert await broadcaster.flush(10)
    now[0] = T0 + timedelta(seconds=30)
    recorder.normal(target, "Created", "created ConfigMap noisy")
    recorder.warning(target, "Failed", "x" * 5000)
    assert await broadcaster.flush(10)
    await broadcaster.stop()
    events = (await client.dynamic.list(await client.dynamic.resource("v1", "Event"), "default")).items
    by_reason = {event["reason"]: event for event in events}
    assert set(by_reason) == {"Created", "Failed"}
    created = by_reason["Created"]
    assert created["count"] == 2 and created["type"] == "Normal"
    assert created["firstTimestamp"] == "2026-01-01T00:00:00Z" and created["lastTimestamp"] == "2026-01-01T00:00:30Z"
    assert created["involvedObject"] == {
        "apiVersion": "ctrl.pyop.dev/v1",
        "kind": "Widget",
        "name": "noisy",
        "namespace": "default",
        "uid": target.metadata.uid,
        "resourceVersion": target.metadata.resource_version,
    }
    assert created["source"] == {"component": "widget-controller", "host": "node-1"}
    assert len(by_reason["Failed"]["message"].encode()) == 1024 and by_reason["Failed"]["type"] == "Warning"
    with pytest.raises(ValueError, match="Normal or Warning"):
        recorder.event(target, "Info", "R", "m")  # type: ignore[arg-type]


async def test_event_recorder_never_raises_and_drops_beyond_its_buffer(server: TestAPIServer) -> None:
    async with Client(server.client_config(token="wrong-token")) as unauthorised:
        broadcaster = EventBroadcaster(unauthorised.dynamic, max_queued=3)
        recorder = broadcaster.recorder("c")
        for index in range(5):
            recorder.normal({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}"}}, "R", "m")
        assert broadcaster.dropped == 2
        broadcaster.start()
        assert await broadcaster.flush(10)  # the 401s were logged, not raised
        assert broadcaster.written == 0
        await broadcaster.stop()
