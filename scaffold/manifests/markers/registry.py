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
from urllib.parse import urlsplit

from pyop_scaffold.manifests.markers import client_tags
from pyop_scaffold.manifests.markers.values import IGNORED, ArgType

Schema = dict[str, Any]


class Target(enum.Flag):
    """Where a marker may be written. FILE markers (RBAC, webhooks) may sit in any comment of a module."""

    PACKAGE = enum.auto()
    TYPE = enum.auto()
    FIELD = enum.auto()
    FILE = enum.auto()

    def describe(self) -> str:
        names = {Target.PACKAGE: "package", Target.TYPE: "type", Target.FIELD: "field", Target.FILE: "module"}
        return " or ".join(name for flag, name in names.items() if flag in self)


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
    items: bool = False  # also written `kubebuilder:validation:items:<Name>`, applying to list items
    # `+name=<text>` in another tool's grammar (client-gen's comma lists): the text after `=` -> the value;
    # raises ValueSyntaxError. `value` then only names the value's type for the reference docs.
    parse: Callable[[str], Any] | None = None

    @property
    def is_flag(self) -> bool:
        return self.value is None and not self.args


# ---------------------------------------------------------------------------------------------------------------------
# How schema markers change a schema. Each checks that the marker fits the schema's type, with controller-tools'
# rules (numeric markers on integer/number, string markers on string or int-or-string, ...).


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
        else:
            schema.pop(key, None)

    return apply


_SCHEMA_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def _set_type(schema: Schema, value: Any) -> None:
    if value not in _SCHEMA_TYPES:
        raise MarkerUsageError(f"Type={value} is not one of {', '.join(_SCHEMA_TYPES)}")
    if value != schema.get("type"):
        # The Python type's shape no longer applies: the marker says how the value is serialised.
        for key in ("properties", "required", "items", "additionalProperties", "format", "anyOf"):
            schema.pop(key, None)
        schema.pop("x-kubernetes-int-or-string", None)
    schema["type"] = value


