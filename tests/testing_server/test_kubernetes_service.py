"""kube-apiserver's own Service, `default/kubernetes`, is there as on every cluster and in envtest: the first host of
the service range, port 443 `https` to the server's secure port, the apiserver's labels, written by
`kube-apiserver`, and made again when deleted. An operator listing Services in `default` sees it here too. So are
its Endpoints and EndpointSlice, holding the advertised address (kube-apiserver's --advertise-address; by default
the host's address on its default route) and the secure port, put right again when changed or deleted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from pyop.testing import TestAPIServer
from pyop.testing.controllers.kubernetes_service import default_route_address
from testing_server.helpers import Api, api_for, eventually, official_client

SERVICES = "/api/v1/namespaces/default/services"
ENDPOINTS = "/api/v1/namespaces/default/endpoints"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
ADVERTISED = "192.0.2.10"  # TEST-NET-1: an address kube-apiserver may advertise


@pytest_asyncio.fixture
async def advertised() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer(advertise_address=ADVERTISED) as server:
        yield server


async def test_the_kubernetes_service_is_served(server: TestAPIServer, api: Api) -> None:
    status, service = await api.get(f"{SERVICES}/kubernetes")
    assert status == 200
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert [entry["manager"] for entry in service["metadata"]["managedFields"]] == ["kube-apiserver"]
    secure_port = int(server.url.rsplit(":", 1)[1])
    assert service["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": secure_port}]
    assert service["spec"]["clusterIP"] == "10.96.0.1" and service["spec"]["clusterIPs"] == ["10.96.0.1"]
    assert service["spec"]["type"] == "ClusterIP" and service["spec"]["sessionAffinity"] == "None"

    status, listed = await api.get("/api/v1/services")
    assert status == 200
    assert [(item["metadata"]["namespace"], item["metadata"]["name"]) for item in listed["items"]] == [
        ("default", "kubernetes")
    ]


async def test_another_service_gets_another_cluster_ip(api: Api) -> None:
    body = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}}
    created = await api.create_ok(SERVICES, body)
    assert created["spec"]["clusterIP"] not in ("", "10.96.0.1")


async def test_a_deleted_kubernetes_service_comes_back(server: TestAPIServer, api: Api) -> None:
    status, before = await api.get(f"{SERVICES}/kubernetes")
    status, _ = await api.delete(f"{SERVICES}/kubernetes")
    assert status == 200

    async def recreated() -> bool:
        status, service = await api.get(f"{SERVICES}/kubernetes")
        return status == 200 and service["metadata"]["uid"] != before["metadata"]["uid"]

    await eventually(recreated, "default/kubernetes made again")


async def test_the_official_client_lists_it(server: TestAPIServer) -> None:
    client = official_client(server)
    import kubernetes

    def names() -> list[str]:
        with client:
            services = kubernetes.client.CoreV1Api(client).list_namespaced_service("default")
            return [service.metadata.name for service in services.items]

    assert await asyncio.to_thread(names) == ["kubernetes"]


async def test_the_endpoints_hold_the_advertised_address_and_the_secure_port(advertised: TestAPIServer) -> None:
    async with api_for(advertised) as api:
        status, endpoints = await api.get(f"{ENDPOINTS}/kubernetes")
        assert status == 200
        assert endpoints["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
        port = {"name": "https", "port": advertised.listening_port, "protocol": "TCP"}
        assert endpoints["subsets"] == [{"addresses": [{"ip": ADVERTISED}], "ports": [port]}]
        assert [entry["manager"] for entry in endpoints["metadata"]["managedFields"]] == ["kube-apiserver"]

        status, endpoint_slice = await api.get(f"{SLICES}/kubernetes")
        assert status == 200
        assert endpoint_slice["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
        assert endpoint_slice["addressType"] == "IPv4"
        assert endpoint_slice["endpoints"] == [{"addresses": [ADVERTISED], "conditions": {"ready": True}}]
        assert endpoint_slice["ports"] == [port]

        # What a client finds through the EndpointSlice label, as kube-proxy and the reconciler look it up.
        status, listed = await api.get(f"{SLICES}?labelSelector=kubernetes.io/service-name%3Dkubernetes")
        assert status == 200 and [item["metadata"]["name"] for item in listed["items"]] == ["kubernetes"]


async def test_changed_endpoints_are_reset_and_deleted_ones_come_back(advertised: TestAPIServer) -> None:
    async with api_for(advertised) as api:
        status, endpoints = await api.get(f"{ENDPOINTS}/kubernetes")
        changed = {**endpoints, "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 1}]}]}
        status, answer = await api.put(f"{ENDPOINTS}/kubernetes", changed)
        assert status == 200, answer
        status, now = await api.get(f"{ENDPOINTS}/kubernetes")
        assert now["subsets"][0]["addresses"] == [{"ip": ADVERTISED}]
        assert int(now["metadata"]["resourceVersion"]) > int(answer["metadata"]["resourceVersion"])

        status, endpoint_slice = await api.get(f"{SLICES}/kubernetes")
        relabelled: dict[str, Any] = {**endpoint_slice, "metadata": {**endpoint_slice["metadata"], "labels": {}}}
        status, answer = await api.put(f"{SLICES}/kubernetes", relabelled)
        assert status == 200, answer
        status, now = await api.get(f"{SLICES}/kubernetes")
        assert now["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}

        for path in (ENDPOINTS, SLICES):
            status, before = await api.get(f"{path}/kubernetes")
            status, _ = await api.delete(f"{path}/kubernetes")
            assert status == 200
            status, again = await api.get(f"{path}/kubernetes")
            assert status == 200 and again["metadata"]["uid"] != before["metadata"]["uid"], path


async def test_other_endpoints_are_left_as_written(advertised: TestAPIServer) -> None:
    async with api_for(advertised) as api:
        body = {"metadata": {"name": "web"}, "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]}
        await api.create_ok(ENDPOINTS, body)
        status, stored = await api.get(f"{ENDPOINTS}/web")
        assert stored["subsets"] == [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80, "protocol": "TCP"}]}]
        assert "labels" not in stored["metadata"]


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "169.254.1.1", "0.0.0.0", "224.0.0.1", "not-an-ip"])
def test_an_address_kube_apiserver_may_not_advertise_is_refused(address: str) -> None:
    with pytest.raises(ValueError, match="advertise address") as refused:
        TestAPIServer(advertise_address=address)
    assert repr(address) in str(refused.value)


async def test_by_default_the_host_address_on_its_default_route_is_advertised(server: TestAPIServer) -> None:
    address = default_route_address()
    async with api_for(server) as api:
        status, endpoints = await api.get(f"{ENDPOINTS}/kubernetes")
    if address is None:
        assert status == 404  # no default route: nothing truthful to advertise, as kube-apiserver would not start
        return
    assert status == 200 and endpoints["subsets"][0]["addresses"] == [{"ip": address}]
    assert not address.startswith("127.")


async def test_serving_on_another_port_puts_the_kept_endpoints_right(advertised: TestAPIServer) -> None:
    """A server restarted over kept storage (etcd, a state file) listens on a new port: the start-up pass moves the
    endpoints there, as kube-apiserver's reconciler does when it starts."""
    advertised.controllers.kubernetes_service.serve(12345)
    endpoints = advertised.store.get("endpoints", "default", "kubernetes")
    endpoint_slice = advertised.store.get("endpointslices.discovery.k8s.io", "default", "kubernetes")
    assert endpoints is not None and endpoint_slice is not None
    assert endpoints["subsets"][0]["ports"][0]["port"] == 12345
    assert endpoint_slice["ports"][0]["port"] == 12345
