"""Field numbers of a protobuf body that its messages here do not have.

Go's generated Unmarshal skips unknown field numbers, and so does `decode`: right for a client older than the
server. The table's newest source is older than the Kubernetes version the test server plays, though, so an
unknown number in a body is most likely a field of a newer Kubernetes (a client-go 1.36+ program setting PodSpec
`schedulingGroup`), which kube-apiserver of that version would store and this server would drop without a word.
The HTTP edge asks this module first and refuses such bodies instead (`negotiation.decode_body`).
"""

from __future__ import annotations

from pyop.apiserver.endpoints.protobuf.schema import MESSAGE, MessageSpec, message_spec
from pyop.apiserver.endpoints.protobuf.wire import LENGTH, WireError, iter_fields


def unknown_fields(message: str, data: bytes) -> list[str]:
    """`<path>: field <number> of <message>` for every unknown number, depth first (empty: all known)."""
    found: list[str] = []
    try:
        _scan(message_spec(message), data, message.rsplit(".", 1)[-1], found)
    except WireError:
        return found  # the decoder reports malformed bytes itself
    return found


def _scan(spec: MessageSpec, data: bytes, path: str, found: list[str]) -> None:
    if spec.special:
        return  # Time, Quantity, RawExtension, ...: their own fixed encodings
    for number, wire_type, raw in iter_fields(data):
        item = spec.by_number.get(number)
        if item is None:
            found.append(f"{path}: field {number} of {spec.name}")
            continue
        if item.type != MESSAGE or wire_type != LENGTH or not isinstance(raw, bytes):
            continue
        child = item.message
        where = path if item.inline else f"{path}.{item.name}"
        if item.is_map:
            entry_value = child.by_number.get(2)
            if entry_value is not None and entry_value.type == MESSAGE:
                for entry_number, _wire, part in iter_fields(raw):
                    if entry_number == 2 and isinstance(part, bytes):
                        _scan(entry_value.message, part, f"{where}[]", found)
            continue
        _scan(child, raw, f"{where}[]" if item.repeated else where, found)
