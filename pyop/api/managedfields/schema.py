"""How structured-merge-diff sees a kind: for each path, a scalar, a map (struct or string map; granular or
atomic), a list (atomic, a set, or a map keyed by some of its items' fields) or untyped (deduced from the value).

Built from the same places kube-apiserver builds it from:

* built-in kinds: their OpenAPI definitions (``pyop.api.definitions``), with ``x-kubernetes-list-type``,
  ``x-kubernetes-list-map-keys`` and ``x-kubernetes-map-type``; where a list has no list type, its
  ``x-kubernetes-patch-strategy: merge`` (with ``x-kubernetes-patch-merge-key``) makes it a map list (or a set),
  as kube-openapi's schema conversion does; any other list is atomic;
* custom resources: their CRD version's structural schema, ``metadata`` being ObjectMeta as for every kind;
  ``x-kubernetes-preserve-unknown-fields`` and schemaless objects are untyped.

Nodes are built on first use and cached, so recursive definitions (JSONSchemaProps) cost nothing until walked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from pyop.api.definitions import PINNED_KUBERNETES_VERSION, load_definitions, reference_target

SCALAR = "scalar"
MAP = "map"
LIST = "list"
UNTYPED = "untyped"

# Key fields kube-apiserver's schemas default (so a port applied without its protocol is still keyed by one);
# the bundled JSON schemas only say so in prose.
_KEY_DEFAULTS: Mapping[str, Any] = {"protocol": "TCP"}
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class Type:
    """One node of the schema. ``fields`` are a struct's named fields; ``element`` the type of a map's other
    values or a list's items; ``keys`` a map list's key fields (empty for a set); ``atomic`` whether the value is
    owned and replaced as a whole."""

    __slots__ = ("kind", "atomic", "keys", "key_defaults", "_fields", "_element", "_build")

    def __init__(
        self,
        kind: str,
        *,
        atomic: bool = False,
        keys: tuple[str, ...] = (),
        key_defaults: Mapping[str, Any] | None = None,
        build: Callable[[Type], None] | None = None,
    ) -> None:
        self.kind = kind
        self.atomic = atomic
        self.keys = keys
        self.key_defaults = key_defaults or {}
        self._fields: dict[str, Type] = {}
        self._element: Type | None = None
        self._build = build

    def _resolve(self) -> None:
        build, self._build = self._build, None
        if build is not None:
            build(self)

    @property
    def fields(self) -> dict[str, Type]:
        if self._build is not None:
            self._resolve()
        return self._fields

    @property
    def element(self) -> Type | None:
        if self._build is not None:
            self._resolve()
        return self._element

    def child(self, name: str) -> Type:
        """The type of a map's entry ``name`` (a named field, else the element type; untyped if neither)."""
        if self._build is not None:
            self._resolve()
        found = self._fields.get(name)
        if found is not None:
            return found
        return self._element or DEDUCED

    def is_named(self, name: str) -> bool:
        return name in self.fields

    def set_contents(self, fields: dict[str, Type], element: Type | None) -> None:
        self._fields, self._element = fields, element

    def __repr__(self) -> str:
        extra = " atomic" if self.atomic else ""
        return f"Type({self.kind}{extra}{' keys=' + ','.join(self.keys) if self.keys else ''})"


DEDUCED = Type(UNTYPED)
SCALAR_TYPE = Type(SCALAR)


