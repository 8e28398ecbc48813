"""The watch cache (Store) over each backend: revisions from the backend, start-up load, watch history in revision
order, compaction, conflicts between replicas, and two Store replicas over one etcd seeing each other's writes."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from apiserver_storage.backends import Opener
from pyop.api.status import ApiError
from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.client import EtcdClient
from pyop.apiserver.storage.etcd.local import LocalEtcd
from pyop.apiserver.storage.store import Store, StoredEvent


def pod(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


class Sink:
    def __init__(self) -> None:
        self.events: list[StoredEvent] = []

    def deliver(self, event: StoredEvent) -> None:
        self.events.append(event)


def update(store: Store, name: str, **spec: Any) -> int:
    current = store.get("pods", "default", name)
    assert current is not None
    new = copy.deepcopy(current)
    new["spec"] = spec
    return store.commit("pods", "MODIFIED", new, current)


def test_writes_take_the_backends_revisions_and_watch_history_replays_from_one(opener: Opener) -> None:
    store = Store(100, opener.open())
    sink = Sink()
    store.subscribe("pods", sink)
    created = store.commit("pods", "ADDED", pod("a"), None)
    updated = update(store, "a", image="v2")
    current = store.get("pods", "default", "a")
    assert current is not None and current["metadata"]["resourceVersion"] == str(updated)
    deleted = store.commit("pods", "DELETED", copy.deepcopy(current), current)
    assert created < updated < deleted == store.resource_version
    assert [(e.type, e.resource_version) for e in sink.events] == [
        ("ADDED", created),
        ("MODIFIED", updated),
        ("DELETED", deleted),
    ]
    assert [e.type for e in store.events_since("pods", created)] == ["MODIFIED", "DELETED"]
    assert store.get("pods", "default", "a") is None


def test_a_restarted_store_loads_the_backends_objects(opener: Opener) -> None:
    if opener.name == "memory":
        pytest.skip("memory storage ends with the process by design")
    store = Store(100, opener.open())
    store.commit("pods", "ADDED", pod("a"), None)
    kept = update(store, "a", n=1)
    store.commit("namespaces", "ADDED", {"metadata": {"name": "team"}}, None)
    last = store.resource_version
    store.close()
    restarted = Store(100, opener.open())
    loaded = restarted.get("pods", "default", "a")
    assert loaded is not None and loaded["spec"] == {"n": 1} and loaded["metadata"]["resourceVersion"] == str(kept)
    assert restarted.get("namespaces", "", "team") is not None
    assert restarted.resource_version >= last
    # History did not survive: a watch from before the restart is too old (410), from now it is fine.
    assert restarted.compacted_rv == restarted.resource_version
    assert update(restarted, "a", n=2) > last


def test_compaction_makes_every_handed_out_version_too_old(opener: Opener) -> None:
    store = Store(100, opener.open())
    handed_out = store.commit("pods", "ADDED", pod("a"), None)
    store.compact()
    assert store.compacted_rv > handed_out  # the registry answers a watch from below compacted_rv with 410
    assert store.history == deque_empty()
    assert update(store, "a", n=1) > store.compacted_rv


def deque_empty() -> Any:
    from collections import deque

    return deque()


def test_a_stale_replica_gets_conflicts_not_lost_updates(opener: Opener) -> None:
    if opener.name == "file":
        pytest.skip("file storage serves one process")
    backend = opener.open()
    first, second = Store(100, backend), Store(100, backend if opener.name == "memory" else opener.open())
    first.commit("pods", "ADDED", pod("a"), None)
    with pytest.raises(ApiError) as exists:
        second.commit("pods", "ADDED", pod("a"), None)  # second's cache has not seen it
    assert (exists.value.code, exists.value.reason) == (409, "AlreadyExists")
    stale = Store(100, backend if opener.name == "memory" else opener.open())  # starts from first's object
    update(first, "a", n=1)
    with pytest.raises(ApiError) as stale_write:
        update(stale, "a", n=2)
    assert (stale_write.value.code, stale_write.value.reason) == (409, "Conflict")
    assert "the object has been modified" in stale_write.value.message


def replicas(etcd: LocalEtcd, prefix: str) -> tuple[Store, Store]:
    stores = (
        Store(100, EtcdBackend(EtcdClient(etcd.url), prefix)),
        Store(100, EtcdBackend(EtcdClient(etcd.url), prefix)),
    )
    for store in stores:
        store.follow(lambda callback: None)  # applied by sync()/commit here; a server passes call_soon_threadsafe
    return stores


def test_two_replicas_over_one_etcd_see_each_others_writes_in_revision_order(etcd: LocalEtcd, etcd_prefix: str) -> None:
    a, b = replicas(etcd, etcd_prefix)
    sink = Sink()
    b.subscribe("pods", sink)
    created = a.commit("pods", "ADDED", pod("x"), None)
    assert b.sync(created)
    seen = b.get("pods", "default", "x")
    assert seen is not None and seen["metadata"]["resourceVersion"] == str(created)
    by_b = update(b, "x", writer="b")  # b's cache is current: its write is accepted
    a_write = a.commit("pods", "ADDED", pod("y"), None)  # b has not applied this one ...
    b_write = b.commit("pods", "ADDED", pod("z"), None)  # ... so its next write applies it first
    assert [(e.type, e.obj["metadata"]["name"], e.resource_version) for e in sink.events] == [
        ("ADDED", "x", created),
        ("MODIFIED", "x", by_b),
        ("ADDED", "y", a_write),
        ("ADDED", "z", b_write),
    ]
    assert [e.resource_version for e in b.history] == sorted(e.resource_version for e in b.history)
    assert a.sync(b_write)
    assert {obj["metadata"]["name"] for obj in a.objects("pods")} == {"x", "y", "z"}
    gone = a.get("pods", "default", "x")
    assert gone is not None and gone["spec"] == {"writer": "b"}
    deleted = a.commit("pods", "DELETED", copy.deepcopy(gone), gone)
    assert b.sync(deleted) and b.get("pods", "default", "x") is None
    assert sink.events[-1].type == "DELETED" and sink.events[-1].resource_version == deleted
    a.close()
    b.close()


def test_a_conflict_brings_the_replica_up_to_date_for_the_retry(etcd: LocalEtcd, etcd_prefix: str) -> None:
    a, b = replicas(etcd, etcd_prefix)
    created = a.commit("pods", "ADDED", pod("x"), None)
    assert b.sync(created)
    b._schedule = None  # b stops applying on its own: its cache goes stale
    winner = update(a, "x", writer="a")
    b._schedule = lambda callback: None
    with pytest.raises(ApiError) as lost:
        update(b, "x", writer="b")
    assert lost.value.code == 409
    current = b.get("pods", "default", "x")
    assert current is not None and current["metadata"]["resourceVersion"] == str(winner)
    assert update(b, "x", writer="b") > winner  # the retry client-go would make succeeds
    a.close()
    b.close()


def test_a_replica_that_lost_track_reloads_and_tells_its_watchers(etcd: LocalEtcd, etcd_prefix: str) -> None:
    writer = Store(100, EtcdBackend(EtcdClient(etcd.url), etcd_prefix))
    writer.commit("pods", "ADDED", pod("kept"), None)
    writer.commit("pods", "ADDED", pod("removed"), None)
    reader = Store(100, EtcdBackend(EtcdClient(etcd.url), etcd_prefix))  # not following
    sink = Sink()
    reader.subscribe("pods", sink)
    update(writer, "kept", n=1)
    removed = writer.get("pods", "default", "removed")
    assert removed is not None
    writer.commit("pods", "DELETED", copy.deepcopy(removed), removed)
    added = writer.commit("pods", "ADDED", pod("new"), None)
    writer.compact()
    reader.resync()
    assert sorted((e.type, e.obj["metadata"]["name"]) for e in sink.events) == [
        ("ADDED", "new"),
        ("DELETED", "removed"),
        ("MODIFIED", "kept"),
    ]
    new = reader.get("pods", "default", "new")
    assert new is not None and new["metadata"]["resourceVersion"] == str(added)
    assert reader.compacted_rv == reader.resource_version >= added
    writer.close()
    reader.close()


def test_a_following_server_applies_other_replicas_writes_on_its_event_loop(etcd: LocalEtcd, etcd_prefix: str) -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        reader = Store(100, EtcdBackend(EtcdClient(etcd.url), etcd_prefix))
        reader.follow(loop.call_soon_threadsafe)
        writer = Store(100, EtcdBackend(EtcdClient(etcd.url), etcd_prefix))
        written = writer.commit("pods", "ADDED", pod("x"), None)
        for _ in range(200):
            if reader.resource_version >= written:
                break
            await asyncio.sleep(0.01)
        assert reader.get("pods", "default", "x") is not None  # nobody called sync(): the loop applied it
        reader.close()
        writer.close()

    asyncio.run(scenario())


def test_a_replica_whose_watch_starts_before_a_compaction_reloads_and_follows_on(
    etcd: LocalEtcd, etcd_prefix: str
) -> None:
    writer = Store(100, EtcdBackend(EtcdClient(etcd.url), etcd_prefix))
    late = Store(100, EtcdBackend(EtcdClient(etcd.url), etcd_prefix))  # loaded now, follows only after a compaction
    sink = Sink()
    late.subscribe("pods", sink)
    writer.commit("pods", "ADDED", pod("a"), None)
    writer.compact()
    late.follow(lambda callback: None)  # its watch starts at a compacted revision: etcd cancels it
    assert late.sync(writer.resource_version)
    assert late.get("pods", "default", "a") is not None
    assert [(e.type, e.obj["metadata"]["name"]) for e in sink.events] == [("ADDED", "a")]
    after = writer.commit("pods", "ADDED", pod("b"), None)  # the reload restarted the watch from its snapshot
    assert late.sync(after)
    assert late.get("pods", "default", "b") is not None
    writer.close()
    late.close()


def test_a_replica_follows_on_after_etcd_restarts(etcd: LocalEtcd) -> None:
    own = LocalEtcd(etcd.binary).start()  # its own etcd: the session's must not stop under other tests
    try:
        writer, reader = replicas(own, "/registry")
        first = writer.commit("pods", "ADDED", pod("before"), None)
        assert reader.sync(first)
        own.restart()  # both replicas' connections drop; the reader's watch reopens from the last revision it saw
        after = writer.commit("pods", "ADDED", pod("after"), None)
        assert reader.sync(after, timeout=20)
        assert reader.get("pods", "default", "after") is not None
        writer.close()
        reader.close()
    finally:
        own.stop()
