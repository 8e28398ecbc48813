"""The wardle resources through the aggregated server with pyop's typed client: CRUD, strategy hooks, schema
validation, list with selectors and pagination, watch with bookmarks, the status subresource, optimistic
concurrency, generation, finalizers, dry-run, Table output, discovery and OpenAPI."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio

from apiserver.helpers import FLUNDERS, call, use_backend
from apiserver.wardle import Fischer, FischerSpec, Flunder, FlunderSpec, FlunderStatus
from pyop.api import ObjectMeta
from pyop.apiserver import AggregatedServer, RecommendedOptions
from pyop.client import Client, ConflictError, InvalidError, NotFoundError, Transport
from pyop.client.dynamic import EventType
from pyop.testing import TestAPIServer


@pytest.fixture(params=["memory", "file", "etcd3"])
def options(options: RecommendedOptions, request: pytest.FixtureRequest, tmp_path: Path) -> RecommendedOptions:
    """Every test here runs on each storage backend."""
    use_backend(options, request.param, request, tmp_path)
    return options


@pytest_asyncio.fixture
async def client(server: AggregatedServer, core: TestAPIServer) -> AsyncIterator[Client]:
    async with Client(Transport(server.client_config(token=core.token))) as typed:
        yield typed


def flunder(name: str, size: int = 1, **labels: str) -> Flunder:
    return Flunder(
        metadata=ObjectMeta(name=name, namespace="default", labels=labels or None), spec=FlunderSpec(size=size)
    )


async def test_create_get_update_delete(client: Client) -> None:
    created = await client.create(flunder("one", 3))
    assert created.metadata.uid and created.metadata.resource_version
    assert created.metadata.generation == 1
    assert created.metadata.labels == {"wardle.example.com/created-by": "strategy"}  # prepare_for_create
    fetched = await client.get(Flunder, "one", "default")
    assert fetched.spec.size == 3
    fetched.spec.size = 4
    updated = await client.update(fetched)
    assert updated.metadata.generation == 2
    assert int(updated.metadata.resource_version or 0) > int(created.metadata.resource_version or 0)
    await client.delete(Flunder, "one", "default")
    with pytest.raises(NotFoundError):
        await client.get(Flunder, "one", "default")


async def test_schema_and_strategy_validation_are_422s_with_causes(client: Client) -> None:
    with pytest.raises(InvalidError) as schema:
        await client.create(flunder("big", 101))
    assert [(c.field, c.reason) for c in schema.value.causes] == [("spec.size", "FieldValueInvalid")]
    itself = flunder("self")
    itself.spec.reference = "self"
    with pytest.raises(InvalidError) as strategy:
        await client.create(itself)
    assert strategy.value.causes[0].field == "spec.reference"
    assert strategy.value.causes[0].message == 'Invalid value: "self": a flunder may not refer to itself'
    referring = flunder("ref")
    referring.spec.reference = "other"
    stored = await client.create(referring)
    stored.spec.reference = "another"
    with pytest.raises(InvalidError) as update:
        await client.update(stored)
    assert update.value.causes[0].message == "Forbidden: may not change once set"


async def test_optimistic_concurrency(client: Client) -> None:
    first = await client.create(flunder("race"))
    second = first.model_copy(deep=True)
    first.spec.size = 2
    await client.update(first)
    second.spec.size = 3
    with pytest.raises(ConflictError):
        await client.update(second)


async def test_status_subresource(client: Client) -> None:
    created = await client.create(flunder("st", 2))
    created.status = FlunderStatus(phase="Ready", observed_size=2)
    created.spec.size = 9  # ignored by a status update
    after = await client.update_status(created)
    assert after.status is not None and after.status.phase == "Ready"
    assert after.spec.size == 2
    assert after.metadata.generation == 1
    after.status = FlunderStatus(phase="Lost")  # ignored by a main-resource update
    after.spec.size = 5
    main = await client.update(after)
    assert main.status is not None and main.status.phase == "Ready"
    assert main.metadata.generation == 2


async def test_list_with_selectors_and_pages(client: Client) -> None:
    for index in range(5):
        await client.create(flunder(f"f{index}", index, tier="a" if index % 2 else "b"))
    tier_a = await client.list(Flunder, "default", label_selector="tier=a")
    assert [f.metadata.name for f in tier_a.items] == ["f1", "f3"]
    by_name = await client.list(Flunder, "default", field_selector="metadata.name=f4")
    assert [f.metadata.name for f in by_name.items] == ["f4"]
    page = await client.list(Flunder, "default", limit=2)
    names = [f.metadata.name for f in page.items]
    while page.continue_token:
        page = await client.list(Flunder, "default", limit=2, continue_token=page.continue_token)
        names += [f.metadata.name for f in page.items]
    assert names == ["f0", "f1", "f2", "f3", "f4"]


async def test_watch_from_a_list_with_bookmarks(client: Client) -> None:
    listed = await client.list(Flunder, "default")
    events: list[tuple[str, str]] = []

    async def watch() -> None:
        async for event in client.watch(Flunder, "default", resource_version=listed.resource_version):
            if event.type is EventType.BOOKMARK:
                events.append(("BOOKMARK", ""))
            else:
                assert event.object is not None
                events.append((event.type.value, event.object.metadata.name or ""))
            if ("DELETED", "w") in events and ("BOOKMARK", "") in events:
                return

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.1)
    await client.create(flunder("w"))
    stored = await client.get(Flunder, "w", "default")
    stored.spec.size = 7
    await client.update(stored)
    await client.delete(Flunder, "w", "default")
    await asyncio.wait_for(task, 10)
    assert [e for e in events if e[0] != "BOOKMARK"] == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


async def test_finalizers_hold_deletion(client: Client) -> None:
    held = flunder("held")
    held.metadata.finalizers = ["wardle.example.com/cleanup"]
    await client.create(held)
    terminating = await client.delete(Flunder, "held", "default")
    assert terminating is not None and terminating.metadata.deletion_timestamp is not None
    current = await client.get(Flunder, "held", "default")
    current.metadata.finalizers = []
    await client.update(current)
    with pytest.raises(NotFoundError):
        await client.get(Flunder, "held", "default")


async def test_dry_run_stores_nothing(client: Client) -> None:
    answered = await client.create(flunder("dry"), dry_run=True)
    assert answered.metadata.name == "dry"
    with pytest.raises(NotFoundError):
        await client.get(Flunder, "dry", "default")


async def test_cluster_scoped_kind(client: Client) -> None:
    fischer = Fischer(metadata=ObjectMeta(name="fritz"), spec=FischerSpec(disallowed_flunders=["a"]))
    created = await client.create(fischer)
    assert created.metadata.namespace is None
    assert [f.metadata.name for f in (await client.list(Fischer)).items] == ["fritz"]


async def test_table_output_has_the_printer_columns(
    server: AggregatedServer, client: Client, core: TestAPIServer
) -> None:
    await client.create(flunder("t", 6))
    status, table = await call(
        server,
        "GET",
        FLUNDERS,
        token=core.token,
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
    )
    assert status == 200
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Phase"]
    assert [row["cells"] for row in table["rows"]] == [["t", 6, None]]


async def test_discovery_and_openapi(server: AggregatedServer, core: TestAPIServer) -> None:
    status, groups = await call(server, "GET", "/apis", token=core.token)
    assert status == 200
    assert [g["name"] for g in groups["groups"]] == ["wardle.example.com"]
    status, resources = await call(server, "GET", "/apis/wardle.example.com/v1alpha1", token=core.token)
    assert {r["name"] for r in resources["resources"]} == {"flunders", "flunders/status", "flunders/scale", "fischers"}
    status, index = await call(server, "GET", "/openapi/v3", token=core.token)
    assert "apis/wardle.example.com/v1alpha1" in index["paths"]
    status, v2 = await call(server, "GET", "/openapi/v2", token=core.token)
    assert status == 200
    flunder_schema = v2["definitions"]["com.example.wardle.v1alpha1.Flunder"]
    assert flunder_schema["properties"]["spec"]["properties"]["size"]["maximum"] == 100
    status, legacy = await call(server, "GET", "/api", token=core.token)
    assert (status, legacy["kind"]) == (200, "APIVersions")


async def test_creates_need_a_namespace_the_cluster_has(client: Client, server: AggregatedServer) -> None:
    stray = flunder("stray")
    stray.metadata.namespace = "nowhere"
    with pytest.raises(NotFoundError) as missing:
        await client.create(stray)
    assert str(missing.value).endswith('namespaces "nowhere" not found')
    await client.create(flunder("here"))
    await client.create(flunder("again"))
    assert server.config.namespaces is not None and server.config.namespaces.lookups == 2  # default: cached


async def test_a_watch_of_tables_has_the_printer_columns(
    server: AggregatedServer, client: Client, core: TestAPIServer
) -> None:
    await client.create(flunder("tw", 3))
    headers = {"Authorization": f"Bearer {core.token}", "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    context = ssl.create_default_context(cafile=str(server.ca_file))
    async with (
        aiohttp.ClientSession() as session,
        session.get(server.url + FLUNDERS + "?watch=1&timeoutSeconds=2", headers=headers, ssl=context) as response,
    ):
        event = json.loads(await response.content.readline())
    table = event["object"]
    assert (event["type"], table["kind"]) == ("ADDED", "Table")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Phase"]
    assert table["rows"][0]["cells"] == ["tw", 3, None]


async def test_scale_subresource_from_the_marker(client: Client) -> None:
    await client.create(flunder("sc", 2))
    scale = await client.get_scale(Flunder, "sc", "default")
    assert (scale.spec.replicas, scale.status.replicas) == (2, 0)
    scaled = await client.update_scale(Flunder, "sc", 7, "default")
    assert scaled.spec.replicas == 7
    assert (await client.get(Flunder, "sc", "default")).spec.size == 7
