"""Fixtures: a test server, the stand-in wardle server trusting its request-header CA, the APIService routing to it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest_asyncio
from testing_server.helpers import Api, connector

from aggregator.backend import GROUP, VERSION, Backend
from pyop.testing import TestAPIServer
from pyop.testing.aggregator import service_name_for

API_SERVICE = f"{VERSION}.{GROUP}"


def authentication_info(server: TestAPIServer) -> dict[str, str]:
    """The extension-apiserver-authentication ConfigMap's data, as an aggregated server reads it at start."""
    configmap = server.store.get("configmaps", "kube-system", "extension-apiserver-authentication")
    assert configmap is not None
    return dict(configmap["data"])


def new_backend(server: TestAPIServer, **options: Any) -> Backend:
    data = authentication_info(server)
    hosts = [f"{service_name_for(GROUP, VERSION)}.default.svc"]
    return Backend(
        data["requestheader-client-ca-file"].encode(), json.loads(data["requestheader-allowed-names"]), hosts, **options
    )


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer(bookmark_interval=0.05) as api_server:
        yield api_server


@pytest_asyncio.fixture
async def backend(server: TestAPIServer) -> AsyncIterator[Backend]:
    wardle = new_backend(server)
    await wardle.start()
    yield wardle
    await wardle.stop()
    wardle.remove_files()


@pytest_asyncio.fixture
async def registered(server: TestAPIServer, backend: Backend) -> dict[str, Any]:
    assert backend.serving_ca is not None
    return await server.register_api_service(GROUP, VERSION, backend.url, ca_bundle=backend.serving_ca.certificate)


@pytest_asyncio.fixture
async def api(server: TestAPIServer) -> AsyncIterator[Api]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        yield Api(session)
