"""kube-apiserver's validation of Events (pkg/apis/core/validation/events.go), for core/v1 and events.k8s.io/v1.

Why: an operator's event recorder that files an Event in another namespace than its object's, or reports a
cluster-scoped object's Event outside `default`, or writes an events.k8s.io/v1 Event without `reportingController`,
`reportingInstance`, `action` or `eventTime`, is refused (422) by every cluster; the test server took them all.

Every Event passes the legacy rules: without `eventTime` (the core/v1 recorders', client-go's `record` and pyop's),
the Event's namespace must be its object's (`default` or none for a cluster-scoped object); with one, a
cluster-scoped object's Event lives in `default` or `kube-system`, and the reporting controller (a qualified name),
reporting instance, action and reason are required, at most 128 characters each, the message at most 1024. An
events.k8s.io/v1 create also needs `eventTime`, a `type` of Normal or Warning, a `series` of at least 2 with its
`lastObservedTime`, and none of the deprecated fields (`deprecatedSource`, `deprecatedFirstTimestamp`,
`deprecatedLastTimestamp`, `deprecatedCount`). Field paths are kube's internal ones (`involvedObject.namespace`,
`message`, `source`, ... whichever API was called), as its messages print them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from pyop.api.status import StatusCause
from pyop.api.validation import qualified_name_problems
from pyop.testing.builtins.event_versions import to_core

__all__ = ["validate_event"]

_LENGTH_LIMIT: Final = 128  # reportingInstance, action, reason
_NOTE_LENGTH_LIMIT: Final = 1024


def validate_event(group: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> Iterator[StatusCause]:
    """ValidateEventCreate / ValidateEventUpdate for a request to ``group``'s Event (``""`` or ``events.k8s.io``)."""
    strict = group == "events.k8s.io"
    event = to_core(dict(obj)) if strict else obj  # checked under the core names, as kube checks its internal type
    # kube names the reporting controller after the API called: core/v1's JSON calls it reportingComponent.
    yield from _legacy(event, "reportingController" if strict else "reportingComponent")
    if strict and old is None:
        yield from _strict_create(event)


def _legacy(event: Mapping[str, Any], controller_field: str) -> Iterator[StatusCause]:
    namespace = str((event.get("metadata") or {}).get("namespace") or "")
    involved = event.get("involvedObject") or {}
    involved_namespace = str(involved.get("namespace") or "") if isinstance(involved, Mapping) else ""
    if not event.get("eventTime"):
        mismatch = namespace not in ("", "default") if not involved_namespace else namespace != involved_namespace
        if mismatch:
            yield _invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace")
        return
    if not involved_namespace and namespace not in ("default", "kube-system"):
        yield _invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace")
    controller = str(event.get("reportingComponent") or "")
    if not controller:
        yield _required(controller_field)
    for problem in qualified_name_problems(controller):
        yield _invalid(controller_field, controller, problem)
    for field, limit in (("reportingInstance", _LENGTH_LIMIT), ("action", _LENGTH_LIMIT), ("reason", _LENGTH_LIMIT)):
        value = str(event.get(field) or "")
        if not value:
            yield _required(field)
        if len(value) > limit:
            yield _invalid(field, "", f"can have at most {limit} characters")
    if len(str(event.get("message") or "")) > _NOTE_LENGTH_LIMIT:
        yield _invalid("message", "", f"can have at most {_NOTE_LENGTH_LIMIT} characters")


def _strict_create(event: Mapping[str, Any]) -> Iterator[StatusCause]:
    series = event.get("series")
    if isinstance(series, Mapping):
        if int(series.get("count") or 0) < 2:
            yield _invalid("series.count", "", "should be at least 2")
        if not series.get("lastObservedTime"):
            yield _required("series.lastObservedTime")
    if not event.get("eventTime"):
        yield _required("eventTime")
    event_type = str(event.get("type") or "")
    if event_type not in ("Normal", "Warning"):
        yield _invalid("type", "", f"has invalid value: {event_type}")
    for field in ("firstTimestamp", "lastTimestamp"):
        if event.get(field):
            yield _invalid(field, "", "needs to be unset")
    if event.get("count"):
        yield _invalid("count", "", "needs to be unset")
    source = event.get("source") or {}
    if isinstance(source, Mapping) and (source.get("component") or source.get("host")):
        yield _invalid("source", "", "needs to be unset")


def _required(path: str) -> StatusCause:
    return StatusCause("FieldValueRequired", "Required value", path)


def _invalid(path: str, value: str, detail: str) -> StatusCause:
    return StatusCause("FieldValueInvalid", f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {detail}", path)
