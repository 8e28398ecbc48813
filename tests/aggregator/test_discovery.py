"""Discovery with aggregated group/versions: ``/apis`` and ``/apis/<group>`` from the APIServices (listed whether or
not their server answers), ``/apis/<group>/<version>`` proxied, and aggregated discovery (v2) with the resources
fetched from the server, or Stale when they could not be."""

from __future__ import annotations

from typing import Any

from testing_server.helpers import Api

from aggregator.backend import GROUP, GROUP_VERSION, RESOURCE_LIST, VERSION, Backend
from aggregator.conftest import API_SERVICE, new_backend
from aggregator.helpers import wait_for_condition
from pyop.testing import TestAPIServer

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


async def _aggregated(api: Api) -> dict[str, Any]:
    async with api.session.get("/apis", headers={"Accept": AGGREGATED}) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == AGGREGATED
        return dict(await response.json())


def _group(document: dict[str, Any], name: str) -> dict[str, Any]:
    return next(item for item in document["items"] if item["metadata"]["name"] == name)


async def test_the_group_is_listed_after_the_servers_own(api: Api, registered: dict[str, Any]) -> None:
    status, groups = await api.get("/apis")
    assert status == 200
    entry = {"groupVersion": GROUP_VERSION, "version": VERSION}
    assert groups["groups"][-1] == {"name": GROUP, "versions": [entry], "preferredVersion": entry}
    assert "apps" in [group["name"] for group in groups["groups"][:-1]]
    status, group = await api.get(f"/apis/{GROUP}")
    assert (status, group) == (
        200,
        {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": [entry], "preferredVersion": entry},
    )
    status, resources = await api.get(f"/apis/{GROUP_VERSION}")  # proxied: the server's own document
    assert (status, resources) == (200, RESOURCE_LIST)


async def test_versions_and_groups_follow_their_priorities(server: TestAPIServer, api: Api, backend: Backend) -> None:
    for group, version, group_priority, version_priority in (
        ("b.example.com", "v1", 1000, 10),
        ("b.example.com", "v2alpha1", 1000, 20),  # a higher versionPriority beats GA
        ("b.example.com", "v1beta1", 1000, 10),
        ("a.example.com", "v1", 900, 15),
        ("c.example.com", "v1", 1000, 15),
    ):
        await server.register_api_service(
            group,
            version,
            backend.url,
            insecure_skip_tls_verify=True,
            group_priority_minimum=group_priority,
            version_priority=version_priority,
            service_name=f"{group.split('.')[0]}-{version}",
        )
    status, groups = await api.get("/apis")
    assert status == 200
    aggregated = [(g["name"], [v["version"] for v in g["versions"]]) for g in groups["groups"]][-3:]
    assert aggregated == [
        ("b.example.com", ["v2alpha1", "v1", "v1beta1"]),
        ("c.example.com", ["v1"]),
        ("a.example.com", ["v1"]),
    ]
    status, group = await api.get("/apis/b.example.com")
    assert group["preferredVersion"]["version"] == "v2alpha1"


async def test_aggregated_discovery_carries_the_servers_resources(api: Api, registered: dict[str, Any]) -> None:
    document = await _aggregated(api)
    version = _group(document, GROUP)["versions"][0]
    assert version["version"] == VERSION and version["freshness"] == "Current"
    assert [resource["resource"] for resource in version["resources"]] == ["flunders"]
    assert document["items"][-1]["metadata"]["name"] == GROUP
    apps = _group(document, "apps")  # the server's own groups are still there
    assert apps["versions"][0]["version"] == "v1"


async def test_a_server_without_aggregated_discovery_is_read_the_unaggregated_way(
    server: TestAPIServer, api: Api
) -> None:
    wardle = new_backend(server, aggregated_discovery=False)
    await wardle.start()
    try:
        assert wardle.serving_ca is not None
        await server.register_api_service(GROUP, VERSION, wardle.url, ca_bundle=wardle.serving_ca.certificate)
        version = _group(await _aggregated(api), GROUP)["versions"][0]
        assert version["freshness"] == "Current"
        flunders = version["resources"][0]
        assert (flunders["resource"], flunders["scope"], flunders["shortNames"]) == ("flunders", "Namespaced", ["fl"])
        assert flunders["responseKind"] == {"group": GROUP, "version": VERSION, "kind": "Flunder"}
    finally:
        await wardle.stop()
        wardle.remove_files()


async def test_an_unavailable_server_is_stale_in_aggregated_discovery_and_listed_still(
    server: TestAPIServer, api: Api, backend: Backend, registered: dict[str, Any]
) -> None:
    await backend.stop()
    await wait_for_condition(server, API_SERVICE, "False", "FailedDiscoveryCheck")
    version = _group(await _aggregated(api), GROUP)["versions"][0]
    assert version == {"version": VERSION, "resources": [], "freshness": "Stale"}
    status, groups = await api.get("/apis")
    assert groups["groups"][-1]["name"] == GROUP
    async with api.session.get(f"/apis/{GROUP_VERSION}") as response:
        assert response.status == 503  # the group/version's own document is the server's: proxied, unavailable
