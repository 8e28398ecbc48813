"""Fixtures: the real kubectl, run against a started test server through the kubeconfig the server wrote.

kubectl runs as a subprocess while the server runs in the test's event loop, so it is awaited, never blocked on.
Each run gets its own HOME and discovery cache (nothing is read from or written to the developer's ~/.kube).
Tests skip, with the reason, when no kubectl is on PATH.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyop.testing import TestAPIServer
from testing_server.kubectl.helpers import Kubectl


@pytest.fixture
def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the server with the real kubectl")
    return found


@pytest.fixture
def kubectl(kubectl_binary: str, server: TestAPIServer, tmp_path: Path) -> Kubectl:
    return Kubectl(kubectl_binary, server, tmp_path)
