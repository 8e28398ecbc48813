"""The JSON-gateway client against a real etcd: ranges, transactions, watch from a revision, compaction."""

from __future__ import annotations

import threading
import time

import pytest

from pyop.apiserver.storage.backend import BackendEvent, StorageError, StorageExpired
from pyop.apiserver.storage.etcd import backend as etcd_backend
from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.client import (
    EtcdClient,
    EtcdError,
    compare_mod_revision,
    op_put,
    op_range,
    prefix_end,
)
from pyop.apiserver.storage.etcd.local import LocalEtcd
from pyop.apiserver.storage.store import Store


def test_prefix_end_covers_exactly_the_prefix() -> None:
    assert prefix_end(b"/registry/") == b"/registry0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"\xff\xff") == b"\x00"


def test_range_txn_and_watch_from_a_revision(etcd: LocalEtcd, etcd_prefix: str) -> None:
    client = EtcdClient(etcd.url)
    root = etcd_prefix.encode() + b"/"
    first = client.put(root + b"a", b"1")
    second = client.put(root + b"b", b"2")
    revision, kvs, more = client.range(root, prefix_end(root))
    assert revision >= second and not more
    assert [(kv.key, kv.value, kv.mod_revision) for kv in kvs] == [
        (root + b"a", b"1", first),
        (root + b"b", b"2", second),
    ]
    ok, _, _ = client.txn(
        [compare_mod_revision(root + b"a", first - 1)], [op_put(root + b"a", b"x")], [op_range(root + b"a")]
    )
    assert not ok
    ok, third, _ = client.txn([compare_mod_revision(root + b"a", first)], [op_put(root + b"a", b"3")], [])
    assert ok and third > second
    deleted_at, deleted = client.delete(root + b"b")
    assert deleted == 1
    watch = client.watch(root, prefix_end(root), start_revision=second)  # replays from a past revision
    seen: list[tuple[str, bytes, int]] = []
    for response in watch:
        seen += [(event.type, event.kv.key, event.kv.mod_revision) for event in response.events]
        if len(seen) >= 3:
            break
    watch.close()
    assert seen == [("PUT", root + b"b", second), ("PUT", root + b"a", third), ("DELETE", root + b"b", deleted_at)]
    client.close()


def test_a_compacted_revision_is_expired_for_reads_and_watches(etcd: LocalEtcd, etcd_prefix: str) -> None:
    backend = EtcdBackend(EtcdClient(etcd.url), etcd_prefix)
    old = backend.commit("pods", "ADDED", "default", "a", {"metadata": {"name": "a"}}, None)
    backend.commit("pods", "MODIFIED", "default", "a", {"metadata": {"name": "a"}, "n": 1}, old)
    compacted = backend.compact()
    with pytest.raises(StorageExpired):
        backend.client.range(etcd_prefix.encode(), revision=old)
    errors: list[StorageError] = []
    done = threading.Event()

    def failed(error: StorageError) -> None:
        errors.append(error)
        done.set()

    backend.watch_external(old, lambda event: None, failed)
    assert done.wait(10)
    assert isinstance(errors[0], StorageExpired) and errors[0].compacted == compacted
    backend.close()


def test_watch_external_reports_other_writers_in_revision_order(etcd: LocalEtcd, etcd_prefix: str) -> None:
    watcher = EtcdBackend(EtcdClient(etcd.url), etcd_prefix)
    writer = EtcdBackend(EtcdClient(etcd.url), etcd_prefix)
    start = watcher.load().revision
    events: list[BackendEvent] = []
    arrived = threading.Event()

    def record(event: BackendEvent) -> None:
        events.append(event)
        if len(events) == 3:
            arrived.set()

    watcher.watch_external(start, record, lambda error: None)
    created = writer.commit("pods", "ADDED", "team", "a", {"metadata": {"name": "a", "namespace": "team"}}, None)
    writer.commit("namespaces", "ADDED", "", "team", {"metadata": {"name": "team"}}, None)
    deleted = writer.commit("pods", "DELETED", "team", "a", None, created)
    assert arrived.wait(10)
    assert [(e.type, e.storage_key, e.namespace, e.name) for e in events] == [
        ("PUT", "pods", "team", "a"),
        ("PUT", "namespaces", "", "team"),
        ("DELETE", "pods", "team", "a"),
    ]
    assert events[0].obj is not None and events[0].obj["metadata"]["resourceVersion"] == str(created)
    assert events[2].revision == deleted and events[2].obj is None
    watcher.close()
    writer.close()


def test_unreachable_etcd_is_a_clear_error() -> None:
    client = EtcdClient("http://127.0.0.1:9", timeout=1.0)
    with pytest.raises(EtcdError, match="unreachable at http://127.0.0.1:9"):
        client.range(b"/x")


def test_bad_endpoints_are_refused() -> None:
    with pytest.raises(ValueError, match="'127.0.0.1:2379' is not an http:// or https:// URL"):
        EtcdClient("127.0.0.1:2379")


def test_objects_and_revisions_survive_an_etcd_restart(etcd: LocalEtcd) -> None:
    own = LocalEtcd(etcd.binary).start()  # its own etcd: the session's must not stop under other tests
    try:
        backend = EtcdBackend(EtcdClient(own.url))
        written = backend.commit(
            "pods", "ADDED", "default", "a", {"metadata": {"name": "a", "namespace": "default"}}, None
        )
        backend.close()
        own.restart()
        reopened = EtcdBackend(EtcdClient(own.url))
        snapshot = reopened.load()
        assert snapshot.revision >= written
        assert [(key, item["metadata"]["resourceVersion"]) for key, item in snapshot.items] == [("pods", str(written))]
        assert reopened.commit("pods", "DELETED", "default", "a", None, written) > written
        reopened.close()
    finally:
        own.stop()


def test_start_up_reads_a_large_prefix_in_pages_at_one_revision(
    etcd: LocalEtcd, etcd_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcd_backend, "LOAD_PAGE", 2)
    backend = EtcdBackend(EtcdClient(etcd.url), etcd_prefix)
    for i in range(5):
        backend.commit(
            "pods", "ADDED", "default", f"p{i}", {"metadata": {"name": f"p{i}", "namespace": "default"}}, None
        )
    snapshot = backend.load()
    assert [obj["metadata"]["name"] for _, obj in snapshot.items] == [f"p{i}" for i in range(5)]
    backend.close()


def test_periodic_compaction_keeps_one_interval_of_etcd_history_and_none_of_the_cache(
    etcd: LocalEtcd, etcd_prefix: str
) -> None:
    backend = EtcdBackend(EtcdClient(etcd.url), etcd_prefix, compaction_interval=0.2)
    store = Store(100, backend)
    old = store.commit("pods", "ADDED", {"metadata": {"name": "a", "namespace": "default"}}, None)
    newer = store.commit("pods", "ADDED", {"metadata": {"name": "b", "namespace": "default"}}, None)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            backend.client.range(etcd_prefix.encode(), revision=old)
        except StorageExpired:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"etcd still serves revision {old} after the compactor's intervals")
    assert [event.resource_version for event in store.events_since("pods", 0)] == [old, newer]  # the cache's stays
    store.close()
