"""The generic Kubernetes API server library (k8s.io/apiserver), and its face for aggregated API server authors.

Writing an aggregated API server (the names below)::

    from pyop.apiserver import APIGroupVersion, Resource, run
    GROUP = APIGroupVersion("wardle.example.com", "v1alpha1", [Resource(Flunder, strategy=FlunderStrategy())])
    if __name__ == "__main__":
        run([GROUP])          # flags -> RecommendedOptions -> Config -> AggregatedServer, until SIGTERM

A kind served at several versions is one model per version, each in its version's APIGroupVersion: the storage
version's model is the hub (``class Flunder(Resource, pyop.webhook.Hub, ...)``), the others convert to and from it
(``convert_to``/``convert_from``, as for a CRD's conversion webhook); see `pyop.apiserver.conversion`.

And in a test, against `pyop.testing.TestAPIServer` (TokenReviews, SubjectAccessReviews and the request-header CA
delegated to it, an APIService registered so its clients reach this server through its aggregation)::

    async with AggregatedServer.for_testing([GROUP], test_api_server) as server: ...

Where things are, by what a request meets: `endpoints` (HTTP and wire formats, discovery, OpenAPI, Table),
`authentication` (`authentication.delegating`: request-header client certificates, client certificates,
TokenReview with a cache), `authorization` (`authorization.delegating`: SubjectAccessReview with allowed and denied
caches, always-allowed paths), `admission`, `registry` (resource types, the generic store operations; `strategy`
here is the typed per-kind `Strategy` an author writes), `storage` (the watch cache and its memory/file/etcd3
backends), `server` (`options`, `flags`, `config`, `aggregated`: the server; `health`, `metrics`, `run`).
`pyop.testing.TestAPIServer` is built on the same library.

The names load on first use: this package is imported by the test server too, and must cost nothing until an
aggregated server is actually written.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyop.apiserver.groups import APIGroupVersion, Resource, ResourceDefinitionError
    from pyop.apiserver.server.aggregated import AggregatedServer
    from pyop.apiserver.server.config import Config, build_config
    from pyop.apiserver.server.flags import FlagError, parse_flags
    from pyop.apiserver.server.health import HealthChecks
    from pyop.apiserver.server.options import OptionsError, RecommendedOptions
    from pyop.apiserver.server.run import run
    from pyop.apiserver.strategy import FieldError, Strategy, TableColumn

__all__ = [
    "APIGroupVersion",
    "AggregatedServer",
    "Config",
    "FieldError",
    "FlagError",
    "HealthChecks",
    "OptionsError",
    "RecommendedOptions",
    "Resource",
    "ResourceDefinitionError",
    "Strategy",
    "TableColumn",
    "build_config",
    "parse_flags",
    "run",
]

_HOMES = {
    "APIGroupVersion": "pyop.apiserver.groups",
    "Resource": "pyop.apiserver.groups",
    "ResourceDefinitionError": "pyop.apiserver.groups",
    "AggregatedServer": "pyop.apiserver.server.aggregated",
    "Config": "pyop.apiserver.server.config",
    "build_config": "pyop.apiserver.server.config",
    "FlagError": "pyop.apiserver.server.flags",
    "parse_flags": "pyop.apiserver.server.flags",
    "HealthChecks": "pyop.apiserver.server.health",
    "OptionsError": "pyop.apiserver.server.options",
    "RecommendedOptions": "pyop.apiserver.server.options",
    "run": "pyop.apiserver.server.run",
    "FieldError": "pyop.apiserver.strategy",
    "Strategy": "pyop.apiserver.strategy",
    "TableColumn": "pyop.apiserver.strategy",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pyop.apiserver' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
