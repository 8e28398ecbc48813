"""Namespace restriction, the shared factory, listers, indexers, handler registration, resync and work-queue keys."""

from __future__ import annotations

from typing import Any, ClassVar

from informer_helpers import GROUP, WIDGETS, Recorder, body, converged, eventually, fast_backoff, make_informer, rv
from pydantic import BaseModel, ConfigDict, Field

from pyop.api import GroupVersion, Resource
from pyop.client import DynamicClient
from pyop.informers import (
    Backoff,
    DeletedFinalStateUnknown,
    Indexer,
    ObjectKey,
    SharedInformerFactory,
    StringInterner,
    enqueue_keys,
    filtered,
)
from pyop.testing import TestAPIServer


class Widget(Resource, group_version=GroupVersion(GROUP, "v1")):
    """A model declared the way generated pyop API modules declare it."""

    spec: dict[str, Any] = Field(default_factory=dict)


class PlainWidget(BaseModel):
    """A model declaring its resource with class variables."""

    model_config = ConfigDict(extra="allow")
    __group__: ClassVar[str] = GROUP
    __version__: ClassVar[str] = "v1"
    __kind__: ClassVar[str] = "Widget"
    __plural__: ClassVar[str] = "widgets"
    metadata: dict[str, Any]


async def test_namespace_restricted_informer_sees_and_relists_only_its_namespaces(
    dynamic: DynamicClient, server: TestAPIServer
) -> None:
    for namespace in ("team-a", "team-b", "team-c"):
        await dynamic.create(WIDGETS, body("w", namespace))
    recorder = Recorder()
    informer = make_informer(dynamic, namespaces=["team-a", "team-b"])
    informer.add_event_handler(recorder)
    server.reset_requests()
    async with informer:
        assert await informer.wait_for_sync(10)
        assert sorted(informer.store.list_keys()) == ["team-a/w", "team-b/w"]
        assert all("/namespaces/team-" in r.path for r in server.requests if r.resource == "widgets")

        await dynamic.create(WIDGETS, body("x", "team-c"))
        await dynamic.create(WIDGETS, body("x", "team-b"))
        # A 410 relist of one namespace must not delete the other namespace's objects.
        server.faults.compact()
        server.faults.close_watches("widgets")
        await dynamic.delete(WIDGETS, "w", "team-a")
        await converged(informer, recorder, dynamic, namespaces=("team-a", "team-b"))
        assert "team-c/x" not in informer.store


async def test_factory_shares_informers_and_listers_return_models(client_and_server: Any) -> None:
    client, server = client_and_server
    await client.dynamic.create(WIDGETS, body("a", "team-a", labels={"app": "web"}, size=1))
    await client.dynamic.create(WIDGETS, body("b", "team-a", labels={"app": "db"}))
    await client.dynamic.create(WIDGETS, body("c", "team-b", labels={"app": "web"}))

    factory = SharedInformerFactory(client, stall_timeout=2.0, backoff=fast_backoff)
    first = factory.informer(Widget)
    assert factory.informer(PlainWidget) is first  # same resource, same informer
    assert factory.informer(Widget, label_selector="app=web") is not first
    widgets = factory.lister(Widget)
    server.reset_requests()
    async with factory:
        synced = await factory.wait_for_cache_sync(10)
        assert synced == {WIDGETS: True}
        await eventually(lambda: server.count_requests(verb="watch", resource="widgets") == 2)
        # One list and one watch per distinct informer, however many callers asked for it.
        assert server.count_requests(verb="list", resource="widgets") == 2

        a = widgets.get("a", "team-a")
        assert isinstance(a, Widget) and a.spec == {"size": 1}
        assert widgets.get("missing", "team-a") is None
        assert [w.metadata.name for w in widgets.list()] == ["a", "b", "c"]
        assert [w.metadata.name for w in widgets.list("team-a")] == ["a", "b"]
        assert [w.metadata.name for w in widgets.list(label_selector={"app": "web"})] == ["a", "c"]
        assert [w.metadata.name for w in widgets.namespace("team-a").list("app!=web")] == ["b"]

        # Readers get their own copies: mutating one does not touch the cache.
        a.spec["size"] = 99
        assert widgets.get("a", "team-a").spec == {"size": 1}  # type: ignore[union-attr]

        late = factory.informer(Widget, field_selector="metadata.name=b")
        assert await late.wait_for_sync(10)  # started at once because the factory runs
        assert late.store.list_keys() == ["team-a/b"]
    assert not first.started


