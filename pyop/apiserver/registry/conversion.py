"""Conversion of objects between the versions of their kind: the `Converter` a `ResourceType` carries, and the one
custom resources get, apiextensions-apiserver's converter.

A resource type served in several versions shares its storage with the others (``storage_key``); an object is
stored in the storage version and crosses to the request's version on every read and write (`stored_as`,
`served_as`). Without a converter that is a relabelling of ``apiVersion``; with one, its ``convert`` (from the
registry) or ``convert_async`` (from the event loop) does it. A converter that ``calls_out`` (a webhook) must run
inside a request's bridge; one that does not (an aggregated server's hub and spokes, `pyop.apiserver.versions`)
runs anywhere.

A CRD's ``spec.conversion.strategy`` decides how an object stored in one version is served in another: ``None``
relabels ``apiVersion`` (``watch.served_as``), ``Webhook`` calls the CRD's conversion webhook with a
ConversionReview (v1, or v1beta1 when that is the first version the CRD lists) wherever an object crosses between
the storage version and the version of a request: reading (get, list, watch events, the object a write returns)
and writing (create, update, patch, apply, each encoded in the storage version). The call goes to the CRD's
``clientConfig.url`` verified with its ``caBundle`` (``install_webhooks`` points service references at a local
server, as envtest does), with the webhook client's 30 s timeout; the answer is checked as
``webhook_converter.go`` checks it (review kind and uid, result status, one object back in the desired version,
same kind, name, namespace and uid) and the object's metadata is restored from the original except labels and
annotations. Every failure is the API server's answer, a 500 whose message starts
``conversion webhook for <group>/<version>, Kind=<kind> failed:``.

The registry is synchronous, so the call is awaited through ``bridge.wait_for`` (the request runs in a bridge).
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pyop.api.status import ApiError, StatusCause
from pyop.apiserver.registry.bridge import NotBridged, wait_for
from pyop.apiserver.registry.calls import CallFailed
from pyop.apiserver.registry.patch import clone_json

if TYPE_CHECKING:
    from pyop.apiserver.registry.resources import ResourceType

REVIEW_GROUP = "apiextensions.k8s.io"
REVIEW_VERSIONS = ("v1", "v1beta1")
STRATEGIES = ("None", "Webhook")
# k8s.io/apiserver/pkg/util/webhook's defaultRequestTimeout: a CRD has no timeoutSeconds for its webhook.
# A module setting (read at each call) so that a test of a slow webhook need not wait half a minute.
WEBHOOK_TIMEOUT = 30.0


class Converter(Protocol):
    """How objects of one kind cross between its versions (``obj`` is in one of them, ``api_version`` another)."""

    calls_out: ClassVar[bool]  # True: converting awaits a call out (a webhook) and needs a request's bridge

    def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        """From the registry; raises the API server's ApiError."""
        ...

    async def convert_async(self, obj: dict[str, Any], api_version: str, caller: Any) -> dict[str, Any]:
        """From the event loop (``caller``: the server's webhook caller, for a converter that calls out)."""
        ...


@dataclass(frozen=True, slots=True)
class ConversionWebhook:
    """A CRD's ``spec.conversion.webhook``, ready to call: the `Converter` of a CRD with strategy ``Webhook``."""

    crd_name: str
    url: str
    service: str  # "namespace/name" when clientConfig names a Service instead of a URL
    ca_bundle: bytes | None  # PEM
    review_versions: tuple[str, ...]

    calls_out: ClassVar[bool] = True

    def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        return _webhook_converted(obj, api_version, self)

    async def convert_async(self, obj: dict[str, Any], api_version: str, caller: Any) -> dict[str, Any]:
        return await _webhook_converted_async(obj, api_version, self, caller)


def webhook_conversion(crd: Mapping[str, Any]) -> ConversionWebhook | None:
    """The conversion webhook of a (validated) CRD, or None when its strategy is ``None``."""
    spec = crd.get("spec") or {}
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    webhook = conversion.get("webhook") or {}
    client = webhook.get("clientConfig") or {}
    service = client.get("service") or {}
    bundle = client.get("caBundle")
    return ConversionWebhook(
        crd_name=(crd.get("metadata") or {}).get("name", ""),
        url=client.get("url") or "",
        service=f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "",
        ca_bundle=base64.b64decode(bundle) if bundle else None,
        review_versions=tuple(webhook.get("conversionReviewVersions") or ()),
    )


