"""Fixtures: a started TestAPIServer (fast bookmarks) and an authenticated HTTP helper for it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from pyop.testing import TestAPIServer
from testing_server.helpers import Api


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer(bookmark_interval=0.05) as api_server:
        yield api_server


@pytest_asyncio.fixture
async def api(server: TestAPIServer) -> AsyncIterator[Api]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers) as session:
        yield Api(session)
