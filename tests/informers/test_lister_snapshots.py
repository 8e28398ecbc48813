"""Lister reads: a private model per read by default, one shared model per cached object version with shared=True."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pyop.informers import Indexer, Lister


class Spec(BaseModel):
    size: int = 0


class Meta(BaseModel):
    name: str
    namespace: str | None = None
    resourceVersion: str = ""  # noqa: N815 - wire name


class Thing(BaseModel):
    metadata: Meta
    spec: Spec = Spec()


def raw(name: str, version: str, size: int, namespace: str = "ns") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": version}, "spec": {"size": size}}


def test_shared_reads_validate_once_per_cached_version() -> None:
    store = Indexer()
    store.put(raw("a", "1", 1))
    lister = Lister(store, Thing)
    first = lister.get("a", "ns", shared=True)
    assert first is not None and first.spec.size == 1
    assert lister.get("a", "ns", shared=True) is first  # same version: the same model, no validation
    assert lister.namespace("ns").get("a", shared=True) is first
    assert lister.list(shared=True)[0] is first
    store.put(raw("a", "2", 5))  # the informer replaces the dict when the object changes
    second = lister.get("a", "ns", shared=True)
    assert second is not first and second is not None and second.spec.size == 5


def test_default_reads_are_private_copies() -> None:
    store = Indexer()
    store.put(raw("a", "1", 1))
    lister = Lister(store, Thing)
    mine = lister.get("a", "ns")
    assert mine is not None
    mine.spec.size = 99
    assert lister.get("a", "ns") is not mine
    assert lister.get("a", "ns").spec.size == 1  # type: ignore[union-attr]
    assert lister.get("a", "ns", shared=True).spec.size == 1  # type: ignore[union-attr]


def test_snapshots_of_replaced_and_deleted_objects_are_forgotten() -> None:
    store = Indexer()
    lister = Lister(store, Thing)
    for version in range(200):
        store.put(raw("a", str(version), version))
        assert lister.get("a", "ns", shared=True).spec.size == version  # type: ignore[union-attr]
    assert len(lister._snapshots) <= 2 * len(store) + 64
    store.pop("ns/a")
    assert lister.get("a", "ns", shared=True) is None
