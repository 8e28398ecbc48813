"""``/openapi/v2`` as protobuf: a Swagger 2.0 document (JSON form) encoded as gnostic's ``openapi.v2.Document``.

client-go's ``OpenAPISchema()`` (what ``kubectl explain --output=plaintext-openapiv2`` and other v2 readers call)
accepts only ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``, the form kube-apiserver serves
besides JSON (answered as ``...spec.v2.v1.0+protobuf``, as kube-openapi's handler does). The fields are gnostic's
(``openapiv2/OpenAPIv2.proto``): every key of the document the messages have is encoded with its field number,
values of ``Any`` fields (``default``, ``example``, ``enum`` items, vendor extensions) as their YAML text (JSON,
which YAML reads), ``x-`` keys as vendor extensions. What Swagger 2.0 has no field for (``oneOf``, ``anyOf``,
``not``, ``nullable`` of a JSON-Schema-derived definition) is not encoded, as kube-apiserver's v2 has none of them
either. Zero values are left out, as proto3 encoders do.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# kube-openapi's handler accepts both spellings and answers with the second (Go's mime parser refuses the "@").
PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_MEDIA_NAMES = ("com.github.proto-openapi.spec.v2@v1.0+protobuf", "com.github.proto-openapi.spec.v2.v1.0+protobuf")

Encoder = Callable[[Any], bytes]


def wants_protobuf(accept: str) -> bool:
    """Whether an Accept header asks for v2 as protobuf (either spelling client-go has used)."""
    return any(name in accept for name in _MEDIA_NAMES)


# --- wire format ------------------------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def _string(number: int, value: Any) -> bytes:
    if value in (None, ""):
        return b""
    return _bytes_field(number, str(value).encode("utf-8"))


def _strings(number: int, values: Any) -> bytes:
    if isinstance(values, str):
        values = [values]
    return b"".join(_bytes_field(number, str(value).encode("utf-8")) for value in values or ())


def _bool(number: int, value: Any) -> bytes:
    return _key(number, 0) + b"\x01" if value is True else b""


def _int(number: int, value: Any) -> bytes:
    if not isinstance(value, int | float) or isinstance(value, bool) or int(value) == 0:
        return b""
    return _key(number, 0) + _varint(int(value))


def _double(number: int, value: Any) -> bytes:
    if not isinstance(value, int | float) or isinstance(value, bool) or value == 0:
        return b""
    return _key(number, 1) + struct.pack("<d", float(value))


def _message(number: int, payload: bytes, *, keep_empty: bool = False) -> bytes:
    return _bytes_field(number, payload) if payload or keep_empty else b""


# --- messages ---------------------------------------------------------------------------------------------------


def _any(value: Any) -> bytes:
    """``Any``: the value's YAML (JSON text is YAML) in field 2."""
    return _bytes_field(2, json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _vendor(number: int, node: Mapping[str, Any]) -> bytes:
    """The ``x-`` keys of ``node`` as repeated ``NamedAny``."""
    return b"".join(
        _message(number, _string(1, name) + _message(2, _any(value), keep_empty=True), keep_empty=True)
        for name, value in node.items()
        if name.startswith("x-")
    )


def _named(number: int, items: Mapping[str, Any], encode: Encoder) -> bytes:
    """A map as repeated ``Named<T>`` (name 1, value 2), in the map's order."""
    return b"".join(
        _message(number, _string(1, name) + _message(2, encode(value), keep_empty=True), keep_empty=True)
        for name, value in items.items()
    )


def _external_docs(node: Any) -> bytes:
    if not isinstance(node, Mapping):
        return b""
    return _string(1, node.get("description")) + _string(2, node.get("url")) + _vendor(3, node)


def schema(node: Any) -> bytes:
    """``Schema``."""
    if not isinstance(node, Mapping):
        return b""
    out = [
        _string(1, node.get("$ref")),
        _string(2, node.get("format")),
        _string(3, node.get("title")),
        _string(4, node.get("description")),
        _message(5, _any(node["default"]), keep_empty=True) if "default" in node else b"",
        _double(6, node.get("multipleOf")),
        _double(7, node.get("maximum")),
        _bool(8, node.get("exclusiveMaximum")),
        _double(9, node.get("minimum")),
        _bool(10, node.get("exclusiveMinimum")),
        _int(11, node.get("maxLength")),
        _int(12, node.get("minLength")),
        _string(13, node.get("pattern")),
        _int(14, node.get("maxItems")),
        _int(15, node.get("minItems")),
        _bool(16, node.get("uniqueItems")),
        _int(17, node.get("maxProperties")),
        _int(18, node.get("minProperties")),
        _strings(19, node.get("required")),
        b"".join(_message(20, _any(item), keep_empty=True) for item in node.get("enum") or ()),
    ]
    additional = node.get("additionalProperties")
    if isinstance(additional, bool):
        out.append(_message(21, _key(2, 0) + (b"\x01" if additional else b"\x00"), keep_empty=True))
    elif isinstance(additional, Mapping):
        out.append(_message(21, _message(1, schema(additional), keep_empty=True), keep_empty=True))
    if node.get("type"):
        out.append(_message(22, _strings(1, node["type"]), keep_empty=True))
    items = node.get("items")
    if items is not None:
        listed = items if isinstance(items, list) else [items]
        out.append(
            _message(23, b"".join(_message(1, schema(item), keep_empty=True) for item in listed), keep_empty=True)
        )
    out.extend(_message(24, schema(item), keep_empty=True) for item in node.get("allOf") or ())
    if isinstance(node.get("properties"), Mapping):
        out.append(_message(25, _named(1, node["properties"], schema), keep_empty=True))
    out.append(_string(26, node.get("discriminator")))
    out.append(_bool(27, node.get("readOnly")))
    out.append(_message(29, _external_docs(node.get("externalDocs"))))
    if "example" in node:
        out.append(_message(30, _any(node["example"]), keep_empty=True))
    out.append(_vendor(31, node))
    return b"".join(out)


def _primitive_fields(node: Mapping[str, Any], first: int) -> bytes:
    """The fields a non-body parameter shares from ``type`` on (``first``: type's number in its message)."""
    n = first
    out = [
        _string(n, node.get("type")),
        _string(n + 1, node.get("format")),
        _message(n + 2, _items(node["items"]), keep_empty=True) if isinstance(node.get("items"), Mapping) else b"",
        _string(n + 3, node.get("collectionFormat")),
        _message(n + 4, _any(node["default"]), keep_empty=True) if "default" in node else b"",
        _double(n + 5, node.get("maximum")),
        _bool(n + 6, node.get("exclusiveMaximum")),
        _double(n + 7, node.get("minimum")),
        _bool(n + 8, node.get("exclusiveMinimum")),
        _int(n + 9, node.get("maxLength")),
        _int(n + 10, node.get("minLength")),
        _string(n + 11, node.get("pattern")),
        _int(n + 12, node.get("maxItems")),
        _int(n + 13, node.get("minItems")),
        _bool(n + 14, node.get("uniqueItems")),
        b"".join(_message(n + 15, _any(item), keep_empty=True) for item in node.get("enum") or ()),
        _double(n + 16, node.get("multipleOf")),
        _vendor(n + 17, node),
    ]
    return b"".join(out)


def _items(node: Mapping[str, Any]) -> bytes:
    """``PrimitivesItems`` (type is its field 1; no description)."""
    return _primitive_fields(node, 1)


def _parameter(node: Any) -> bytes:
    """``ParametersItem``: a ``$ref`` as JsonReference, else the Parameter."""
    if not isinstance(node, Mapping):
        return b""
    if "$ref" in node:
        return _message(2, _string(1, node["$ref"]) + _string(2, node.get("description")), keep_empty=True)
    return _message(1, _parameter_message(node), keep_empty=True)


def _parameter_message(node: Any) -> bytes:
    """``Parameter``: a BodyParameter, or the NonBodyParameter of its ``in``."""
    if not isinstance(node, Mapping):
        return b""
    head = _bool(1, node.get("required")) + _string(2, node.get("in")) + _string(3, node.get("description"))
    head += _string(4, node.get("name"))
    where = node.get("in")
    if where == "body":
        body = _string(1, node.get("description")) + _string(2, node.get("name")) + _string(3, where)
        body += _bool(4, node.get("required")) + _message(5, schema(node.get("schema")), keep_empty=True)
        body += _vendor(6, node)
        return _message(1, body, keep_empty=True)
    if where in ("query", "formData"):
        sub = head + _bool(5, node.get("allowEmptyValue")) + _primitive_fields(node, 6)
        number = 3 if where == "query" else 2
    else:  # path, header
        sub = head + _primitive_fields(node, 5)
        number = 4 if where == "path" else 1
    return _message(2, _message(number, sub, keep_empty=True), keep_empty=True)


def _response(node: Any) -> bytes:
    """``ResponseValue``."""
    if not isinstance(node, Mapping):
        return b""
    if "$ref" in node:
        return _message(2, _string(1, node["$ref"]), keep_empty=True)
    out = _string(1, node.get("description"))
    if isinstance(node.get("schema"), Mapping):
        out += _message(2, _message(1, schema(node["schema"]), keep_empty=True), keep_empty=True)
    out += _vendor(5, node)
    return _message(1, out, keep_empty=True)


def _parameters(number: int, parameters: Iterable[Any]) -> bytes:
    return b"".join(_message(number, _parameter(item), keep_empty=True) for item in parameters or ())


def _operation(node: Any) -> bytes:
    if not isinstance(node, Mapping):
        return b""
    out = [
        _strings(1, node.get("tags")),
        _string(2, node.get("summary")),
        _string(3, node.get("description")),
        _message(4, _external_docs(node.get("externalDocs"))),
        _string(5, node.get("operationId")),
        _strings(6, node.get("produces")),
        _strings(7, node.get("consumes")),
        _parameters(8, node.get("parameters") or ()),
    ]
    responses = node.get("responses")
    if isinstance(responses, Mapping):
        codes = {code: value for code, value in responses.items() if not str(code).startswith("x-")}
        out.append(_message(9, _named(1, codes, _response) + _vendor(2, responses), keep_empty=True))
    out.append(_strings(10, node.get("schemes")))
    out.append(_bool(11, node.get("deprecated")))
    out.extend(_message(12, _security_requirement(item), keep_empty=True) for item in node.get("security") or ())
    out.append(_vendor(13, node))
    return b"".join(out)


_METHODS = (("get", 2), ("put", 3), ("post", 4), ("delete", 5), ("options", 6), ("head", 7), ("patch", 8))


def _path_item(node: Any) -> bytes:
    if not isinstance(node, Mapping):
        return b""
    out = [_string(1, node.get("$ref"))]
    out.extend(
        _message(number, _operation(node[method]), keep_empty=True) for method, number in _METHODS if method in node
    )
    out.append(_parameters(9, node.get("parameters") or ()))
    out.append(_vendor(10, node))
    return b"".join(out)


def _security_requirement(node: Any) -> bytes:
    if not isinstance(node, Mapping):
        return b""
    return _named(1, node, lambda scopes: _strings(1, scopes))


def _security_definition(node: Any) -> bytes:
    """``SecurityDefinitionsItem``: basic (1) or apiKey (2); OAuth2 flows are not written by pyop's servers."""
    if not isinstance(node, Mapping):
        return b""
    if node.get("type") == "basic":
        return _message(
            1, _string(1, "basic") + _string(2, node.get("description")) + _vendor(3, node), keep_empty=True
        )
    api_key = _string(1, node.get("type")) + _string(2, node.get("name")) + _string(3, node.get("in"))
    api_key += _string(4, node.get("description")) + _vendor(5, node)
    return _message(2, api_key, keep_empty=True)


def _info(node: Any) -> bytes:
    if not isinstance(node, Mapping):
        return b""
    return (
        _string(1, node.get("title"))
        + _string(2, node.get("version"))
        + _string(3, node.get("description"))
        + _string(4, node.get("termsOfService"))
        + _vendor(7, node)
    )


def document(swagger: Mapping[str, Any]) -> bytes:
    """The whole ``Document``."""
    out = [
        _string(1, swagger.get("swagger")),
        _message(2, _info(swagger.get("info")), keep_empty="info" in swagger),
        _string(3, swagger.get("host")),
        _string(4, swagger.get("basePath")),
        _strings(5, swagger.get("schemes")),
        _strings(6, swagger.get("consumes")),
        _strings(7, swagger.get("produces")),
    ]
    paths = swagger.get("paths")
    if isinstance(paths, Mapping):
        named = {name: item for name, item in paths.items() if not name.startswith("x-")}
        out.append(_message(8, _vendor(1, paths) + _named(2, named, _path_item), keep_empty=True))
    if isinstance(swagger.get("definitions"), Mapping):
        out.append(_message(9, _named(1, swagger["definitions"], schema), keep_empty=True))
    if isinstance(swagger.get("parameters"), Mapping):
        out.append(_message(10, _named(1, swagger["parameters"], _parameter_message), keep_empty=True))
    out.extend(_message(12, _security_requirement(item), keep_empty=True) for item in swagger.get("security") or ())
    if isinstance(swagger.get("securityDefinitions"), Mapping):
        out.append(_message(13, _named(1, swagger["securityDefinitions"], _security_definition), keep_empty=True))
    out.append(_vendor(16, swagger))
    return b"".join(out)


__all__ = ["PROTOBUF_TYPE", "document", "schema", "wants_protobuf"]
