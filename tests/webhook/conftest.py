"""Fixtures for webhook tests: a test API server and a serving certificate for 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from webhook_helpers import certificate_folder

from pyop.testing import TestAPIServer


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer() as server:
        yield server


@pytest.fixture
def cert_dir(tmp_path: Path) -> Path:
    return certificate_folder(tmp_path / "certs")
