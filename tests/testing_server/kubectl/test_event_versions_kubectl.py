"""`kubectl get events.events.k8s.io` lists the Events written through core/v1, as on a cluster (one resource,
two APIs)."""

from __future__ import annotations

from testing_server.helpers import Api
from testing_server.kubectl.helpers import Kubectl
from testing_server.test_event_versions import CORE, EVENTS_V1, core_event, events_v1_event


async def test_kubectl_lists_a_core_event_through_events_v1(api: Api, kubectl: Kubectl) -> None:
    await api.create_ok(CORE, core_event("web.1"))
    listed = await kubectl("get", "events.v1.events.k8s.io", "-n", "default", "-o", "name")
    assert listed.stdout.split() == ["event.events.k8s.io/web.1"]
    shown = await kubectl("get", "events.v1.events.k8s.io", "web.1", "-n", "default", "-o", "jsonpath={.note}")
    assert shown.stdout == "started container"


async def test_kubectl_prints_events_v1_with_the_event_columns(api: Api, kubectl: Kubectl) -> None:
    await api.create_ok(EVENTS_V1, events_v1_event("web.2"))
    table = await kubectl("get", "events.v1.events.k8s.io", "-n", "default")
    header, row = table.stdout.splitlines()
    assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert row.split()[1:] == ["Normal", "Scaled", "pod/web", "scaled", "to", "3"]
