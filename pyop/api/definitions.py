"""The Kubernetes OpenAPI definitions pyop knows built-in kinds from: JSON Schema files bundled by kubernetes-validate.

One loader for every consumer: the CRD generator embeds built-in types from these definitions, the test API server
defaults, decodes and prunes built-in kinds by them, and typed built-in models are generated from them. So all of
them agree on what, say, a PodSpec is for a given Kubernetes version.

The package ships one `_definitions.json` per Kubernetes minor release (`v1.32.0-local/` and a `-strict` twin that
adds `additionalProperties: false` everywhere). We read the non-strict file straight from the installed package
data instead of importing `kubernetes_validate`, whose import pulls in jsonschema and costs ~0.2 s we do not need.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

SCHEMA_PACKAGE: Final = "kubernetes_validate"
_SCHEMA_DIR_NAME: Final = "kubernetes-json-schema"
_DEFINITIONS_FILE: Final = "_definitions.json"
_VERSION_DIR: Final = re.compile(r"^v(\d+)\.(\d+)\.0-local$")
_VERSION_ARG: Final = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")

Definitions = Mapping[str, Mapping[str, Any]]

PINNED_KUBERNETES_VERSION: Final = "1.37"
"""The Kubernetes minor version pyop targets unless told otherwise: the one setting the CRD generator (built-in
types embedded in CRDs), the test API server (built-in kinds it serves) and the typed built-in models
(`pyop.api.k8s`, generated for it) share: the newest release kubernetes-validate bundles. The generator and the
server take a `kubernetes_version` to target another bundled release."""


class BuiltinSchemaSourceError(RuntimeError):
    """The bundled Kubernetes definitions cannot be found or read."""


class UnsupportedKubernetesVersion(LookupError):
    """No definitions are bundled for the requested Kubernetes version."""

    def __init__(self, requested: str, available: list[str]) -> None:
        self.requested = requested
        self.available = available
        super().__init__(
            f"no Kubernetes definitions for version {requested!r} in {SCHEMA_PACKAGE}; "
            f"available: {', '.join(available) or 'none'}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


def normalise_version(version: str) -> str:
    """`v1.32`, `1.32`, `1.32.4` -> `1.32`: definitions only change between minor releases."""
    match = _VERSION_ARG.match(version.strip())
    if match is None:
        raise UnsupportedKubernetesVersion(version, available_kubernetes_versions())
    return f"{int(match.group(1))}.{int(match.group(2))}"


@functools.cache
def _schema_root() -> Path:
    spec = importlib.util.find_spec(SCHEMA_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BuiltinSchemaSourceError(
            f"the {SCHEMA_PACKAGE!r} package is not installed; pyop reads Kubernetes' built-in type schemas from it"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / _SCHEMA_DIR_NAME
    if not root.is_dir():
        raise BuiltinSchemaSourceError(f"{SCHEMA_PACKAGE} is installed but has no {_SCHEMA_DIR_NAME}/ at {root}")
    return root


@functools.cache
def _version_dirs() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for entry in _schema_root().iterdir():
        match = _VERSION_DIR.match(entry.name)
        if match and (entry / _DEFINITIONS_FILE).is_file():
            found[f"{match.group(1)}.{match.group(2)}"] = entry
    return found


def available_kubernetes_versions() -> list[str]:
    """Minor versions (`"1.32"`) whose definitions are bundled, oldest first."""
    return sorted(_version_dirs(), key=lambda v: tuple(int(part) for part in v.split(".")))


def bundled_version(version: str) -> str:
    """`1.37`, `v1.37`, `1.37.2` -> `1.37`, if its definitions are bundled; `UnsupportedKubernetesVersion` if not."""
    minor = normalise_version(version)
    if minor not in _version_dirs():
        raise UnsupportedKubernetesVersion(version, available_kubernetes_versions())
    return minor


@functools.cache
def load_definitions(version: str) -> Definitions:
    """All OpenAPI definitions of one Kubernetes minor version, keyed by name; parsed once per process.

    The mapping is shared by every caller and must not be mutated.
    """
    path = _version_dirs()[bundled_version(version)] / _DEFINITIONS_FILE
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise BuiltinSchemaSourceError(f"cannot read {path}: {exc}") from exc
    definitions = document.get("$defs") or document.get("definitions")
    if not isinstance(definitions, dict):
        raise BuiltinSchemaSourceError(f"{path} has no '$defs' object")
    return definitions


def reference_target(ref: str) -> str:
    """`#/$defs/io.k8s.api.core.v1.PodSpec` (or `/api/_definitions.json#/$defs/...`) -> the definition name."""
    for marker in ("/$defs/", "/definitions/"):
        if marker in ref:
            return ref.rsplit(marker, 1)[1]
    raise BuiltinSchemaSourceError(f"unsupported $ref {ref!r}")


@functools.cache
def _kind_index(minor: str) -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, definition in load_definitions(minor).items():
        for gvk in definition.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            # Meta types (DeleteOptions, WatchEvent) are tagged with every group; a group's own type wins.
            if key not in index or not name.startswith("io.k8s.apimachinery."):
                index[key] = name
    return index


def definition_for_kind(
    group: str, version: str, kind: str, kubernetes_version: str = PINNED_KUBERNETES_VERSION
) -> str:
    """The definition name of a built-in kind (`("apps", "v1", "Deployment")` -> `io.k8s.api.apps.v1.Deployment`),
    from the definitions' `x-kubernetes-group-version-kind` tags; `""` when that version does not define the kind."""
    return _kind_index(normalise_version(kubernetes_version)).get((group, version, kind), "")
