"""Every verb of the typed and dynamic clients against the test API server."""

from __future__ import annotations

import asyncio

import pytest
from client_helpers import GROUP, WIDGET_CRD, Widget, widget

from pyop.client import (
    APIResource,
    Client,
    ConflictError,
    EventType,
    NoKindMatchError,
    NotFoundError,
    PatchType,
    Preconditions,
)
from pyop.client.resources import BUILTIN
from pyop.testing import TestAPIServer

WIDGETS = APIResource(GROUP, "v1", "Widget", "widgets", True)
CONFIGMAPS = BUILTIN["v1/ConfigMap"]


async def test_create_get_update_roundtrip_typed(client: Client) -> None:
    created = await client.create(widget("w1", replicas=2, color="red"))
    assert created.metadata.uid and created.metadata.resource_version
    assert created.spec.replicas == 2

    fetched = await client.get(Widget, "w1", "default")
    assert fetched.metadata.uid == created.metadata.uid
    fetched.spec.color = "blue"
    updated = await client.update(fetched)
    assert updated.spec.color == "blue"
    assert int(updated.metadata.resource_version or 0) > int(created.metadata.resource_version or 0)
    assert updated.metadata.generation == 2  # a spec change bumps the generation


async def test_update_with_stale_resource_version_conflicts(client: Client) -> None:
    first = await client.create(widget("w1", replicas=1))
    second = first.model_copy(deep=True)
    first.spec.replicas = 3
    await client.update(first)
    second.spec.replicas = 4
    with pytest.raises(ConflictError) as caught:
        await client.update(second)
    assert caught.value.code == 409
    assert (await client.get(Widget, "w1", "default")).spec.replicas == 3


async def test_patch_merge_json_and_strategic(client: Client) -> None:
    await client.create(widget("w1", replicas=1, color="red", tags=["a"]))
    merged = await client.patch(Widget, "w1", {"spec": {"color": None, "replicas": 5}}, "default")
    assert merged.spec.replicas == 5 and merged.spec.color is None

    patched = await client.patch(
        Widget,
        "w1",
        [{"op": "add", "path": "/spec/tags/-", "value": "b"}, {"op": "replace", "path": "/spec/replicas", "value": 6}],
        "default",
        patch_type=PatchType.JSON,
    )
    assert patched.spec.tags == ["a", "b"] and patched.spec.replicas == 6

    # Strategic merge patch is for built-in kinds: a ConfigMap through the dynamic client.
    await client.dynamic.create(CONFIGMAPS, {"metadata": {"name": "cm", "namespace": "default"}, "data": {"a": "1"}})
    cm = await client.dynamic.patch(CONFIGMAPS, "cm", {"data": {"b": "2"}}, "default", patch_type=PatchType.STRATEGIC)
    assert cm["data"] == {"a": "1", "b": "2"}


async def test_server_side_apply_field_manager_and_force(client: Client, server: TestAPIServer) -> None:
    applied = await client.apply(widget("w1", replicas=1, color="red"), field_manager="alice")
    assert applied.spec.color == "red" and applied.metadata.uid
    managers = {entry["manager"]: entry for entry in applied.metadata.model_extra["managedFields"]}  # type: ignore[index]
    assert managers["alice"]["operation"] == "Apply"

    server.reset_requests()
    forced = await client.apply(widget("w1", color="green"), field_manager="bob", force=True)
    assert forced.spec.color == "green"
    assert forced.spec.replicas == 1  # alice's field stays: apply merges, it does not replace
    (record,) = [r for r in server.requests if r.method == "PATCH"]
    assert "fieldManager=bob" in record.query and "force=true" in record.query
    # (The test server records managed fields but does not model apply conflicts, so the 409 a real server
    # gives bob without force is checked only as error mapping, in test_errors.py.)


async def test_apply_sends_only_fields_the_caller_set(client: Client) -> None:
    await client.apply(widget("w1", replicas=4), field_manager="alice")
    # bob applies only a color: he must not claim replicas (unset on his object) and so must not conflict.
    result = await client.apply(widget("w1", color="blue"), field_manager="bob")
    assert result.spec.replicas == 4 and result.spec.color == "blue"


async def test_delete_with_preconditions_and_propagation(client: Client) -> None:
    created = await client.create(widget("w1"))
    with pytest.raises(ConflictError):
        await client.delete(Widget, "w1", "default", preconditions=Preconditions(uid="not-the-uid"))
    assert await client.get(Widget, "w1", "default")

    await client.delete(
        Widget,
        "w1",
        "default",
        propagation_policy="Background",
        preconditions=Preconditions(uid=created.metadata.uid, resource_version=created.metadata.resource_version),
    )
    with pytest.raises(NotFoundError):
        await client.get(Widget, "w1", "default")


