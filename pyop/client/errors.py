"""Exceptions raised by the client, one type per failure a caller reacts to differently.

The API server reports failures as `Status` objects; callers branch on *what* went wrong (create-or-update on
`AlreadyExistsError`, retry on `ConflictError`, relist on `GoneError`), so each reason gets its own class
under one base, `ApiError`, that keeps the full Status for logging. Transport failures (no HTTP answer at all)
are a separate branch, `ApiConnectionError`, because there is no Status to report and the right reaction is a
backoff.
"""

from __future__ import annotations

from typing import Any

from pyop.api.status import REASON_BY_CODE  # the servers' table of reasons by code (re-exported)
from pyop.api.status import StatusCause as StatusCause  # one reason an object was rejected: the servers' type


class ClientError(Exception):
    """Base of everything `pyop.client` raises on purpose."""


class ApiConnectionError(ClientError):
    """The request got no HTTP response: connection refused or reset, TLS failure, timeout."""


class ResponseLimitError(ApiConnectionError):
    """The response broke a limit of the client's configuration (`ClientConfig.max_*`): too large a body,
    too many or too large headers, too long a watch line. The connection is closed."""


class NoKindMatchError(ClientError, LookupError):
    """Discovery does not know the requested group/version/kind (client-go's `NoKindMatchError`)."""


class ApiError(ClientError):
    """The API server answered with an error Status.

    `code` is the HTTP status, `reason` the Status reason (`NotFound`, `Conflict`, ...), `details` the Status
    details (name, group, kind, causes, retryAfterSeconds), `status` the whole Status body as received.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        status: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = details or {}
        self.status: dict[str, Any] = status or {}

    @property
    def causes(self) -> list[StatusCause]:
        """The field-level causes the server gave (mostly for `InvalidError`)."""
        return [
            StatusCause(str(c.get("reason", "")), str(c.get("message", "")), str(c.get("field", "")))
            for c in self.details.get("causes") or []
            if isinstance(c, dict)
        ]

    @property
    def retry_after_seconds(self) -> int | None:
        value = self.details.get("retryAfterSeconds")
        return int(value) if isinstance(value, int | float) else None


class BadRequestError(ApiError):
    """400: the request itself is malformed (bad selector, bad patch)."""


class UnauthorizedError(ApiError):
    """401: no or expired credentials."""


class ForbiddenError(ApiError):
    """403: authenticated but RBAC does not allow the verb."""


class NotFoundError(ApiError):
    """404: the object, namespace or resource type does not exist."""


class MethodNotAllowedError(ApiError):
    """405: the resource does not support the verb."""


class AlreadyExistsError(ApiError):
    """409 AlreadyExists: create of a name that is taken."""


class ConflictError(ApiError):
    """409 Conflict: stale resourceVersion, failed precondition, or server-side apply field conflict."""


class GoneError(ApiError):
    """410 Gone/Expired: the resourceVersion or continue token is too old; list again from scratch."""


class UnsupportedMediaTypeError(ApiError):
    """415: e.g. a strategic merge patch sent to a custom resource."""


class InvalidError(ApiError):
    """422 Invalid: the object failed validation; `causes` says which fields."""


class TooManyRequestsError(ApiError):
    """429: throttled; the client already retried as often as it was allowed to."""


class ServerError(ApiError):
    """5xx: the server failed; usually worth retrying later."""


class InternalServerError(ServerError):
    """500 InternalError."""


class ServiceUnavailableError(ServerError):
    """503 ServiceUnavailable."""


class ServerTimeoutError(ServerError):
    """504 or Status reason Timeout: the server gave up waiting."""


_BY_REASON: dict[str, type[ApiError]] = {
    "AlreadyExists": AlreadyExistsError,
    "Conflict": ConflictError,
    "Gone": GoneError,
    "Expired": GoneError,
    "Invalid": InvalidError,
    "NotFound": NotFoundError,
    "Forbidden": ForbiddenError,
    "Unauthorized": UnauthorizedError,
    "TooManyRequests": TooManyRequestsError,
    "MethodNotAllowed": MethodNotAllowedError,
    "UnsupportedMediaType": UnsupportedMediaTypeError,
    "BadRequest": BadRequestError,
    "InternalError": InternalServerError,
    "ServiceUnavailable": ServiceUnavailableError,
    "Timeout": ServerTimeoutError,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: GoneError,
    415: UnsupportedMediaTypeError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalServerError,
    503: ServiceUnavailableError,
    504: ServerTimeoutError,
}


def error_from_unexpected_body(code: int, content_type: str, raw: bytes) -> ApiError:
    """An answer that is not JSON (a proxy's or load balancer's HTML page, a redirect to a login page) as an
    `ApiError` with a Status built like the one kube-apiserver would send: the HTTP code, its reason, and the
    start of the body as the message."""
    text = raw[:512].decode("utf-8", "replace").strip()
    shown = content_type or "no content type"
    message = f"the server answered HTTP {code} with a body that is not JSON ({shown}): {text!r}"
    if 300 <= code < 400:
        message = f"the server answered with a redirect (HTTP {code}), which the client does not follow: {text!r}"
    reason = REASON_BY_CODE.get(code, "Unknown")
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason}
    status["message"] = message
    return error_from_status(code, status)


def error_from_status(code: int, body: Any) -> ApiError:
    """Build the exception for an HTTP error answer; `body` is the decoded JSON (a Status) or raw text.

    The reason decides the class when the server gave one it uses consistently (409 carries both AlreadyExists
    and Conflict); otherwise the HTTP code does, as client-go's `errors.ReasonForError`/`FromObject` do.
    """
    status = body if isinstance(body, dict) and body.get("kind") == "Status" else None
    if status is not None:
        reason = str(status.get("reason") or REASON_BY_CODE.get(code, "Unknown"))
        message = str(status.get("message") or "")
        details = status.get("details") if isinstance(status.get("details"), dict) else {}
        code = int(status.get("code") or code)
    else:
        reason = REASON_BY_CODE.get(code, "Unknown")
        message = body if isinstance(body, str) else str(body or "")
        details = {}
    cls = _BY_REASON.get(reason)
    if cls is None or (code >= 500 and not issubclass(cls, ServerError)):
        cls = _BY_CODE.get(code) or (ServerError if code >= 500 else ApiError)
    return cls(code, reason, message, details, status)
