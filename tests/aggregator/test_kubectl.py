"""kubectl -> test server -> the aggregated server: discovery, create, get and watch through the aggregator."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from testing_server.kubectl.helpers import GUARD, Kubectl, table

from aggregator.backend import Backend
from aggregator.conftest import API_SERVICE
from aggregator.helpers import wait_for_condition
from pyop.testing import TestAPIServer

FLUNDER = """apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: {name}
  namespace: default
spec:
  size: 2
"""


@pytest.fixture
def kubectl(server: TestAPIServer, tmp_path: Path) -> Kubectl:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the server with the real kubectl")
    return Kubectl(found, server, tmp_path)


async def test_kubectl_finds_creates_and_gets_flunders(
    kubectl: Kubectl, backend: Backend, registered: dict[str, Any]
) -> None:
    resources = await kubectl("api-resources", "--api-group", "wardle.example.com", "--no-headers")
    assert table(resources.stdout) == [["flunders", "fl", "wardle.example.com/v1alpha1", "true", "Flunder"]]
    created = await kubectl("create", "-f", "-", stdin=FLUNDER.format(name="one"))
    assert created.stdout.strip() == "flunder.wardle.example.com/one created"
    assert backend.flunders[("default", "one")]["spec"] == {"size": 2}
    got = await kubectl("get", "fl", "one", "-o", "jsonpath={.metadata.annotations.wardle\\.example\\.com/user}")
    assert got.stdout == "pyop-test-admin"
    names = await kubectl("get", "flunders", "-o", "name")
    assert names.stdout.split() == ["flunder.wardle.example.com/one"]


async def test_kubectl_watches_through_the_aggregator(
    server: TestAPIServer, kubectl: Kubectl, backend: Backend, registered: dict[str, Any]
) -> None:
    await kubectl("create", "-f", "-", stdin=FLUNDER.format(name="first"))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(kubectl.home), "KUBECONFIG": str(server.kubeconfig_path)}
    process = await asyncio.create_subprocess_exec(
        kubectl.binary,
        "get",
        "flunders",
        "--watch",
        "-o",
        "name",
        "--cache-dir",
        str(kubectl.home / "cache"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(GUARD):
            assert (await process.stdout.readline()).decode().strip() == "flunder.wardle.example.com/first"
            while backend.open_watches == 0:
                await asyncio.sleep(0.05)
            await kubectl("create", "-f", "-", stdin=FLUNDER.format(name="second"))
            assert (await process.stdout.readline()).decode().strip() == "flunder.wardle.example.com/second"
    finally:
        process.kill()
        await process.wait()


async def test_kubectl_reports_an_unavailable_server(
    server: TestAPIServer, kubectl: Kubectl, backend: Backend, registered: dict[str, Any]
) -> None:
    await backend.stop()
    await wait_for_condition(server, API_SERVICE, "False", "FailedDiscoveryCheck")
    raw = await kubectl("get", "--raw", "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", check=False)
    assert raw.returncode == 1
    assert (
        raw.stderr.strip()
        == "Error from server (ServiceUnavailable): the server is currently unable to handle the request"
    )
    services = await kubectl("get", "apiservices", "v1alpha1.wardle.example.com", "--no-headers")
    row = table(services.stdout)[0]
    assert row[:3] == [
        "v1alpha1.wardle.example.com",
        "default/v1alpha1-wardle-example-com",
        "False (FailedDiscoveryCheck)",
    ]
