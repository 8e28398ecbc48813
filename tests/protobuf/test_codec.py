"""Kubernetes' protobuf encoding of whole objects: round trips of many kinds and the JSON mapping's rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from protobuf.samples import CRD_SAMPLE, SAMPLES, SAMPLES_1_35, assert_contains
from pyop.apiserver.endpoints.protobuf import (
    ProtobufDecodeError,
    UnsupportedKindError,
    decode_object,
    decode_watch_event,
    encode_object,
    encode_watch_event,
)
from pyop.apiserver.endpoints.protobuf.decode import decode_message
from pyop.apiserver.endpoints.protobuf.encode import encode_message
from pyop.apiserver.endpoints.protobuf.envelope import unwrap, wrap
from pyop.apiserver.endpoints.protobuf.wire import MAGIC, encode_varint, iter_fields, iter_frames, length_delimited, tag

CORE: Any = "k8s.io.api.core.v1."
META: Any = "k8s.io.apimachinery.pkg.apis.meta.v1."


@pytest.mark.parametrize("sample", [*SAMPLES, *SAMPLES_1_35, CRD_SAMPLE], ids=lambda sample: str(sample["kind"]))
def test_every_value_survives_a_round_trip(sample: dict[str, Any]) -> None:
    encoded = encode_object(sample)
    decoded = decode_object(encoded)
    assert_contains(decoded, sample)
    assert decode_object(encode_object(decoded)) == decoded  # Go's JSON of the struct is a fixed point
    assert encode_object(decoded) == encoded  # and encodes to the very same bytes


def test_the_envelope_names_the_kind_and_holds_the_message() -> None:
    data = encode_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert data.startswith(MAGIC)
    api_version, kind, raw = unwrap(data)
    assert (api_version, kind) == ("v1", "ConfigMap")
    assert wrap(api_version, kind, raw) == data
    decoded = decode_object(data)
    assert list(decoded)[:2] == ["kind", "apiVersion"]


def test_time_is_whole_seconds_and_micro_time_keeps_microseconds() -> None:
    encoded = encode_message(META + "ObjectMeta", {"creationTimestamp": "2024-01-02T03:04:05.9+01:00"})
    meta = decode_message(META + "ObjectMeta", encoded)
    assert meta["creationTimestamp"] == "2024-01-02T02:04:05Z"
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}}
    lease["spec"] = {"acquireTime": "2024-01-02T03:04:05.123456789Z"}
    assert decode_object(encode_object(lease))["spec"]["acquireTime"] == "2024-01-02T03:04:05.123456Z"
    fields = {
        number: value for number, _wire, value in iter_fields(encode_message(META + "Time", "1970-01-01T00:01:40Z"))
    }
    assert fields == {1: 100, 2: 0}


def test_go_zero_time_is_an_empty_message_and_json_null() -> None:
    assert encode_message(META + "Time", None) == b""
    meta = decode_message(META + "ObjectMeta", length_delimited(1, b"n") + length_delimited(8, b""))
    assert meta == {"name": "n", "creationTimestamp": None}


def test_int_or_string_and_quantity() -> None:
    port = CORE + "ServicePort"
    assert decode_message(port, encode_message(port, {"port": 1, "targetPort": 8080}))["targetPort"] == 8080
    assert decode_message(port, encode_message(port, {"port": 1, "targetPort": "web"}))["targetPort"] == "web"
    requirements = CORE + "ResourceRequirements"
    decoded = decode_message(requirements, encode_message(requirements, {"limits": {"cpu": "1", "memory": "1Gi"}}))
    assert decoded == {"limits": {"cpu": "1", "memory": "1Gi"}}


def test_duration_is_go_notation() -> None:
    duration = META + "Duration"
    for text in ("1h0m0s", "1.5s", "300ms", "0s"):
        assert decode_message(duration, encode_message(duration, text)) == text
    assert decode_message(duration, encode_message(duration, "90m")) == "1h30m0s"


def test_pointer_zero_stays_value_zero_goes_required_zero_stays() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 0}}
    assert decode_object(encode_object(deployment))["spec"]["replicas"] == 0  # *int32: set to zero
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 1}]}}
    service["spec"]["ports"][0]["nodePort"] = 0
    assert "nodePort" not in decode_object(encode_object(service))["spec"]["ports"][0]  # int32, omitempty
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"}}
    status = decode_object(encode_object(pdb))["status"]
    assert status == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


def test_maps_are_written_sorted_by_key() -> None:
    one = encode_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"b": "1", "a": "2"}})
    two = encode_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"a": "2", "b": "1"}})
    assert one == two
    assert one.index(b"\x0a\x01a") < one.index(b"\x0a\x01b")


def test_proto_names_that_are_not_json_names() -> None:
    """`uID`, `aPIGroup`, admissionregistration's `Expression` and `Webhooks`: the JSON names are used."""
    reference = "k8s.io.api.authentication.v1.BoundObjectReference"
    assert decode_message(reference, length_delimited(4, b"u-1")) == {"uid": "u-1"}
    variable = "k8s.io.api.admissionregistration.v1.Variable"
    assert decode_message(variable, length_delimited(1, b"n") + length_delimited(2, b"e")) == {
        "name": "n",
        "expression": "e",
    }


