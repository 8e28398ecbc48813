"""pytest plugin: the ``test_api_server`` fixture (a started ``TestAPIServer`` per test).

Registered as a ``pytest11`` entry point, and importable with
``pytest_plugins = ["pyop.testing.pytest_plugin"]``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from pyop.testing.server import TestAPIServer


@pytest_asyncio.fixture
async def test_api_server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer() as server:
        yield server