async def test_delete_with_finalizer_returns_the_terminating_object(client: Client) -> None:
    obj = widget("w1")
    obj.metadata.finalizers = ["example.pyop.dev/cleanup"]
    await client.create(obj)
    terminating = await client.delete(Widget, "w1", "default", propagation_policy="Foreground")
    assert terminating is not None and terminating.metadata.deletion_timestamp
    await client.patch(Widget, "w1", {"metadata": {"finalizers": None}}, "default")
    with pytest.raises(NotFoundError):
        await client.get(Widget, "w1", "default")


async def test_status_subresource(client: Client) -> None:
    created = await client.create(widget("w1", replicas=1))
    created.status = None
    created.spec.replicas = 9  # ignored by a status write
    from client_helpers import WidgetStatus

    created.status = WidgetStatus(phase="Ready", replicas=1)
    after = await client.update_status(created)
    assert after.status is not None and after.status.phase == "Ready"
    assert after.spec.replicas == 1

    patched = await client.patch_status(Widget, "w1", {"status": {"phase": "Degraded"}}, "default")
    assert patched.status is not None and patched.status.phase == "Degraded"
    got = await client.get_status(Widget, "w1", "default")
    assert got.status is not None and got.status.phase == "Degraded"

    # A spec update does not touch status.
    got.spec.color = "x"
    got.status.phase = "Ignored"
    updated = await client.update(got)
    assert updated.status is not None and updated.status.phase == "Degraded"

    applied = await client.apply_status(
        Widget.model_validate({"metadata": {"name": "w1", "namespace": "default"}, "status": {"phase": "Applied"}}),
        field_manager="status-writer",
        force=True,  # status.phase belongs to the status writes above (an Update manager): without force, a 409
    )
    assert applied.status is not None and applied.status.phase == "Applied"


async def test_scale_subresource(client: Client) -> None:
    await client.create(widget("w1", replicas=2))
    scale = await client.get_scale(Widget, "w1", "default")
    assert scale.spec.replicas == 2
    scale = await client.update_scale(Widget, "w1", 5, "default")
    assert scale.spec.replicas == 5
    scale = await client.patch_scale(Widget, "w1", 7, "default")
    assert scale.spec.replicas == 7
    assert (await client.get(Widget, "w1", "default")).spec.replicas == 7


async def test_pagination_continue_and_iterators(client: Client) -> None:
    for i in range(7):
        await client.create(widget(f"w{i}"))
    first = await client.list(Widget, "default", limit=3)
    assert len(first.items) == 3 and first.continue_token
    second = await client.list(Widget, "default", limit=3, continue_token=first.continue_token)
    third = await client.list(Widget, "default", limit=3, continue_token=second.continue_token)
    names = [w.metadata.name for page in (first, second, third) for w in page.items]
    assert sorted(names) == [f"w{i}" for i in range(7)] and third.continue_token is None

    every = await client.list_all(Widget, "default", limit=2)
    assert sorted(w.metadata.name or "" for w in every.items) == sorted(names)
    assert every.resource_version

    seen = [w.metadata.name async for w in client.iterate(Widget, "default", limit=2)]
    assert sorted(n or "" for n in seen) == sorted(names)


