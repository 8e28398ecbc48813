"""Where the Kubernetes OpenAPI definitions come from: `pyop.api.definitions`, shared with the runtime side.

The loader lives in the runtime package because the test API server reads the same definitions (and must not import
pyop_scaffold); this module keeps the names the generator's modules and tests have always imported from here.
"""

from __future__ import annotations

from pyop.api.definitions import (
    PINNED_KUBERNETES_VERSION,
    SCHEMA_PACKAGE,
    BuiltinSchemaSourceError,
    Definitions,
    UnsupportedKubernetesVersion,
    available_kubernetes_versions,
    load_definitions,
    normalise_version,
    reference_target,
)

__all__ = [
    "PINNED_KUBERNETES_VERSION",
    "SCHEMA_PACKAGE",
    "BuiltinSchemaSourceError",
    "Definitions",
    "UnsupportedKubernetesVersion",
    "available_kubernetes_versions",
    "load_definitions",
    "normalise_version",
    "reference_target",
]
