"""Admission points: where a write stops so that admission webhooks can see, change or refuse the object.

The registry (``operations.py``) is synchronous, but calling a webhook is network I/O on the same event loop
(often to a manager running in the test's own loop). A write that may meet webhooks therefore runs in an
``AdmittedWrite`` greenlet: at each point where kube-apiserver runs mutating admission (before the registry
strategy) or validating admission (after it, just before storage), ``suspend`` switches back to the dispatcher
with an ``AdmissionPoint``; the dispatcher awaits the webhooks and switches back in with the object to carry on
with. Anywhere else (the Python API, the server's own controllers) ``suspend`` answers the object unchanged, and
while no webhook configuration exists the points are not even reached: a write costs what it did before.

The world can change while a write is suspended, so a write that finds its object changed on resumption raises
``Stale`` and is started again from the request, as kube-apiserver's GuaranteedUpdate retries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from greenlet import getcurrent

from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.registry.bridge import Bridged
from pyop.apiserver.registry.resources import ResourceType

MUTATING = "mutating"
VALIDATING = "validating"


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


class Stale(Exception):  # noqa: N818 - a signal to start over, not a failure
    """The object changed while the write waited for webhooks; the write must start again."""


class AdmittedWrite(Bridged):  # type: ignore[misc]
    """A write that may be suspended at its admission points (its parent is the dispatcher), and, as any bridged
    call, for the conversion webhooks it needs (``bridge.wait_for``)."""


def suspend(point: AdmissionPoint) -> dict[str, Any] | None:
    """Hand an admission point to the dispatcher and return the object to continue with."""
    current = getcurrent()
    if isinstance(current, AdmittedWrite):
        return current.parent.switch(point)  # type: ignore[no-any-return]
    return point.obj


def operation_options(kind: str, dry_run: bool, field_manager: str = "", **extra: Any) -> dict[str, Any]:
    """The ``options`` of an AdmissionRequest (``meta.k8s.io/v1`` CreateOptions, UpdateOptions, DeleteOptions)."""
    options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if dry_run:
        options["dryRun"] = ["All"]
    if field_manager:
        options["fieldManager"] = field_manager
    options.update({key: value for key, value in extra.items() if value})
    return options