def test_inline_structs_are_merged_into_their_parent() -> None:
    probe = decode_message(CORE + "Probe", encode_message(CORE + "Probe", {"exec": {"command": ["true"]}}))
    assert probe == {"exec": {"command": ["true"]}}
    volume = decode_message(CORE + "Volume", encode_message(CORE + "Volume", {"name": "v", "emptyDir": {}}))
    assert volume == {"name": "v", "emptyDir": {}}


def test_unknown_fields_are_skipped_and_packed_repeated_scalars_read() -> None:
    context = CORE + "PodSecurityContext"
    packed = length_delimited(4, encode_varint(5) + encode_varint(6))  # supplementalGroups, packed
    unknown = tag(999, 0) + encode_varint(1)
    assert decode_message(context, packed + unknown) == {"supplementalGroups": [5, 6]}


def test_negative_and_large_integers() -> None:
    context = CORE + "SecurityContext"
    decoded = decode_message(context, encode_message(context, {"runAsUser": -2, "runAsGroup": 2**62}))
    assert decoded == {"runAsUser": -2, "runAsGroup": 2**62}


def test_bad_bytes_are_decode_errors() -> None:
    with pytest.raises(ProtobufDecodeError, match="expected prefix"):
        decode_object(b'{"kind":"ConfigMap"}')
    good = encode_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    with pytest.raises(ProtobufDecodeError):
        decode_object(good[:-7])
    gzip = MAGIC + length_delimited(1, length_delimited(1, b"v1") + length_delimited(2, b"ConfigMap"))
    with pytest.raises(ProtobufDecodeError, match="contentEncoding"):
        decode_object(gzip + length_delimited(2, b"") + length_delimited(3, b"gzip"))


def test_kinds_without_a_message_are_refused() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    with pytest.raises(UnsupportedKindError):
        encode_object(widget)
    with pytest.raises(UnsupportedKindError):
        decode_object(wrap("example.com/v1", "Widget", b""))


def test_watch_events_are_length_prefixed_frames() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "resourceVersion": "3"}}
    stream = encode_watch_event("ADDED", obj) + encode_watch_event("DELETED", obj)
    frames = list(iter_frames(stream))
    assert len(frames) == 2
    event_type, decoded = decode_watch_event(frames[1])
    assert event_type == "DELETED"
    assert_contains(decoded, obj)


def test_samples_are_not_modified() -> None:
    before = copy.deepcopy(SAMPLES)
    for sample in SAMPLES:
        encode_object(sample)
    assert before == SAMPLES


def test_crd_schemas_keep_the_json_of_apiextensions_wrappers() -> None:
    """JSON values stay JSON (a number, an object, null in an enum), JSONSchemaPropsOr* keep whichever of schema,
    list or bool was sent, and `$ref`/`x-kubernetes-*` keep their JSON names."""
    decoded = decode_object(encode_object(CRD_SAMPLE))
    spec = decoded["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    properties = spec["properties"]
    assert properties["size"]["default"] == 3 and properties["size"]["maximum"] == 10.5
    assert properties["mode"]["enum"] == ["a", "b", None]
    assert properties["tags"]["items"] == {"type": "string", "maxLength": 63}
    assert properties["pair"]["items"] == [{"type": "string"}, {"type": "integer"}]
    assert properties["labels"]["additionalProperties"] == {"type": "string"}
    assert (properties["free"]["additionalProperties"], properties["closed"]["additionalProperties"]) == (True, False)
    assert properties["config"]["default"] == {"k": ["v", 1, True, None]}
    assert spec["dependencies"] == {"mode": ["tags"], "labels": {"required": ["free"]}}
    assert spec["x-kubernetes-validations"] == [{"rule": "self.size > 0", "message": "positive"}]
    ref = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    assert decode_message(ref, encode_message(ref, {"$ref": "#/d"})) == {"$ref": "#/d"}
