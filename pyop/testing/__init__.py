"""Test support for operators: a stateful Kubernetes API server to run controllers against.

``TestAPIServer`` is pyop's envtest: real HTTPS on 127.0.0.1, Kubernetes semantics, fault injection.
The pytest plugin (``pyop.testing.pytest_plugin``) provides it as the ``test_api_server`` fixture.

The names below load on first use: pytest imports this package for its plugin wherever pyop-kit is installed,
including an operator's runtime-only environment without the ``testing`` extra (greenlet, CEL, PyYAML), and
there importing the package must cost nothing and fail nowhere.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyop.api.status import ApiError
    from pyop.testing.crds.ready_made import schemaless_crd
    from pyop.testing.faults import FaultInjector
    from pyop.testing.server import RequestRecord, TestAPIServer

__all__ = ["ApiError", "FaultInjector", "RequestRecord", "TestAPIServer", "schemaless_crd"]

_HOMES = {
    "ApiError": "pyop.api.status",
    "FaultInjector": "pyop.testing.faults",
    "RequestRecord": "pyop.testing.server",
    "TestAPIServer": "pyop.testing.server",
    "schemaless_crd": "pyop.testing.crds.ready_made",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pyop.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
