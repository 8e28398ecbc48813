"""The field manager's cache of decoded managedFields: bounded, the oldest evicted first, an entry taken out when
a write uses it (the write stores a new list), and an evicted object's managedFields decoded again from the stored
list, so that writes after any number of evictions record the same ownership as writes that hit the cache."""

from __future__ import annotations

from typing import Any

import pytest

from pyop.apiserver.registry import managed_fields
from pyop.apiserver.registry.operations import MERGE_PATCH, WriteOptions
from pyop.testing import TestAPIServer


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}}


def owners(obj: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(e["manager"], e["operation"], e["fieldsV1"]) for e in obj["metadata"]["managedFields"]]


async def write_all(server: TestAPIServer, names: list[str]) -> list[dict[str, Any]]:
    """Each object created by "creator", then its data patched by "patcher" (a second manager), by turns."""
    configmaps = server.resources.lookup("", "v1", "configmaps")
    ops = server.operations
    for name in names:
        ops.create(configmaps, "default", configmap(name), WriteOptions(field_manager="creator"))
    results = []
    for round_number in range(2):
        for name in names:
            patch = {"data": {"a": str(round_number + 2), f"b{round_number}": "x"}}
            written, _ = ops.patch(
                configmaps, "default", name, MERGE_PATCH, patch, WriteOptions(field_manager="patcher")
            )
            results.append(written)
    return results


async def test_writes_after_evictions_record_what_cached_writes_record(
    server: TestAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"c{i}" for i in range(6)]
    cached = await write_all(server, names)  # the cache holds every object
    monkeypatch.setattr(managed_fields, "_DECODED_CACHE_SIZE", 2)
    async with TestAPIServer(kubernetes_version=server.kubernetes_version, root_ca_config_maps=False) as fresh:
        evicted = await write_all(fresh, names)  # every object's entry evicted before its next write
        assert len(fresh.operations.field_manager._decoded) == 2
    assert [owners(obj) for obj in evicted] == [owners(obj) for obj in cached]
    patched = owners(evicted[-1])
    assert [(manager, operation) for manager, operation, _ in patched] == [
        ("creator", "Update"),
        ("patcher", "Update"),
    ]
    assert patched[1][2] == {"f:data": {"f:a": {}, "f:b0": {}, "f:b1": {}}}


def test_the_cache_evicts_the_oldest_and_a_use_takes_an_entry_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(managed_fields, "_DECODED_CACHE_SIZE", 3)
    manager = managed_fields.FieldManager("1.33", lambda resource_type: "")
    lists = [[{"manager": f"m{i}", "operation": "Update", "fieldsV1": {}}] for i in range(5)]
    marked: dict[Any, Any] = {"decoded": None}
    for entries in lists[:3]:
        manager._remember(entries, marked)
    assert manager._stored_managers(lists[0]) is marked  # a hit: the write that asked stores a new list
    assert [entries for entries, _ in manager._decoded.values()] == [lists[1], lists[2]]
    for entries in lists[3:]:
        manager._remember(entries, marked)
    assert [entries for entries, _ in manager._decoded.values()] == [lists[2], lists[3], lists[4]]


async def test_deleted_objects_leave_the_cache(server: TestAPIServer) -> None:
    configmaps = server.resources.lookup("", "v1", "configmaps")
    ops = server.operations
    cache = ops.field_manager._decoded
    before = len(cache)
    for name in ("a", "b", "c"):
        ops.create(configmaps, "default", configmap(name), WriteOptions(field_manager="creator"))
    ops.patch(configmaps, "default", "b", MERGE_PATCH, {"data": {"z": "1"}}, WriteOptions(field_manager="patcher"))
    assert len(cache) == before + 3
    for name in ("a", "b", "c"):
        ops.delete(configmaps, "default", name, {}, WriteOptions())
    assert len(cache) == before
