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
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

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


def to_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event as events.k8s.io/v1 shows it."""
    converted = {_RENAMED.get(key, key): value for key, value in event.items()}
    converted["apiVersion"] = EVENTS_V1
    return converted


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as core/v1 (and the store) holds it."""
    converted = {_BACK.get(key, key): value for key, value in event.items()}
    converted["apiVersion"] = CORE
    return converted


class EventConversion:
    """The `Converter` between the two Event APIs (plain code: no call out)."""

    calls_out: ClassVar[bool] = False

    def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        if obj.get("apiVersion") == api_version:
            return obj
        return to_events_v1(obj) if api_version == EVENTS_V1 else to_core(obj)

    async def convert_async(self, obj: dict[str, Any], api_version: str, caller: Any) -> dict[str, Any]:
        return self.convert(obj, api_version)
