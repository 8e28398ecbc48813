"""Watches through a manager against the test API server: the primary kind, owned objects reaching their owner,
map functions, and predicates filtering events.

"No reconcile happened" is proven without waiting for a timeout: with one worker and one informer the queue is
FIFO, so once a later sentinel request has been reconciled, any request an earlier event would have queued has
been reconciled too.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctrl_helpers import ConfigMap, Gadget, Widget, eventually, manager_for, widget

from pyop.api import ObjectMeta, OwnerReference
from pyop.client import Client
from pyop.controller import (
    GenerationChanged,
    LabelsChanged,
    Request,
    Result,
    object_predicate,
    set_controller_reference,
    set_owner_reference,
)
from pyop.testing import TestAPIServer


class Seen:
    """A reconciler that only records requests."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    async def reconcile(self, request: Request) -> Result:
        self.requests.append(request)
        return Result()

    def count(self, name: str, namespace: str | None = "default") -> int:
        return self.requests.count(Request(namespace, name))


async def reconciled(seen: Seen, name: str, times: int = 1, namespace: str | None = "default") -> None:
    await eventually(lambda: seen.count(name, namespace) >= times, message=f"waiting for {name} x{times}")


async def sentinel(client: Client, seen: Seen, name: str) -> None:
    """Create a Widget and wait for its reconcile: every event before it has been handled by then."""
    await client.create(widget(name))
    await reconciled(seen, name)


def config_map(name: str, owner: Widget | Gadget | None = None, *, controller: bool = True) -> ConfigMap:
    obj = ConfigMap(metadata=ObjectMeta(name=name, namespace="default"), data={"k": "v"})
    if owner is not None:
        (set_controller_reference if controller else set_owner_reference)(owner, obj)
    return obj


async def test_owned_objects_wake_their_controlling_owner(server: TestAPIServer) -> None:
    manager = manager_for(server)
    seen = Seen()
    manager.controller_for(Widget).owns(ConfigMap).complete(seen)
    async with manager:
        client = manager.client
        owner = await client.create(widget("owner"))
        other_kind = await client.create(Gadget(metadata=ObjectMeta(name="owner", namespace="default")))
        await reconciled(seen, "owner", 1)

        owned = await client.create(config_map("owned", owner))
        await reconciled(seen, "owner", 2)
        owned.data = {"k": "changed"}
        await client.update(owned)
        await reconciled(seen, "owner", 3)
        await client.delete(ConfigMap, "owned", "default")
        await reconciled(seen, "owner", 4)

        # Not the controller, or a controller of another kind with the same name: no reconcile of "owner".
        await client.create(config_map("merely-owned", owner, controller=False))
        await client.create(config_map("gadget-owned", other_kind))
        await sentinel(client, seen, "sentinel")
        assert seen.count("owner") == 4
        assert Request("default", "owned") not in seen.requests  # owned objects are never requests themselves


async def test_owns_with_only_controller_false_counts_every_owner_reference(server: TestAPIServer) -> None:
    manager = manager_for(server)
    seen = Seen()
    manager.controller_for(Widget).owns(ConfigMap, only_controller=False).complete(seen)
    async with manager:
        owner = await manager.client.create(widget("owner"))
        await reconciled(seen, "owner", 1)
        await manager.client.create(config_map("shared", owner, controller=False))
        await reconciled(seen, "owner", 2)


async def test_an_update_that_moves_an_object_to_another_owner_wakes_both(server: TestAPIServer) -> None:
    manager = manager_for(server)
    seen = Seen()
    manager.controller_for(Widget).owns(ConfigMap).complete(seen)
    async with manager:
        client = manager.client
        first = await client.create(widget("first"))
        second = await client.create(widget("second"))
        owned = await client.create(config_map("moving", first))
        await reconciled(seen, "first", 2)
        await reconciled(seen, "second", 1)
        owned.metadata.owner_references = [
            OwnerReference(api_version="ctrl.pyop.dev/v1", kind="Widget", name="second", uid=second.metadata.uid or "",
                           controller=True)
        ]  # fmt: skip
        await client.update(owned)
        await reconciled(seen, "first", 3)
        await reconciled(seen, "second", 2)


