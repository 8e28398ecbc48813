"""The `proxy` subresources of pods, services and nodes through the real kubectl (issue 12): `kubectl get --raw`,
`kubectl create --raw` (a POST) and `kubectl proxy` (kubectl's own local proxy in front of the test server).

The process behind the port is a real aiohttp server on 127.0.0.1 (`forward_port`), echoing what it received.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest_asyncio

from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.kubectl.helpers import GUARD, Kubectl
from testing_server.proxy_backend import header, serve_backend
from testing_server.test_resource_proxy import (
    NS,
    POD_IP,
    make_node,
    make_pod,
    make_service,
    subset,
)


@pytest_asyncio.fixture
async def backend() -> AsyncIterator[int]:
    async with serve_backend() as port:
        yield port


async def test_kubectl_get_raw_reaches_a_pods_port(
    server: TestAPIServer, api: Api, kubectl: Kubectl, backend: int
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    result = await kubectl("get", "--raw", f"{NS}/pods/web:8080/proxy/metrics?format=text")
    answer = json.loads(result.stdout)
    assert (answer["method"], answer["path"]) == ("GET", "/metrics?format=text")
    assert header(answer, "X-Forwarded-Uri") == [f"{NS}/pods/web:8080/proxy/metrics"]
    assert header(answer, "Authorization") == []  # kubectl's token stops at the API server
    assert header(answer, "User-Agent")[0].startswith("kubectl/")


async def test_kubectl_create_raw_posts_through_the_proxy(
    server: TestAPIServer,
    api: Api,
    kubectl: Kubectl,
    backend: int,
    tmp_path: Path,
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    body = tmp_path / "body.json"
    body.write_text('{"hello": "pod"}')
    result = await kubectl("create", "--raw", f"{NS}/pods/web/proxy/submit", "-f", str(body))
    answer = json.loads(result.stdout)
    assert (answer["method"], answer["path"], json.loads(answer["body"])) == ("POST", "/submit", {"hello": "pod"})


async def test_kubectl_get_raw_through_a_service_and_a_node(
    server: TestAPIServer,
    api: Api,
    kubectl: Kubectl,
    backend: int,
) -> None:
    await make_pod(api, "web-1")
    await make_service(api, endpoints=[subset(POD_IP, "web-1")])
    server.pod_streams.forward_port("default", "web-1", 8080, target_port=backend)
    answer = json.loads((await kubectl("get", "--raw", f"{NS}/services/web:http/proxy/healthz")).stdout)
    assert answer["path"] == "/healthz"
    await make_node(api, "node-a", [{"type": "InternalIP", "address": "10.0.0.5"}])
    server.node_proxies.forward_kubelet("node-a", target_port=backend)
    answer = json.loads((await kubectl("get", "--raw", "/api/v1/nodes/node-a/proxy/configz")).stdout)
    assert answer["path"] == "/configz"


async def test_kubectl_prints_kubes_errors(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    await make_pod(api, "web")
    result = await kubectl("get", "--raw", f"{NS}/pods/web:9999/proxy/", check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Error from server (ServiceUnavailable): error trying to reach service: dial tcp "
        f"{POD_IP}:9999: connect: connection refused"
    )
    await make_service(api, endpoints=[])
    result = await kubectl("get", "--raw", f"{NS}/services/web:80/proxy/", check=False)
    assert result.stderr.strip() == ('Error from server (ServiceUnavailable): no endpoints available for service "web"')


async def test_kubectl_proxy_serves_a_pods_port_locally(
    server: TestAPIServer,
    api: Api,
    kubectl: Kubectl,
    backend: int,
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(kubectl.home), "KUBECONFIG": str(server.kubeconfig_path)}
    process = await asyncio.create_subprocess_exec(
        kubectl.binary,
        "proxy",
        "--port=0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), GUARD)).decode()
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert match, line
        local = f"http://127.0.0.1:{match.group(1)}"
        async with aiohttp.ClientSession() as session:
            async with session.put(f"{local}{NS}/pods/web:8080/proxy/items/1?dry=1", data=b"new") as response:
                assert response.status == 200
                answer = await response.json()
            async with session.get(f"{local}{NS}/pods/web/proxy/redirect", allow_redirects=False) as response:
                assert response.status == 302
                assert response.headers["Location"] == f"{NS}/pods/web/proxy/login"
    finally:
        process.terminate()
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(process.wait(), GUARD)
    assert (answer["method"], answer["path"], answer["body"]) == ("PUT", "/items/1?dry=1", "new")
    assert header(answer, "Authorization") == []
