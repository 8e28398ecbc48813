"""Through the test API server's aggregation: clients of the cluster reach the wardle server via its APIService,
with the front proxy's request-header identity; authentication and authorization are delegated back."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from apiserver.helpers import kubectl
from apiserver.test_authentication import grant
from apiserver.wardle import Flunder, FlunderSpec
from pyop.api import ObjectMeta
from pyop.apiserver import AggregatedServer, APIGroupVersion
from pyop.client import Client, ForbiddenError, Transport
from pyop.testing import TestAPIServer

FLUNDER = """
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: through
  namespace: default
spec:
  size: 8
"""


@pytest_asyncio.fixture
async def aggregated(core: TestAPIServer, group: APIGroupVersion) -> AsyncIterator[AggregatedServer]:
    """Registered with the cluster; the request-header CA and allowed names from its ConfigMap."""
    async with AggregatedServer.for_testing([group], core) as server:
        yield server


@pytest.fixture
def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the servers with the real kubectl")
    return found


async def test_request_header_settings_come_from_the_cluster(aggregated: AggregatedServer, core: TestAPIServer) -> None:
    request_header = aggregated.config.authenticator.request_header
    assert request_header is not None
    assert request_header.config.client_ca.pem.strip() == core.aggregator.request_header_ca.strip()
    assert request_header.config.allowed_names == ["front-proxy-client"]


async def test_pyop_client_through_the_cluster(aggregated: AggregatedServer, core: TestAPIServer) -> None:
    async with Client(Transport(core.client_config())) as client:
        created = await client.create(
            Flunder(metadata=ObjectMeta(name="via", namespace="default"), spec=FlunderSpec(size=2))
        )
        assert created.metadata.labels == {"wardle.example.com/created-by": "strategy"}
        assert [f.metadata.name for f in (await client.list(Flunder, "default")).items] == ["via"]
    assert aggregated.operations.store.get("flunders.wardle.example.com", "default", "via") is not None


async def test_denied_when_rbac_says_no(aggregated: AggregatedServer, core: TestAPIServer) -> None:
    core.add_user("bob-token", "bob")
    async with Client(Transport(core.client_config(token="bob-token"))) as client:
        with pytest.raises(ForbiddenError) as denied:
            await client.list(Flunder, "default")
        assert 'User "bob" cannot list resource "flunders"' in str(denied.value)
        await grant(core, "User", "bob", ["list"])
        assert (await client.list(Flunder, "default")).items == []


async def test_kubectl_get_create_through_the_cluster(
    aggregated: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    created = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "create", "-f", "-", stdin=FLUNDER)
    assert created.returncode == 0, created.stderr
    got = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "get", "flunders", "-n", "default")
    assert got.returncode == 0, got.stderr
    assert [line.split() for line in got.stdout.splitlines()] == [["NAME", "SIZE", "PHASE"], ["through", "8"]]
    resources = await kubectl(
        kubectl_binary, core.kubeconfig_path, tmp_path, "api-resources", "--api-group=wardle.example.com"
    )
    assert "flunders" in resources.stdout and "fischers" in resources.stdout, resources.stderr