def _int_or_string(schema: Schema, value: Any) -> None:
    schema.pop("type", None)
    schema.pop("format", None)
    schema["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    schema["x-kubernetes-int-or-string"] = True


XVALIDATION_REASONS = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")


def _xvalidation(schema: Schema, value: Any) -> None:
    rule = {k: v for k, v in value.items() if v is not None and v != ""}
    reason = rule.get("reason")
    if reason is not None and reason not in XVALIDATION_REASONS:
        raise MarkerUsageError(f"XValidation reason {reason!r} is not one of {', '.join(XVALIDATION_REASONS)}")
    schema.setdefault("x-kubernetes-validations", []).append(rule)


IMMUTABLE_RULE = {"message": "field is immutable", "rule": "self == oldSelf"}


def _immutable(schema: Schema, value: Any) -> None:
    # The parent object gets `!has(oldSelf.x) || has(self.x)` for an optional field (see the schema walker).
    schema.setdefault("x-kubernetes-validations", []).append(dict(IMMUTABLE_RULE))


def _list_type(schema: Schema, value: Any) -> None:
    _require(schema, {"array"}, "listType")
    if value not in ("atomic", "set", "map"):
        raise MarkerUsageError(f"listType={value} is not one of atomic, set, map")
    if value != "map":
        schema.pop("x-kubernetes-list-map-keys", None)
    schema["x-kubernetes-list-type"] = value


def _list_map_key(schema: Schema, value: Any) -> None:
    _require(schema, {"array"}, "listMapKey")
    if schema.get("x-kubernetes-list-type") != "map":
        raise MarkerUsageError("listMapKey needs +listType=map on the same list")
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


def _k8s_enum(schema: Schema, value: Any) -> None:
    """Kubernetes' `+k8s:enum` on a str Enum class: a string schema listing its values, sorted."""
    if schema.get("type") != "string" or not schema.get("enum"):
        raise MarkerUsageError("k8s:enum belongs on a str Enum class (its members are the allowed values)")
    schema["enum"] = sorted(schema["enum"], key=lambda item: str(item))


def _title(schema: Schema, value: Any) -> None:
    if not isinstance(value, str):
        raise MarkerUsageError(f"title must be a string, got {value!r}")
    schema["title"] = value


def _default(schema: Schema, value: Any) -> None:
    if schema.get("type") == "array" and value == {}:
        value = []  # `+kubebuilder:default={}` on a list means the empty list, as in controller-gen
    schema["default"] = value


def _kubernetes_default(schema: Schema, value: Any) -> None:
    if value is IGNORED or value is None:
        return  # `+default=ref(...)` names a Go constant; controller-gen skips it too
    schema["default"] = value


def _external_docs(schema: Schema, value: Any) -> None:
    try:
        parts = urlsplit(value["url"])
    except ValueError:  # `https://exa[mple.com`: an unbalanced IPv6 bracket
        parts = None
    if parts is None or not parts.scheme or not (parts.netloc or parts.path):
        raise MarkerUsageError(f"externalDocs url {value['url']!r} is not an absolute URL")
    schema["externalDocs"] = {k: v for k, v in value.items() if v}


def one_of_rule(fields: list[str]) -> str:
    """controller-gen's CEL counting expression: `[has(self.a),has(self.b)].filter(x,x==true).size()`."""
    return "[" + ",".join(f"has(self.{name})" for name in fields) + "].filter(x,x==true).size()"


_ONE_OF = {
    "AtMostOneOf": ("<= 1", "at most one of the fields in [{}] may be set"),
    "ExactlyOneOf": ("== 1", "exactly one of the fields in [{}] must be set"),
    "AtLeastOneOf": (">= 1", "at least one of the fields in [{}] must be set"),
}


def _one_of_family(kind: str) -> Callable[[Schema, Any], None]:
    comparison, message = _ONE_OF[kind]

    def apply(schema: Schema, fields: Any) -> None:
        _require(schema, {"object"}, kind)
        names = list(fields)
        nested = [n for n in names if "." in n]
        if nested:
            raise MarkerUsageError(f"{kind} cannot reference nested fields: {', '.join(nested)}")
        properties = schema.get("properties", {})
        missing = [n for n in names if n not in properties]
        if missing:
            raise MarkerUsageError(f"{kind} names field(s) {', '.join(missing)} that the type does not have")
        required = [n for n in names if n in schema.get("required", [])]
        if required:
            raise MarkerUsageError(
                f"{kind} members must be optional (give them a default or +optional); required: {', '.join(required)}"
            )
        schema.setdefault("x-kubernetes-validations", []).append(
            {"message": message.format(" ".join(names)), "rule": f"{one_of_rule(names)} {comparison}"}
        )

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
_M = Target.FILE
_TF = Target.TYPE | Target.FIELD
_S = ArgType.STRING
_L = ArgType.STRING_LIST
_V = "kubebuilder:validation:"


def _validation(
    name: str,
    help: str,
    apply: Callable[[Schema, Any], None],
    value: ArgType | None = None,
    *,
    args: tuple[Arg, ...] = (),
    priority: int = 10,
    repeatable: bool = False,
) -> MarkerDef:
    """A `+kubebuilder:validation:<Name>` marker of controller-tools' ValidationMarkers: field or type, and items."""
    return MarkerDef(
        _V + name, _TF, help, value=value, args=args, apply=apply, priority=priority, repeatable=repeatable, items=True
    )


MARKERS: tuple[MarkerDef, ...] = (
    # Package level (an API package's __init__ or groupversion_info docstring, or any module docstring in it).
    MarkerDef("groupName", _P, "API group of the package (spec.group); must agree with its GroupVersion.", value=_S),
    MarkerDef("versionName", _P, "Version of the package; must agree with its GroupVersion.", value=_S),
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
            Arg("shortName", _L, True),
            Arg("categories", _L, True),
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
        'Annotations and labels of the CRD object ("key=value" items).',
        repeatable=True,
        args=(Arg("annotations", _L, True), Arg("labels", _L, True)),
    ),
    MarkerDef(
        "kubebuilder:selectablefield",
        _T,
        "A field selectable with field selectors.",
        repeatable=True,
        args=(Arg("JSONPath", _S),),
    ),
    # Validation: field and type level, and `kubebuilder:validation:items:<Name>` for list items.
    _validation("Minimum", "Minimum value (inclusive).", _numeric("minimum"), ArgType.NUMBER),
    _validation("Maximum", "Maximum value (inclusive).", _numeric("maximum"), ArgType.NUMBER),
    _validation(
        "ExclusiveMinimum", "The minimum is exclusive.", _flag("exclusiveMinimum", {"integer", "number"}), ArgType.BOOL
    ),
    _validation(
        "ExclusiveMaximum", "The maximum is exclusive.", _flag("exclusiveMaximum", {"integer", "number"}), ArgType.BOOL
    ),
    _validation("MultipleOf", "The value is a multiple of this.", _numeric("multipleOf"), ArgType.NUMBER),
    _validation("MinLength", "Minimum string length.", _keyword("minLength", {"string"}, 0), ArgType.INT),
    _validation("MaxLength", "Maximum string length.", _keyword("maxLength", {"string"}, 0), ArgType.INT),
    _validation("Pattern", "Regular expression the string matches.", _keyword("pattern", {"string"}), _S),
    _validation("MinItems", "Minimum list length.", _keyword("minItems", {"array"}, 0), ArgType.INT),
    _validation("MaxItems", "Maximum list length.", _keyword("maxItems", {"array"}, 0), ArgType.INT),
    _validation("UniqueItems", "List items are unique.", _flag("uniqueItems", {"array"}), ArgType.BOOL),
    _validation("MinProperties", "Minimum number of keys.", _keyword("minProperties", {"object"}, 0), ArgType.INT),
    _validation("MaxProperties", "Maximum number of keys.", _keyword("maxProperties", {"object"}, 0), ArgType.INT),
    _validation("Enum", "Allowed values (`A;B;C`, JSON scalars).", _enum, ArgType.ANY_LIST),
    _validation("Format", "OpenAPI format (date-time, int32, ...).", _set("format"), _S),
    _validation("Type", "Overrides the schema type.", _set_type, _S, priority=9),
    _validation(
        "XPreserveUnknownFields",
        "Keep fields the schema does not declare (prefer +kubebuilder:pruning:PreserveUnknownFields).",
        _flag("x-kubernetes-preserve-unknown-fields"),
    ),
    _validation(
        "XEmbeddedResource",
        "The object is a full Kubernetes object (apiVersion, kind, metadata).",
        _flag("x-kubernetes-embedded-resource"),
    ),
    _validation("XIntOrString", "The value is an integer or a string.", _int_or_string, priority=9),
    _validation(
        "XValidation",
        "A CEL validation rule (reason: FieldValueInvalid, FieldValueForbidden, FieldValueRequired or "
        "FieldValueDuplicate).",
        _xvalidation,
        repeatable=True,
        args=(
            Arg("rule", _S),
            Arg("message", _S, True),
            Arg("messageExpression", _S, True),
            Arg("reason", _S, True),
            Arg("fieldPath", _S, True),
            Arg("optionalOldSelf", ArgType.BOOL, True),
        ),
    ),
    MarkerDef(
        "kubebuilder:pruning:PreserveUnknownFields",
        _TF,
        "Keep fields the schema does not declare.",
        apply=_flag("x-kubernetes-preserve-unknown-fields"),
    ),
    MarkerDef(
        _V + "EmbeddedResource", _F, "Alias of XEmbeddedResource.", apply=_flag("x-kubernetes-embedded-resource")
    ),
    MarkerDef(_V + "Schemaless", _F, "No schema for this field: any value."),
    MarkerDef(_V + "Required", _F | _P, "The field is required (package level: fields are required by default)."),
    MarkerDef(_V + "Optional", _F | _P, "The field is optional (package level: fields are optional by default)."),
    MarkerDef(
        _V + "AtMostOneOf",
        _T,
        "At most one of these fields is set.",
        value=_L,
        apply=_one_of_family("AtMostOneOf"),
        priority=11,
        repeatable=True,
    ),
    MarkerDef(
        _V + "ExactlyOneOf",
        _T,
        "Exactly one of these fields is set.",
        value=_L,
        apply=_one_of_family("ExactlyOneOf"),
        priority=12,
        repeatable=True,
    ),
    MarkerDef(
        _V + "AtLeastOneOf",
        _T,
        "At least one of these fields is set.",
        value=_L,
        apply=_one_of_family("AtLeastOneOf"),
        priority=13,
        repeatable=True,
    ),
    MarkerDef(
        "k8s:enum",
        _T,
        "On a str Enum class: a string schema whose enum is the members' values, sorted.",
        apply=_k8s_enum,
    ),
    MarkerDef("required", _F, "The field is required.", aliases=("k8s:required",)),
    MarkerDef("optional", _F, "The field is optional.", aliases=("k8s:optional",)),
    MarkerDef(
        "nullable", _F, "The field may be null (Optional alone means it may be omitted).", apply=_flag("nullable")
    ),
    MarkerDef(
        "kubebuilder:default",
        _F,
        "Default value, relaxed JSON (`forty-two`, `{a: 1}`, `{x,y}`); overrides +default.",
        value=ArgType.ANY,
        apply=_default,
    ),
    MarkerDef(
        "default",
        _F,
        'Default value, JSON (`"x"`, `[1,2]`, `{"k": 1}`); `ref(...)` is ignored.',
        value=ArgType.JSON,
        apply=_kubernetes_default,
        priority=9,
    ),
    MarkerDef("kubebuilder:example", _F, "Example value (relaxed JSON).", value=ArgType.ANY, apply=_set("example")),
    MarkerDef("kubebuilder:title", _TF, "Schema title (a string).", value=ArgType.ANY, apply=_title),
    MarkerDef(
        "kubebuilder:externalDocs",
        _TF,
        "Link to external documentation.",
        args=(Arg("url", _S), Arg("description", _S, True)),
        apply=_external_docs,
        aliases=("kubebuilder:externalDoc",),
    ),
    MarkerDef(
        "k8s:immutable",
        _F,
        "The field cannot change once set (self == oldSelf; an optional field also cannot be removed).",
        apply=_immutable,
    ),
    # Topology (server-side apply).
    MarkerDef(
        "listType", _TF, "atomic, set or map.", value=_S, apply=_list_type, priority=9, aliases=("k8s:listType",)
    ),
    MarkerDef(
        "listMapKey",
        _TF,
        "A key of a map list (repeat for several keys).",
        value=_S,
        apply=_list_map_key,
        repeatable=True,
        aliases=("k8s:listMapKey",),
    ),
    MarkerDef("mapType", _TF, "atomic or granular.", value=_S, apply=_map_type("mapType"), aliases=("k8s:mapType",)),
    MarkerDef(
        "structType", _TF, "atomic or granular.", value=_S, apply=_map_type("structType"), aliases=("k8s:structType",)
    ),
    # Typed clients (`pyop make clients`): client-gen's tags, on a kind.
    MarkerDef("genclient", _T, "Generate a typed client, informer, lister and fake for this kind."),
    MarkerDef(
        "genclient:nonNamespaced",
        _T,
        "The client is cluster-scoped (no namespace argument); the kind must be cluster-scoped too.",
    ),
    MarkerDef("genclient:noStatus", _T, "No update_status or apply_status verbs."),
    MarkerDef("genclient:noVerbs", _T, "No verbs at all (only the `+genclient:method=` extras)."),
    MarkerDef("genclient:readonly", _T, "Only get, list and watch."),
    MarkerDef(
        "genclient:onlyVerbs",
        _T,
        "Exactly these verbs (client-gen's names: " + ", ".join(client_tags.VERBS) + "; comma-separated).",
        value=_L,
        parse=client_tags.parse_verbs,
    ),
    MarkerDef(
        "genclient:skipVerbs",
        _T,
        "Every verb but these (comma-separated, client-gen's names).",
        value=_L,
        parse=client_tags.parse_verbs,
    ),
    MarkerDef(
        "genclient:method",
        _T,
        "An extra method: `=Name,verb=" + "|".join(client_tags.METHOD_VERBS) + ",subresource=<s>?,input=<type>?,"
        "result=<type>?` (types as `k8s.io/api/autoscaling/v1.Scale` or a Python path; default: the kind).",
        value=_S,
        parse=client_tags.parse_method,
        repeatable=True,
    ),
    # deepcopy-gen's tags: accepted, and change nothing (pyop copies models with model_copy(deep=True)).
    MarkerDef(
        "k8s:deepcopy-gen",
        _P | _T,
        "Accepted for client-gen parity (`=package` in the package docstring, `=true|false` on a type); pyop "
        "needs no DeepCopy functions.",
        value=_S,
        parse=client_tags.parse_deepcopy,
    ),
    MarkerDef(
        "k8s:deepcopy-gen:interfaces",
        _T,
        "Accepted (e.g. `k8s.io/apimachinery/pkg/runtime.Object`); a pyop kind is a `pyop.api.Resource`.",
        value=_S,
        repeatable=True,
    ),
    MarkerDef(
        "k8s:deepcopy-gen:nonpointer-interfaces",
        _T,
        "Accepted; no effect in Python.",
        value=ArgType.BOOL,
    ),
    # RBAC and webhooks (controllers and webhooks; any comment in the module).
    MarkerDef(
        "kubebuilder:rbac",
        _M,
        "A rule of the manager's role.",
        repeatable=True,
        args=(
            Arg("groups", _L, True),
            Arg("resources", _L, True),
            Arg("resourceNames", _L, True),
            Arg("verbs", _L),
            Arg("urls", _L, True),
            Arg("namespace", _S, True),
            Arg("roleName", _S, True),
        ),
    ),
    MarkerDef(
        "kubebuilder:webhook",
        _M,
        "An admission webhook in config/webhook/manifests.yaml: exactly one of path (served by the manager "
        "behind serviceName/serviceNamespace/servicePort) or url; patch is a JSON strategic merge patch of the entry.",
        repeatable=True,
        args=(
            Arg("mutating", ArgType.BOOL),
            Arg("failurePolicy", _S),
            Arg("groups", _L),
            Arg("resources", _L),
            Arg("verbs", _L),
            Arg("versions", _L),
            Arg("name", _S),
            Arg("admissionReviewVersions", _L),
            Arg("path", _S, True),
            Arg("url", _S, True),
            Arg("sideEffects", _S, True),
            Arg("matchPolicy", _S, True),
            Arg("timeoutSeconds", ArgType.INT, True),
            Arg("reinvocationPolicy", _S, True),
            Arg("webhookVersions", _L, True),
            Arg("serviceName", _S, True),
            Arg("serviceNamespace", _S, True),
            Arg("servicePort", ArgType.INT, True),
            Arg("patch", _S, True),
        ),
    ),
    MarkerDef(
        "kubebuilder:webhookconfiguration",
        _M,
        "Names the Mutating/ValidatingWebhookConfiguration object (one per kind; without name, the default).",
        repeatable=True,
        args=(Arg("mutating", ArgType.BOOL), Arg("name", _S, True)),
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
