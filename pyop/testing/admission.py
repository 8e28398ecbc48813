"""Admission points: where a write stops so that admission webhooks can see, change or refuse the object.

The registry (``operations.py``) is synchronous, but calling a webhook is network I/O. So each write is a
generator that yields an ``AdmissionPoint`` where kube-apiserver runs mutating admission (before the
registry strategy) and validating admission (after it, just before storage), and is resumed with the object
to carry on with. ``run_without_webhooks`` drives it without suspending (the Python API, the server's own
controllers, and every request while no webhook configuration exists); the webhook dispatcher drives it
across ``await``s. The world can change while a write is suspended, so a write that finds its object changed
on resumption raises ``Stale`` and is started again from the request, as kube-apiserver's GuaranteedUpdate
retries.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pyop.testing.kinds import UserInfo
from pyop.testing.resources import ResourceType

MUTATING = "mutating"
VALIDATING = "validating"

T = TypeVar("T")


@dataclass(slots=True)
class AdmissionPoint:
    """One admission call of a write: kube-apiserver's ``admission.Attributes`` plus the phase."""

    phase: str
    operation: str  # CREATE, UPDATE or DELETE
    resource_type: ResourceType
    subresource: str
    namespace: str
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    dry_run: bool
    user: UserInfo | None
    options: dict[str, Any] = field(default_factory=dict)  # CreateOptions / UpdateOptions / DeleteOptions
    kind: tuple[str, str, str] | None = None  # (group, version, kind) when not the resource's own (Scale)


Steps = Generator[AdmissionPoint, "dict[str, Any] | None", T]
"""A write: yields admission points, is sent the object to continue with, returns the write's result."""


class Stale(Exception):  # noqa: N818 - a signal to start over, not a failure
    """The object changed while the write waited for webhooks; the write must start again."""


def run_without_webhooks(steps: Generator[AdmissionPoint, Any, T]) -> T:
    """Drive a write to its end, answering every admission point with its object unchanged."""
    try:
        point = next(steps)
        while True:
            point = steps.send(point.obj)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def operation_options(kind: str, dry_run: bool, field_manager: str = "", **extra: Any) -> dict[str, Any]:
    """The ``options`` of an AdmissionRequest (``meta.k8s.io/v1`` CreateOptions, UpdateOptions, DeleteOptions)."""
    options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if dry_run:
        options["dryRun"] = ["All"]
    if field_manager:
        options["fieldManager"] = field_manager
    options.update({key: value for key, value in extra.items() if value})
    return options