async def test_watches_with_a_map_function(server: TestAPIServer) -> None:
    def widgets_named_in(config: dict[str, Any]) -> list[Request]:
        names = ((config.get("data") or {}).get("widgets") or "").split(",")
        return [Request("default", name) for name in names if name]

    manager = manager_for(server)
    seen = Seen()
    manager.controller_for(Widget).watches(ConfigMap, widgets_named_in).complete(seen)
    async with manager:
        client = manager.client
        await client.create(
            ConfigMap(metadata=ObjectMeta(name="routing", namespace="default"), data={"widgets": "x,y"})
        )
        await reconciled(seen, "x")
        await reconciled(seen, "y")
        # An update maps both the old and the new state: y leaves the list, z joins; all three look again.
        await client.patch(ConfigMap, "routing", {"data": {"widgets": "x,z"}}, "default")
        await reconciled(seen, "x", 2)
        await reconciled(seen, "y", 2)
        await reconciled(seen, "z", 1)


async def test_generation_changed_skips_status_and_metadata_only_updates(server: TestAPIServer) -> None:
    manager = manager_for(server)
    seen = Seen()
    manager.controller_for(Widget, predicates=[GenerationChanged()]).complete(seen)
    async with manager:
        client = manager.client
        await client.create(widget("w"))
        await reconciled(seen, "w", 1)  # creations pass
        await client.patch_status(Widget, "w", {"status": {"conditions": []}}, "default")
        await client.patch(Widget, "w", {"metadata": {"labels": {"tier": "gold"}}}, "default")
        await sentinel(client, seen, "sentinel-1")
        assert seen.count("w") == 1
        await client.patch(Widget, "w", {"spec": {"size": 5}}, "default")  # generation 1 -> 2
        await reconciled(seen, "w", 2)
        await client.delete(Widget, "w", "default")  # deletions pass
        await reconciled(seen, "w", 3)


async def test_event_filter_combinations_apply_to_every_watch(server: TestAPIServer) -> None:
    def labelled(obj: dict[str, Any]) -> bool:
        return ((obj.get("metadata") or {}).get("labels") or {}).get("team") == "a"

    manager = manager_for(server)
    seen = Seen()
    (
        manager.controller_for(Widget, predicates=[GenerationChanged() | LabelsChanged()])
        .with_event_filter(object_predicate(labelled))
        .complete(seen)
    )
    async with manager:
        client = manager.client
        await client.create(widget("theirs", labels={"team": "b"}))
        await client.create(widget("ours", labels={"team": "a"}))
        await reconciled(seen, "ours", 1)
        await client.patch(Widget, "ours", {"metadata": {"labels": {"team": "a", "x": "1"}}}, "default")
        await reconciled(seen, "ours", 2)  # labels changed: passes the OR
        await client.patch(Widget, "ours", {"metadata": {"annotations": {"note": "n"}}}, "default")
        await client.patch(Widget, "theirs", {"spec": {"size": 2}}, "default")
        await client.create(widget("sentinel", labels={"team": "a"}))
        await reconciled(seen, "sentinel")
        assert seen.count("ours") == 2 and seen.count("theirs") == 0


async def test_builder_rejects_duplicate_names_and_unknown_builtins(server: TestAPIServer) -> None:
    manager = manager_for(server)
    manager.controller_for(Widget).complete(Seen())
    with pytest.raises(ValueError, match="already exists"):
        manager.controller_for(Widget).complete(Seen())
    named = manager.controller_for(Widget).named("widget-audit").complete(Seen())
    assert named.name == "widget-audit"
    with pytest.raises(ValueError, match="unknown built-in kind"):
        manager.controller_for(Widget).owns("v1/Nope")
    builder = manager.controller_for(Widget).named("third")
    builder.complete(Seen())
    with pytest.raises(RuntimeError, match="already built"):
        builder.complete(Seen())


async def test_builtin_kinds_by_key_and_cluster_scoped_owners(server: TestAPIServer) -> None:
    """A controller may own built-in kinds named by key, with no model class."""
    manager = manager_for(server)
    seen = Seen()
    manager.controller_for(Widget).owns("v1/ConfigMap").complete(seen)
    async with manager:
        owner = await manager.client.create(widget("keyed"))
        await reconciled(seen, "keyed")
        body: dict[str, Any] = {"metadata": {"name": "raw", "namespace": "default"}, "data": {}}
        set_controller_reference(owner, body)
        await manager.client.dynamic.create(await manager.client.dynamic.resource("v1", "ConfigMap"), body)
        await reconciled(seen, "keyed", 2)
