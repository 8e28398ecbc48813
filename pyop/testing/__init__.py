"""Test support for operators: a stateful Kubernetes API server to run controllers against.

``TestAPIServer`` is pyop's envtest: real HTTP on 127.0.0.1, Kubernetes semantics, fault injection.
The pytest plugin (``pyop.testing.pytest_plugin``) provides it as the ``test_api_server`` fixture.
"""

from pyop.testing.crds import schemaless_crd
from pyop.testing.errors import ApiError
from pyop.testing.faults import FaultInjector
from pyop.testing.server import RequestRecord, TestAPIServer

__all__ = ["ApiError", "FaultInjector", "RequestRecord", "TestAPIServer", "schemaless_crd"]
