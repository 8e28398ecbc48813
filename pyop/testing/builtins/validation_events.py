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
`deprecatedLastTimestamp`, `deprecatedCount`). An events.k8s.io/v1 update may change the series (checked as on
create when it changed) and the metadata, nothing else: `involvedObject`, `reason`, `message`, `source`, the
timestamps and count, `type`, `eventTime` (to the microsecond), `action`, `related`, `reportingController` and
`reportingInstance` are immutable (core/v1 updates stay unchecked, for old clients). Field paths are kube's internal
ones (`involvedObject.namespace`, `message`, `source`, ... whichever API was called), as its messages print them, and
an immutable field's message shows the new value as Go's field errors print an internal type (`%#v`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from pyop.api.status import StatusCause
from pyop.api.validation import qualified_name_problems
from pyop.apiserver.endpoints.protobuf.gotypes import GoValueError, parse_time
from pyop.testing.builtins.event_versions import to_core

__all__ = ["validate_event"]

_LENGTH_LIMIT: Final = 128  # reportingInstance, action, reason
_NOTE_LENGTH_LIMIT: Final = 1024
# The internal core types' fields, in their order, as `%#v` prints them (ValidateImmutableField's bad value).
_OBJECT_REFERENCE: Final = (
    ("Kind", "kind"),
    ("Namespace", "namespace"),
    ("Name", "name"),
    ("UID", "uid"),
    ("APIVersion", "apiVersion"),
    ("ResourceVersion", "resourceVersion"),
    ("FieldPath", "fieldPath"),
)
_EVENT_SOURCE: Final = (("Component", "component"), ("Host", "host"))
_TIMES: Final = ("firstTimestamp", "lastTimestamp")


def validate_event(group: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> Iterator[StatusCause]:
    """ValidateEventCreate / ValidateEventUpdate for a request to ``group``'s Event (``""`` or ``events.k8s.io``)."""
    strict = group == "events.k8s.io"
    event = to_core(dict(obj)) if strict else obj  # checked under the core names, as kube checks its internal type
    # kube names the reporting controller after the API called: core/v1's JSON calls it reportingComponent.
    yield from _legacy(event, "reportingController" if strict else "reportingComponent")
    if strict and old is None:
        yield from _strict_create(event)
    elif strict and old is not None:
        yield from _strict_update(event, to_core(dict(old)) if old.get("apiVersion") != "v1" else old)


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


def _series(event: Mapping[str, Any]) -> Iterator[StatusCause]:
    series = event.get("series")
    if isinstance(series, Mapping):
        if int(series.get("count") or 0) < 2:
            yield _invalid("series.count", "", "should be at least 2")
        if not series.get("lastObservedTime"):
            yield _required("series.lastObservedTime")


def _strict_create(event: Mapping[str, Any]) -> Iterator[StatusCause]:
    yield from _series(event)
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


def _strict_update(event: Mapping[str, Any], old: Mapping[str, Any]) -> Iterator[StatusCause]:
    if event.get("series") != old.get("series"):
        yield from _series(event)
    # events.go's order, reason twice (two causes, as there).
    for field in ("involvedObject", "reason", "message", "source", *_TIMES, "count", "reason", "type"):
        yield from _immutable(event, old, field)
    if _micro_time(event.get("eventTime")) != _micro_time(old.get("eventTime")):
        yield from _immutable(event, old, "eventTime")
    for field in ("action", "related", "reportingComponent", "reportingInstance"):
        yield from _immutable(event, old, field)


def _immutable(event: Mapping[str, Any], old: Mapping[str, Any], field: str) -> Iterator[StatusCause]:
    new_value, old_value = event.get(field), old.get(field)
    if field in ("involvedObject", "source"):
        new_value, old_value = new_value or {}, old_value or {}
    elif field != "related":
        new_value, old_value = new_value or None, old_value or None
    if new_value != old_value:
        path = "reportingController" if field == "reportingComponent" else field
        shown = _go_value(field, event.get(field))
        yield StatusCause("FieldValueInvalid", f"Invalid value: {shown}: field is immutable", path)


def _go_value(field: str, value: Any) -> str:
    """The bad value as apimachinery's field.Error prints it: strings quoted, numbers bare, times by their String(),
    the internal structs by `%#v`, nil as `"null"`."""
    if field in ("involvedObject", "related"):
        if field == "related" and not isinstance(value, Mapping):
            return '"null"'
        return _go_struct("core.ObjectReference", _OBJECT_REFERENCE, value)
    if field == "source":
        return _go_struct("core.EventSource", _EVENT_SOURCE, value)
    if field in (*_TIMES, "eventTime"):
        return _go_time_string(value)
    if field == "count":
        return str(int(value or 0))
    return json.dumps(str(value or ""), ensure_ascii=False)


def _go_struct(name: str, fields: tuple[tuple[str, str], ...], value: Any) -> str:
    value = value if isinstance(value, Mapping) else {}
    shown = ", ".join(f"{go_name}:{json.dumps(str(value.get(key) or ''))}" for go_name, key in fields)
    return f"{name}{{{shown}}}"


def _go_time_string(value: Any) -> str:
    """Go's time.Time.String() in UTC (`2026-01-01 00:00:05.5 +0000 UTC`), the zero time for an unset one."""
    if not value:
        return "0001-01-01 00:00:00 +0000 UTC"
    seconds, nanos = _parsed(str(value))
    moment = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    fraction = f".{nanos:09d}".rstrip("0") if nanos else ""
    return f"{moment}{fraction} +0000 UTC"


def _micro_time(value: Any) -> tuple[int, int] | None:
    """A MicroTime to the microsecond (kube tolerates sub-microsecond changes, kubernetes#111928)."""
    if not value:
        return None
    seconds, nanos = _parsed(str(value))
    return seconds, nanos // 1000


def _parsed(text: str) -> tuple[int, int]:
    try:
        return parse_time(text)
    except GoValueError:  # the decoder refused malformed times before validation: not reached from a request
        return 0, 0


def _required(path: str) -> StatusCause:
    return StatusCause("FieldValueRequired", "Required value", path)


def _invalid(path: str, value: str, detail: str) -> StatusCause:
    return StatusCause("FieldValueInvalid", f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {detail}", path)
