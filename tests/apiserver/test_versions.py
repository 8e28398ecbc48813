"""A kind served at two versions by an aggregated server (`pyop.apiserver.conversion`): stored once in its hub's
version, read and written at either, watch events converted, discovery and OpenAPI per version with v1 preferred,
conversion failures as the API server's 500, and the start-up refusals of versions that cannot be served together."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from testing_server.helpers import GUARD, connector

from apiserver.helpers import call, client_context, kubectl
from apiserver.wardle_versions import (
    COLOUR,
    GROUP,
    REFUSED,
    V1,
    V1ALPHA1,
    Widget,
    WidgetSpec,
    WidgetV1Alpha1,
    widget_groups,
)
from pyop.api import Resource as Model
from pyop.apiserver import AggregatedServer, APIGroupVersion, Resource, ResourceDefinitionError
from pyop.apiserver.groups import served_kinds
from pyop.testing import TestAPIServer
from pyop.webhook import Hub

ALPHA = f"/apis/{GROUP}/v1alpha1/namespaces/default/widgets"
ONE = f"/apis/{GROUP}/v1/namespaces/default/widgets"
STORAGE_KEY = f"widgets.{GROUP}"


@pytest_asyncio.fixture
async def widgets(core: TestAPIServer) -> AsyncIterator[AggregatedServer]:
    async with AggregatedServer.for_testing(widget_groups(), core) as server:
        yield server


def alpha(name: str, size: int, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "Widget",
        "metadata": {"name": name, **metadata},
        "spec": {"size": size},
    }


def one(name: str, replicas: int, colour: str = "plain") -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "colour": colour},
    }


async def test_written_at_v1alpha1_stored_once_at_v1_and_read_at_both(
    widgets: AggregatedServer, core: TestAPIServer
) -> None:
    status, created = await call(widgets, "POST", ALPHA, token=core.token, body=alpha("a", 3))
    assert status == 201, created
    assert (created["apiVersion"], created["spec"]) == (f"{GROUP}/v1alpha1", {"size": 3})
    stored = widgets.operations.store.get(STORAGE_KEY, "default", "a")
    assert stored is not None
    assert (stored["apiVersion"], stored["spec"]) == (f"{GROUP}/v1", {"replicas": 3, "colour": "plain"})
    status, read = await call(widgets, "GET", f"{ONE}/a", token=core.token)
    assert (status, read["apiVersion"], read["spec"]) == (200, f"{GROUP}/v1", {"replicas": 3, "colour": "plain"})
    assert read["metadata"]["uid"] == created["metadata"]["uid"]
    assert read["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    for path, version in ((ALPHA, "v1alpha1"), (ONE, "v1")):
        status, listed = await call(widgets, "GET", path, token=core.token)
        assert (status, listed["apiVersion"]) == (200, f"{GROUP}/{version}")
        assert [item["apiVersion"] for item in listed["items"]] == [f"{GROUP}/{version}"]


async def test_a_field_only_v1_has_survives_an_update_at_v1alpha1(
    widgets: AggregatedServer, core: TestAPIServer
) -> None:
    status, _ = await call(widgets, "POST", ONE, token=core.token, body=one("b", 2, colour="teal"))
    assert status == 201
    status, seen = await call(widgets, "GET", f"{ALPHA}/b", token=core.token)
    assert (status, seen["spec"], seen["metadata"]["annotations"]) == (200, {"size": 2}, {COLOUR: "teal"})
    seen["spec"]["size"] = 5
    status, updated = await call(widgets, "PUT", f"{ALPHA}/b", token=core.token, body=seen)
    assert status == 200, updated
    assert updated["metadata"]["generation"] == 2
    status, read = await call(widgets, "GET", f"{ONE}/b", token=core.token)
    assert read["spec"] == {"replicas": 5, "colour": "teal"}
    assert not read["metadata"].get("annotations")


async def test_each_version_validates_with_its_own_schema_and_strategy(
    widgets: AggregatedServer, core: TestAPIServer
) -> None:
    status, refused = await call(widgets, "POST", ALPHA, token=core.token, body=alpha("unlucky", 13))
    assert (status, refused["reason"]) == (422, "Invalid")
    assert refused["details"]["causes"][0]["field"] == "spec.size"
    status, _ = await call(widgets, "POST", ONE, token=core.token, body=one("lucky", 13))
    assert status == 201  # v1's strategy has no such rule
    status, refused = await call(widgets, "POST", ONE, token=core.token, body=one("negative", -1))
    assert (status, refused["reason"]) == (422, "Invalid")


async def test_watch_events_are_converted_to_the_watched_version(
    widgets: AggregatedServer, core: TestAPIServer
) -> None:
    headers = {"Authorization": f"Bearer {core.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{widgets.url}{ALPHA}?watch=true", headers=headers, ssl=client_context(widgets)) as response,
    ):
        assert response.status == 200
        status, _ = await call(widgets, "POST", ONE, token=core.token, body=one("w", 7))
        assert status == 201
        async with asyncio.timeout(GUARD):
            line = await response.content.readline()
    event = json.loads(line)
    assert event["type"] == "ADDED"
    assert (event["object"]["apiVersion"], event["object"]["spec"]) == (f"{GROUP}/v1alpha1", {"size": 7})


async def test_a_failing_conversion_is_a_500(widgets: AggregatedServer, core: TestAPIServer) -> None:
    status, failed = await call(widgets, "POST", ALPHA, token=core.token, body=alpha(REFUSED, 1))
    assert (status, failed["reason"]) == (500, "InternalError")
    assert failed["message"].startswith("Internal error occurred: converting Widget 'refuse-conversion' from ")
    assert failed["message"].endswith("ValueError: this widget cannot be converted")
    assert failed["details"]["causes"] == [{"message": failed["message"].removeprefix("Internal error occurred: ")}]
    assert widgets.operations.store.get(STORAGE_KEY, "default", REFUSED) is None


async def test_discovery_and_openapi_per_version_through_the_cluster(
    widgets: AggregatedServer, core: TestAPIServer
) -> None:
    async def get(path: str) -> Any:
        headers = {"Authorization": f"Bearer {core.token}", "Accept": "application/json"}
        async with (
            aiohttp.ClientSession(base_url=core.url, headers=headers, connector=connector(core)) as session,
            session.get(path) as answer,
        ):
            assert answer.status == 200, await answer.text()
            return await answer.json()

    group = await get(f"/apis/{GROUP}")
    assert [entry["version"] for entry in group["versions"]] == ["v1", "v1alpha1"]
    assert group["preferredVersion"]["version"] == "v1"
    for version, field in (("v1", "replicas"), ("v1alpha1", "size")):
        resources = await get(f"/apis/{GROUP}/{version}")
        assert {entry["name"] for entry in resources["resources"]} == {"widgets", "widgets/status"}
        index = await get("/openapi/v3")
        document = await get(index["paths"][f"apis/{GROUP}/{version}"]["serverRelativeURL"])
        schema = document["components"]["schemas"][f"com.example.wardle.{version}.Widget"]
        assert field in schema["properties"]["spec"]["properties"]
    merged = await get("/openapi/v2")
    assert {"com.example.wardle.v1.Widget", "com.example.wardle.v1alpha1.Widget"} <= set(merged["definitions"])


@pytest.fixture
def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the servers with the real kubectl")
    return found


async def test_kubectl_reads_the_preferred_version_and_an_explicit_one(
    widgets: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    status, _ = await call(widgets, "POST", ALPHA, token=core.token, body=alpha("k", 4))
    assert status == 201
    preferred = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "get", "widgets", "k", "-o", "json")
    assert preferred.returncode == 0, preferred.stderr
    assert json.loads(preferred.stdout)["spec"] == {"replicas": 4, "colour": "plain"}
    explicit = await kubectl(
        kubectl_binary, core.kubeconfig_path, tmp_path, "get", f"widgets.v1alpha1.{GROUP}", "k", "-o", "json"
    )
    assert explicit.returncode == 0, explicit.stderr
    assert json.loads(explicit.stdout)["spec"] == {"size": 4}
    table = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "get", f"widgets.v1alpha1.{GROUP}")
    assert table.stdout.split() == ["NAME", "SIZE", "k", "4"]  # v1alpha1's columns


class Unhubbed(Model, group_version=V1, kind="Widget"):
    spec: WidgetSpec = WidgetSpec()


class SecondHub(Model, Hub, group_version=V1ALPHA1, kind="Widget"):
    spec: WidgetSpec = WidgetSpec()


class NotConvertible(Model, group_version=V1ALPHA1, kind="Widget"):
    spec: WidgetSpec = WidgetSpec()


class OtherScope(Model, group_version=V1ALPHA1, kind="Widget", namespaced=False):
    spec: WidgetSpec = WidgetSpec()


def _groups(first: type[Any], second: type[Any]) -> list[APIGroupVersion]:
    return [APIGroupVersion(GROUP, "v1", [Resource(first)]), APIGroupVersion(GROUP, "v1alpha1", [Resource(second)])]


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (
            Unhubbed,
            WidgetV1Alpha1,
            "widgets.wardle.example.com is served in v1 and v1alpha1: exactly one version's "
            "model must be the hub (its storage version: mix in pyop.webhook.Hub), none is",
        ),
        (Widget, SecondHub, "both Widget and SecondHub are"),
        (
            Widget,
            NotConvertible,
            "NotConvertible (v1alpha1) does not convert to the hub Widget: give it "
            "convert_to(self) -> Widget and convert_from(cls, hub: Widget) -> Self",
        ),
        (Widget, OtherScope, "OtherScope is not the same kind as the v1 model"),
    ],
)
def test_versions_that_cannot_be_served_together_are_refused(first: type[Any], second: type[Any], message: str) -> None:
    with pytest.raises(ResourceDefinitionError) as refused:
        served_kinds(_groups(first, second))
    assert message in str(refused.value)


def test_one_version_alone_needs_no_hub() -> None:
    (kind,) = served_kinds([APIGroupVersion(GROUP, "v1", [Resource(Unhubbed)])])
    assert kind.resource_type.conversion is None
    assert kind.resource_type.storage_version == "v1"


async def test_kubectl_applies_and_patches_at_v1alpha1(
    widgets: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    manifest = (
        f"apiVersion: {GROUP}/v1alpha1\nkind: Widget\nmetadata:\n  name: a\n  namespace: default\nspec:\n  size: 6\n"
    )
    for size in (6, 7):
        applied = await kubectl(
            kubectl_binary, core.kubeconfig_path, tmp_path, "apply", "--server-side", "-f", "-",
            stdin=manifest.replace("size: 6", f"size: {size}"),
        )  # fmt: skip
        assert applied.returncode == 0, applied.stderr
    patched = await kubectl(
        kubectl_binary, core.kubeconfig_path, tmp_path,
        "patch", f"widgets.v1alpha1.{GROUP}", "a", "--type=merge", "-p", '{"spec":{"size":9}}',
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr
    stored = widgets.operations.store.get(STORAGE_KEY, "default", "a")
    assert stored is not None and stored["spec"] == {"replicas": 9, "colour": "plain"}
    status, read = await call(widgets, "GET", f"{ALPHA}/a", token=core.token)
    assert (status, read["spec"]) == (200, {"size": 9})
