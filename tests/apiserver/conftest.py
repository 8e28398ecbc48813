"""Fixtures: the test API server as the cluster, and the wardle aggregated server delegating to it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from apiserver.helpers import CertificateAuthority, wardle_group
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.apiserver.storage.etcd.local import LocalEtcd, find_etcd
from pyop.testing import TestAPIServer


@pytest_asyncio.fixture
async def core() -> AsyncIterator[TestAPIServer]:
    """The cluster: answers TokenReviews and SubjectAccessReviews (RBAC), records every request."""
    async with TestAPIServer(bookmark_interval=0.05) as server:
        yield server


@pytest.fixture
def group() -> APIGroupVersion:
    return wardle_group()


@pytest.fixture
def front_proxy(tmp_path: Path) -> CertificateAuthority:
    """A request-header CA of the test's own, with the front proxy's allowed name."""
    return CertificateAuthority.create(tmp_path / "front-proxy", "front-proxy")


@pytest.fixture
def options(front_proxy: CertificateAuthority) -> RecommendedOptions:
    options = RecommendedOptions()
    options.authentication.requestheader_client_ca_file = str(front_proxy.ca_file)
    options.authentication.requestheader_allowed_names = ["front-proxy-client"]
    options.bookmark_interval = 0.05
    return options


@pytest_asyncio.fixture
async def server(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions
) -> AsyncIterator[AggregatedServer]:
    """The wardle server, talked to directly (no APIService)."""
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as aggregated:
        yield aggregated


@pytest.fixture(scope="session")
def etcd() -> Iterator[LocalEtcd]:
    """A real etcd on loopback for the session; skipped with the reason when there is none (a failure under
    PYOP_REQUIRE_ETCD=1, as .ci/run sets)."""
    binary = find_etcd()
    if binary is None:
        reason = "etcd not found ($PYOP_ETCD or etcd on PATH; Debian: apt-get install etcd-server)"
        if os.environ.get("PYOP_REQUIRE_ETCD") == "1":
            pytest.fail(f"PYOP_REQUIRE_ETCD=1 but {reason}")
        pytest.skip(reason)
    server = LocalEtcd(binary).start()
    yield server
    server.stop()
