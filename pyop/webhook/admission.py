"""AdmissionReview v1: decoding requests, running a defaulter or validator on typed objects, answering.

Semantics are controller-runtime's `pkg/webhook/admission` (`CustomDefaulter`, `CustomValidator`):

- a defaulter runs on CREATE and UPDATE (DELETE is allowed untouched); its changes go back as a JSON patch over
  the request's raw object (`pyop.webhook.patch`: fields the model does not know are never removed);
- a validator gets the new object on CREATE, old and new on UPDATE, and on DELETE the object being deleted,
  which the API server sends as `oldObject`; any other operation is a bad request (400);
- `AdmissionDenied` -> `allowed: false` with its code (403) and reason (`Forbidden`) and message; warnings
  are returned on allow and on denial;
- an object that does not decode into the model -> 400; any other exception -> 500 with its text
  (controller-runtime denies plain Go errors with 403, because Go validators return errors to deny; a Python
  validator denies with `AdmissionDenied`, so another exception is a bug and is reported as one);
- the answer always carries `status.code` (200 when allowed), and the HTTP status is 200 even for errors, as
  the API server reads the verdict from the body.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from pyop.webhook.interfaces import AdmissionDenied, Defaulter, Validator, Warnings
from pyop.webhook.patch import defaulting_patch, encode_patch

__all__ = [
    "ADMISSION_API_VERSION",
    "AdmissionHandler",
    "AdmissionRequest",
    "AdmissionResponse",
    "DefaultingHandler",
    "ReviewError",
    "ValidatingHandler",
    "admission_request",
    "answer_review",
]

log = logging.getLogger("pyop.webhook")

ADMISSION_API_VERSION = "admission.k8s.io/v1"
_ACCEPTED_API_VERSIONS = (ADMISSION_API_VERSION, "admission.k8s.io/v1beta1")

M = TypeVar("M", bound=BaseModel)

_current_request: contextvars.ContextVar[AdmissionRequest] = contextvars.ContextVar("pyop_admission_request")


def admission_request() -> AdmissionRequest:
    """The request being handled, for a defaulter or validator that needs more than the object (user, dry run).

    controller-runtime's `admission.RequestFromContext`; raises LookupError outside a webhook call.
    """
    return _current_request.get()


class ReviewError(Exception):
    """A request that cannot be handled (undecodable, wrong operation): answered with `code` (400)."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class AdmissionRequest:
    """The `request` of an AdmissionReview; objects stay raw dicts (handlers decode them into models)."""

    uid: str
    operation: str
    kind: dict[str, str]
    resource: dict[str, str]
    name: str = ""
    namespace: str = ""
    sub_resource: str = ""
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    user_info: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Any) -> AdmissionRequest:
        if not isinstance(data, dict):
            raise ReviewError("the AdmissionReview has no request")
        uid = data.get("uid")
        if not isinstance(uid, str) or not uid:
            raise ReviewError("the AdmissionReview request has no uid")
        for key in ("object", "oldObject"):
            if data.get(key) is not None and not isinstance(data[key], dict):
                raise ReviewError(f"request.{key} is not an object")
        return cls(
            uid=uid,
            operation=str(data.get("operation") or ""),
            kind=dict(data.get("kind") or {}),
            resource=dict(data.get("resource") or {}),
            name=str(data.get("name") or ""),
            namespace=str(data.get("namespace") or ""),
            sub_resource=str(data.get("subResource") or ""),
            object=data.get("object"),
            old_object=data.get("oldObject"),
            dry_run=bool(data.get("dryRun")),
            user_info=dict(data.get("userInfo") or {}),
            options=data.get("options"),
        )


@dataclass
class AdmissionResponse:
    """A verdict; `to_dict` gives the AdmissionReview `response` for the request's uid."""

    allowed: bool
    code: int = 200
    reason: str = ""
    message: str = ""
    warnings: Warnings = field(default_factory=list)
    patch: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def allow(cls, warnings: Warnings | None = None) -> AdmissionResponse:
        return cls(allowed=True, warnings=list(warnings or []))

    @classmethod
    def deny(cls, denial: AdmissionDenied) -> AdmissionResponse:
        return cls(
            allowed=False, code=denial.code, reason=denial.reason, message=denial.message, warnings=denial.warnings
        )

    @classmethod
    def error(cls, code: int, message: str) -> AdmissionResponse:
        return cls(allowed=False, code=code, message=message)

    def to_dict(self, uid: str) -> dict[str, Any]:
        status: dict[str, Any] = {"code": self.code}
        if self.reason:
            status["reason"] = self.reason
        if self.message:
            status["message"] = self.message
        response: dict[str, Any] = {"uid": uid, "allowed": self.allowed, "status": status}
        if self.warnings:
            response["warnings"] = list(self.warnings)
        if self.patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = encode_patch(self.patch)
        return response


