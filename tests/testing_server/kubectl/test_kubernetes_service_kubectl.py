"""`kubectl get services` shows kube-apiserver's own Service as a cluster does: `default/kubernetes`, ClusterIP
10.96.0.1, 443/TCP, and its endpoints at the advertised address and the secure port."""

from __future__ import annotations

import pytest

from pyop.testing import TestAPIServer
from testing_server.kubectl.helpers import Kubectl


async def test_kubectl_get_services_shows_the_kubernetes_service(kubectl: Kubectl) -> None:
    listed = await kubectl("get", "services", "--all-namespaces", "--no-headers")
    [row] = listed.stdout.splitlines()
    assert row.split()[:6] == ["default", "kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]


async def test_kubectl_get_endpoints_shows_the_advertised_address(server: TestAPIServer, kubectl: Kubectl) -> None:
    address = server.controllers.kubernetes_service.advertise_address
    if address is None:
        pytest.skip("this host has no default route, so the server advertises no address (as kube-apiserver)")
    endpoints = await kubectl("get", "endpoints", "kubernetes", "-n", "default", "--no-headers")
    assert endpoints.stdout.split()[:2] == ["kubernetes", f"{address}:{server.listening_port}"]
    slices = await kubectl("get", "endpointslices", "-n", "default", "--no-headers")
    [row] = slices.stdout.splitlines()
    assert row.split()[:4] == ["kubernetes", "IPv4", str(server.listening_port), address]


async def test_kubectl_apply_of_loopback_endpoints_is_refused_as_on_a_cluster(kubectl: Kubectl) -> None:
    manifest = (
        "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: local\nsubsets:\n"
        "- addresses:\n  - ip: 127.0.0.1\n  ports:\n  - port: 8080\n"
    )
    refused = await kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert refused.returncode != 0
    assert (
        'The Endpoints "local" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": '
        "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    ) in refused.stderr
