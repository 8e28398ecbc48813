"""kube-aggregator for the test API server (issue 15): APIServices proxied to aggregated API servers.

Registering an APIService (``await test_api_server.register_api_service(group, version, url, ca_bundle=...)``, or
creating the objects with any client) makes the test server proxy ``/apis/<group>/<version>/...`` to that server
with the caller's identity in request headers and the front-proxy client certificate, list the group in discovery
and keep the APIService's ``Available`` condition. Modules, by job: `certificates` (the request-header CA and the
front-proxy client certificate), `authentication_info` (the ``kube-system/extension-apiserver-authentication``
ConfigMap and the bootstrap roles that read it), `apiservice` (reading APIServices, their order and condition),
`validation` (kube-aggregator's validation of APIServices), `resolver` (Service -> URL), `availability` (the
Available condition), `proxy` (the forwarding), `discovery` (merging aggregated groups into the server's
discovery), `aggregator` (the object the server holds).

The names load on first use: the registry's validation imports `validation` while the registry itself loads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyop.testing.aggregator.aggregator import Aggregator, service_name_for

__all__ = ["Aggregator", "service_name_for"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'pyop.testing.aggregator' has no attribute {name!r}")
    value = getattr(importlib.import_module("pyop.testing.aggregator.aggregator"), name)
    globals()[name] = value
    return value
