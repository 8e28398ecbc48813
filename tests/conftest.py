"""Fixtures every test folder may use."""

from __future__ import annotations

import os

import pytest
from distributions.environments import index_reachable


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not index_reachable(tmp_path_factory.mktemp("probe")):
        if os.environ.get("PYOP_REQUIRE_INDEX") == "1":  # CI: a skipped stranger's install is a failure
            pytest.fail("PYOP_REQUIRE_INDEX=1 but the package index is unreachable", pytrace=False)
        pytest.skip("the package index is unreachable: fresh environments cannot install pyop-kit's dependencies")
