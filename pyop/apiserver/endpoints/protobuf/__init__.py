"""Kubernetes' protobuf wire format for built-in kinds (k8s.io/apimachinery's protobuf serializer).

The schema is `_descriptors`, generated from the FileDescriptorProtos embedded in kubectl
(pyop_scaffold.codegen.protobuf_descriptors); `envelope` reads and writes whole objects, `decode`/`encode` single
messages with Kubernetes' JSON mapping, `negotiation` is the HTTP edge (bodies in, protobuf-only clients out).
"""

from pyop.apiserver.endpoints.protobuf.envelope import (
    ProtobufDecodeError,
    ProtobufEncodeError,
    UnsupportedKindError,
    decode_object,
    decode_watch_event,
    encode_object,
    encode_watch_event,
    supports,
)

__all__ = [
    "ProtobufDecodeError",
    "ProtobufEncodeError",
    "UnsupportedKindError",
    "decode_object",
    "decode_watch_event",
    "encode_object",
    "encode_watch_event",
    "supports",
]
