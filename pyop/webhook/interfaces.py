"""What a user implements: defaulters, validators, convertible versions, and how a denial is expressed.

Structural types (`typing.Protocol`) rather than base classes, as controller-runtime's `CustomDefaulter` and
`CustomValidator` are Go interfaces: a user's class needs no pyop import to be one, and a test can call its
methods directly without a server.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

__all__ = [
    "AdmissionDenied",
    "Convertible",
    "Defaulter",
    "Hub",
    "Validator",
    "Warnings",
]

Warnings = list[str]
"""Messages the API server passes back to the client (`kubectl` prints them as `Warning: ...`)."""

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)
HubT = TypeVar("HubT")


class AdmissionDenied(Exception):
    """Raised by a defaulter or validator to refuse the request with `message` (shown by kubectl).

    The answer is `allowed: false` with `code` (403) and `reason` (`Forbidden`), controller-runtime's
    `admission.Denied`; a validator's `warnings` still reach the client, as controller-runtime returns the
    warnings given together with an error. Pass `code=422, reason="Invalid"` for what Go code returns as
    `apierrors.NewInvalid`.
    """

    def __init__(
        self, message: str, *, code: int = 403, reason: str = "Forbidden", warnings: Warnings | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason
        self.warnings: Warnings = list(warnings or [])


@runtime_checkable
class Defaulter(Protocol[T_contra]):
    """Sets defaults on an object being created or updated (a mutating webhook); mutates `obj` in place."""

    async def default(self, obj: T_contra) -> None: ...


@runtime_checkable
class Validator(Protocol[T_contra]):
    """Accepts or refuses creates, updates and deletes (a validating webhook).

    Return warnings (possibly empty) to allow; raise `AdmissionDenied` to refuse. Any other exception is a bug
    in the webhook and is answered as an internal error (code 500).
    """

    async def validate_create(self, obj: T_contra) -> Warnings: ...

    async def validate_update(self, old: T_contra, new: T_contra) -> Warnings: ...

    async def validate_delete(self, obj: T_contra) -> Warnings: ...


class Hub:
    """Marks the hub version of a kind (Kubebuilder's `func (*CronJob) Hub() {}`): every other version converts
    to and from it. Mix it into the hub's model class: `class CronJob(Resource, Hub, group_version=...)`.
    A class attribute `is_hub: ClassVar[bool] = True` does the same without the mixin."""

    is_hub: ClassVar[bool] = True


@runtime_checkable
class Convertible(Protocol[HubT]):
    """A spoke version: converts itself to the hub and builds itself from one.

    Conversion functions copy `metadata` themselves (as Go's `ConvertTo` copies `ObjectMeta`); the webhook sets
    `apiVersion` and `kind` of the result.
    """

    def convert_to(self) -> HubT: ...

    @classmethod
    def convert_from(cls, hub: HubT) -> Self: ...


def is_hub(model: type[Any]) -> bool:
    """Whether `model` is marked as the hub of its kind."""
    return getattr(model, "is_hub", False) is True
