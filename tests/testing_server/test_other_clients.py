"""The Python Kubernetes clients nobody here wrote, against the test server: kr8s, lightkube, kubernetes_asyncio.

Issue 12 found that kr8s could not be used at all (`GET /version/` was 404) and that kubernetes_asyncio's
`?watch=True` returned a list. Each client here does what an operator's test does with it: load the kubeconfig
the server wrote, read the version, create, read, list by label, watch, apply, and map a missing object to the
client's own not-found error. A client that works only with pyop's client's spellings fails here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.testing import TestAPIServer

GUARD = 10.0  # seconds: a failure guard, never an expectation


def config_map(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "data": {"k": "v"},
    }


async def test_kr8s_reads_the_version_creates_lists_watches_and_reports_not_found(server: TestAPIServer) -> None:
    kr8s = pytest.importorskip("kr8s", reason="kr8s (PyPI) drives this test")
    from kr8s.asyncio.objects import ConfigMap

    api = await kr8s.asyncio.api(kubeconfig=str(server.kubeconfig_path))
    version = await api.version()  # kr8s asks for /version/ with the trailing slash
    assert version["major"] == "1" and version["minor"].startswith(server.kubernetes_version.split(".")[1])

    created = await ConfigMap(config_map("one", tier="web"), api=api)
    await created.create()
    await (await ConfigMap(config_map("two", tier="db"), api=api)).create()
    listed = [c.name async for c in api.get("configmaps", namespace="default", label_selector={"tier": "web"})]
    assert listed == ["one"]

    fetched = await ConfigMap.get("one", namespace="default", api=api)
    assert fetched.raw["data"] == {"k": "v"} and fetched.raw["metadata"]["uid"] == created.raw["metadata"]["uid"]

    async def first_event() -> tuple[str, str]:
        async for event, obj in api.watch("configmaps", namespace="default", label_selector={"tier": "db"}):
            return event, obj.name
        raise AssertionError("the watch ended without an event")

    event = await asyncio.wait_for(first_event(), GUARD)
    assert event == ("ADDED", "two")

    with pytest.raises(kr8s.NotFoundError):
        await ConfigMap.get("missing", namespace="default", api=api)


async def test_lightkube_applies_with_field_ownership_and_maps_errors(server: TestAPIServer) -> None:
    lightkube = pytest.importorskip("lightkube", reason="lightkube (PyPI) drives this test")
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    client = lightkube.AsyncClient(config=KubeConfig.from_file(str(server.kubeconfig_path)), namespace="default")
    try:
        applied = await client.apply(
            ConfigMap(metadata=ObjectMeta(name="applied", namespace="default"), data={"owned": "a"}),
            field_manager="first",
        )
        assert applied.data == {"owned": "a"}
        assert [entry.manager for entry in applied.metadata.managedFields] == ["first"]

        with pytest.raises(lightkube.ApiError) as conflict:
            await client.apply(
                ConfigMap(metadata=ObjectMeta(name="applied", namespace="default"), data={"owned": "b"}),
                field_manager="second",
            )
        assert conflict.value.status.code == 409 and conflict.value.status.reason == "Conflict"

        taken = await client.apply(
            ConfigMap(metadata=ObjectMeta(name="applied", namespace="default"), data={"owned": "b"}),
            field_manager="second",
            force=True,
        )
        assert taken.data == {"owned": "b"}

        names = [
            c.metadata.name
            async for c in client.list(ConfigMap, labels={"missing-label": lightkube.operators.exists()})
        ]
        assert names == []

        with pytest.raises(lightkube.ApiError) as missing:
            await client.get(ConfigMap, "missing")
        assert missing.value.status.code == 404 and missing.value.status.reason == "NotFound"
    finally:
        await client.close()


async def test_kubernetes_asyncio_watch_true_streams_events(server: TestAPIServer) -> None:
    kubernetes_asyncio = pytest.importorskip("kubernetes_asyncio", reason="kubernetes_asyncio drives this test")
    configuration = kubernetes_asyncio.client.Configuration()
    await kubernetes_asyncio.config.load_kube_config(
        config_file=str(server.kubeconfig_path), client_configuration=configuration
    )
    async with kubernetes_asyncio.client.ApiClient(configuration) as api_client:
        core = kubernetes_asyncio.client.CoreV1Api(api_client)
        await core.create_namespaced_config_map("default", config_map("watched"))
        watch = kubernetes_asyncio.watch.Watch()  # sends ?watch=True, Python's spelling of the boolean

        async def first_event() -> tuple[str, str]:
            async for event in watch.stream(core.list_namespaced_config_map, "default", timeout_seconds=5):
                return event["type"], event["object"].metadata.name
            raise AssertionError("the watch ended without an event")

        try:
            assert await asyncio.wait_for(first_event(), GUARD) == ("ADDED", "watched")
        finally:
            watch.stop()