def conversion_causes(spec: Mapping[str, Any]) -> list[StatusCause]:
    """What the API server refuses in a CRD's ``spec.conversion`` (ValidateCustomResourceConversion)."""
    conversion = spec.get("conversion")
    if conversion is None:
        return []
    path = "spec.conversion"
    if not isinstance(conversion, Mapping):
        return [StatusCause("FieldValueInvalid", "Invalid value: must be an object", path)]
    causes: list[StatusCause] = []
    strategy = conversion.get("strategy")
    webhook = conversion.get("webhook")
    if strategy not in STRATEGIES:
        supported = ", ".join(f'"{item}"' for item in STRATEGIES)
        message = f'Unsupported value: "{strategy or ""}": supported values: {supported}'
        causes.append(StatusCause("FieldValueNotSupported", message, f"{path}.strategy"))
        return causes
    if strategy == "None":
        if webhook is not None:
            message = "Forbidden: should not be set when strategy is not set to Webhook"
            causes.append(StatusCause("FieldValueForbidden", message, f"{path}.webhook"))
        return causes
    if not isinstance(webhook, Mapping) or not isinstance(webhook.get("clientConfig"), Mapping):
        message = "Required value: required when strategy is set to Webhook"
        causes.append(StatusCause("FieldValueRequired", message, f"{path}.webhook"))
        return causes
    versions = webhook.get("conversionReviewVersions") or []
    if not any(version in REVIEW_VERSIONS for version in versions):
        message = "Required value: must include at least one of v1, v1beta1"
        causes.append(StatusCause("FieldValueRequired", message, f"{path}.webhook.conversionReviewVersions"))
    client = webhook["clientConfig"]
    url, service = client.get("url"), client.get("service")
    client_path = f"{path}.webhook.clientConfig"
    if bool(url) == bool(service):
        message = "Required value: exactly one of url or service is required"
        causes.append(StatusCause("FieldValueRequired", message, client_path))
    elif url and not str(url).startswith("https://"):
        message = f"Invalid value: \"{url}\": 'https' is the only allowed URL scheme"
        causes.append(StatusCause("FieldValueInvalid", message, f"{client_path}.url"))
    if client.get("caBundle"):
        try:
            base64.b64decode(client["caBundle"], validate=True)
        except (binascii.Error, ValueError, TypeError):
            message = "Invalid value: must be base64-encoded PEM"
            causes.append(StatusCause("FieldValueInvalid", message, f"{client_path}.caBundle"))
    return causes


def storage_api_version(resource_type: ResourceType) -> str:
    group = resource_type.group if resource_type.storage_group is None else resource_type.storage_group
    if group == resource_type.group and resource_type.version == resource_type.storage_version:
        return resource_type.api_version
    return f"{group}/{resource_type.storage_version}" if group else resource_type.storage_version


def stored_as(obj: dict[str, Any], resource_type: ResourceType) -> dict[str, Any]:
    """``obj`` (in the request's version) encoded in the storage version of its resource."""
    target = storage_api_version(resource_type)
    if obj.get("apiVersion") == target:
        return obj
    if resource_type.conversion is None:
        return {**obj, "apiVersion": target}
    return resource_type.conversion.convert(obj, target)


def served_as(obj: dict[str, Any], resource_type: ResourceType) -> dict[str, Any]:
    """The stored object as seen through the requested version: relabelled (no converter) or converted (a
    webhook's only inside a request's bridge)."""
    if obj.get("apiVersion") == resource_type.api_version:
        return obj
    if resource_type.conversion is not None:
        return resource_type.conversion.convert(obj, resource_type.api_version)
    return {**obj, "apiVersion": resource_type.api_version}


def converted(obj: dict[str, Any], api_version: str, conversion: Converter) -> dict[str, Any]:
    """``obj`` in ``api_version``, converted from the registry (a webhook's in a bridge); raises the API server's
    error."""
    if obj.get("apiVersion") == api_version:
        return obj
    return conversion.convert(obj, api_version)


async def converted_async(obj: dict[str, Any], api_version: str, conversion: Converter, caller: Any) -> dict[str, Any]:
    """``converted`` for the event loop's side (the admission dispatcher), with the server's WebhookCaller."""
    if obj.get("apiVersion") == api_version:
        return obj
    return await conversion.convert_async(obj, api_version, caller)


def _webhook_converted(obj: dict[str, Any], api_version: str, webhook: ConversionWebhook) -> dict[str, Any]:
    """``obj`` in ``api_version``, converted by the webhook from the registry (in a bridge); raises the API server's
    500."""
    if obj.get("apiVersion") == api_version:
        return obj
    call = _Call(obj, api_version, webhook)
    try:
        answer = wait_for(call.post)
    except (CallFailed, NotBridged) as error:
        raise call.failed(str(error)) from None
    return call.result(answer)


async def _webhook_converted_async(
    obj: dict[str, Any], api_version: str, webhook: ConversionWebhook, caller: Any
) -> dict[str, Any]:
    if obj.get("apiVersion") == api_version:
        return obj
    call = _Call(obj, api_version, webhook)
    try:
        answer = await call.post(caller)
    except CallFailed as error:
        raise call.failed(str(error)) from None
    return call.result(answer)


