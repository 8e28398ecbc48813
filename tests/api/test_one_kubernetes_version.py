"""One Kubernetes version for the typed models, the CRD generator's embedded types and the test API server."""

from __future__ import annotations

from pyop.api import k8s
from pyop.api.definitions import PINNED_KUBERNETES_VERSION, available_kubernetes_versions
from pyop.testing import TestAPIServer


def test_the_models_the_generator_and_the_server_share_the_newest_bundled_version() -> None:
    assert k8s.KUBERNETES_VERSION == PINNED_KUBERNETES_VERSION == available_kubernetes_versions()[-1]
    assert TestAPIServer().kubernetes_version == PINNED_KUBERNETES_VERSION
