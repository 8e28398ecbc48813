"""Fixtures: the test server and its HTTP helper (testing_server's), the real kubectl and helm when installed."""

from __future__ import annotations

from chart.conftest import helm  # noqa: F401 - a real helm (PYOP_HELM, PATH or scripts/get-helm.sh), else a skip
from testing_server.conftest import api, kubernetes_version, server  # noqa: F401 - the same server fixtures
from testing_server.kubectl.conftest import kubectl, kubectl_binary  # noqa: F401 - kubectl, or a skip
