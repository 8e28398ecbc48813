"""Turn one Kubernetes OpenAPI definition into the structural schema controller-gen would embed for its Go type.

The JSON Schema in `kubernetes-validate` differs from what a CRD may contain and from what controller-gen writes:
`$ref`s everywhere, `type: [T, "null"]` on optional fields, OpenAPI-only extensions (group-version-kind, patch
strategy, unions), `enum` on the `apiVersion`/`kind` of top-level kinds, and `oneOf` for IntOrString/Quantity.
This module inlines references, collapses the types, keeps what the API server and controller-gen keep
(descriptions, formats, required, list/map extensions), and refuses keywords it has never seen, so that a new
`kubernetes-validate` release with new keywords fails loudly in our tests instead of leaking into users' CRDs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pyop_scaffold.manifests.builtin.go_defaults import GO_DEFAULTS
from pyop_scaffold.manifests.builtin.known_types import (
    KNOWN_TYPE_SCHEMAS,
    LOCAL_OBJECT_REFERENCE,
    OBJECT_META,
    UPSTREAM_FIELD_MARKERS,
    object_meta,
)
from pyop_scaffold.manifests.builtin.source import Definitions, reference_target

# Keywords the converter understands on a schema node of the source.
_STRUCTURE_KEYS: Final = frozenset(
    {"type", "properties", "items", "additionalProperties", "required", "description", "format"}
)
# Kept verbatim: controller-gen emits them from the same Go markers (+listType, +listMapKey, +mapType/+structType).
_KEPT_EXTENSIONS: Final = ("x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type")
# Dropped: OpenAPI-only metadata that controller-gen never writes (strategic-merge-patch hints, unions, GVKs).
_DROPPED_KEYS: Final = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "x-kubernetes-group-version-kind",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-unions",
    }
)
# `enum` appears only on the TypeMeta fields of top-level kinds (derived from the GVK, not from a Go marker).
_TYPE_META_PROPERTIES: Final = frozenset({"apiVersion", "kind"})
# controller-gen writes no format for Go floats (they need crd:allowDangerousTypes and come out as plain numbers).
_DROPPED_FORMATS: Final = frozenset({"double", "float"})


class SchemaConversionError(ValueError):
    """The bundled definition has a shape this converter does not know how to make structural."""


@dataclass(frozen=True)
class ConversionOptions:
    """Choices that change the emitted schema (and therefore take part in the cache key)."""

    descriptions: bool = True
    embedded_object_meta: bool = False


def upstream_field_markers(definitions: Definitions) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(definition, property) -> extra schema keywords, for the definitions present in this Kubernetes version.

    Go types that embed LocalObjectReference inline get its `name` property flattened into their own; the JSON
    Schema export copies the property verbatim, which is how the inheriting definitions are recognised. The Go
    `+default` markers of built-in fields (`go_defaults`, generated) come first.
    """
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    # The generated Go `+default`s first; the hand-written table (with what they lack) is applied over them.
    for (owner, field_name), value in GO_DEFAULTS.items():
        if field_name in definitions.get(owner, {}).get("properties", {}):
            found[(owner, field_name)] = {"default": value}
    for entry in UPSTREAM_FIELD_MARKERS:
        properties = definitions.get(entry.definition, {}).get("properties", {})
        if entry.property not in properties:
            continue
        found[(entry.definition, entry.property)] = entry.keywords
        if entry.inherited_by_inline_embedders:
            original = properties[entry.property]
            for name, definition in definitions.items():
                if definition.get("properties", {}).get(entry.property) == original:
                    found[(name, entry.property)] = entry.keywords
    return found


def inherited_map_types(definitions: Definitions) -> dict[str, str]:
    """definition -> the x-kubernetes-map-type it takes from a type it embeds inline.

    controller-gen flattens an embedded Go struct into its embedder, extensions included, so the types that embed
    LocalObjectReference (`+structType=atomic`) inline are atomic too: ConfigMapEnvSource and SecretEnvSource
    (envFrom), ConfigMapVolumeSource, ConfigMapProjection, SecretProjection. The JSON Schema export keeps the
    marker on LocalObjectReference only; its embedders are recognised by its `name` property, copied verbatim.
    """
    embedded = definitions.get(LOCAL_OBJECT_REFERENCE, {})
    map_type = embedded.get("x-kubernetes-map-type")
    original = embedded.get("properties", {}).get("name")
    if map_type is None or original is None:
        return {}
    return {
        name: map_type
        for name, definition in definitions.items()
        if name != LOCAL_OBJECT_REFERENCE
        and definition.get("properties", {}).get("name") == original
        and "x-kubernetes-map-type" not in definition
    }


