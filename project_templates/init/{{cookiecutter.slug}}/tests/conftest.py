{{ cookiecutter.license_header }}"""Shared fixtures: the project root, and pyop's test API server (`test_api_server`).

The server plays the built-in kinds of the Kubernetes version PROJECT records (`kubernetesVersion`, set with
`pyop init/edit --kubernetes-version`; absent means pyop's default), the version `make manifests` embeds in CRDs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yaml
from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.testing import TestAPIServer

PROJECT_ROOT = Path(__file__).resolve().parent.parent
KUBERNETES_VERSION = str(
    (yaml.safe_load((PROJECT_ROOT / "PROJECT").read_text(encoding="utf-8")) or {}).get("kubernetesVersion")
    or PINNED_KUBERNETES_VERSION
)


@pytest.fixture
def project_root() -> Path:
    return PROJECT_ROOT


@pytest_asyncio.fixture
async def test_api_server() -> AsyncIterator[TestAPIServer]:
    """A started test API server of the project's Kubernetes version, one per test."""
    async with TestAPIServer(kubernetes_version=KUBERNETES_VERSION) as server:
        yield server
