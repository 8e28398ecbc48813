"""Protocol buffers' wire format at its lowest level: varints, tags, length-delimited fields, and the two framings
Kubernetes puts around messages (the `k8s\\x00` envelope of a runtime.Unknown, and 4-byte length prefixes of a watch
stream).

Nothing here knows a message's schema: it reads fields as (number, wire type, value) and writes them back, so the
descriptor extractor (pyop_scaffold.codegen.protobuf_descriptors) and the object codec share one reader.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator
from typing import Final

VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5

MAGIC: Final = b"k8s\x00"
"""The four bytes that open every protobuf-encoded Kubernetes object (k8s.io/apimachinery/pkg/runtime/serializer/
protobuf): what follows is a runtime.Unknown whose `raw` is the object's own message."""

_MASK64: Final = (1 << 64) - 1


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message (truncated, bad wire type, varint too long)."""


def read_varint(data: bytes | memoryview, index: int) -> tuple[int, int]:
    """(value, next index) of the unsigned varint at `index`."""
    result = 0
    shift = 0
    end = len(data)
    while True:
        if index >= end:
            raise WireError("unexpected end of data in a varint")
        byte = data[index]
        index += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, index
        shift += 7
        if shift >= 70:
            raise WireError("varint longer than 10 bytes")


def iter_fields(data: bytes | memoryview) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of every field in order: an int for varints and fixed-width fields (the
    raw unsigned bits), bytes for length-delimited ones. Groups (unused by Kubernetes) are an error."""
    index = 0
    end = len(data)
    view = memoryview(data)
    while index < end:
        key = data[index]  # one-byte keys and lengths (fields 1-15, values under 128 bytes) are the common case
        if key < 0x80:
            index += 1
        else:
            key, index = read_varint(data, index)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire_type == VARINT:
            value, index = read_varint(data, index)
            yield number, wire_type, value
        elif wire_type == LENGTH:
            size = data[index] if index < end else 0x80
            if size < 0x80:
                index += 1
            else:
                size, index = read_varint(data, index)
            if index + size > end:
                raise WireError(f"field {number}: length {size} runs past the end of the message")
            yield number, wire_type, bytes(view[index : index + size])
            index += size
        elif wire_type == FIXED64:
            if index + 8 > end:
                raise WireError(f"field {number}: truncated fixed64")
            yield number, wire_type, int.from_bytes(view[index : index + 8], "little")
            index += 8
        elif wire_type == FIXED32:
            if index + 4 > end:
                raise WireError(f"field {number}: truncated fixed32")
            yield number, wire_type, int.from_bytes(view[index : index + 4], "little")
            index += 4
        else:
            raise WireError(f"field {number}: unsupported wire type {wire_type}")


def encode_varint(value: int) -> bytes:
    """An unsigned varint; negative values are their 64-bit two's complement (as Go writes an int32/int64)."""
    value &= _MASK64
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@functools.cache
def tag(number: int, wire_type: int) -> bytes:
    """A field's key bytes (cached: a message has a few hundred distinct keys at most)."""
    return encode_varint((number << 3) | wire_type)


def length_delimited(number: int, payload: bytes) -> bytes:
    return tag(number, LENGTH) + encode_varint(len(payload)) + payload


def signed64(value: int) -> int:
    """The unsigned 64 bits read from the wire as Go's int64."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def signed32(value: int) -> int:
    """A varint as Go's int32 (the low 32 bits; negative int32s are sent sign-extended to 64 bits)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def zigzag_decode(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def double(bits: int) -> float:
    return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])


def float32(bits: int) -> float:
    return float(struct.unpack("<f", bits.to_bytes(4, "little"))[0])


# --- Kubernetes framing ------------------------------------------------------------------------------------------


def frame(payload: bytes) -> bytes:
    """One frame of a protobuf watch stream: 4-byte big-endian length, then the bytes (LengthDelimitedFramer)."""
    return len(payload).to_bytes(4, "big") + payload


def iter_frames(data: bytes) -> Iterator[bytes]:
    """The frames of a whole protobuf watch stream (tests read one back)."""
    index = 0
    while index < len(data):
        if index + 4 > len(data):
            raise WireError("truncated frame length")
        size = int.from_bytes(data[index : index + 4], "big")
        index += 4
        if index + size > len(data):
            raise WireError("truncated frame")
        yield data[index : index + size]
        index += size