class DefinitionConverter:
    """Expands definitions of one Kubernetes version with fixed options; not thread-safe (keeps a stack)."""

    def __init__(
        self,
        definitions: Definitions,
        options: ConversionOptions,
        field_markers: Mapping[tuple[str, str], Mapping[str, Any]],
        map_types: Mapping[str, str] | None = None,
    ) -> None:
        self._definitions = definitions
        self._options = options
        self._field_markers = field_markers
        self._map_types = map_types if map_types is not None else {}
        self._expanding: list[str] = []

    def convert(self, name: str) -> dict[str, Any]:
        """The structural schema of definition `name`, keys sorted like controller-gen's YAML output."""
        return _sorted_keys(self._definition(name))

    def _definition(self, name: str) -> dict[str, Any]:
        if name == OBJECT_META:
            return object_meta(embedded=self._options.embedded_object_meta)
        known = KNOWN_TYPE_SCHEMAS.get(name)
        if known is not None:
            return known()
        raw = self._definitions.get(name)
        if raw is None:
            raise SchemaConversionError(f"$ref to {name!r}, which is not among the bundled definitions")
        if name in self._expanding:
            return self._cycle_cut(raw)
        self._expanding.append(name)
        try:
            schema = self._node(raw, path=name, owner=name)
        finally:
            self._expanding.pop()
        if name in self._map_types:
            schema["x-kubernetes-map-type"] = self._map_types[name]
        return schema

    @staticmethod
    def _cycle_cut(raw: Mapping[str, Any]) -> dict[str, Any]:
        # A recursive type (JSONSchemaProps) cannot be inlined; keep whatever the user writes below this point.
        schema: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
        node_type = _node_type(raw, path="")
        if node_type is not None:
            schema["type"] = node_type
        return schema

    def _node(self, raw: Mapping[str, Any], *, path: str, owner: str | None = None) -> dict[str, Any]:
        if "$ref" in raw:
            return self._reference(raw, path=path)
        self._check_keys(raw, path)
        node_type = _node_type(raw, path)
        schema: dict[str, Any] = {}
        if node_type is None:
            schema["x-kubernetes-preserve-unknown-fields"] = True  # any JSON value (apiextensions JSON and kin)
        else:
            schema["type"] = node_type
        if self._options.descriptions and "description" in raw:
            schema["description"] = raw["description"]
        fmt = raw.get("format")
        if fmt is not None and fmt not in _DROPPED_FORMATS:
            schema["format"] = fmt
        if "properties" in raw:
            schema["properties"] = self._properties(raw["properties"], path=path, owner=owner)
        if "items" in raw:
            items = raw["items"]
            if not isinstance(items, Mapping):
                raise SchemaConversionError(f"{path}: items must be a single schema")
            schema["items"] = self._node(items, path=f"{path}[]")
        additional = raw.get("additionalProperties")
        if isinstance(additional, Mapping):
            schema["additionalProperties"] = self._node(additional, path=f"{path}{{}}")
        elif additional is True:
            schema["additionalProperties"] = True
        # additionalProperties: false comes only from the -strict variant; Kubernetes' schema has none.
        if raw.get("required"):
            schema["required"] = sorted(raw["required"])
        for key in _KEPT_EXTENSIONS:
            if key in raw:
                schema[key] = raw[key]
        return schema

    def _reference(self, raw: Mapping[str, Any], *, path: str) -> dict[str, Any]:
        extra = set(raw) - {"$ref", "description"} - _DROPPED_KEYS - set(_KEPT_EXTENSIONS)
        if extra:
            raise SchemaConversionError(f"{path}: unexpected keys beside $ref: {sorted(extra)}")
        schema = self._definition(reference_target(raw["$ref"]))
        if self._options.descriptions and "description" in raw:
            schema["description"] = raw["description"]  # the field's own doc wins over its type's, as in Go
        for key in _KEPT_EXTENSIONS:  # field markers (+mapType=granular on a field) override the type's
            if key in raw:
                schema[key] = raw[key]
        return schema

    def _properties(
        self, raw: Mapping[str, Mapping[str, Any]], *, path: str, owner: str | None
    ) -> dict[str, dict[str, Any]]:
        properties: dict[str, dict[str, Any]] = {}
        for name, child in raw.items():
            child_path = f"{path}.{name}"
            if "enum" in child:
                if name not in _TYPE_META_PROPERTIES:
                    raise SchemaConversionError(f"{child_path}: enum on a field other than apiVersion/kind")
                child = {key: value for key, value in child.items() if key != "enum"}
            schema = self._node(child, path=child_path)
            if owner is not None and (owner, name) in self._field_markers:
                schema.update(copy.deepcopy(dict(self._field_markers[(owner, name)])))
            properties[name] = schema
        return properties

    @staticmethod
    def _check_keys(raw: Mapping[str, Any], path: str) -> None:
        unknown = set(raw) - _STRUCTURE_KEYS - _DROPPED_KEYS - set(_KEPT_EXTENSIONS)
        if unknown:
            raise SchemaConversionError(f"{path}: unsupported keywords {sorted(unknown)}")


def _node_type(raw: Mapping[str, Any], path: str) -> str | None:
    declared = raw.get("type")
    if declared is None:
        if "properties" in raw or isinstance(raw.get("additionalProperties"), Mapping):
            return "object"
        if "items" in raw:
            return "array"
        return None
    candidates = [declared] if isinstance(declared, str) else [t for t in declared if t != "null"]
    if len(candidates) != 1:
        raise SchemaConversionError(f"{path}: cannot express type {declared!r} structurally")
    return str(candidates[0])


def _sorted_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _sorted_keys(node[key]) for key in sorted(node)}
    if isinstance(node, list):
        return [_sorted_keys(item) for item in node]
    return node
