"""kube-apiserver's own Service, `default/kubernetes`, is there as on every cluster and in envtest: the first host of
the service range, port 443 `https` to the server's secure port, the apiserver's labels, written by
`kube-apiserver`, and made again when deleted. An operator listing Services in `default` sees it here too."""

from __future__ import annotations

import asyncio

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, eventually, official_client

SERVICES = "/api/v1/namespaces/default/services"


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
