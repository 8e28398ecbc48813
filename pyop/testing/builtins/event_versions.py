"""Events through both of their APIs, as kube-apiserver serves them: core/v1 `events` and events.k8s.io/v1 `events`
are one resource, stored as core/v1 and converted field by field (pkg/apis/events/v1 conversion).

Why: client-go's legacy recorder (and pyop's) writes core/v1 Events, its newer `events` package and
controller-runtime's recent recorder write events.k8s.io/v1 ones, and `kubectl events` or a test may read either:
on a cluster every Event shows through both APIs, and a test server that kept two stores let a test that wrote
through one and read through the other fail here and pass there (or the other way round).

The fields that differ by name: `involvedObject` / `regarding`, `message` / `note`, `reportingComponent` /
`reportingController`, and core's `source`, `firstTimestamp`, `lastTimestamp`, `count`, which events.k8s.io/v1
calls `deprecatedSource`, `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`, `deprecatedCount`. The rest
(`reason`, `type`, `action`, `eventTime`, `series`, `related`, `reportingInstance`, metadata) is the same.

Each side is then written as Go's encoder writes that version's struct (`_go_json_zero`): core/v1 always writes
`reportingComponent`, `reportingInstance` (`""`), `eventTime`, `firstTimestamp`, `lastTimestamp` (`null`) and
`source` (`{}`); events.k8s.io/v1 omits its empty `reportingController`, `reportingInstance`, `note`, ... and always
writes `eventTime`, `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`, `regarding`, `deprecatedSource` and a
series' `count`. So an Event a recorder wrote through one API reads through the other exactly as on a cluster.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from pyop.testing.builtins.decoding import go_zero_fields

CORE: Final = "v1"
EVENTS_V1: Final = "events.k8s.io/v1"

# core/v1 field -> events.k8s.io/v1 field, for the fields whose names differ.
_RENAMED: Final = {
    "involvedObject": "regarding",
    "message": "note",
    "reportingComponent": "reportingController",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
}
_BACK: Final = {events_name: core_name for core_name, events_name in _RENAMED.items()}
_DEFINITIONS: Final = {CORE: "io.k8s.api.core.v1", EVENTS_V1: "io.k8s.api.events.v1"}


def to_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event as events.k8s.io/v1 shows it."""
    return _encoded({_RENAMED.get(key, key): value for key, value in event.items()}, EVENTS_V1)


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as core/v1 (and the store) holds it."""
    return _encoded({_BACK.get(key, key): value for key, value in event.items()}, CORE)


def _encoded(event: dict[str, Any], api_version: str) -> dict[str, Any]:
    """`event` (already renamed) with the top-level and series fields Go writes for `api_version`'s struct."""
    package = _DEFINITIONS[api_version]
    converted = _as_go_writes(event, f"{package}.Event")
    converted["apiVersion"] = api_version
    series = converted.get("series")
    if isinstance(series, dict):
        converted["series"] = _as_go_writes(series, f"{package}.EventSeries")
    return converted


def _as_go_writes(value: dict[str, Any], definition: str) -> dict[str, Any]:
    """Zero scalars of omitempty fields dropped, absent always-written fields added with their zero."""
    always = go_zero_fields(definition) or {}
    result = {key: item for key, item in value.items() if key in always or not _is_empty_scalar(item)}
    return result | {key: zero for key, zero in always.items() if key not in result}


def _is_empty_scalar(value: Any) -> bool:
    """What `omitempty` drops among the values an Event's renamed fields hold: "", 0 and nil."""
    return value is None or value == "" or (type(value) is int and value == 0)


class EventConversion:
    """The `Converter` between the two Event APIs (plain code: no call out)."""

    calls_out: ClassVar[bool] = False

    def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        if obj.get("apiVersion") == api_version:
            return obj
        return to_events_v1(obj) if api_version == EVENTS_V1 else to_core(obj)

    async def convert_async(self, obj: dict[str, Any], api_version: str, caller: Any) -> dict[str, Any]:
        return self.convert(obj, api_version)
