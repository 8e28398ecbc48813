"""Structural schemas of built-in Kubernetes types (PodTemplateSpec, Condition, Quantity, ...) for embedding in CRDs.

The schemas come from the OpenAPI definitions bundled by the `kubernetes-validate` package for a pinned
Kubernetes version, rewritten into the form controller-gen v0.21 emits for the same Go types, so a pyop CRD that
embeds a PodTemplateSpec looks like a Kubebuilder one. Nothing here is hand-written except controller-gen's own
fixed schemas for special types and the Go markers the JSON Schema export lost (see `known_types`).

    >>> schema = builtin_schema("io.k8s.api.core.v1.PodTemplateSpec")
    >>> schema["properties"]["spec"]["properties"]["containers"]["x-kubernetes-list-map-keys"]
    ['name']
"""

from __future__ import annotations

import difflib
import functools
import pickle
from collections.abc import Mapping
from typing import Any, Final

from pyop_scaffold.manifests.builtin.convert import (
    ConversionOptions,
    DefinitionConverter,
    SchemaConversionError,
    inherited_map_types,
    upstream_field_markers,
)
from pyop_scaffold.manifests.builtin.known_types import KNOWN_TYPE_NAMES, QUANTITY_PATTERN
from pyop_scaffold.manifests.builtin.source import (
    PINNED_KUBERNETES_VERSION,  # the setting shared with the test API server (pyop.api.definitions)
    BuiltinSchemaSourceError,
    UnsupportedKubernetesVersion,
    available_kubernetes_versions,
    load_definitions,
    normalise_version,
)

__all__ = [
    "PINNED_KUBERNETES_VERSION",
    "QUANTITY_PATTERN",
    "BuiltinSchemaSourceError",
    "SchemaConversionError",
    "UnknownBuiltinDefinition",
    "UnsupportedKubernetesVersion",
    "available_kubernetes_versions",
    "builtin_definitions",
    "builtin_schema",
]

_MAX_SUGGESTIONS: Final = 5


class UnknownBuiltinDefinition(KeyError):
    """A definition name that the bundled Kubernetes definitions do not contain."""

    def __init__(self, definition: str, kubernetes_version: str, suggestions: list[str]) -> None:
        self.definition = definition
        self.kubernetes_version = kubernetes_version
        self.suggestions = suggestions
        hint = f"; closest known: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(f"no built-in Kubernetes definition {definition!r} in Kubernetes {kubernetes_version}{hint}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


def builtin_definitions(kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> frozenset[str]:
    """Every definition name `builtin_schema` accepts for that version."""
    return _definition_names(normalise_version(kubernetes_version))


def builtin_schema(
    definition: str,
    *,
    kubernetes_version: str = PINNED_KUBERNETES_VERSION,
    descriptions: bool = True,
    embedded_object_meta: bool = False,
) -> dict[str, Any]:
    """The structural schema controller-gen would embed for the Go type of OpenAPI `definition`.

    `definition` is the OpenAPI name, e.g. `io.k8s.api.core.v1.PodTemplateSpec`. Every `$ref` is inlined;
    recursive types are cut with `x-kubernetes-preserve-unknown-fields`. Descriptions are full length (the caller
    applies maxDescLen); `descriptions=False` drops them. `embedded_object_meta=True` mirrors controller-gen's
    `crd:generateEmbeddedObjectMeta=true` (name/namespace/labels/annotations/finalizers instead of a bare object).

    Each call returns a new object that the caller may mutate. Raises `UnknownBuiltinDefinition` (a `KeyError`)
    naming the closest known definitions, or `UnsupportedKubernetesVersion` listing the bundled versions.
    """
    minor = normalise_version(kubernetes_version)
    frozen = _frozen_schema(definition, minor, descriptions, embedded_object_meta)
    return pickle.loads(frozen)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=512)
def _frozen_schema(definition: str, minor: str, descriptions: bool, embedded_object_meta: bool) -> bytes:
    # Cached serialised: unpickling our own bytes is the fastest way to hand each caller a private deep copy
    # (0.8 ms for PodTemplateSpec against 6 ms for copy.deepcopy).
    if definition not in _definition_names(minor):
        raise UnknownBuiltinDefinition(definition, minor, _closest(definition, _definition_names(minor)))
    options = ConversionOptions(descriptions=descriptions, embedded_object_meta=embedded_object_meta)
    definitions = load_definitions(minor)
    converter = DefinitionConverter(
        definitions, options, _upstream_field_markers(minor), inherited_map_types(definitions)
    )
    return pickle.dumps(converter.convert(definition), protocol=pickle.HIGHEST_PROTOCOL)


@functools.cache
def _definition_names(minor: str) -> frozenset[str]:
    return frozenset(load_definitions(minor)) | KNOWN_TYPE_NAMES


@functools.cache
def _upstream_field_markers(minor: str) -> dict[tuple[str, str], Mapping[str, Any]]:
    return upstream_field_markers(load_definitions(minor))


def _closest(definition: str, names: frozenset[str]) -> list[str]:
    """Same short name in another group first (`PodSpec` -> `io.k8s.api.core.v1.PodSpec`), then spelling."""
    short = definition.rsplit(".", 1)[-1].lower()
    same_short = sorted(name for name in names if name.rsplit(".", 1)[-1].lower() == short)
    spelled = difflib.get_close_matches(definition, sorted(names), n=_MAX_SUGGESTIONS, cutoff=0.6)
    ordered = list(dict.fromkeys([*same_short, *spelled]))
    return ordered[:_MAX_SUGGESTIONS]
