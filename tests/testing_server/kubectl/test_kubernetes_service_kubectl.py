"""`kubectl get services` shows kube-apiserver's own Service as a cluster does: `default/kubernetes`, ClusterIP
10.96.0.1, 443/TCP."""

from __future__ import annotations

from testing_server.kubectl.helpers import Kubectl


async def test_kubectl_get_services_shows_the_kubernetes_service(kubectl: Kubectl) -> None:
    listed = await kubectl("get", "services", "--all-namespaces", "--no-headers")
    [row] = listed.stdout.splitlines()
    assert row.split()[:6] == ["default", "kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
