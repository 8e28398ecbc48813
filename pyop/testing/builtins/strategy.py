"""What kube-apiserver does to a built-in object between reading the request and storing it, in one place.

In order, as the API server's decoder and registry do it:
1. decode into the kind's type (`decoding`): wrong JSON types are a 400, unknown fields dropped and reported per
   `fieldValidation` (Strict: 400; Warn, the API's default: a `Warning` header each; Ignore: silently), quantities
   canonical;
2. default (`defaulting.apply_defaults`), on every write: an update that omits a defaulted field gets it again;
   then the fields Go's encoder writes even when zero are added (`decoding.TypeDecoder.add_zero_fields`): after
   defaulting, so a defaulter sees an unset field as unset;
3. the kind's generation rule (`generation`).

All of it is read from the Kubernetes OpenAPI definitions of one Kubernetes version (the `kubernetes_version` of the
server, by default the one the CRD generator embeds: `pyop.api.definitions.PINNED_KUBERNETES_VERSION`).
"""

from __future__ import annotations

from typing import Any

from pyop.api.definitions import (
    PINNED_KUBERNETES_VERSION,
    definition_for_kind,
    load_definitions,
    normalise_version,
    reference_target,
)
from pyop.api.status import ApiError
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.registry.schema import strict_error_text as strict_error_text  # their home: the schema's
from pyop.apiserver.registry.schema import unknown_field_warning as unknown_field_warning
from pyop.apiserver.registry.strategy import DEFAULT_FIELD_VALIDATION as DEFAULT_FIELD_VALIDATION
from pyop.apiserver.registry.strategy import FIELD_VALIDATION_MODES as FIELD_VALIDATION_MODES
from pyop.apiserver.registry.strategy import RESTStrategy
from pyop.testing.builtins import defaulting, generation
from pyop.testing.builtins.decoding import DecodeError, decoder_for, go_zero_fields


class BuiltinStrategy:
    """Decoding, defaulting and generation of built-in kinds for one Kubernetes version."""

    def __init__(self, kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> None:
        self.kubernetes_version = normalise_version(kubernetes_version)
        major, minor = self.kubernetes_version.split(".")
        self.version_tuple = (int(major), int(minor))
        self._decoder = decoder_for(self.kubernetes_version)
        self._definitions: dict[tuple[str, str, str], str] = {}

    def strategy_for(self, resource_type: ResourceType) -> RESTStrategy:
        """The test API server's strategy of ``resource_type`` (`pyop.apiserver.registry.kinds.CompiledKinds`)."""
        from pyop.testing.builtins.strategies import strategy_for  # strategies imports this module

        return strategy_for(resource_type, self)

    def definition(self, resource_type: ResourceType) -> str:
        """The kind's OpenAPI definition name; "" for custom resources and kinds the definitions lack."""
        if resource_type.custom:
            return ""
        key = (resource_type.group, resource_type.version, resource_type.kind)
        name = self._definitions.get(key)
        if name is None:
            name = self._definitions[key] = definition_for_kind(*key, self.kubernetes_version)
        return name

    def decode(
        self,
        resource_type: ResourceType,
        obj: dict[str, Any],
        field_validation: str,
        warnings: list[str],
        old: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The object as the API server would hold it after decoding and defaulting (a new object when anything
        changed; `obj` and what it shares are left alone). `old`: the stored object an update started from; the
        parts `obj` shares with it are decoded and defaulted already and are not walked again."""
        definition = self.definition(resource_type)
        if not definition:
            return obj
        try:
            result = self._decoder.decode_fields(obj, definition, old)
        except DecodeError as error:
            raise self._cannot_handle(resource_type, str(error)) from None
        if result.unknown:
            if field_validation == "Strict":
                raise self._cannot_handle(resource_type, strict_error_text(result.unknown))
            if field_validation == "Warn":
                warnings.extend(unknown_field_warning(path) for path in result.unknown)
        defaulted = defaulting.apply_defaults(resource_type.group, resource_type.kind, result.obj, old)
        return self._decoder.add_zero_fields(defaulted, definition, old)  # encoded, as kube's answer is

    def zero_status(self, resource_type: ResourceType) -> dict[str, Any]:
        """The status a built-in registry writes on create (`obj.Status = StatefulSetStatus{}`), as Go encodes it:
        the zero value of every field without `omitempty` (the definition's required ones), so a new StatefulSet
        reads back `status: {replicas: 0, availableReplicas: 0}` and a new Deployment `status: {}`."""
        definition = self.definition(resource_type)
        definitions = load_definitions(self.kubernetes_version)
        status = ((definitions.get(definition) or {}).get("properties") or {}).get("status") or {}
        reference = status.get("$ref")
        return _go_zero(definitions, reference_target(reference)) if isinstance(reference, str) else {}

    def _cannot_handle(self, resource_type: ResourceType, detail: str) -> ApiError:
        kind, version = resource_type.kind, resource_type.version
        return ApiError(
            400, f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}', reason="BadRequest"
        )

    def generation_rule(self, resource_type: ResourceType) -> generation.Generation | None:
        return generation.rule_for(
            resource_type.group, resource_type.kind, custom=resource_type.custom, kubernetes_version=self.version_tuple
        )


def _go_zero(definitions: Any, name: str, depth: int = 0) -> dict[str, Any]:
    """Go's JSON of a zero struct: the always-written fields `_go_json_zero` names (from the struct tags), or for
    a type newer than that table the definition's required scalars as 0, false or "" and required structs as
    their own zero."""
    known = go_zero_fields(name)
    if known is not None:
        return known
    schema = definitions.get(name) or {}
    zero: dict[str, Any] = {}
    for field in schema.get("required") or ():
        prop = (schema.get("properties") or {}).get(field) or {}
        kind = prop.get("type")
        kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
        if kind in ("integer", "number"):
            zero[field] = 0
        elif kind == "boolean":
            zero[field] = False
        elif kind == "string":
            zero[field] = ""
        elif isinstance(prop.get("$ref"), str) and depth < 8:
            zero[field] = _go_zero(definitions, reference_target(prop["$ref"]), depth + 1)
    return zero