async def test_list_all_falls_back_to_full_list_when_continue_expires(client: Client, server: TestAPIServer) -> None:
    for i in range(5):
        await client.create(widget(f"w{i}"))
    pages = client.dynamic.iter_pages(WIDGETS, "default", limit=2)
    await anext(pages)
    server.faults.compact()
    from pyop.client import GoneError

    with pytest.raises(GoneError):
        await anext(pages)

    # list_all recovers by listing once more without pages.
    real_list = client.dynamic.list
    calls: list[str | None] = []

    async def list_then_compact(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(kwargs.get("continue_token"))
        page = await real_list(*args, **kwargs)
        if len(calls) == 1:
            server.faults.compact()
        return page

    client.dynamic.list = list_then_compact  # type: ignore[method-assign]
    result = await client.list_all(Widget, "default", limit=2)
    assert sorted(w.metadata.name or "" for w in result.items) == [f"w{i}" for i in range(5)]
    assert calls[0] is None and calls[1] is not None and calls[-1] is None


async def test_label_and_field_selectors(client: Client) -> None:
    await client.create(widget("a", labels={"app": "web", "tier": "front"}))
    await client.create(widget("b", labels={"app": "web", "tier": "back"}))
    await client.create(widget("c", labels={"app": "db"}))

    async def names(**kwargs: object) -> list[str]:
        page = await client.list(Widget, "default", **kwargs)  # type: ignore[arg-type]
        return sorted(w.metadata.name or "" for w in page.items)

    assert await names(label_selector={"app": "web"}) == ["a", "b"]
    assert await names(label_selector="app=web,tier!=front") == ["b"]
    assert await names(label_selector="tier in (front,back)") == ["a", "b"]
    assert await names(label_selector="!tier") == ["c"]
    assert await names(field_selector="metadata.name=c") == ["c"]
    assert await names(field_selector={"metadata.name": "a"}, label_selector="app=web") == ["a"]


async def test_watch_yields_typed_events(client: Client) -> None:
    start = await client.list(Widget, "default")
    events: list[tuple[EventType, str | None]] = []

    async def consume() -> None:
        async for event in client.watch(Widget, "default", resource_version=start.resource_version, timeout_seconds=30):
            if event.type is EventType.BOOKMARK:
                assert event.object is None and event.resource_version
                continue
            assert event.object is not None
            events.append((event.type, event.object.spec.color))
            if event.type is EventType.DELETED:
                return

    task = asyncio.create_task(consume())
    await client.create(widget("w1", color="red"))
    await client.patch(Widget, "w1", {"spec": {"color": "blue"}}, "default")
    await client.delete(Widget, "w1", "default")
    await asyncio.wait_for(task, 10)
    assert events == [(EventType.ADDED, "red"), (EventType.MODIFIED, "blue"), (EventType.DELETED, "blue")]


async def test_dynamic_client_maps_kinds_through_discovery(client: Client, server: TestAPIServer) -> None:
    dynamic = client.dynamic
    resource = await dynamic.resource(f"{GROUP}/v1", "Widget")
    assert resource == WIDGETS
    fetches = dynamic.mapper.fetch_count
    assert await dynamic.resource(f"{GROUP}/v1", "Widget") == WIDGETS
    assert dynamic.mapper.fetch_count == fetches  # cached

    # A kind added to the same group-version later is found by refreshing on the miss.
    gadget_crd = {
        **WIDGET_CRD,
        "metadata": {"name": f"gadgets.{GROUP}"},
        "spec": {
            **WIDGET_CRD["spec"],
            "scope": "Cluster",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
        },
    }
    server.add_crd(gadget_crd)
    gadget = await dynamic.resource(f"{GROUP}/v1", "Gadget")
    assert gadget.plural == "gadgets" and not gadget.namespaced

    created = await dynamic.create(gadget, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"}})
    assert "namespace" not in created["metadata"]
    assert (await dynamic.get(gadget, "g"))["metadata"]["uid"] == created["metadata"]["uid"]
    assert [item["metadata"]["name"] for item in (await dynamic.list(gadget)).items] == ["g"]

    with pytest.raises(NoKindMatchError):
        await dynamic.resource(f"{GROUP}/v1", "Nothing")
    with pytest.raises(NoKindMatchError):
        await dynamic.resource("nowhere.example/v9", "Nothing")


async def test_dynamic_object_roundtrip_by_apiversion_and_kind(client: Client) -> None:
    manifest = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "dyn", "namespace": "default", "labels": {"x": "y"}},
        "spec": {"replicas": 1},
    }
    resource = await client.dynamic.resource_for_object(manifest)
    await client.dynamic.create(resource, manifest)
    listed = await client.dynamic.list(resource, "default", label_selector="x=y")
    assert [item["kind"] for item in listed.items] == ["Widget"]  # list items carry their type
    await client.dynamic.delete_collection(resource, "default", label_selector="x=y")
    assert (await client.dynamic.list(resource, "default")).items == []


async def test_namespaced_resource_requires_a_namespace(client: Client) -> None:
    with pytest.raises(ValueError):
        await client.create(widget("w1", namespace=""))
    with pytest.raises(ValueError):
        await client.get(Widget, "w1")


async def test_pyop_api_resource_models_work_with_the_typed_client(client: Client) -> None:
    from pyop.api import GroupVersion, KubeModel, ObjectMeta, Resource

    class GadgetSpec(KubeModel):
        replicas: int | None = None
        color: str | None = None

    class Gadget(Resource, group_version=GroupVersion(GROUP, "v1"), kind="Widget", plural="widgets"):
        spec: GadgetSpec = GadgetSpec()

    created = await client.create(
        Gadget(metadata=ObjectMeta(name="g1", namespace="default"), spec=GadgetSpec(replicas=3))
    )
    assert created.api_version == f"{GROUP}/v1" and created.kind == "Widget"
    assert created.metadata.uid and created.spec.replicas == 3
    page = await client.list(Gadget, "default")
    assert [g.metadata.name for g in page.items] == ["g1"]
    applied = await client.apply(
        Gadget(metadata=ObjectMeta(name="g1", namespace="default"), spec=GadgetSpec(color="teal")), field_manager="m"
    )
    assert (applied.spec.replicas, applied.spec.color) == (3, "teal")
