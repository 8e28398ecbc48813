"""`kubectl get events.events.k8s.io` lists the Events written through core/v1, as on a cluster (one resource,
two APIs)."""

from __future__ import annotations

from testing_server.helpers import Api
from testing_server.kubectl.helpers import Kubectl


async def test_kubectl_lists_a_core_event_through_events_v1(api: Api, kubectl: Kubectl) -> None:
    event = {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Started",
        "message": "started container",
        "type": "Normal",
    }
    await api.create_ok("/api/v1/namespaces/default/events", event)
    listed = await kubectl("get", "events.v1.events.k8s.io", "-n", "default", "-o", "name")
    assert listed.stdout.split() == ["event.events.k8s.io/web.1"]
    shown = await kubectl("get", "events.v1.events.k8s.io", "web.1", "-n", "default", "-o", "jsonpath={.note}")
    assert shown.stdout == "started container"


async def test_kubectl_prints_events_v1_with_the_event_columns(api: Api, kubectl: Kubectl) -> None:
    event = {
        "metadata": {"name": "web.2"},
        "regarding": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Scaled",
        "note": "scaled to 3",
        "type": "Normal",
        "action": "Scale",
        "reportingController": "pyop.dev/widgets",
        "reportingInstance": "widgets-0",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    }
    await api.create_ok("/apis/events.k8s.io/v1/namespaces/default/events", event)
    table = await kubectl("get", "events.v1.events.k8s.io", "-n", "default")
    header, row = table.stdout.splitlines()
    assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert row.split()[1:] == ["Normal", "Scaled", "pod/web", "scaled", "to", "3"]
