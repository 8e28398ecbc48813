"""kubectl's pod subresource commands against the test server: `kubectl logs` reads what a kubelet would stream,
and `kubectl drain`'s eviction path (it checks discovery for pods/eviction, then POSTs Evictions) is answered
with the PodDisruptionBudget's verdict."""

from __future__ import annotations

from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.kubectl.helpers import Kubectl

PODS = "/api/v1/namespaces/default/pods"


async def _scheduled_pod(api: Api, name: str, node: str) -> None:
    await api.create_ok(
        PODS,
        {
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "x:1"}]},
        },
    )
    binding = {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}}
    assert (await api.post(f"{PODS}/{name}/binding", binding))[0] == 201


async def test_kubectl_logs_shows_the_containers_log(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    await _scheduled_pod(api, "web-1", "node-a")
    server.pod_logs.set("default", "web-1", "app", "started\nlistening on :8080\n")
    result = await kubectl("logs", "web-1")
    assert result.stdout == "started\nlistening on :8080\n"
    result = await kubectl("logs", "web-1", "--tail=1")
    assert result.stdout == "listening on :8080\n"


async def test_kubectl_drain_evicts_the_nodes_pods(api: Api, kubectl: Kubectl) -> None:
    await api.create_ok("/api/v1/nodes", {"metadata": {"name": "node-a"}})
    await _scheduled_pod(api, "web-1", "node-a")
    result = await kubectl("drain", "node-a", "--force", "--timeout=20s", check=False)
    assert "evicting pod default/web-1" in result.stderr + result.stdout, result.stderr
    status, _ = await api.get(f"{PODS}/web-1")
    assert status == 404
