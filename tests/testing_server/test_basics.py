"""Server lifecycle, authentication, kubeconfig, discovery and request counting."""

from __future__ import annotations

import aiohttp
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

from pyop.testing import TestAPIServer
from testing_server.helpers import CM, Api, configmap, connector


async def test_requests_without_bearer_token_get_401_status(server: TestAPIServer) -> None:
    async with aiohttp.ClientSession(base_url=server.url, connector=connector(server)) as session:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {server.token}"}):
            async with session.get("/api/v1/namespaces", headers=headers) as response:
                assert response.status == 401
                status = await response.json()
        assert status["kind"] == "Status"
        assert status["reason"] == "Unauthorized"
        assert status["code"] == 401


async def test_plain_api_starts_and_stops_a_real_server() -> None:
    async with TestAPIServer(tls=False) as server:
        url = server.url
        assert url.startswith("http://127.0.0.1:")
        assert "certificate-authority-data" not in server.kubeconfig_dict()["clusters"][0]["cluster"]
        async with aiohttp.ClientSession() as session, session.get(f"{url}/healthz") as response:
            assert response.status == 200
    async with aiohttp.ClientSession() as session:
        try:
            await session.get(f"{url}/healthz")
        except aiohttp.ClientConnectionError:
            pass
        else:
            raise AssertionError("server still answering after stop")


async def test_kubeconfig_loads_with_a_standard_loader(server: TestAPIServer) -> None:
    configuration = k8s_client.Configuration()
    await k8s_config.load_kube_config(
        config_file=str(server.kubeconfig_path), client_configuration=configuration, context="pyop-test"
    )
    assert configuration.host == server.url
    assert configuration.api_key["BearerToken"] == f"Bearer {server.token}"
    assert server.kubeconfig_dict()["current-context"] == "pyop-test"


async def test_plugin_fixture_provides_a_started_server(test_api_server: TestAPIServer) -> None:
    headers = {"Authorization": f"Bearer {test_api_server.token}"}
    url = f"{test_api_server.url}/api/v1/namespaces/default"
    async with (
        aiohttp.ClientSession(headers=headers, connector=connector(test_api_server)) as session,
        session.get(url) as response,
    ):
        assert response.status == 200
        assert (await response.json())["status"]["phase"] == "Active"


async def test_discovery_lists_core_resources_with_subresources(api: Api) -> None:
    status, versions = await api.get("/api")
    assert status == 200 and versions["versions"] == ["v1"]
    status, core = await api.get("/api/v1")
    by_name = {entry["name"]: entry for entry in core["resources"]}
    assert core["groupVersion"] == "v1"
    for name in ("namespaces", "configmaps", "secrets", "services", "pods", "events", "serviceaccounts"):
        assert name in by_name
    assert by_name["pods"]["namespaced"] is True and by_name["pods"]["kind"] == "Pod"
    assert by_name["namespaces"]["namespaced"] is False
    assert "po" in by_name["pods"]["shortNames"]
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert "watch" in by_name["configmaps"]["verbs"]


async def test_discovery_lists_groups_and_group_resources(api: Api) -> None:
    status, groups = await api.get("/apis")
    names = {group["name"]: group for group in groups["groups"]}
    for group in (
        "apps",
        "coordination.k8s.io",
        "events.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "apiextensions.k8s.io",
    ):
        assert names[group]["preferredVersion"]["version"] == "v1"
    status, apps = await api.get("/apis/apps/v1")
    by_name = {entry["name"]: entry for entry in apps["resources"]}
    assert by_name["deployments"]["shortNames"] == ["deploy"]
    assert "deployments/status" in by_name
    assert by_name["deployments/scale"]["kind"] == "Scale"
    status, reviews = await api.get("/apis/authentication.k8s.io/v1")
    assert reviews["resources"][0]["verbs"] == ["create"]
    status, group = await api.get("/apis/apps")
    assert group["kind"] == "APIGroup" and group["preferredVersion"]["groupVersion"] == "apps/v1"
    status, missing = await api.get("/apis/nothing.example.com/v1")
    assert status == 404 and missing["reason"] == "NotFound"


async def test_request_log_counts_requests_by_verb(server: TestAPIServer, api: Api) -> None:
    server.reset_requests()
    await api.create_ok(CM, configmap("a"))
    await api.get(f"{CM}/a")
    await api.get(CM)
    await api.delete(f"{CM}/a")
    assert server.request_count == 4
    assert [record.verb for record in server.requests] == ["create", "get", "list", "delete"]
    assert server.count_requests(verb="get", resource="configmaps") == 1
    assert server.requests[0].method == "POST" and server.requests[0].path == CM
    assert server.requests[0].status == 201
