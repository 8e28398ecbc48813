"""Two aggregated API server replicas over one etcd, through HTTP: each serves what the other wrote (reads and
watches), resourceVersions are one sequence, and a write from a stale read is a 409 rather than a lost update."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from apiserver.helpers import FLUNDERS, call, client_context, wardle_group

from pyop.apiserver import AggregatedServer, RecommendedOptions
from pyop.apiserver.storage.backend import StorageExpired
from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.local import LocalEtcd
from pyop.testing import TestAPIServer


def on_etcd(etcd: LocalEtcd, prefix: str) -> RecommendedOptions:
    options = RecommendedOptions()
    options.storage.backend = "etcd3"
    options.storage.etcd_servers = [etcd.url]
    options.storage.etcd_prefix = prefix
    return options


@pytest_asyncio.fixture
async def replicas(
    etcd: LocalEtcd, etcd_prefix: str
) -> AsyncIterator[tuple[TestAPIServer, AggregatedServer, AggregatedServer]]:
    async with TestAPIServer() as core:
        group = wardle_group()
        async with (
            AggregatedServer.for_testing([group], core, options=on_etcd(etcd, etcd_prefix), register=False) as first,
            AggregatedServer.for_testing([group], core, options=on_etcd(etcd, etcd_prefix), register=False) as second,
        ):
            yield core, first, second


async def eventually_get(server: AggregatedServer, token: str, path: str, resource_version: str) -> dict[str, object]:
    for _ in range(200):
        status, body = await call(server, "GET", path, token=token)
        if status == 200 and body["metadata"]["resourceVersion"] == resource_version:
            return dict(body)
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never reached resourceVersion {resource_version} on {server.url}")


async def test_each_replica_serves_the_others_writes(
    replicas: tuple[TestAPIServer, AggregatedServer, AggregatedServer],
) -> None:
    core, first, second = replicas
    flunder = {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder", "metadata": {"name": "shared"}}
    status, created = await call(first, "POST", FLUNDERS, token=core.token, body=flunder)
    assert status == 201, created
    seen = await eventually_get(second, core.token, f"{FLUNDERS}/shared", created["metadata"]["resourceVersion"])
    seen["spec"] = {"size": 7}
    status, updated = await call(second, "PUT", f"{FLUNDERS}/shared", token=core.token, body=seen)
    assert status == 200, updated
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    # first still answers from a cache that may lag by a watch event: a write from its stale read is refused
    stale = dict(created, spec={"size": 9})
    status, refused = await call(first, "PUT", f"{FLUNDERS}/shared", token=core.token, body=stale)
    assert (status, refused["reason"]) == (409, "Conflict")
    again = await eventually_get(first, core.token, f"{FLUNDERS}/shared", updated["metadata"]["resourceVersion"])
    assert again["spec"] == {"size": 7}


async def test_a_watch_on_one_replica_streams_the_others_creates(
    replicas: tuple[TestAPIServer, AggregatedServer, AggregatedServer],
) -> None:
    core, first, second = replicas
    status, listed = await call(second, "GET", FLUNDERS, token=core.token)
    assert status == 200
    start = listed["metadata"]["resourceVersion"]
    headers = {"Authorization": f"Bearer {core.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{second.url}{FLUNDERS}?watch=true&resourceVersion={start}", headers=headers, ssl=client_context(second)
        ) as stream,
    ):
        assert stream.status == 200
        names = []
        for name in ("one", "two"):
            body = {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder", "metadata": {"name": name}}
            status, _ = await call(first, "POST", FLUNDERS, token=core.token, body=body)
            assert status == 201
        while len(names) < 2:
            line = await asyncio.wait_for(stream.content.readline(), 10)
            event = json.loads(line)
            if event["type"] == "ADDED":
                names.append(event["object"]["metadata"]["name"])
    assert names == ["one", "two"]


async def test_a_watch_from_before_an_etcd_compaction_is_410_expired(
    replicas: tuple[TestAPIServer, AggregatedServer, AggregatedServer],
) -> None:
    core, first, _ = replicas
    body = {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder", "metadata": {"name": "old"}}
    status, created = await call(first, "POST", FLUNDERS, token=core.token, body=body)
    assert status == 201
    first.store.compact()  # etcd compacted at kube-apiserver's compact_rev_key write
    old = created["metadata"]["resourceVersion"]
    backend = first.store.backend
    assert isinstance(backend, EtcdBackend)
    with pytest.raises(StorageExpired):  # etcd itself no longer has it
        backend.client.range(backend.prefix.encode(), revision=int(old))
    headers = {"Authorization": f"Bearer {core.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{first.url}{FLUNDERS}?watch=true&resourceVersion={old}", headers=headers, ssl=client_context(first)
        ) as stream,
    ):
        event = json.loads(await asyncio.wait_for(stream.content.readline(), 10))
    assert event["type"] == "ERROR"
    assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
    status, listed = await call(first, "GET", FLUNDERS, token=core.token)  # the relist a client does next
    assert status == 200 and int(listed["metadata"]["resourceVersion"]) > int(old)
