"""The official `kubernetes` client against the aggregated server: custom objects CRUD, status, watch, errors.

It is synchronous: each call runs in a thread while the server keeps the event loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from pyop.apiserver import AggregatedServer
from pyop.testing import TestAPIServer

GROUP, VERSION, PLURAL = "wardle.example.com", "v1alpha1", "flunders"


def custom_objects(server: AggregatedServer, token: str) -> k8s.CustomObjectsApi:
    api_client = k8s_config.new_client_from_config_dict(server.kubeconfig_dict(token))
    return k8s.CustomObjectsApi(api_client)


async def test_crud_status_and_errors(server: AggregatedServer, core: TestAPIServer) -> None:
    api = custom_objects(server, core.token)

    def scenario() -> dict[str, Any]:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Flunder", "metadata": {"name": "k"}, "spec": {"size": 2}}
        created: dict[str, Any] = api.create_namespaced_custom_object(  # type: ignore[assignment]
            GROUP, VERSION, "default", PLURAL, body
        )
        assert created["metadata"]["generation"] == 1
        with pytest.raises(k8s.ApiException) as exists:
            api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
        assert exists.value.status == 409
        patched: dict[str, Any] = api.patch_namespaced_custom_object(  # type: ignore[assignment]
            GROUP, VERSION, "default", PLURAL, "k", {"spec": {"size": 5}}
        )
        assert patched["spec"]["size"] == 5
        status: dict[str, Any] = api.patch_namespaced_custom_object_status(  # type: ignore[assignment]
            GROUP, VERSION, "default", PLURAL, "k", {"status": {"phase": "Ready"}}
        )
        assert status["status"] == {"phase": "Ready"}
        with pytest.raises(k8s.ApiException) as invalid:
            api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "k", {"spec": {"size": -1}})
        assert invalid.value.status == 422
        listed: dict[str, Any] = api.list_namespaced_custom_object(  # type: ignore[assignment]
            GROUP, VERSION, "default", PLURAL
        )
        api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "k")
        with pytest.raises(k8s.ApiException) as gone:
            api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "k")
        assert gone.value.status == 404
        return listed

    listed = await asyncio.to_thread(scenario)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["k"]


async def test_watch_stream(server: AggregatedServer, core: TestAPIServer) -> None:
    api = custom_objects(server, core.token)

    def watch() -> list[tuple[str, str]]:
        seen = []
        stream = k8s_watch.Watch()
        for event in stream.stream(
            api.list_namespaced_custom_object, GROUP, VERSION, "default", PLURAL, timeout_seconds=5
        ):
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if len(seen) == 2:
                stream.stop()
        return seen

    watching = asyncio.create_task(asyncio.to_thread(watch))
    await asyncio.sleep(0.3)
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Flunder", "metadata": {"name": "w"}}
    await asyncio.to_thread(api.create_namespaced_custom_object, GROUP, VERSION, "default", PLURAL, body)
    await asyncio.to_thread(api.delete_namespaced_custom_object, GROUP, VERSION, "default", PLURAL, "w")
    assert await asyncio.wait_for(watching, 15) == [("ADDED", "w"), ("DELETED", "w")]