AdmissionHandler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]


def _decode(model: type[M], raw: dict[str, Any] | None, what: str) -> M:
    if raw is None:
        raise ReviewError(f"request.{what} is missing")
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ReviewError(f"request.{what} is not a valid {model.__name__}: {error}") from None


async def _outcome(result: Any) -> Any:
    """The user's method may be async (as documented) or plain."""
    return await result if inspect.isawaitable(result) else result


class DefaultingHandler(Generic[M]):
    """Decodes the object into `model`, runs `defaulter.default` on it, answers with the patch."""

    def __init__(self, model: type[M], defaulter: Defaulter[M]) -> None:
        self.model = model
        self.defaulter = defaulter

    async def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.operation == "DELETE":
            return AdmissionResponse.allow()  # nothing to default on an object going away
        raw = request.object
        obj = _decode(self.model, raw, "object")
        await _outcome(self.defaulter.default(obj))
        assert raw is not None  # _decode refused a missing object
        return AdmissionResponse(allowed=True, patch=defaulting_patch(obj, raw))


class ValidatingHandler(Generic[M]):
    """Decodes the objects the operation concerns into `model` and asks `validator`."""

    def __init__(self, model: type[M], validator: Validator[M]) -> None:
        self.model = model
        self.validator = validator

    async def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        model, validator = self.model, self.validator
        if request.operation == "CREATE":
            warnings = await _outcome(validator.validate_create(_decode(model, request.object, "object")))
        elif request.operation == "UPDATE":
            new = _decode(model, request.object, "object")
            old = _decode(model, request.old_object, "oldObject")
            warnings = await _outcome(validator.validate_update(old, new))
        elif request.operation == "DELETE":
            # The API server sends the object being deleted as oldObject (kubernetes/kubernetes#76346).
            warnings = await _outcome(validator.validate_delete(_decode(model, request.old_object, "oldObject")))
        else:
            raise ReviewError(f"unknown operation {request.operation!r}")
        return AdmissionResponse.allow(warnings)


async def answer_review(handler: AdmissionHandler, body: bytes, content_type: str) -> dict[str, Any]:
    """The AdmissionReview answering `body`: decoding errors and exceptions become verdicts, never HTTP errors."""
    api_version = ADMISSION_API_VERSION
    uid = ""
    try:
        if content_type != "application/json":
            raise ReviewError(f"contentType={content_type}, expected application/json")
        try:
            review = json.loads(body)
        except ValueError as error:
            raise ReviewError(f"the body is not JSON: {error}") from None
        if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
            raise ReviewError("the body is not an AdmissionReview")
        if review.get("apiVersion") in _ACCEPTED_API_VERSIONS:
            api_version = review["apiVersion"]
        else:
            raise ReviewError(f"unsupported AdmissionReview apiVersion {review.get('apiVersion')!r}")
        request = AdmissionRequest.from_dict(review.get("request"))
        uid = request.uid
        response = await _handle(handler, request)
    except ReviewError as error:
        log.error("bad admission request", extra={"uid": uid, "error": str(error)})
        response = AdmissionResponse.error(error.code, str(error))
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response.to_dict(uid)}


async def _handle(handler: AdmissionHandler, request: AdmissionRequest) -> AdmissionResponse:
    token = _current_request.set(request)
    try:
        return await handler(request)
    except AdmissionDenied as denial:
        return AdmissionResponse.deny(denial)
    except ReviewError:
        raise
    except Exception as error:
        log.exception("admission webhook failed", extra={"uid": request.uid, "operation": request.operation})
        return AdmissionResponse.error(500, str(error) or type(error).__name__)
    finally:
        _current_request.reset(token)
