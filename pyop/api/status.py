"""Kubernetes ``Status`` errors (k8s.io/apimachinery/pkg/api/errors): what servers raise and clients read.

Every failure leaves a server (the test API server, an aggregated API server) as a ``Status`` object with the
reason, code and details that kube-apiserver would use, because clients branch on ``reason`` and ``code`` (retry on
Conflict, relist on Expired, ...), not on messages. `REASON_BY_CODE` is the one table of reasons by code, read by
the servers and by `pyop.client.errors` when an answer carries no reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REASON_BY_CODE: dict[int, str] = {
    # The Status reason kube-apiserver uses for each code.
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


@dataclass(frozen=True)
class StatusCause:
    """One entry of a Status's ``details.causes``: which field failed and why (what a server raises, what the
    client's errors report: `pyop.client.StatusCause` is this class)."""

    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        cause = {"reason": self.reason, "message": self.message}
        if self.field:
            cause["field"] = self.field
        return cause


@dataclass
class ApiError(Exception):
    """An error answered to the client as a ``Status`` with HTTP ``code``."""

    code: int
    message: str
    reason: str = ""
    name: str = ""
    group: str = ""
    kind: str = ""
    causes: list[StatusCause] = field(default_factory=list)
    retry_after: int | None = None
    raw_details: dict[str, Any] | None = None  # a Status's details passed through as given (webhook denials)
    warnings: list[str] = field(default_factory=list)  # sent as Warning headers with the error

    def __post_init__(self) -> None:
        if not self.reason:
            self.reason = REASON_BY_CODE.get(self.code, "Unknown")
        super().__init__(self.message)

    def to_status(self) -> dict[str, Any]:
        """The wire form, as kube-apiserver renders ``metav1.Status``."""
        details: dict[str, Any] = dict(self.raw_details or {})
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        if self.kind:
            details["kind"] = self.kind
        if self.causes:
            details["causes"] = [cause.to_dict() for cause in self.causes]
        if self.retry_after is not None:
            details["retryAfterSeconds"] = self.retry_after
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if details:
            status["details"] = details
        return status


def qualified(resource: str, group: str) -> str:
    """``deployments.apps`` / ``pods``: how kube-apiserver names a resource in messages."""
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(404, f'{qualified(resource, group)} "{name}" not found', name=name, group=group, kind=resource)


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        f'{qualified(resource, group)} "{name}" already exists',
        reason="AlreadyExists",
        name=name,
        group=group,
        kind=resource,
    )


def conflict(resource: str, group: str, name: str, detail: str) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {detail}',
        name=name,
        group=group,
        kind=resource,
    )


STALE_OBJECT = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(kind: str, group: str, name: str, causes: list[StatusCause]) -> ApiError:
    """422 with the message format of ``errors.NewInvalid``: one cause inline, several in brackets. Every cause
    is kept, but the message names a repeated one once (field.ErrorList.ToAggregate drops duplicate texts)."""
    rendered = list(dict.fromkeys(f"{c.field}: {c.message}" if c.field else c.message for c in causes))
    summary = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
    return ApiError(
        422,
        f'{qualified(kind, group)} "{name}" is invalid: {summary}',
        name=name,
        group=group,
        kind=kind,
        causes=causes,
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def expired(message: str) -> ApiError:
    """410 with reason ``Expired``: what a too-old resourceVersion or continue token gets."""
    return ApiError(410, message, reason="Expired")


def warning_header(text: str) -> str:
    """One ``Warning`` header value as kube-apiserver writes it: code 299, agent ``-``, quoted text."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def forbidden(resource: str, group: str, name: str, reason: str) -> ApiError:
    """403 as k8s.io/apimachinery's NewForbidden words it (`pods "x" is forbidden: ...`; without a name yet, as
    for a generateName create, `pods is forbidden: ...`)."""
    subject = qualified(resource, group) + (f' "{name}"' if name else "")
    return ApiError(403, f"{subject} is forbidden: {reason}", name=name, group=group, kind=resource)
