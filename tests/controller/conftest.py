"""Fixtures for controller tests: a test API server serving the Widget and Gadget CRDs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from ctrl_helpers import GADGET_CRD, WIDGET_CRD

from pyop.testing import TestAPIServer


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer(bookmark_interval=0.2) as server:
        server.add_crd(WIDGET_CRD)
        server.add_crd(GADGET_CRD)
        yield server
