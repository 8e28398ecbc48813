"""Protobuf at the HTTP edge: request bodies in, and responses out for clients that accept nothing else.

kube-apiserver decodes `application/vnd.kubernetes.protobuf` bodies for built-in kinds (custom resources have no
protobuf serializer: 415). Responses here are JSON whenever the Accept header allows JSON (every client that sends
protobuf lists JSON too: client-go's `application/vnd.kubernetes.protobuf, application/json`); a client that asks
for protobuf only gets protobuf (objects, lists and Status errors). A kind with no message here (a custom
resource, or a built-in kind newer than the table's sources) is answered as kube-apiserver answers for a type
without protobuf marshalling, with its errNotMarshalable: a 406 NotAcceptable response, a 400 body (custom
resources: 415 first); an object with a field its message lacks is a 406 too, not an object sent without it, and
a body with a field number its message lacks (a newer client's field) a 415, not a body stored without it.
Watches follow the same rule with `;stream=watch` frames.
"""

from __future__ import annotations

import json
from typing import Any, Final

from aiohttp import web

from pyop.api.status import ApiError, bad_request
from pyop.apiserver.endpoints.protobuf import decode
from pyop.apiserver.endpoints.protobuf.decode import ProtobufDecodeError
from pyop.apiserver.endpoints.protobuf.encode import ProtobufEncodeError, ProtobufFieldGapError
from pyop.apiserver.endpoints.protobuf.envelope import (
    UnsupportedKindError,
    decode_object,
    encode_object,
    encode_watch_event,
    supports,
    unwrap,
)
from pyop.apiserver.endpoints.protobuf.schema import message_for_kind, newest_source
from pyop.apiserver.endpoints.protobuf.unknown import unknown_fields

PROTOBUF_TYPE: Final = "application/vnd.kubernetes.protobuf"
WATCH_STREAM_TYPE: Final = PROTOBUF_TYPE + ";stream=watch"
_JSON_COMPATIBLE: Final = frozenset({"application/json", "application/*", "*/*", "application/yaml"})


def decode_body(raw: bytes, *, custom: bool, accepted: tuple[str, ...]) -> Any:
    """A protobuf request body as the JSON object kube-apiserver would have decoded; `custom`: the resource is a
    custom resource (no protobuf serializer: 415 with the types it takes, `accepted`)."""
    if custom:
        raise unsupported_media_type(accepted)
    if not raw:
        return None
    skipped = decode.unknown_numbers_seen
    try:
        decoded = decode_object(raw)
    except UnsupportedKindError as error:
        # kube-apiserver's protobuf decoder on a type without protobuf marshalling (errNotMarshalable), through
        # the create/update handlers' transformDecodeError: a 400 naming the body's kind and version.
        version = error.api_version.rsplit("/", 1)[-1]
        raise bad_request(
            f"{error.kind} in version {json.dumps(version)} cannot be handled as a {error.kind}: "
            + not_marshalable(error.api_version, error.kind)
        ) from None
    except ProtobufDecodeError as error:
        raise bad_request(f"the body of the request is not a valid protobuf object: {error}") from None
    if decode.unknown_numbers_seen == skipped:
        return decoded
    api_version, kind, message_bytes = unwrap(raw)
    message = message_for_kind(api_version, kind)
    newer = unknown_fields(message, message_bytes) if message else []
    if newer:  # fields of a Kubernetes newer than the table: refused, not dropped as Go would drop them
        raise ApiError(
            415,
            f"the body of the request has protobuf fields this server's table (Kubernetes {newest_source()}) "
            f"does not have: {'; '.join(newer[:3])} - send it as application/json",
            reason="UnsupportedMediaType",
        )
    return decoded


def not_marshalable(api_version: str, kind: str) -> str:
    """k8s.io/apimachinery's errNotMarshalable text for the Go type of `kind` (`*v1beta1.Workload`): what
    kube-apiserver says of a type that has no protobuf marshalling (an aggregated server's, kubernetes#67047)."""
    version = api_version.rsplit("/", 1)[-1]
    return (
        f"object *{version}.{kind} does not implement the protobuf marshalling interface and cannot be encoded "
        "to a protobuf message"
    )


