"""Events are one resource served through two APIs, as on a cluster: an Event written through core/v1 (client-go's
legacy recorder, pyop's) is read through events.k8s.io/v1 (client-go's `events` package, `kubectl events`) and the
other way round, converted field by field; watches, deletes and the official client see the same. Before, each API
had a store of its own, so a test reading Events through the other API found none."""

from __future__ import annotations

import asyncio
from typing import Any

from pyop.testing import TestAPIServer
from pyop.testing.builtins.event_versions import to_core, to_events_v1
from testing_server.helpers import Api, official_client

CORE = "/api/v1/namespaces/default/events"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
POD = {"kind": "Pod", "name": "web", "namespace": "default"}


def core_event(name: str = "web.1") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "involvedObject": POD,
        "reason": "Started",
        "message": "started container",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:05Z",
        "count": 2,
    }


def events_v1_event(name: str = "web.2") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "regarding": POD,
        "reason": "Scaled",
        "note": "scaled to 3",
        "type": "Normal",
        "action": "Scale",
        "reportingController": "pyop.dev/widgets",
        "reportingInstance": "widgets-0",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    }


async def test_a_core_event_reads_through_events_v1(api: Api) -> None:
    await api.create_ok(CORE, core_event())
    status, event = await api.get(f"{EVENTS_V1}/web.1")
    assert status == 200
    assert event["apiVersion"] == "events.k8s.io/v1"
    assert event["regarding"] == POD and event["note"] == "started container"
    assert event["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert (event["deprecatedFirstTimestamp"], event["deprecatedLastTimestamp"], event["deprecatedCount"]) == (
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:05Z",
        2,
    )
    assert not {"involvedObject", "message", "source", "count"} & set(event)
    status, listed = await api.get(EVENTS_V1)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["web.1"]


async def test_an_events_v1_event_reads_through_core_and_is_stored_once(server: TestAPIServer, api: Api) -> None:
    created = await api.create_ok(EVENTS_V1, events_v1_event())
    status, event = await api.get(f"{CORE}/web.2")
    assert status == 200 and event["apiVersion"] == "v1"
    assert event["involvedObject"] == POD and event["message"] == "scaled to 3"
    assert event["reportingComponent"] == "pyop.dev/widgets" and event["action"] == "Scale"
    assert event["metadata"]["uid"] == created["metadata"]["uid"]
    stored = server.store.get("events", "default", "web.2")
    assert stored is not None and stored["apiVersion"] == "v1"  # kube-apiserver's storage version
    assert server.store.get("events.events.k8s.io", "default", "web.2") is None

    status, _ = await api.delete(f"{EVENTS_V1}/web.2")
    assert status == 200
    status, _ = await api.get(f"{CORE}/web.2")
    assert status == 404


async def test_a_watch_through_one_api_sees_writes_through_the_other(api: Api) -> None:
    status, listed = await api.get(EVENTS_V1)
    watch = await api.watch(EVENTS_V1, resourceVersion=listed["metadata"]["resourceVersion"])
    try:
        await api.create_ok(CORE, core_event("web.3"))
        event = await watch.next_of("ADDED")
        assert event["object"]["apiVersion"] == "events.k8s.io/v1"
        assert event["object"]["metadata"]["name"] == "web.3" and event["object"]["note"] == "started container"
    finally:
        watch.close()


async def test_the_official_client_lists_a_core_event_through_events_v1(server: TestAPIServer, api: Api) -> None:
    # With an eventTime: the official client (37.x) refuses an events.k8s.io/v1 Event without one, as a cluster
    # sends a core/v1 recorder's Events (`eventTime: null`).
    timed = {
        **core_event("web.4"),
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "action": "Start",
        "reportingComponent": "kubelet",
        "reportingInstance": "node-1",
    }
    await api.create_ok(CORE, timed)
    import kubernetes

    def notes() -> list[str]:
        with official_client(server) as client:
            events = kubernetes.client.EventsV1Api(client).list_namespaced_event("default")
            return [event.note for event in events.items]

    assert await asyncio.to_thread(notes) == ["started container"]


def test_the_conversion_round_trips() -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        **core_event(),
        "eventTime": None,
        "reportingComponent": "c",
        "reportingInstance": "",
        "related": POD,
    }
    converted = to_events_v1(event)
    assert converted["reportingController"] == "c" and converted["related"] == POD
    assert to_core(converted) == event


async def test_each_api_writes_the_fields_its_go_struct_always_encodes(api: Api) -> None:
    """core/v1 has no omitempty on reportingComponent, reportingInstance, eventTime (a cluster reads a recorder's
    Event back with `""` and `null` there); events.k8s.io/v1 omits its empty reportingController and
    reportingInstance and always writes eventTime, regarding and deprecatedSource."""
    created = await api.create_ok(CORE, {"metadata": {"name": "web.5"}, "involvedObject": POD, "message": "m"})
    assert (created["reportingComponent"], created["reportingInstance"], created["eventTime"]) == ("", "", None)
    assert (created["source"], created["firstTimestamp"], created["lastTimestamp"]) == ({}, None, None)
    assert "count" not in created and "reason" not in created  # omitempty in core/v1 too
    status, event = await api.get(f"{EVENTS_V1}/web.5")
    assert status == 200
    assert not {"reportingController", "reportingInstance", "deprecatedCount", "reason"} & set(event)
    assert (event["eventTime"], event["deprecatedSource"], event["deprecatedFirstTimestamp"]) == (None, {}, None)
    assert event["deprecatedLastTimestamp"] is None and event["note"] == "m"

    created = await api.create_ok(EVENTS_V1, events_v1_event("web.6"))
    assert (created["deprecatedSource"], created["deprecatedFirstTimestamp"]) == ({}, None)
    status, event = await api.get(f"{CORE}/web.6")
    assert (event["source"], event["firstTimestamp"], event["lastTimestamp"]) == ({}, None, None)
    assert event["reportingInstance"] == "widgets-0" and "count" not in event
