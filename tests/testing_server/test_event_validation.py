"""kube-apiserver's Event validation (ValidateEventCreate): an Event lives in its object's namespace (`default` for
a cluster-scoped object), and an events.k8s.io/v1 Event names its reporting controller, instance and action and
carries an eventTime. What a cluster refuses with 422 is refused here, with its paths and messages; the Events
pyop's own recorder writes pass."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.client import Client
from pyop.controller.events import EventBroadcaster
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

NOT_MATCHING = "does not match event.namespace"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def core_events(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/events"


def core_event(name: str, involved: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "involvedObject": involved, "reason": "Synced", "message": "ok", **extra}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(cause.get("field", ""), cause["message"]) for cause in body["details"]["causes"]]


@pytest.mark.parametrize(
    ("namespace", "involved", "shown"),
    [
        ("default", {"kind": "Pod", "name": "web", "namespace": "kube-system"}, "kube-system"),
        ("kube-system", {"kind": "Node", "name": "node-1"}, ""),
    ],
)
async def test_a_core_event_lives_in_its_objects_namespace(
    api: Api, namespace: str, involved: dict[str, Any], shown: str
) -> None:
    status, body = await api.post(core_events(namespace), core_event("e", involved))
    assert status == 422, body
    assert causes(body) == [("involvedObject.namespace", f'Invalid value: "{shown}": {NOT_MATCHING}')]
    assert (
        body["message"] == f'Event "e" is invalid: involvedObject.namespace: Invalid value: "{shown}": {NOT_MATCHING}'
    )


async def test_matching_and_cluster_scoped_events_in_default_are_stored(api: Api) -> None:
    await api.create_ok(
        core_events("default"), core_event("pod", {"kind": "Pod", "name": "web", "namespace": "default"})
    )
    await api.create_ok(core_events("default"), core_event("node", {"kind": "Node", "name": "node-1"}))


async def test_a_core_event_with_an_event_time_needs_the_reporting_fields(api: Api) -> None:
    body = core_event("timed", {"kind": "Node", "name": "n"}, eventTime="2026-01-01T00:00:00.000000Z", reason="")
    status, answer = await api.post(core_events("kube-system"), body)
    assert status == 422
    fields = [field for field, _ in causes(answer)]
    assert fields[0] == "reportingComponent" and causes(answer)[0][1] == "Required value"
    assert [f for f in fields if f in ("reportingInstance", "action", "reason")] == [
        "reportingInstance",
        "action",
        "reason",
    ]
    ok = {
        **body,
        "reason": "Synced",
        "reportingComponent": "pyop.dev/widgets",
        "reportingInstance": "pod-1",
        "action": "Sync",
    }
    await api.create_ok(core_events("kube-system"), ok)  # a cluster-scoped object's timed Event may be in kube-system


def events_v1(**fields: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "v1-event"},
        "regarding": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Synced",
        "note": "ok",
        "type": "Normal",
        "action": "Sync",
        "reportingController": "pyop.dev/widgets",
        "reportingInstance": "widgets-7d9f",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    }
    body.update(fields)
    return {key: value for key, value in body.items() if value is not None}


async def test_an_events_v1_event_is_checked_strictly(api: Api) -> None:
    status, body = await api.post(EVENTS_V1, events_v1(reportingController=None, action=None, eventTime=None))
    assert status == 422
    # Without an eventTime only the legacy namespace rule applies, then the strict ones: eventTime is required.
    assert causes(body) == [("eventTime", "Required value")]
    status, body = await api.post(EVENTS_V1, events_v1(reportingController=None, action=None))
    assert status == 422
    assert [field for field, _ in causes(body)] == ["reportingController"] * 3 + ["action"]
    assert causes(body)[0] == ("reportingController", "Required value")
    assert causes(body)[1] == ("reportingController", 'Invalid value: "": name part must be non-empty')
    assert causes(body)[3] == ("action", "Required value")
    status, body = await api.post(EVENTS_V1, events_v1(type="Info", deprecatedCount=3, note="x" * 1025))
    assert status == 422
    assert causes(body) == [
        ("message", 'Invalid value: "": can have at most 1024 characters'),
        ("type", 'Invalid value: "": has invalid value: Info'),
        ("count", 'Invalid value: "": needs to be unset'),
    ]
    created = await api.create_ok(EVENTS_V1, events_v1())
    assert created["reportingController"] == "pyop.dev/widgets"


async def test_pyops_recorder_writes_events_a_cluster_accepts(server: TestAPIServer) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "uid": "u-1"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "uid": "u-2"}}
    async with Client(server.client_config()) as client:
        broadcaster = EventBroadcaster(client.dynamic, host="node-1")
        recorder = broadcaster.recorder("widget-controller")
        broadcaster.start()
        recorder.normal(namespace, "Seen", "a cluster-scoped object")
        recorder.warning(pod, "Failed", "a namespaced one")
        assert await broadcaster.flush(10)
        await broadcaster.stop()
    reasons = sorted(event["reason"] for event in server.store.objects("events", "default"))
    assert reasons == ["Failed", "Seen"]


async def test_the_official_client_gets_the_422(server: TestAPIServer) -> None:
    import kubernetes

    def create() -> int:
        with official_client(server) as api_client:
            event = kubernetes.client.CoreV1Event(
                metadata=kubernetes.client.V1ObjectMeta(name="elsewhere"),
                involved_object=kubernetes.client.V1ObjectReference(kind="Pod", name="web", namespace="other"),
                reason="Synced",
            )
            try:
                kubernetes.client.CoreV1Api(api_client).create_namespaced_event("default", event)
            except kubernetes.client.ApiException as error:
                assert NOT_MATCHING in str(error.body)
                return int(error.status)
            return 201

    assert await asyncio.to_thread(create) == 422


async def test_an_events_v1_update_may_change_the_series_and_metadata_only(api: Api) -> None:
    """ValidateEventUpdate: a recorder updates an Event's series (count, lastObservedTime) and nothing else; a
    changed note, regarding object or eventTime is a 422 naming the internal field, with Go's rendering of the new
    value. The same change through core/v1 is accepted (no further checks there, for old clients)."""
    created = await api.create_ok(EVENTS_V1, events_v1())
    series = {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}
    updated = await api.put(f"{EVENTS_V1}/v1-event", {**created, "series": series})
    assert updated[0] == 200, updated[1]
    current = updated[1]

    status, body = await api.put(f"{EVENTS_V1}/v1-event", {**current, "series": {"count": 1}})
    assert status == 422
    assert causes(body) == [
        ("series.count", 'Invalid value: "": should be at least 2'),
        ("series.lastObservedTime", "Required value"),
    ]

    changed = {
        **current,
        "note": "changed",
        "regarding": {"kind": "Pod", "name": "db", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:07.500000Z",
        "reportingInstance": "widgets-other",
    }
    status, body = await api.put(f"{EVENTS_V1}/v1-event", changed)
    assert status == 422
    reference = 'core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"db", UID:"", APIVersion:"", '
    reference += 'ResourceVersion:"", FieldPath:""}'
    assert causes(body) == [
        ("involvedObject", f"Invalid value: {reference}: field is immutable"),
        ("message", 'Invalid value: "changed": field is immutable'),
        ("eventTime", "Invalid value: 2026-01-01 00:00:07.5 +0000 UTC: field is immutable"),
        ("reportingInstance", 'Invalid value: "widgets-other": field is immutable'),
    ]

    # Sub-microsecond changes of eventTime are tolerated (kubernetes#111928).
    status, body = await api.put(f"{EVENTS_V1}/v1-event", {**current, "eventTime": "2026-01-01T00:00:00.0000004Z"})
    assert status == 200, body

    status, core = await api.get(f"{core_events('default')}/v1-event")
    status, body = await api.put(f"{core_events('default')}/v1-event", {**core, "message": "through core/v1"})
    assert status == 200, body


async def test_a_reason_change_is_one_line_of_the_message_and_two_causes(api: Api) -> None:
    """kube's events.go checks reason twice: two causes, and one line in the message (ToAggregate dedups)."""
    created = await api.create_ok(EVENTS_V1, events_v1())
    status, body = await api.put(f"{EVENTS_V1}/v1-event", {**created, "reason": "Other"})
    assert status == 422
    assert causes(body) == [("reason", 'Invalid value: "Other": field is immutable')] * 2
    assert (
        body["message"]
        == 'Event.events.k8s.io "v1-event" is invalid: reason: Invalid value: "Other": field is immutable'
    )
