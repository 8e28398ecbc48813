"""One contract, every backend (memory, file, etcd): revisions, compare-and-swap conflicts, restart, compaction."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver_storage.backends import Opener
from pyop.apiserver.storage.backend import Backend, StorageConflict


def pod(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def live(backend: Backend) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {
        (key, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]): obj for key, obj in backend.load().items
    }


def test_create_update_delete_hand_out_increasing_revisions(opener: Opener) -> None:
    backend = opener.open()
    start = backend.load().revision
    created = backend.commit("pods", "ADDED", "default", "a", pod("a"), None)
    updated = backend.commit("pods", "MODIFIED", "default", "a", pod("a", image="v2"), created)
    other = backend.commit("namespaces", "ADDED", "", "team", {"metadata": {"name": "team"}}, None)
    assert start < created < updated < other
    objects = live(backend)
    assert objects[("pods", "default", "a")]["spec"] == {"image": "v2"}
    assert objects[("pods", "default", "a")]["metadata"]["resourceVersion"] == str(updated)
    assert objects[("namespaces", "", "team")]["metadata"]["resourceVersion"] == str(other)
    deleted = backend.commit("pods", "DELETED", "default", "a", None, updated)
    assert deleted > other
    assert ("pods", "default", "a") not in live(backend)
    assert backend.load().revision >= deleted


def test_stale_expected_revision_is_a_conflict(opener: Opener) -> None:
    backend = opener.open()
    first = backend.commit("pods", "ADDED", "default", "a", pod("a"), None)
    second = backend.commit("pods", "MODIFIED", "default", "a", pod("a", n=2), first)
    with pytest.raises(StorageConflict) as create_again:
        backend.commit("pods", "ADDED", "default", "a", pod("a"), None)
    assert create_again.value.exists
    with pytest.raises(StorageConflict) as stale_update:
        backend.commit("pods", "MODIFIED", "default", "a", pod("a", n=3), first)
    assert stale_update.value.exists
    with pytest.raises(StorageConflict):
        backend.commit("pods", "DELETED", "default", "a", None, first)
    with pytest.raises(StorageConflict) as missing:
        backend.commit("pods", "MODIFIED", "default", "b", pod("b"), first)
    assert not missing.value.exists
    # The refused writes changed nothing.
    assert live(backend)[("pods", "default", "a")]["metadata"]["resourceVersion"] == str(second)
    assert live(backend)[("pods", "default", "a")]["spec"] == {"n": 2}


def test_compaction_moves_past_every_revision_handed_out(opener: Opener) -> None:
    backend = opener.open()
    written = backend.commit("pods", "ADDED", "default", "a", pod("a"), None)
    compacted = backend.compact()
    assert compacted > written
    assert backend.commit("pods", "ADDED", "default", "b", pod("b"), None) > compacted
    assert set(live(backend)) == {("pods", "default", "a"), ("pods", "default", "b")}


def test_objects_and_revisions_survive_a_restart(opener: Opener) -> None:
    if opener.name == "memory":
        pytest.skip("memory storage ends with the process by design")
    backend = opener.open()
    first = backend.commit("pods", "ADDED", "default", "a", pod("a"), None)
    backend.commit("pods", "ADDED", "default", "b", pod("b"), None)
    last = backend.commit("pods", "DELETED", "default", "b", None, None)
    backend.close()
    reopened = opener.open()
    snapshot = reopened.load()
    assert snapshot.revision >= last
    objects = live(reopened)
    assert list(objects) == [("pods", "default", "a")]
    assert objects[("pods", "default", "a")]["metadata"]["resourceVersion"] == str(first)
    # The restarted backend still refuses a stale write and continues the sequence.
    with pytest.raises(StorageConflict):
        reopened.commit("pods", "MODIFIED", "default", "a", pod("a"), first - 1)
    assert reopened.commit("pods", "MODIFIED", "default", "a", pod("a", n=1), first) > last