def _types_of(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {item for item in declared if item != "null"}
    return set()


class _Converter:
    """Turns JSON/OpenAPI schemas into ``Type`` nodes; ``definitions`` resolves ``$ref``s."""

    def __init__(self, definitions: Mapping[str, Mapping[str, Any]], *, builtin: bool) -> None:
        self.definitions = definitions
        self.builtin = builtin
        self.named: dict[str, Type] = {}

    def definition(self, name: str) -> Type:
        found = self.named.get(name)
        if found is None:
            schema = self.definitions.get(name)
            found = DEDUCED if schema is None else self.convert(schema)
            self.named[name] = found
        return found

    def convert(self, schema: Mapping[str, Any]) -> Type:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.definition(reference_target(ref))
        parts = schema.get("allOf")
        if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], Mapping):
            return self.convert({**{k: v for k, v in schema.items() if k != "allOf"}, **parts[0]})
        one_of = schema.get("x-kubernetes-int-or-string") or "oneOf" in schema or "anyOf" in schema
        if one_of and not schema.get("properties") and not schema.get("items"):
            return SCALAR_TYPE  # IntOrString, Quantity: one value, whatever its JSON type
        types = _types_of(schema)
        if "array" in types or (not types and "items" in schema):
            return self._list(schema)
        if "object" in types or (not types and ("properties" in schema or "additionalProperties" in schema)):
            return self._map(schema)
        if types:
            return SCALAR_TYPE
        return DEDUCED  # no type at all: any JSON (RawExtension, JSON, preserve-unknown-fields)

    def _map(self, schema: Mapping[str, Any]) -> Type:
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        atomic = schema.get("x-kubernetes-map-type") == "atomic"
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        if not properties and not isinstance(additional, Mapping) and (preserve or additional is True):
            return Type(MAP, atomic=True) if atomic else DEDUCED

        def build(node: Type) -> None:
            fields = {name: self.convert(sub) for name, sub in properties.items() if isinstance(sub, Mapping)}
            element: Type | None = None
            if isinstance(additional, Mapping):
                element = self.convert(additional)
            elif preserve or additional is True:
                element = DEDUCED
            node.set_contents(fields, element)

        return Type(MAP, atomic=atomic, build=build)

    def _list(self, schema: Mapping[str, Any]) -> Type:
        items = schema.get("items")
        list_type = schema.get("x-kubernetes-list-type")
        keys: tuple[str, ...] = ()
        if list_type == "map":
            keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
            atomic = False
        elif list_type == "set":
            atomic = False
        elif list_type is None and self.builtin and "merge" in str(schema.get("x-kubernetes-patch-strategy", "")):
            merge_key = schema.get("x-kubernetes-patch-merge-key")
            keys = (merge_key,) if merge_key else ()
            atomic = False
        else:
            atomic = True
        item_schema = items if isinstance(items, Mapping) else {}
        defaults: dict[str, Any] = {}
        if keys:
            item_properties = self._properties_of(item_schema)
            for key in keys:
                prop = item_properties.get(key) or {}
                if "default" in prop:
                    defaults[key] = prop["default"]
                elif self.builtin and key in _KEY_DEFAULTS:
                    defaults[key] = _KEY_DEFAULTS[key]

        def build(node: Type) -> None:
            node.set_contents({}, self.convert(item_schema) if item_schema else DEDUCED)

        return Type(LIST, atomic=atomic, keys=keys, key_defaults=defaults, build=build)

    def _properties_of(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            schema = self.definitions.get(reference_target(ref)) or {}
        properties = schema.get("properties")
        return properties if isinstance(properties, Mapping) else {}


@functools.cache
def _builtin_converter(kubernetes_version: str) -> _Converter:
    return _Converter(load_definitions(kubernetes_version), builtin=True)


def builtin_type(definition: str, kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> Type:
    """The schema of a built-in kind by its definition name (``io.k8s.api.apps.v1.Deployment``); untyped if the
    definitions do not have it."""
    if not definition:
        return DEDUCED
    return _builtin_converter(kubernetes_version).definition(definition)


def object_meta(kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> Type:
    return builtin_type(OBJECT_META, kubernetes_version)


def custom_resource_type(schema: Mapping[str, Any] | None, kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> Type:
    """The schema of a custom resource from its CRD version's ``openAPIV3Schema`` (untyped without one), with
    ``apiVersion``, ``kind`` and ``metadata`` typed as on every kind."""
    meta = object_meta(kubernetes_version)
    top = _Converter({}, builtin=False).convert(schema) if schema else DEDUCED
    if top.kind != MAP or top.atomic:
        top = Type(MAP, build=lambda node: node.set_contents({}, DEDUCED))
    resolved_fields = dict(top.fields)
    resolved_fields.update(apiVersion=SCALAR_TYPE, kind=SCALAR_TYPE, metadata=meta)
    element = top.element
    return Type(MAP, build=lambda node: node.set_contents(resolved_fields, element))
