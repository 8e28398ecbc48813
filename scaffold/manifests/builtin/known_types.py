"""controller-gen's fixed schemas for special Kubernetes types, and Go facts the JSON Schema export lost.

controller-gen does not derive these types from their Go structs: `pkg/crd/known_types.go` (controller-tools
v0.21) pins their schemas because their JSON form differs from their struct (custom marshallers). The OpenAPI
definitions in `kubernetes-validate` write several of them differently (IntOrString and Quantity as `oneOf`, Time
with a description, ObjectMeta in full), so the converter swaps in controller-gen's form by definition name.

The second half records the `+default` markers controller-gen turns into `default:` that the JSON Schema export
dropped. They matter beyond fidelity: a property named in `x-kubernetes-list-map-keys` must be required or
defaulted, so without `protocol: {default: TCP}` the API server rejects any CRD that embeds a PodSpec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
TIME: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
MICRO_TIME: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
DURATION: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.Duration"
OBJECT_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
RAW_EXTENSION: Final = "io.k8s.apimachinery.pkg.runtime.RawExtension"
APIEXTENSIONS_JSON: Final = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"
LOCAL_OBJECT_REFERENCE: Final = "io.k8s.api.core.v1.LocalObjectReference"

# controller-gen's resource.Quantity pattern (known_types.go), kept verbatim: the API server compiles it as RE2.
QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def _int_or_string() -> dict[str, Any]:
    return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}


def _quantity() -> dict[str, Any]:
    return {**_int_or_string(), "pattern": QUANTITY_PATTERN}


def _date_time() -> dict[str, Any]:
    return {"format": "date-time", "type": "string"}


def _string() -> dict[str, Any]:
    return {"type": "string"}


def _raw_extension() -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _any_json() -> dict[str, Any]:
    return {"x-kubernetes-preserve-unknown-fields": True}


def object_meta(*, embedded: bool) -> dict[str, Any]:
    """ObjectMeta as controller-gen writes it: an opaque object, or with `crd:generateEmbeddedObjectMeta=true`
    the allow-listed fields a template may carry (so labels and annotations survive pruning)."""
    if not embedded:
        return {"type": "object"}
    string_map = {"additionalProperties": {"type": "string"}, "type": "object"}
    return {
        "properties": {
            "annotations": dict(string_map),
            "finalizers": {"items": {"type": "string"}, "type": "array"},
            "labels": dict(string_map),
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
        "type": "object",
    }


KNOWN_TYPE_SCHEMAS: Final[Mapping[str, Callable[[], dict[str, Any]]]] = {
    INT_OR_STRING: _int_or_string,
    QUANTITY: _quantity,
    TIME: _date_time,
    MICRO_TIME: _date_time,
    DURATION: _string,
    RAW_EXTENSION: _raw_extension,
    APIEXTENSIONS_JSON: _any_json,
}
"""Definition name -> controller-gen's schema for it (ObjectMeta is separate: it depends on an option)."""

KNOWN_TYPE_NAMES: Final = frozenset(KNOWN_TYPE_SCHEMAS) | {OBJECT_META}


@dataclass(frozen=True)
class UpstreamFieldMarkers:
    """Schema keywords controller-gen emits for a property from Go markers the JSON Schema export dropped."""

    definition: str
    property: str
    keywords: Mapping[str, Any]
    why: str
    inherited_by_inline_embedders: bool = False


_PROTOCOL_WHY: Final = "field of Go type corev1.Protocol; controller-gen's known_types.go gives that type default TCP"
_TCP: Final[Mapping[str, Any]] = {"default": "TCP"}
_CONDITION_WHY: Final = "+kubebuilder:validation markers on metav1.Condition (apimachinery meta/v1/types.go)"
_CONDITION: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"

UPSTREAM_FIELD_MARKERS: Final[tuple[UpstreamFieldMarkers, ...]] = (
    UpstreamFieldMarkers("io.k8s.api.core.v1.ContainerPort", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers("io.k8s.api.core.v1.ServicePort", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers("io.k8s.api.core.v1.EndpointPort", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers("io.k8s.api.core.v1.PortStatus", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers("io.k8s.api.discovery.v1.EndpointPort", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers("io.k8s.api.networking.v1.NetworkPolicyPort", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers("io.k8s.api.networking.v1.IngressPortStatus", "protocol", _TCP, _PROTOCOL_WHY),
    UpstreamFieldMarkers(
        LOCAL_OBJECT_REFERENCE,
        "name",
        {"default": ""},
        'Go markers `+default=""` and `+kubebuilder:default=""` (it is the list-map key of imagePullSecrets); '
        "types that embed LocalObjectReference inline (SecretKeySelector, ConfigMapEnvSource, ...) inherit them",
        inherited_by_inline_embedders=True,
    ),
    UpstreamFieldMarkers("io.k8s.api.core.v1.GRPCAction", "service", {"default": ""}, 'Go marker `+default=""`'),
    UpstreamFieldMarkers(
        _CONDITION,
        "type",
        {
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
        _CONDITION_WHY,
    ),
    UpstreamFieldMarkers(_CONDITION, "status", {"enum": ["True", "False", "Unknown"]}, _CONDITION_WHY),
    UpstreamFieldMarkers(_CONDITION, "observedGeneration", {"minimum": 0}, _CONDITION_WHY),
    UpstreamFieldMarkers(
        _CONDITION,
        "reason",
        {"maxLength": 1024, "minLength": 1, "pattern": r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"},
        _CONDITION_WHY,
    ),
    UpstreamFieldMarkers(_CONDITION, "message", {"maxLength": 32768}, _CONDITION_WHY),
)
"""Sources: controller-gen's known_types.go (corev1.Protocol); its CronJob golden
(`pkg/crd/testdata/testdata.kubebuilder.io_cronjobs.yaml`, which embeds a PodSpec and shows `default: TCP` on
container ports, `default: ""` on configMapKeyRef/secretKeyRef names and on grpc.service); the metav1.Condition
schema found in every Kubebuilder CRD with conditions."""
