"""Fixtures: a started TestAPIServer (fast bookmarks) and an authenticated HTTP helper for it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, connector


@pytest.fixture
def kubernetes_version() -> str:
    """The Kubernetes version of the `server` fixture; a module whose expectations are of one release overrides it."""
    return PINNED_KUBERNETES_VERSION


@pytest_asyncio.fixture
async def server(kubernetes_version: str) -> AsyncIterator[TestAPIServer]:
    # Without kube-root-ca.crt: these tests count the ConfigMaps they list (test_pod_admission.py checks it).
    async with TestAPIServer(
        bookmark_interval=0.05, kubernetes_version=kubernetes_version, root_ca_config_maps=False
    ) as api_server:
        yield api_server


@pytest_asyncio.fixture
async def api(server: TestAPIServer) -> AsyncIterator[Api]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        yield Api(session)
