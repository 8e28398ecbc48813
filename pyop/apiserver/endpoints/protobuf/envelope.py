"""Whole Kubernetes objects on the protobuf wire: `k8s\\x00` + runtime.Unknown{typeMeta, raw, contentEncoding,
contentType}, whose `raw` is the object's message and whose typeMeta names it (apiVersion, kind).

This is k8s.io/apimachinery/pkg/runtime/serializer/protobuf's Serializer: request and response bodies use it,
a watch stream's frames are WatchEvents without it (the RawSerializer), each event's object with it again.
"""

from __future__ import annotations

from typing import Any

from pyop.api.status import ApiError
from pyop.apiserver.endpoints.protobuf.decode import ProtobufDecodeError, decode_message
from pyop.apiserver.endpoints.protobuf.encode import ProtobufEncodeError, ProtobufFieldGapError, encode_message
from pyop.apiserver.endpoints.protobuf.schema import WATCH_EVENT, message_for_kind
from pyop.apiserver.endpoints.protobuf.wire import MAGIC, WireError, frame, iter_fields, length_delimited


class UnsupportedKindError(LookupError):
    """A kind with no protobuf message here (custom resources, kinds newer than the table's sources)."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f"no protobuf message for {kind or '<no kind>'} in {api_version or '<no apiVersion>'}")
        self.api_version = api_version
        self.kind = kind


def unwrap(data: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw message bytes) of an enveloped object."""
    if not data.startswith(MAGIC):
        raise ProtobufDecodeError(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        )
    api_version = kind = ""
    raw = b""
    content_encoding = ""
    try:
        for number, _wire, value in iter_fields(memoryview(data)[len(MAGIC) :]):
            if not isinstance(value, bytes):
                continue
            if number == 1:
                for meta_number, _meta_wire, meta_value in iter_fields(value):
                    if meta_number == 1 and isinstance(meta_value, bytes):
                        api_version = meta_value.decode("utf-8")
                    elif meta_number == 2 and isinstance(meta_value, bytes):
                        kind = meta_value.decode("utf-8")
            elif number == 2:
                raw = value
            elif number == 3:
                content_encoding = value.decode("utf-8")
    except (WireError, UnicodeDecodeError) as error:
        raise ProtobufDecodeError(f"runtime.Unknown: {error}") from None
    if content_encoding:
        raise ProtobufDecodeError(f"unsupported contentEncoding {content_encoding!r} of a protobuf object")
    return api_version, kind, raw


def wrap(api_version: str, kind: str, raw: bytes) -> bytes:
    """The enveloped bytes Go writes: typeMeta and raw, then the empty contentEncoding and contentType."""
    type_meta = length_delimited(1, api_version.encode("utf-8")) + length_delimited(2, kind.encode("utf-8"))
    unknown = length_delimited(1, type_meta) + length_delimited(2, raw) + length_delimited(3, b"")
    return MAGIC + unknown + length_delimited(4, b"")


def decode_object(data: bytes) -> dict[str, Any]:
    """The JSON object of an enveloped protobuf object, `kind` and `apiVersion` first (as Go writes them)."""
    api_version, kind, raw = unwrap(data)
    message = message_for_kind(api_version, kind)
    if message is None:
        raise UnsupportedKindError(api_version, kind)
    body = decode_message(message, raw)
    return {"kind": kind, "apiVersion": api_version, **body}


def supports(obj: Any) -> bool:
    """Whether `obj` (a JSON object) has a protobuf message here."""
    if not isinstance(obj, dict):
        return False
    return message_for_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))) is not None


def encode_object(obj: dict[str, Any]) -> bytes:
    """The enveloped protobuf bytes of a JSON object that names its apiVersion and kind."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    message = message_for_kind(api_version, kind)
    if message is None:
        raise UnsupportedKindError(api_version, kind)
    return wrap(api_version, kind, encode_message(message, obj))


def encode_watch_event(event_type: str, obj: dict[str, Any]) -> bytes:
    """One frame of a protobuf watch stream: a length-prefixed WatchEvent{type, object: the enveloped object}.

    An object with a field its message lacks (newer than the table) is an ERROR event with a 406 Status instead:
    client-go's watcher stops on it and the client sees why, rather than receiving the object without the field."""
    try:
        encoded = encode_object(obj)
    except ProtobufFieldGapError as error:
        event_type = "ERROR"
        message = f"{error.path} has no protobuf field in this server's table; ask for application/json"
        encoded = encode_object(ApiError(406, message, reason="NotAcceptable").to_status())
    raw_extension = length_delimited(1, encoded)
    event = length_delimited(1, event_type.encode("utf-8")) + length_delimited(2, raw_extension)
    return frame(event)


def decode_watch_event(payload: bytes) -> tuple[str, dict[str, Any]]:
    """(type, object) of one frame's payload (clients and tests read streams back)."""
    event = decode_message(WATCH_EVENT, payload)
    obj = event.get("object")
    if not isinstance(obj, dict):
        raise ProtobufDecodeError("WatchEvent without an object")
    return str(event.get("type", "")), obj


__all__ = [
    "ProtobufDecodeError",
    "ProtobufEncodeError",
    "UnsupportedKindError",
    "decode_object",
    "decode_watch_event",
    "encode_object",
    "encode_watch_event",
    "supports",
    "unwrap",
    "wrap",
]
