"""--storage-backend under the aggregated server: the file backend survives a restart; etcd3 serves the same API
with etcd's revisions as resourceVersions, and two servers over one etcd see each other's writes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from apiserver.helpers import call, use_backend
from apiserver.wardle import Flunder, FlunderSpec
from pyop.api import ObjectMeta
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.client import Client, ConflictError, Transport
from pyop.client.dynamic import EventType
from pyop.testing import TestAPIServer


def flunder(name: str, size: int = 1) -> Flunder:
    return Flunder(metadata=ObjectMeta(name=name, namespace="default"), spec=FlunderSpec(size=size))


async def test_file_backend_keeps_objects_across_restarts(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, tmp_path: Path
) -> None:
    options.storage.backend = "file"
    options.storage.path = str(tmp_path)  # a folder: objects.jsonl in it
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as first:
        client = Client(Transport(first.client_config(token=core.token)))
        created = await client.create(flunder("kept", 5))
        await client.close()
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as second:
        client = Client(Transport(second.client_config(token=core.token)))
        kept = await client.get(Flunder, "kept", "default")
        await client.close()
    assert kept.spec.size == 5
    assert kept.metadata.uid == created.metadata.uid
    assert kept.metadata.resource_version == created.metadata.resource_version
    assert (tmp_path / "objects.jsonl").is_file()


async def test_two_servers_over_one_etcd(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, request: pytest.FixtureRequest
) -> None:
    use_backend(options, "etcd3", request, Path())
    second_options = RecommendedOptions(
        authentication=options.authentication, authorization=options.authorization, storage=options.storage
    )
    async with (
        AggregatedServer.for_testing([group], core, options=options, register=False) as one,
        AggregatedServer.for_testing([group], core, options=second_options, register=False) as two,
        Client(Transport(one.client_config(token=core.token))) as first,
        Client(Transport(two.client_config(token=core.token))) as second,
    ):
        listed = await second.list(Flunder, "default")
        seen: list[tuple[str, str]] = []

        async def watch() -> None:
            async for event in second.watch(Flunder, "default", resource_version=listed.resource_version):
                if event.type is not EventType.BOOKMARK and event.object is not None:
                    seen.append((event.type.value, event.object.metadata.name or ""))
                    return

        watching = asyncio.create_task(watch())
        await asyncio.sleep(0.2)
        created = await first.create(flunder("shared", 3))
        await asyncio.wait_for(watching, 10)
        assert seen == [("ADDED", "shared")]
        other = await second.get(Flunder, "shared", "default")
        assert other.metadata.resource_version == created.metadata.resource_version
        other.spec.size = 4
        await second.update(other)
        stale = created.model_copy(deep=True)
        stale.spec.size = 9
        with pytest.raises(ConflictError):  # the other server's write moved the object on
            await first.update(stale)


async def test_etcd_is_a_health_check(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, request: pytest.FixtureRequest
) -> None:
    use_backend(options, "etcd3", request, Path())
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        assert "etcd" in server.config.health.names("readyz")
        status, text = await call(server, "GET", "/readyz?verbose")
        assert (status, "[+]etcd ok" in text) == (200, True)