def not_acceptable(message: str) -> web.Response:
    """errNotMarshalable's Status (406 NotAcceptable), in protobuf as kube-apiserver writes it."""
    status = ApiError(406, message, reason="NotAcceptable").to_status()
    return web.Response(body=encode_object(status), status=406, content_type=PROTOBUF_TYPE)


def unsupported_media_type(accepted: tuple[str, ...]) -> ApiError:
    return ApiError(
        415,
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
        reason="UnsupportedMediaType",
    )


def _media_ranges(accept: str) -> list[tuple[str, dict[str, str]]]:
    ranges = []
    for part in accept.split(","):
        pieces = [piece.strip() for piece in part.split(";")]
        if not pieces[0]:
            continue
        params = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            params[key.strip().lower()] = value.strip()
        if params.get("q") in ("0", "0.0", "0.00", "0.000"):
            continue
        ranges.append((pieces[0].lower(), params))
    return ranges


def wants_protobuf(accept: str) -> bool:
    """Whether the client accepts protobuf and no JSON (an absent Accept header accepts anything: JSON)."""
    if "protobuf" not in accept:  # every JSON client: no parsing on the hot path
        return False
    ranges = _media_ranges(accept)
    if not any(media == PROTOBUF_TYPE and "as" not in params for media, params in ranges):
        return False
    return not any(media in _JSON_COMPATIBLE for media, _params in ranges)


def as_protobuf(request: web.BaseRequest, response: web.StreamResponse) -> web.StreamResponse:
    """The JSON response re-encoded as protobuf when the client accepts only protobuf; any other as it is.

    Re-encoding costs a JSON decode, paid only by protobuf-only clients. A body without a kind (`/version`) stays
    JSON (kube-apiserver serves those as JSON only); an object of a kind with no message is a 406."""
    if not wants_protobuf(request.headers.get("Accept", "")):
        return response
    if not isinstance(response, web.Response) or response.content_type != "application/json":
        return response
    if not isinstance(response.body, bytes):
        return response
    try:
        body = json.loads(response.body)
    except ValueError:
        return response
    if not isinstance(body, dict) or not body.get("kind"):
        return response
    if not supports(body):
        converted = not_acceptable(not_marshalable(str(body.get("apiVersion", "")), str(body.get("kind", ""))))
    else:
        try:
            encoded = encode_object(body)
        except ProtobufFieldGapError as error:
            # A field newer than the table's Kubernetes versions: refused like a type without protobuf, rather
            # than sent without it.
            converted = not_acceptable(
                f"{error.path} has no protobuf field in this server's table (it is newer than its sources); "
                "ask for application/json"
            )
            return _with_headers(response, converted)
        except ProtobufEncodeError as error:
            status = ApiError(500, f"cannot encode the response as protobuf: {error}").to_status()
            return web.Response(body=encode_object(status), status=500, content_type=PROTOBUF_TYPE)
        converted = web.Response(body=encoded, status=response.status, content_type=PROTOBUF_TYPE)
    return _with_headers(response, converted)


def _with_headers(response: web.Response, converted: web.Response) -> web.Response:
    for name in ("Warning", "Retry-After"):
        for value in response.headers.getall(name, []):
            converted.headers.add(name, value)
    return converted


def watch_encoder(request: web.BaseRequest, kind_example: dict[str, Any]) -> Any:
    """For a watch whose client accepts only protobuf: the frame encoder of its events (None: JSON lines).
    `kind_example`: an object of the watched kind (apiVersion and kind); a kind with no message is a 406."""
    if not wants_protobuf(request.headers.get("Accept", "")):
        return None
    if not supports(kind_example):
        api_version, kind = str(kind_example.get("apiVersion", "")), str(kind_example.get("kind", ""))
        raise ApiError(406, not_marshalable(api_version, kind), reason="NotAcceptable")
    return encode_watch_event
