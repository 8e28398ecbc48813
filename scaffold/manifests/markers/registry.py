"""The marker registry: one typed definition per marker, in one table.

Each definition says where the marker may be written (package, type, field), what arguments it takes and, for
schema markers, how it changes the OpenAPI schema. Parsing, generation, error messages and the reference docs all
read this table, so adding a marker means adding one row here; the model walker does not change.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scaffold.manifests.markers.values import ArgType

Schema = dict[str, Any]


class Target(enum.Flag):
    PACKAGE = enum.auto()
    TYPE = enum.auto()
    FIELD = enum.auto()


class MarkerUsageError(ValueError):
    """A marker applied where it does not fit (Minimum on a string, say); the walker adds file and line."""


@dataclass(frozen=True)
class Arg:
    name: str
    type: ArgType
    optional: bool = False


@dataclass(frozen=True)
class MarkerDef:
    """A marker: `+name`, `+name=<value>` or `+name:arg=value,arg2=value`."""

    name: str
    targets: Target
    help: str
    value: ArgType | None = None  # `+name=<value>`
    args: tuple[Arg, ...] = ()  # `+name:arg=value,...`
    apply: Callable[[Schema, Any], None] | None = None  # how a schema marker changes the schema
    priority: int = 10  # lower applies first, as controller-tools' ApplyPriority
    repeatable: bool = False
    aliases: tuple[str, ...] = field(default=())

    @property
    def is_flag(self) -> bool:
        return self.value is None and not self.args


# ---------------------------------------------------------------------------------------------------------------------
# How schema markers change a schema. Each checks that the marker fits the schema's type.


def _types(schema: Schema) -> set[str]:
    if schema.get("x-kubernetes-int-or-string"):
        return {"integer", "string"}
    return {schema["type"]} if "type" in schema else set()


def _require(schema: Schema, allowed: set[str], marker: str) -> None:
    types = _types(schema)
    if types and not types & allowed:
        wanted = " or ".join(sorted(allowed))
        raise MarkerUsageError(f"{marker} applies to {wanted} fields, not to type {'/'.join(sorted(types))}")


def _numeric(key: str) -> Callable[[Schema, Any], None]:
    def apply(schema: Schema, value: Any) -> None:
        _require(schema, {"integer", "number"}, key)
        if schema.get("type") == "integer" and isinstance(value, float) and not value.is_integer():
            raise MarkerUsageError(f"{key}={value} is not an integer, but the field is")
        schema[key] = int(value) if schema.get("type") == "integer" and isinstance(value, float) else value

    return apply


def _keyword(key: str, allowed: set[str] | None, minimum: int | None = None) -> Callable[[Schema, Any], None]:
    def apply(schema: Schema, value: Any) -> None:
        if allowed is not None:
            _require(schema, allowed, key)
        if minimum is not None and isinstance(value, int) and value < minimum:
            raise MarkerUsageError(f"{key} must be at least {minimum}, got {value}")
        schema[key] = value

    return apply


def _flag(key: str, allowed: set[str] | None = None) -> Callable[[Schema, Any], None]:
    def apply(schema: Schema, value: Any) -> None:
        if allowed is not None:
            _require(schema, allowed, key)
        if value:
            schema[key] = True

    return apply


def _set_type(schema: Schema, value: Any) -> None:
    allowed = {"string", "integer", "number", "boolean", "object", "array"}
    if value not in allowed:
        raise MarkerUsageError(f"Type={value} is not one of {', '.join(sorted(allowed))}")
    for key in ("properties", "items", "additionalProperties", "format", "anyOf", "x-kubernetes-int-or-string"):
        schema.pop(key, None) if value != schema.get("type") else None
    schema["type"] = value


def _int_or_string(schema: Schema, value: Any) -> None:
    schema.pop("type", None)
    schema.pop("format", None)
    schema["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    schema["x-kubernetes-int-or-string"] = True


def _xvalidation(schema: Schema, value: Any) -> None:
    rule = {k: v for k, v in value.items() if v is not None and v != ""}
    if "optionalOldSelf" in rule and not rule["optionalOldSelf"]:
        del rule["optionalOldSelf"]
    reason = rule.get("reason")
    allowed = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")
    if reason is not None and reason not in allowed:
        raise MarkerUsageError(f"XValidation reason {reason!r} is not one of {', '.join(allowed)}")
    schema.setdefault("x-kubernetes-validations", []).append(rule)


def _immutable(schema: Schema, value: Any) -> None:
    schema.setdefault("x-kubernetes-validations", []).append(
        {"message": "field is immutable", "rule": "self == oldSelf"}
    )


def _list_type(schema: Schema, value: Any) -> None:
    _require(schema, {"array"}, "listType")
    if value not in ("atomic", "set", "map"):
        raise MarkerUsageError(f"listType={value} is not one of atomic, set, map")
    schema["x-kubernetes-list-type"] = value


def _list_map_key(schema: Schema, value: Any) -> None:
    _require(schema, {"array"}, "listMapKey")
    keys = schema.setdefault("x-kubernetes-list-map-keys", [])
    if value not in keys:
        keys.append(value)


def _map_type(key: str) -> Callable[[Schema, Any], None]:
    def apply(schema: Schema, value: Any) -> None:
        _require(schema, {"object"}, key)
        if value not in ("atomic", "granular"):
            raise MarkerUsageError(f"{key}={value} is not one of atomic, granular")
        schema["x-kubernetes-map-type"] = value

    return apply


def _enum(schema: Schema, value: Any) -> None:
    schema["enum"] = list(value)


def _title(schema: Schema, value: Any) -> None:
    if not isinstance(value, str):
        raise MarkerUsageError(f"title must be a string, got {value!r}")
    schema["title"] = value


def _external_docs(schema: Schema, value: Any) -> None:
    schema["externalDocs"] = {k: v for k, v in value.items() if v}


def _one_of_family(kind: str) -> Callable[[Schema, Any], None]:
    def apply(schema: Schema, fields: Any) -> None:
        _require(schema, {"object"}, kind)
        names = list(fields)
        properties = schema.get("properties", {})
        missing = [n for n in names if n not in properties]
        if missing:
            raise MarkerUsageError(f"{kind} names field(s) {', '.join(missing)} that the type does not have")
        required = [n for n in names if n in schema.get("required", [])]
        if required:
            raise MarkerUsageError(f"{kind} members must be optional; required: {', '.join(required)}")
        listed = " ".join(names)
        if kind == "AtLeastOneOf":
            rule = " || ".join(f"has(self.{n})" for n in names)
            message = f"at least one of the fields in [{listed}] must be set"
        else:
            count = " + ".join(f"(has(self.{n}) ? 1 : 0)" for n in names)
            op = "==" if kind == "ExactlyOneOf" else "<="
            rule = f"{count} {op} 1"
            message = (
                f"exactly one of the fields in [{listed}] must be set"
                if kind == "ExactlyOneOf"
                else f"at most one of the fields in [{listed}] may be set"
            )
        schema.setdefault("x-kubernetes-validations", []).append({"message": message, "rule": rule})

    return apply


def _set(key: str) -> Callable[[Schema, Any], None]:
    def apply(schema: Schema, value: Any) -> None:
        schema[key] = value

    return apply


# ---------------------------------------------------------------------------------------------------------------------
# The table.

_F = Target.FIELD
_T = Target.TYPE
_P = Target.PACKAGE
_TF = Target.TYPE | Target.FIELD
_S = ArgType.STRING
_V = "kubebuilder:validation:"

MARKERS: tuple[MarkerDef, ...] = (
    # Package level (groupversion_info.py docstring or an API package __init__).
    MarkerDef("groupName", _P, "API group of the package (spec.group).", value=_S),
    MarkerDef("versionName", _P, "Overrides the version name of the package.", value=_S),
    MarkerDef("kubebuilder:skip", _P, "The package is not an API version: generate no CRD from it."),
    MarkerDef(
        "kubebuilder:object:generate",
        _P | _T,
        "Accepted for Kubebuilder parity; pyop needs no deepcopy.",
        value=ArgType.BOOL,
    ),
    # Type level, CRD.
    MarkerDef(
        "kubebuilder:object:root", _T, "The class is a kind (a root object with its own CRD).", value=ArgType.BOOL
    ),
    MarkerDef("kubebuilder:subresource:status", _T, "Enables the status subresource."),
    MarkerDef(
        "kubebuilder:subresource:scale",
        _T,
        "Enables the scale subresource.",
        args=(Arg("specpath", _S), Arg("statuspath", _S), Arg("selectorpath", _S, optional=True)),
    ),
    MarkerDef(
        "kubebuilder:printcolumn",
        _T,
        "Adds a column to `kubectl get`.",
        repeatable=True,
        args=(
            Arg("name", _S),
            Arg("type", _S),
            Arg("JSONPath", _S),
            Arg("description", _S, True),
            Arg("format", _S, True),
            Arg("priority", ArgType.INT, True),
        ),
    ),
    MarkerDef(
        "kubebuilder:resource",
        _T,
        "Names and scope of the resource.",
        args=(
            Arg("path", _S, True),
            Arg("singular", _S, True),
            Arg("shortName", ArgType.STRING_LIST, True),
            Arg("categories", ArgType.STRING_LIST, True),
            Arg("scope", _S, True),
        ),
    ),
    MarkerDef("kubebuilder:storageversion", _T, "This version is the storage version of the CRD."),
    MarkerDef("kubebuilder:unservedversion", _T, "This version is not served (served: false)."),
    MarkerDef("kubebuilder:deprecatedversion", _T, "This version is deprecated.", args=(Arg("warning", _S, True),)),
    MarkerDef("kubebuilder:skipversion", _T, "Leave this version out of the CRD."),
    MarkerDef(
        "kubebuilder:metadata",
        _T,
        "Annotations and labels of the CRD object.",
        args=(Arg("annotations", ArgType.STRING_LIST, True), Arg("labels", ArgType.STRING_LIST, True)),
    ),
    MarkerDef(
        "kubebuilder:selectablefield",
        _T,
        "A field selectable with field selectors.",
        repeatable=True,
        args=(Arg("JSONPath", _S),),
    ),
    # Validation, field and type level.
    MarkerDef(_V + "Minimum", _TF, "Minimum value (inclusive).", value=ArgType.NUMBER, apply=_numeric("minimum")),
    MarkerDef(_V + "Maximum", _TF, "Maximum value (inclusive).", value=ArgType.NUMBER, apply=_numeric("maximum")),
    MarkerDef(
        _V + "ExclusiveMinimum",
        _TF,
        "The minimum is exclusive.",
        value=ArgType.BOOL,
        apply=_flag("exclusiveMinimum", {"integer", "number"}),
    ),
    MarkerDef(
        _V + "ExclusiveMaximum",
        _TF,
        "The maximum is exclusive.",
        value=ArgType.BOOL,
        apply=_flag("exclusiveMaximum", {"integer", "number"}),
    ),
    MarkerDef(
        _V + "MultipleOf", _TF, "The value is a multiple of this.", value=ArgType.NUMBER, apply=_numeric("multipleOf")
    ),
    MarkerDef(
        _V + "MinLength", _TF, "Minimum string length.", value=ArgType.INT, apply=_keyword("minLength", {"string"}, 0)
    ),
    MarkerDef(
        _V + "MaxLength", _TF, "Maximum string length.", value=ArgType.INT, apply=_keyword("maxLength", {"string"}, 0)
    ),
    MarkerDef(
        _V + "Pattern", _TF, "Regular expression the string matches.", value=_S, apply=_keyword("pattern", {"string"})
    ),
    MarkerDef(
        _V + "MinItems", _TF, "Minimum list length.", value=ArgType.INT, apply=_keyword("minItems", {"array"}, 0)
    ),
    MarkerDef(
        _V + "MaxItems", _TF, "Maximum list length.", value=ArgType.INT, apply=_keyword("maxItems", {"array"}, 0)
    ),
    MarkerDef(
        _V + "UniqueItems", _TF, "List items are unique.", value=ArgType.BOOL, apply=_flag("uniqueItems", {"array"})
    ),
    MarkerDef(
        _V + "MinProperties",
        _TF,
        "Minimum number of keys.",
        value=ArgType.INT,
        apply=_keyword("minProperties", {"object"}, 0),
    ),
    MarkerDef(
        _V + "MaxProperties",
        _TF,
        "Maximum number of keys.",
        value=ArgType.INT,
        apply=_keyword("maxProperties", {"object"}, 0),
    ),
    MarkerDef(_V + "Enum", _TF, "Allowed values.", value=ArgType.ANY_LIST, apply=_enum),
    MarkerDef(_V + "Format", _TF, "OpenAPI format (date-time, int32, ...).", value=_S, apply=_set("format")),
    MarkerDef(_V + "Type", _TF, "Overrides the schema type.", value=_S, apply=_set_type, priority=9),
    MarkerDef(
        _V + "XPreserveUnknownFields",
        _TF,
        "Keep fields the schema does not declare.",
        apply=_flag("x-kubernetes-preserve-unknown-fields"),
    ),
    MarkerDef(
        "kubebuilder:pruning:PreserveUnknownFields",
        _TF,
        "Keep fields the schema does not declare.",
        apply=_flag("x-kubernetes-preserve-unknown-fields"),
    ),
    MarkerDef(
        _V + "XEmbeddedResource",
        _TF,
        "The object is a full Kubernetes object (apiVersion, kind, metadata).",
        apply=_flag("x-kubernetes-embedded-resource"),
    ),
    MarkerDef(
        _V + "EmbeddedResource", _F, "Alias of XEmbeddedResource.", apply=_flag("x-kubernetes-embedded-resource")
    ),
    MarkerDef(_V + "XIntOrString", _TF, "The value is an integer or a string.", apply=_int_or_string, priority=9),
    MarkerDef(
        _V + "XValidation",
        _TF,
        "A CEL validation rule.",
        repeatable=True,
        apply=_xvalidation,
        args=(
            Arg("rule", _S),
            Arg("message", _S, True),
            Arg("messageExpression", _S, True),
            Arg("reason", _S, True),
            Arg("fieldPath", _S, True),
            Arg("optionalOldSelf", ArgType.BOOL, True),
        ),
    ),
    MarkerDef(_V + "Schemaless", _F, "No schema for this field: any value."),
    MarkerDef(_V + "Required", _F | _P, "The field is required (package level: fields are required by default)."),
    MarkerDef(_V + "Optional", _F | _P, "The field is optional (package level: fields are optional by default)."),
    MarkerDef(
        _V + "ExactlyOneOf",
        _T,
        "Exactly one of these fields is set.",
        value=ArgType.STRING_LIST,
        apply=_one_of_family("ExactlyOneOf"),
        priority=12,
        repeatable=True,
    ),
    MarkerDef(
        _V + "AtMostOneOf",
        _T,
        "At most one of these fields is set.",
        value=ArgType.STRING_LIST,
        apply=_one_of_family("AtMostOneOf"),
        priority=11,
        repeatable=True,
    ),
    MarkerDef(
        _V + "AtLeastOneOf",
        _T,
        "At least one of these fields is set.",
        value=ArgType.STRING_LIST,
        apply=_one_of_family("AtLeastOneOf"),
        priority=13,
        repeatable=True,
    ),
    MarkerDef("required", _F, "The field is required.", aliases=("k8s:required",)),
    MarkerDef("optional", _F, "The field is optional.", aliases=("k8s:optional",)),
    MarkerDef("nullable", _F, "The field may be null.", apply=_flag("nullable")),
    MarkerDef("kubebuilder:default", _F, "Default value (relaxed JSON).", value=ArgType.ANY, apply=_set("default")),
    MarkerDef("default", _F, "Default value (JSON).", value=ArgType.ANY, apply=_set("default"), priority=9),
    MarkerDef("kubebuilder:example", _TF, "Example value.", value=ArgType.ANY, apply=_set("example")),
    MarkerDef("kubebuilder:title", _TF, "Schema title.", value=ArgType.ANY, apply=_title),
    MarkerDef(
        "kubebuilder:externalDocs",
        _TF,
        "Link to external documentation.",
        args=(Arg("url", _S, True), Arg("description", _S, True)),
        apply=_external_docs,
    ),
    MarkerDef("k8s:immutable", _F, "The field cannot change once set.", apply=_immutable),
    # Topology (server-side apply).
    MarkerDef(
        "listType", _TF, "atomic, set or map.", value=_S, apply=_list_type, priority=9, aliases=("k8s:listType",)
    ),
    MarkerDef(
        "listMapKey",
        _TF,
        "A key of a map list.",
        value=_S,
        apply=_list_map_key,
        repeatable=True,
        aliases=("k8s:listMapKey",),
    ),
    MarkerDef("mapType", _TF, "atomic or granular.", value=_S, apply=_map_type("mapType"), aliases=("k8s:mapType",)),
    MarkerDef(
        "structType", _TF, "atomic or granular.", value=_S, apply=_map_type("structType"), aliases=("k8s:structType",)
    ),
    # RBAC (controllers; any comment in the module).
    MarkerDef(
        "kubebuilder:rbac",
        _P,
        "A rule of the manager's role.",
        repeatable=True,
        args=(
            Arg("groups", ArgType.STRING_LIST, True),
            Arg("resources", ArgType.STRING_LIST, True),
            Arg("resourceNames", ArgType.STRING_LIST, True),
            Arg("verbs", ArgType.STRING_LIST),
            Arg("urls", ArgType.STRING_LIST, True),
            Arg("namespace", _S, True),
            Arg("roleName", _S, True),
        ),
    ),
)


def _index() -> dict[str, MarkerDef]:
    index: dict[str, MarkerDef] = {}
    for definition in MARKERS:
        for name in (definition.name, *definition.aliases):
            index[name] = definition
    return index


REGISTRY: dict[str, MarkerDef] = _index()
ITEMS_PREFIX = _V + "items:"