async def test_late_handler_gets_existing_objects_and_removed_handler_gets_nothing(
    dynamic: DynamicClient,
) -> None:
    await dynamic.create(WIDGETS, body("a"))
    informer = make_informer(dynamic)
    early = Recorder()
    registration = informer.add_event_handler(early)
    async with informer:
        await informer.wait_for_sync(10)
        late = Recorder()
        informer.add_event_handler(late)
        assert late.events == [("add", "default/a")]
        informer.remove_event_handler(registration)
        await dynamic.create(WIDGETS, body("b"))
        await eventually(lambda: len(late.events) == 2)
        assert early.events == [("add", "default/a")]


async def test_resync_redelivers_cached_objects_as_updates(dynamic: DynamicClient) -> None:
    await dynamic.create(WIDGETS, body("a"))
    updates: list[tuple[str, str]] = []
    informer = make_informer(dynamic, resync_period=0.05)
    informer.add_event_handler(
        on_update=lambda old, new: updates.append(
            (old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"])
        )
    )
    async with informer:
        await eventually(lambda: len(updates) >= 2)
    assert len(set(updates)) == 1 and updates[0][0] == updates[0][1]  # same object, old is new


async def test_failing_handler_does_not_stop_the_informer(dynamic: DynamicClient) -> None:
    seen: list[str] = []

    def explode(obj: dict[str, Any]) -> None:
        raise RuntimeError("handler bug")

    informer = make_informer(dynamic)
    informer.add_event_handler(on_add=explode)
    informer.add_event_handler(on_add=lambda obj: seen.append(obj["metadata"]["name"]))
    async with informer:
        await informer.wait_for_sync(10)
        await dynamic.create(WIDGETS, body("a"))
        await dynamic.create(WIDGETS, body("b"))
        await eventually(lambda: seen == ["a", "b"])
    assert informer.handler_errors == 2


async def test_enqueue_keys_connects_an_informer_to_a_queue(dynamic: DynamicClient, server: TestAPIServer) -> None:
    await dynamic.create(WIDGETS, body("gone-while-away"))
    queue: list[ObjectKey] = []
    informer = make_informer(dynamic)
    informer.add_event_handler(enqueue_keys(queue.append))
    async with informer:
        await informer.wait_for_sync(10)
        await dynamic.create(WIDGETS, body("a", "team-a"))
        await dynamic.patch(WIDGETS, "a", {"spec": {"x": 1}}, "team-a")
        server.faults.respond(500, method="GET", path_regex="watch=true", times=None)
        server.faults.close_watches("widgets")
        await dynamic.delete(WIDGETS, "gone-while-away", "default")
        server.faults.compact()
        server.faults.clear()
        await eventually(lambda: len(queue) == 4)
    assert queue == [
        ObjectKey("default", "gone-while-away"),
        ObjectKey("team-a", "a"),
        ObjectKey("team-a", "a"),
        ObjectKey("default", "gone-while-away"),  # from the tombstone of the relist
    ]
    assert str(queue[1]) == "team-a/a" and ObjectKey.parse("team-a/a") == queue[1]


def test_filtered_handler_turns_updates_across_the_filter_into_adds_and_deletes() -> None:
    recorder = Recorder()
    handler = filtered(lambda obj: obj["spec"].get("watched", False), recorder)

    def obj(rv: str, watched: bool) -> dict[str, Any]:
        return {"metadata": {"name": "a", "namespace": "ns", "resourceVersion": rv}, "spec": {"watched": watched}}

    handler.on_add(obj("1", False))
    handler.on_update(obj("1", False), obj("2", True))
    handler.on_update(obj("2", True), obj("3", True))
    handler.on_update(obj("3", True), obj("4", False))
    handler.on_delete(DeletedFinalStateUnknown("ns/a", obj("4", False)))
    assert recorder.events == [("add", "ns/a"), ("update", "ns/a"), ("delete", "ns/a")]
    assert recorder.problems == []


def test_indexer_with_custom_index_added_after_data() -> None:
    store = Indexer()
    objects = [
        {"metadata": {"name": n, "namespace": ns, "labels": {"owner": owner}}}
        for n, ns, owner in (("a", "x", "o1"), ("b", "x", "o2"), ("c", "y", "o1"), ("node", None, "o1"))
    ]
    for o in objects:
        store.put(o)
    store.add_indexers({"owner": lambda o: [o["metadata"]["labels"]["owner"]]})
    assert store.index_keys("owner", "o1") == ["node", "x/a", "y/c"]
    assert store.index_keys("namespace", "x") == ["x/a", "x/b"]
    assert store.index_keys("namespace", "") == ["node"]

    moved = {"metadata": {"name": "a", "namespace": "x", "labels": {"owner": "o2"}}}
    assert store.put(moved) is objects[0]
    assert store.index_keys("owner", "o1") == ["node", "y/c"]
    assert store.pop("x/b") is objects[1]
    assert store.index_keys("owner", "o2") == ["x/a"]
    assert set(store.index_values("namespace")) == {"x", "y", ""}
    assert store.keys_in_namespace("x") == {"x/a"}


async def test_restarted_informer_resumes_its_watch_without_relisting(dynamic: DynamicClient) -> None:
    await dynamic.create(WIDGETS, body("a"))
    recorder = Recorder()
    informer = make_informer(dynamic)
    informer.add_event_handler(recorder)
    async with informer:
        await informer.wait_for_sync(10)
    await dynamic.create(WIDGETS, body("b"))
    await dynamic.delete(WIDGETS, "a", "default")
    async with informer:
        await converged(informer, recorder, dynamic)
    assert informer.reflectors[0].stats.lists == 1
    assert recorder.events == [("add", "default/a"), ("add", "default/b"), ("delete", "default/a")]


def test_backoff_grows_caps_jitters_and_resets() -> None:
    now = [0.0]
    backoff = Backoff(initial=1, cap=8, factor=2, jitter=0.5, reset_after=60, rng=lambda: 1.0, clock=lambda: now[0])
    assert [backoff.next() for _ in range(5)] == [1.5, 3.0, 6.0, 12.0, 12.0]
    now[0] = 100.0  # quiet for longer than reset_after
    assert backoff.next() == 1.5


def test_string_interner_shares_equal_strings_and_stays_bounded() -> None:
    interner = StringInterner(max_values=3)
    first = interner({"metadata": {"namespace": "".join(["team", "-a"])}, "items": ["x" * 3]})
    second = interner({"metadata": {"namespace": "".join(["team", "-", "a"])}, "items": ["".join(["xx", "x"])]})
    assert first == second
    assert first["metadata"]["namespace"] is second["metadata"]["namespace"]
    assert first["items"][0] is second["items"][0]
    assert next(iter(first)) is next(iter(second))  # keys too
    for i in range(10):
        interner({"v": f"value-{i}"})
    assert len(interner._values) <= 3


async def test_an_update_event_keeps_the_unchanged_parts_of_the_cached_object(dynamic: DynamicClient) -> None:
    informer = make_informer(dynamic)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with informer:
        created = await dynamic.create(WIDGETS, body("shared", size=1))
        await eventually(lambda: informer.store.get("shared", "default") is not None)
        before = informer.store.get("shared", "default")
        assert before is not None
        await dynamic.patch(WIDGETS, "shared", {"metadata": {"labels": {"new": "label"}}}, "default")
        await eventually(lambda: rv(informer.store.get("shared", "default") or created) != rv(created))
        after = informer.store.get("shared", "default")
    assert after is not None and after["metadata"]["labels"] == {"new": "label"}
    assert after["spec"] is before["spec"]
    assert recorder.events[-1] == ("update", "default/shared") and recorder.problems == []