class _Call:
    """One ConversionReview of one object: the request, and the checks of its answer."""

    def __init__(self, obj: dict[str, Any], api_version: str, webhook: ConversionWebhook) -> None:
        self.obj = obj
        self.api_version = api_version
        self.webhook = webhook
        self.kind = str(obj.get("kind") or "")
        self.gvk = f"{obj.get('apiVersion', '')}, Kind={self.kind}"
        review_version = next((version for version in webhook.review_versions if version in REVIEW_VERSIONS), None)
        if review_version is None:
            raise ApiError(500, "no supported conversion review versions")
        if not webhook.url:
            raise self.failed(
                f'service "{webhook.service}" cannot be reached from the test API server '
                "(install_webhooks(..., url=...) points the CRDs' conversion webhooks at a local server)"
            )
        self.review_version = review_version
        self.uid = str(uuid.uuid4())
        self.review = {
            "apiVersion": f"{REVIEW_GROUP}/{review_version}",
            "kind": "ConversionReview",
            "request": {"uid": self.uid, "desiredAPIVersion": api_version, "objects": [obj]},
        }

    def failed(self, reason: str) -> ApiError:
        return ApiError(500, f"conversion webhook for {self.gvk} failed: {reason}")

    async def post(self, caller: Any) -> Any:
        webhook = self.webhook
        return await caller.post(webhook.url, self.review, ca_bundle=webhook.ca_bundle, timeout=WEBHOOK_TIMEOUT)

    def result(self, answer: Any) -> dict[str, Any]:
        gvk, kind, api_version = self.gvk, self.kind, self.api_version
        try:
            objects = _converted_objects(answer, self.uid, self.review_version)
        except ValueError as error:
            raise self.failed(str(error)) from None
        if len(objects) != 1:
            raise ApiError(500, f"conversion webhook for {gvk} failed, no objects returned")
        result = objects[0]
        if not isinstance(result, dict):
            raise ApiError(500, f"conversion webhook for {gvk} returned invalid object at index 0: not an object")
        if result.get("apiVersion") != api_version:
            raise ApiError(
                500,
                f"conversion webhook for {gvk} returned invalid object at index 0: invalid groupVersion "
                f"(expected {api_version}, received {result.get('apiVersion', '')})",
            )
        if result.get("kind") != kind:
            raise ApiError(
                500,
                f"conversion webhook for {gvk} returned invalid object at index 0: invalid kind "
                f"(expected {kind}, received {result.get('kind', '')})",
            )
        problem = _changed_identity(self.obj, result)
        if problem:
            raise ApiError(500, f"conversion webhook for {gvk} returned invalid object: {problem}")
        try:
            return _restored_metadata(self.obj, result)
        except ValueError as error:
            raise ApiError(500, f"conversion webhook for {gvk} returned invalid metadata: {error}") from None


def _converted_objects(answer: Any, uid: str, review_version: str) -> list[Any]:
    """getConvertedObjectsFromResponse: the objects of a successful answer; ValueError says what is wrong."""
    if not isinstance(answer, dict):
        raise ValueError("the response is not a ConversionReview")
    if review_version == "v1":
        expected = f"{REVIEW_GROUP}/v1, Kind=ConversionReview"
        got = f"{answer.get('apiVersion', '') or '/'}, Kind={answer.get('kind', '')}"
        if (answer.get("apiVersion"), answer.get("kind")) != (f"{REVIEW_GROUP}/v1", "ConversionReview"):
            raise ValueError(f"expected webhook response of {expected}, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ValueError("no response provided")
    if review_version == "v1" and response.get("uid") != uid:  # v1beta1 answers were never checked
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    given = response.get("result")
    result: dict[str, Any] = given if isinstance(given, dict) else {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise ValueError(str(result["message"]))
        raise ValueError(f"response.result.status was '{result.get('status', '')}', not 'Success'")
    objects = response.get("convertedObjects")
    return objects if isinstance(objects, list) else []


def _changed_identity(original: dict[str, Any], result: dict[str, Any]) -> str:
    """validateConvertedObject: the metadata fields a conversion must keep."""
    before, after = original.get("metadata") or {}, result.get("metadata") or {}
    if not isinstance(after, dict):
        after = {}
    for field in ("name", "namespace", "uid"):
        if before.get(field, "") != after.get(field, ""):
            return f"must have the same {field}: {before.get(field, '')} != {after.get(field, '')}"
    return ""


def _restored_metadata(original: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """restoreObjectMeta: the original's metadata with the labels and annotations the webhook answered."""
    answered = result.get("metadata")
    if not isinstance(answered, dict):
        raise ValueError("missing metadata in converted object")
    metadata = clone_json(original.get("metadata") or {})
    for field in ("labels", "annotations"):
        value = answered.get(field)
        if value is None:
            metadata.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise ValueError(f"invalid metadata.{field} of type {type(value).__name__} in converted object")
        for key, item in value.items():
            if not isinstance(item, str):
                raise ValueError(
                    f"metadata.{field}[{key}] must be a string, but is {type(item).__name__} in converted object"
                )
        metadata[field] = value
    rest = {key: value for key, value in result.items() if key not in ("apiVersion", "kind", "metadata")}
    return {"apiVersion": result["apiVersion"], "kind": result["kind"], "metadata": metadata, **rest}
